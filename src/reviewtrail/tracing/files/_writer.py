"""Writing a trace: run and call allocation, atomic files, the event line.

Run rule (which ``runNN`` a call joins; decided by :mod:`reviewtrail.tracing.rules._run_choice` from facts gathered
here), in order:

1. an explicit run id (``run_id=`` / ``--run-id`` / ``ARIS_TRACE_RUN_ID``) is joined,
   and created if it does not exist yet;
2. a call with a ``thread_id`` joins the latest run of the skill (any day) that
   already holds a call of that thread (in its request or meta file, so runs the
   reference ``save_trace.sh`` wrote count too): a continuation stays with its thread;
3. otherwise it joins today's latest run when that run's last call was written less
   than the idle window ago (``ARIS_TRACE_RUN_IDLE_MINUTES``, default 30) and the run
   has the same executor and reviewer backend;
4. otherwise it starts the next ``runNN`` of today (local date).

Allocation holds an exclusive ``flock`` on the skill folder, and every file is
published with exclusive creation (a temp file linked to its final name, which fails
rather than overwrite), so concurrent writers never share a number or replace a file
— including writers that do not take the lock.

A save that fails (a full disk: :class:`StorageFullError`) removes the call files it
linked and the run folder it created, so no bare run is left for later saves to join;
a run folder found without ``run.meta.json`` gets one from the next save that joins it.
The event line is one write, cut back if it fails part way (:mod:`._event_log`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from reviewtrail._durable import fsync_dir, sync_files
from reviewtrail.canonical import loads_document
from reviewtrail.errors import ConflictError
from reviewtrail.tracing.files._event_log import full_disk
from reviewtrail.tracing.files._layout import RUN_ID, CallFiles, call_files, check_run_id, parse_call_filename
from reviewtrail.tracing.rules._run_choice import LatestRun, RunChoiceFacts, decide_run

__all__ = [
    "Claim",
    "RunSlot",
    "allocate_and_write",
    "choose_run",
    "digest",
    "locked",
    "run_choice_facts",
    "write_new",
]

# Told (run id, call number, run created) before anything of that call is written.
Claim = Callable[[str, int, bool], None]

_DEFAULT_IDLE_MINUTES = 30.0


def dumps(doc: dict[str, Any]) -> bytes:
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_new(path: Path, data: bytes, scratch: Path) -> None:
    """Create ``path`` with ``data`` atomically; ``FileExistsError`` if it exists (never overwritten)."""
    fd, tmp = _mkstemp(scratch)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.link(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _mkstemp(folder: Path) -> tuple[int, str]:
    name = folder / f".tmp-{os.getpid()}-{os.urandom(6).hex()}"
    return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644), str(name)


def digest(data: bytes) -> tuple[str, int]:
    return hashlib.sha256(data).hexdigest(), len(data)


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``folder`` (a skill folder: run and call allocation)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


class RunSlot(msgspec.Struct, frozen=True):
    run_id: str
    path: Path
    created: bool
    files: CallFiles
    # (sha256, size) of every file this call wrote, by name in the run folder
    written: dict[str, tuple[str, int]] = msgspec.field(default_factory=dict)


def _runs(skill_path: Path) -> list[tuple[str, int, Path]]:
    out = []
    for entry in skill_path.iterdir():
        m = RUN_ID.fullmatch(entry.name)
        if m and entry.is_dir():
            out.append((m["date"], int(m["n"]), entry))
    return sorted(out)


def _calls(run: Path) -> list[tuple[int, str, str]]:
    return [p for p in map(parse_call_filename, os.listdir(run)) if p is not None]


def _last_number(run: Path) -> int:
    """The highest call number in a run folder (a cheap scan: names start with ``NNN-``)."""
    best = 0
    for name in os.listdir(run):
        head, sep, _ = name.partition("-")
        if sep and head.isdigit() and len(head) >= 3:
            best = max(best, int(head))
    return best


def _run_meta(run: Path) -> dict[str, Any]:
    try:
        value = loads_document((run / "run.meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _has_thread(run: Path, thread_id: str) -> bool:
    """Whether a call of ``run`` names ``thread_id`` in its request or its meta file (the reference
    ``save_trace.sh`` keeps it in the meta file only)."""
    for number, purpose, kind in _calls(run):
        if kind not in ("request.json", "meta.json"):
            continue
        try:
            doc = loads_document((run / f"{number:03d}-{purpose}.{kind}").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and doc.get("thread_id") == thread_id:
            return True
    return False


def choose_run(
    skill_path: Path,
    *,
    today: str,
    run_id: str | None,
    thread_id: str | None,
    executor: str | None,
    backend: str | None,
    idle_seconds: float,
    now: float,
) -> tuple[str, bool]:
    """(run id, must create) by the run rule in this module's docstring: gather the facts about the
    skill folder's runs, then decide (:func:`reviewtrail.tracing.rules._run_choice.decide_run`)."""
    if run_id is not None:
        check_run_id(run_id)
    facts = run_choice_facts(skill_path, today=today, run_id=run_id, thread_id=thread_id)
    return decide_run(
        facts, today=today, run_id=run_id, thread_id=thread_id, executor=executor, backend=backend,
        idle_seconds=idle_seconds, now=now,
    )  # fmt: skip


def run_choice_facts(skill_path: Path, *, today: str, run_id: str | None, thread_id: str | None) -> RunChoiceFacts:
    """What the run rule looks at. An explicit run needs only whether its folder exists; the
    thread's run is searched from the latest run back, stopping at the first that holds it."""
    if run_id is not None:
        return RunChoiceFacts(explicit_exists=(skill_path / run_id).is_dir())
    runs = _runs(skill_path)
    thread_run = None
    if thread_id:
        thread_run = next((path.name for _date, _n, path in reversed(runs) if _has_thread(path, thread_id)), None)
        if thread_run is not None:
            return RunChoiceFacts(thread_run=thread_run)
    todays = [r for r in runs if r[0] == today]
    if not todays:
        return RunChoiceFacts()
    _date, n, path = todays[-1]
    meta = _run_meta(path)
    # Publishing a file links a new name into the run folder, so its mtime is the last activity.
    latest = LatestRun(path.name, n, meta.get("executor"), meta.get("reviewer_backend"), path.stat().st_mtime)
    return RunChoiceFacts(latest_today=latest)


def idle_window(env: Mapping[str, str]) -> float:
    raw = env.get("ARIS_TRACE_RUN_IDLE_MINUTES")
    try:
        return float(raw) * 60 if raw else _DEFAULT_IDLE_MINUTES * 60
    except ValueError:
        return _DEFAULT_IDLE_MINUTES * 60


def allocate_and_write(
    skill_path: Path,
    *,
    purpose: str,
    today: str,
    run_id: str | None,
    thread_id: str | None,
    executor: str | None,
    backend: str | None,
    idle_seconds: float,
    run_meta: dict[str, Any],
    request: dict[str, Any],
    response: bytes | None,
    meta: dict[str, Any],
    claim: Claim | None = None,
) -> RunSlot:
    """Pick the run and the next call number, then publish request, response and meta (meta last).

    ``claim`` is told the run and call number before anything of the call is written. On any
    failure the files this call wrote are removed again, and so is a run folder it created, so a
    failed save (a full disk) leaves nothing a later save could join; a full disk is a
    :class:`StorageFullError`.
    """
    tell: Claim = claim or (lambda run, number, created: None)
    with full_disk(f"write the trace under {skill_path}", "nothing of this call was kept", "trace"):
        skill_path.mkdir(parents=True, exist_ok=True)
        with locked(skill_path):
            chosen, create = choose_run(
                skill_path,
                today=today,
                run_id=run_id,
                thread_id=thread_id,
                executor=executor,
                backend=backend,
                idle_seconds=idle_seconds,
                now=time.time(),
            )
            run = skill_path / chosen
            while create:
                tell(chosen, 1, True)
                try:
                    run.mkdir()
                except FileExistsError:  # a writer without the lock took it: next number
                    m = RUN_ID.fullmatch(chosen)
                    assert m is not None
                    chosen = f"{m['date']}_run{int(m['n']) + 1:02d}"
                    run = skill_path / chosen
                    continue
                break
            try:
                return _fill_run(run, skill_path, chosen, create, purpose, run_meta, request, response, meta, tell)
            except BaseException:
                if create:
                    with contextlib.suppress(OSError):
                        (run / "run.meta.json").unlink(missing_ok=True)
                        run.rmdir()
                        fsync_dir(skill_path)
                raise


def _fill_run(
    run: Path,
    skill_path: Path,
    chosen: str,
    create: bool,
    purpose: str,
    run_meta: dict[str, Any],
    request: dict[str, Any],
    response: bytes | None,
    meta: dict[str, Any],
    tell: Claim,
) -> RunSlot:
    """Write run.meta.json when the run lacks it (a new run, or one a failed writer left bare), then the call."""
    written: dict[str, tuple[str, int]] = {}
    number = _last_number(run) + 1
    if not (run / "run.meta.json").exists():
        tell(chosen, number, create)
        data = dumps({**run_meta, "run_id": chosen})
        with contextlib.suppress(FileExistsError):  # a writer without the lock wrote it first
            write_new(run / "run.meta.json", data, skill_path)
            written["run.meta.json"] = digest(data)
        fsync_dir(run)
    files = _publish_call(run, skill_path, number, purpose, request, response, meta, written, tell, create)
    fsync_dir(run)
    return RunSlot(chosen, run, create, files, written)


def _stage(folder: Path, data: bytes) -> str:
    fd, tmp = _mkstemp(folder)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return tmp


def _publish_call(
    run: Path,
    scratch: Path,
    number: int,
    purpose: str,
    request: dict[str, Any],
    response: bytes | None,
    meta: dict[str, Any],
    written: dict[str, tuple[str, int]],
    tell: Claim,
    created: bool,
) -> CallFiles:
    """Stage the call's files, make them durable with one barrier, then link them (meta last).

    The request file's exclusive creation claims the number; if another writer holds it,
    the next number is tried. On failure the names this call linked are removed again.
    """
    while True:
        tell(run.name, number, created)
        files = call_files(run, number, purpose)
        docs = [(files.request, dumps({**request, "call_number": number}))]
        if response is not None:
            docs.append((files.response, response))
        docs.append((files.meta, dumps({**meta, "call_number": number})))
        temps: list[str] = []
        linked: list[Path] = []
        try:
            temps = [_stage(scratch, data) for _, data in docs]
            sync_files(scratch, temps)
            try:
                os.link(temps[0], files.request)
            except FileExistsError:
                number += 1
                continue
            linked.append(files.request)
            for (path, _), tmp in zip(docs[1:], temps[1:], strict=True):
                try:
                    os.link(tmp, path)
                except FileExistsError as exc:
                    raise ConflictError(f"{path} was created by another writer", field="call_number") from exc
                linked.append(path)
            written.update((path.name, digest(data)) for path, data in docs)
            linked.clear()
            return files
        finally:
            for path in linked:
                with contextlib.suppress(OSError):
                    path.unlink()
            for tmp in temps:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)


def local_today(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d")
