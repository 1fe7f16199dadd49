"""Completing interrupted trace saves (``reviewtrail verify --repair``).

For each pending marker whose save is gone (see ``_pending``):

- the call is already recorded: the leftover marker is removed;
- the call's files are all there (its meta file exists, written last), pass the schema and
  label checks, and the ledger holds the save's ``trace.save-begun@1`` record (see
  ``_save_evidence``: a marker alone, which anyone able to write ``.aris`` can forge, is not
  enough): its event line is appended when missing, then its record is appended
  (``recovered: true``, digests of the files as they are now) and the marker removed; without
  that record nothing is recorded and ``verify`` keeps reporting the files;
- nothing of the call was written: the marker is removed, and so is the run folder when
  it holds no call at all (only the save's ``run.meta.json``);
- an incomplete call (request or response without the meta file, which a save writes last:
  its commit point) cannot be completed: its files are set aside, byte for byte, under
  ``.aris/meta/incomplete/<skill>/<run>/`` (nothing written is deleted), then it is handled as a
  save that wrote nothing.

Temporary files left in skill folders by killed saves are removed too.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reviewtrail._durable import fsync_dir
from reviewtrail.canonical import loads_document
from reviewtrail.tracing.custody._ledger_check import project_calls
from reviewtrail.tracing.custody._ledger_link import append_trace_record
from reviewtrail.tracing.custody._save_evidence import save_began
from reviewtrail.tracing.files._documents import event_from_meta
from reviewtrail.tracing.files._event_log import append_event
from reviewtrail.tracing.files._events import read_event_lines
from reviewtrail.tracing.files._layout import call_files, parse_call_filename, traces_root
from reviewtrail.tracing.files._origin import ensure_project_id
from reviewtrail.tracing.files._pending import Pending, parse_marker, pending_dir, taken
from reviewtrail.tracing.files._verify import call_problems
from reviewtrail.tracing.files._writer import digest, locked

if TYPE_CHECKING:
    from reviewtrail.store import Store

__all__ = ["repair_trace_links"]


def repair_trace_links(store: Store, project_dir: Path) -> list[str]:
    """Complete what interrupted trace saves left; one human line per action taken (empty: nothing to do)."""
    project = Path(project_dir).absolute()
    actions: list[str] = []
    folder = pending_dir(project)
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        with taken(path) as gone:
            if not gone:
                continue  # still running, or finished meanwhile
            marker = parse_marker(path, live=False)
            if marker is not None:
                action = _repair(store, project, marker)
                if action:
                    actions.append(action)
    actions += _clean_scratch(project)
    return actions


def _load(path: Path) -> dict[str, Any] | None:
    try:
        doc = loads_document(path.read_bytes())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _repair(store: Store, project: Path, m: Pending) -> str | None:
    calls = project_calls(store, project).calls  # read with the marker's lock held: its save can no longer record
    where = f".aris/traces/{m.skill}/{m.run_id}/{m.stem}"
    if any(c.call_key == m.key for c in calls):
        m.path.unlink()
        return f"{where}: already recorded; removed the marker its save left"
    run = traces_root(project) / m.skill / m.run_id
    files = call_files(run, m.call_number, m.purpose)
    if files.meta.exists():
        if not save_began(store, m, calls):
            return None  # a marker the ledger does not vouch for: nothing is recorded (verify reports it)
        return _record(store, project, m, calls, where)
    aside = _set_aside(project, m, [files.request, files.response])
    removed = ""
    if run.is_dir():
        with locked(run.parent):
            names = os.listdir(run)
            if not any(parse_call_filename(n) for n in names) and set(names) <= {"run.meta.json"}:
                (run / "run.meta.json").unlink(missing_ok=True)
                run.rmdir()
                removed = f" and the run folder .aris/traces/{m.skill}/{m.run_id}/ it had begun (no call in it)"
    m.path.unlink()
    if aside:
        return (
            f"{where}: its interrupted save left an incomplete call (no meta file); set aside "
            f"{', '.join(aside)} under .aris/meta/incomplete/{m.skill}/{m.run_id}/ and removed its marker{removed}"
        )
    return f"{where}: nothing was written by its interrupted save; removed its marker{removed}"


def _set_aside(project: Path, m: Pending, paths: list[Path]) -> list[str]:
    """Move the files of an incomplete call out of the traces (same file system: a rename);
    return their names. A name already set aside is kept and the new file gets a suffix."""
    moved: list[str] = []
    target = project / ".aris" / "meta" / "incomplete" / m.skill / m.run_id
    for path in paths:
        if not path.is_file() or path.is_symlink():
            continue
        target.mkdir(parents=True, exist_ok=True)
        dest = target / path.name
        n = 1
        while dest.exists():
            dest = target / f"{path.name}.{n}"
            n += 1
        os.replace(path, dest)
        moved.append(path.name)
    if moved:
        fsync_dir(target)
        fsync_dir(paths[0].parent)
    return moved


def _record(store: Store, project: Path, m: Pending, calls: list[Any], where: str) -> str | None:
    run = traces_root(project) / m.skill / m.run_id
    files = call_files(run, m.call_number, m.purpose)
    if call_problems(run, project, m.call_number, m.purpose):
        return None  # does not pass the schema/label checks: left for a person to look at
    meta, request = _load(files.meta), _load(files.request)
    if meta is None or request is None:
        return None
    trace_path = f".aris/traces/{m.skill}/{m.run_id}/"
    claimed = {c.event[0] for c in calls if c.event is not None}
    line = next(
        (
            ln.raw
            for ln in read_event_lines(project)
            if ln.doc is not None
            and ln.doc.get("trace_path") == trace_path
            and ln.doc.get("call_number") == m.call_number
            and ln.doc.get("purpose") == m.purpose
            and digest(ln.raw)[0] not in claimed
        ),
        None,
    )
    appended = ""
    if line is None:
        line = append_event(project, event_from_meta(m.skill, trace_path, meta))
        appended = " (its event line appended)"
    written: dict[str, tuple[str, int]] = {}
    names = [files.request, files.response, files.meta]
    if m.run_created:
        names.append(run / "run.meta.json")
    for path in names:
        with contextlib.suppress(FileNotFoundError):
            written[path.name] = digest(path.read_bytes())
    mode = str(meta.get("trace_mode", "full"))
    prompt = request.get("prompt") if mode == "full" else None
    executor = request.get("executor")
    append_trace_record(
        store,
        skill=m.skill,
        run_id=m.run_id,
        trace_path=trace_path,
        prompt=prompt if isinstance(prompt, str) else None,
        response=files.response.read_bytes() if mode == "full" and files.response.exists() else None,
        meta=meta,
        mode=mode,
        actor=executor if isinstance(executor, str) and executor else "unknown-executor",
        files=written,
        event=digest(line),
        recovered=True,
        save=m.save,
        origin=ensure_project_id(project),
    )
    m.path.unlink()
    return f"{where}: recorded in the ledger{appended} (its save was interrupted)"


def _clean_scratch(project: Path) -> list[str]:
    actions: list[str] = []
    root = traces_root(project)
    for skill in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        with locked(skill):  # every save stages under this lock: what is left now is a killed save's
            stale = [p for p in skill.iterdir() if p.name.startswith(".tmp-") and p.is_file()]
            for p in stale:
                p.unlink(missing_ok=True)
        if stale:
            actions.append(f".aris/traces/{skill.name}/: removed {len(stale)} temporary file(s) left by killed saves")
    folder = pending_dir(project)
    for tmp in sorted(folder.glob(".*.tmp")) if folder.is_dir() else []:
        with taken(tmp) as gone:
            if gone:
                tmp.unlink(missing_ok=True)
                actions.append(f".aris/meta/pending/{tmp.name}: removed a marker a killed save had not finished")
    return actions
