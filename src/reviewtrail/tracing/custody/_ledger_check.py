"""Trace files and ``events.jsonl`` lines compared with their ``trace.review-call@1`` records.

What is reported (one line per problem, naming the file or the line):

- a file a record vouches for that is missing, or whose bytes differ from the recorded
  digest (records from before file digests: the meta document, the prompt and the
  response are compared instead);
- in a run that has records, a file no record covers — except ``run.meta.json`` of a run
  begun before the store existed and calls numbered below the run's first recorded call
  (saved before the store existed);
- a record whose event line is missing or edited, and in a recorded run an event line no
  record covers (added, duplicated or edited);
- an interrupted save: a pending marker (see ``_pending``) whose call has no record.

Runs with no record at all were saved with no store and are not reported. A marker whose
save is still running is skipped, and so are its call's files and line.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reviewtrail.canonical import loads_document
from reviewtrail.errors import IntegrityError
from reviewtrail.tracing.catalog import TRACE_RECORD_TYPE
from reviewtrail.tracing.custody._ledger_records import RecordedCall, parse_record
from reviewtrail.tracing.custody._save_evidence import save_began
from reviewtrail.tracing.files._documents import event_from_meta
from reviewtrail.tracing.files._events import EVENTS_LABEL, EventLine, read_event_lines
from reviewtrail.tracing.files._layout import RUN_ID, call_files, parse_call_filename, traces_root
from reviewtrail.tracing.files._origin import project_id_path, read_project_id
from reviewtrail.tracing.files._pending import Pending, read_markers

if TYPE_CHECKING:
    from reviewtrail.store import Store

__all__ = [
    "ProjectCalls",
    "ledger_problems",
    "project_calls",
    "recorded_calls",
    "run_of_line",
    "trace_ledger_check",
    "trace_ledger_problems",
]

_MISSING = object()


def trace_ledger_problems(store: Store, project_dir: Path) -> list[str]:
    """Every difference between the project's trace files and event lines and the store's
    ``trace.review-call@1`` records of this project folder; one human line per problem, empty
    when they agree."""
    return ledger_problems(store, Path(project_dir))


def trace_ledger_check(store: Store, project_dir: Path) -> tuple[list[str], list[str]]:
    """:func:`trace_ledger_problems`, and notes: how many records other project folders saved
    (a store shared by several folders), which are not compared with this folder's files."""
    notes: list[str] = []
    return ledger_problems(store, Path(project_dir), notes=notes), notes


@dataclass(frozen=True)
class ProjectCalls:
    """The trace records of one project folder, read from the store."""

    calls: list[RecordedCall]  # this folder's, and those written before records named their folder
    problems: list[str]  # records that cannot be read as calls
    others: dict[str, int]  # records other folders saved, by folder id

    def note(self) -> str | None:
        if not self.others:
            return None
        total = sum(self.others.values())
        return (
            f"{total} trace record(s) saved by {len(self.others)} other project folder(s) sharing this store "
            f"were not compared with this folder's .aris/traces (folder ids: {', '.join(sorted(self.others))})"
        )


def project_calls(store: Store, project: Path) -> ProjectCalls:
    """The store's trace records of ``project`` (by the folder's id in ``.aris/meta/project-id``):
    a record naming another folder is counted, not returned; a record naming none (written before
    records named their folder) belongs to every folder, as it always did. An unreadable id file is
    a problem, and then no record that names a folder is this folder's."""
    calls, problems = recorded_calls(store)
    try:
        own = read_project_id(project)
    except IntegrityError as exc:
        own, problems = None, [*problems, str(exc)]
    others: dict[str, int] = {}
    mine: list[RecordedCall] = []
    claimed: set[tuple[str, str]] = set()
    for call in calls:
        if call.origin is None or call.origin == own:
            mine.append(call)
        else:
            others[call.origin] = others.get(call.origin, 0) + 1
            if own is None and (traces_root(project) / call.skill / call.run_id).is_dir():
                claimed.add(call.run_key)
    if claimed:  # the id file is gone, but runs here are ones that records of a folder name
        runs = ", ".join(f".aris/traces/{s}/{r}/" for s, r in sorted(claimed))
        problems = [
            *problems,
            f"{project_id_path(project).relative_to(project)}: missing, but {runs} are runs that records of a "
            "project folder name: the folder's id was removed, so its records cannot be matched to its files",
        ]
    return ProjectCalls(mine, problems, others)


def recorded_calls(store: Store) -> tuple[list[RecordedCall], list[str]]:
    """Every trace record of the store as the call it describes, and a line per unreadable record."""
    calls: list[RecordedCall] = []
    problems: list[str] = []
    for env in store.ledger.read(type=TRACE_RECORD_TYPE):
        try:
            payload = env.payload_value
        except ValueError as exc:  # not JSON (not even UTF-8): altered since it was written
            problems.append(
                f"ledger record {env.id} (seq {env.seq}): cannot be compared with the trace files: its payload is "
                f"not JSON ({exc})"
            )
            continue
        parsed = parse_record(env.id, env.seq, payload)
        if isinstance(parsed, str):
            problems.append(parsed)
        else:
            calls.append(parsed)
    return calls, problems


def ledger_problems(
    store: Store,
    project: Path,
    *,
    skill: str | None = None,
    run_id: str | None = None,
    report_unreadable: bool = True,
    notes: list[str] | None = None,
) -> list[str]:
    """:func:`trace_ledger_problems`, limited to one skill or one run when given. Unreadable
    ``events.jsonl`` lines are reported unless ``report_unreadable=False`` (``trace verify``
    reports them with the schema check). Records other project folders saved are not compared;
    a line saying how many is added to ``notes`` when given."""
    project = project.absolute()

    def in_scope(s: str, r: str) -> bool:
        return (skill is None or s == skill) and (run_id is None or r == run_id)

    found = project_calls(store, project)
    calls, problems = found.calls, list(found.problems)
    note = found.note()
    if notes is not None and note is not None:
        notes.append(note)
    if skill is not None:
        problems = []  # unreadable records name no run: reported by the whole-project check
    calls = [c for c in calls if in_scope(c.skill, c.run_id)]
    markers, unreadable = read_markers(project)
    markers = [m for m in markers if in_scope(m.skill, m.run_id)]
    if skill is None:
        problems += unreadable
    for call in calls:
        problems += _file_problems(project, call)
    problems += _folder_problems(project, calls, markers)
    problems += _unrecorded_run_problems(project, calls, markers, store.created_at, in_scope)
    if skill is None:
        problems += _symlink_problems(project)
    problems += _marker_problems(store, project, calls, markers)
    problems += _event_problems(project, calls, markers, in_scope, report_unreadable=report_unreadable)
    return problems


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _differing_keys(actual: Any, expected: dict[str, Any]) -> list[str]:
    if not isinstance(actual, dict):
        return ["<whole document>"]
    keys = set(actual) | set(expected)
    return sorted(k for k in keys if actual.get(k, _MISSING) != expected.get(k, _MISSING))


def _file_problems(project: Path, call: RecordedCall) -> list[str]:
    run = traces_root(project) / call.skill / call.run_id
    problems: list[str] = []
    for name in call.expected_names():
        where = f"{call.trace_path}{name}"
        try:
            data = (run / name).read_bytes()
        except FileNotFoundError:
            problems.append(f"{where}: missing (its {call.label} vouches for it)")
            continue
        except OSError as exc:
            problems.append(f"{where}: unreadable ({exc.strerror})")
            continue
        if call.files is not None:
            sha, size = call.files[name]
            if _sha(data) != sha or len(data) != size:
                problems.append(
                    f"{where}: differs from {call.label}: sha256 {_sha(data)[:16]}... ({len(data)} bytes), "
                    f"recorded {sha[:16]}... ({size} bytes)"
                )
        else:
            problems += _legacy_problems(where, name, data, call)
    return problems


def _legacy_problems(where: str, name: str, data: bytes, call: RecordedCall) -> list[str]:
    """Records without file digests: compare what they hold (meta document, prompt, response)."""
    if name.endswith(".response.md"):
        expected = call.response_sha256 or call.meta.get("response_sha256")
        if expected is not None and _sha(data) != expected:
            return [f"{where}: differs from {call.label}: the response's sha256 is not the recorded one"]
        return []
    try:
        doc = loads_document(data.decode("utf-8"))
    except ValueError:
        return [f"{where}: differs from {call.label}: not the recorded JSON document"]
    if name.endswith(".meta.json"):
        keys = _differing_keys(doc, call.meta)
        return [f"{where}: differs from {call.label} on {', '.join(keys)}"] if keys else []
    if call.prompt_sha256 is not None:
        prompt = doc.get("prompt") if isinstance(doc, dict) else None
        if not isinstance(prompt, str) or _sha(prompt.encode("utf-8")) != call.prompt_sha256:
            return [f"{where}: differs from {call.label} on prompt"]
    return []


def _by_run(calls: Iterable[RecordedCall]) -> dict[tuple[str, str], list[RecordedCall]]:
    runs: dict[tuple[str, str], list[RecordedCall]] = {}
    for call in calls:
        runs.setdefault(call.run_key, []).append(call)
    return runs


def _folder_problems(project: Path, calls: list[RecordedCall], markers: list[Pending]) -> list[str]:
    problems: list[str] = []
    for (skill, run_id), recs in sorted(_by_run(calls).items()):
        folder = traces_root(project) / skill / run_id
        if not folder.is_dir():
            continue  # its files are reported missing
        covered = {name for rec in recs for name in rec.expected_names()}
        first = min(rec.number for rec in recs)
        marked = {(m.call_number, m.purpose) for m in markers if (m.skill, m.run_id) == (skill, run_id)}
        base = f".aris/traces/{skill}/{run_id}/"
        for entry in sorted(folder.iterdir()):
            name = entry.name
            if name in covered or name == "run.meta.json":
                continue
            parsed = parse_call_filename(name)
            if parsed is None or not entry.is_file():
                problems.append(f"{base}{name}: not a trace file, and not recorded in the ledger (added?)")
            elif (parsed[0], parsed[1]) not in marked and parsed[0] >= first:
                problems.append(
                    f"{base}{name}: not recorded in the ledger (added after the fact, or saved without the store?)"
                )
    return problems


def _started(folder: Path) -> datetime | None:
    """When a run folder's run began, from its run.meta.json (or, failing that, its calls' metas)."""
    candidates = [folder / "run.meta.json", *sorted(folder.glob("*.meta.json"))]
    for path in candidates:
        try:
            doc = loads_document(path.read_bytes())
            value = doc.get("started_at") or doc.get("timestamp")
            return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except (OSError, ValueError, AttributeError, TypeError):
            continue
    return None


def _unrecorded_run_problems(
    project: Path, calls: list[RecordedCall], markers: list[Pending], created: str | None, in_scope: Any
) -> list[str]:
    """Run folders with no record at all that began after the store existed: a save with the store
    always records its call, so such a folder was added (copied in) or saved without the store."""
    if created is None:
        return []
    since = datetime.fromisoformat(created.replace("Z", "+00:00"))
    since = since.replace(microsecond=since.microsecond // 1000 * 1000)  # trace times have milliseconds
    recorded = set(_by_run(calls))
    marked = {(m.skill, m.run_id) for m in markers}
    problems: list[str] = []
    root = traces_root(project)
    if not root.is_dir():
        return []
    for skill_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for folder in sorted(p for p in skill_dir.iterdir() if p.is_dir()):
            key = (skill_dir.name, folder.name)
            if key in recorded or key in marked or not in_scope(*key):
                continue
            started = _started(folder)
            if started is not None and started.tzinfo is not None and started >= since:
                problems.append(
                    f".aris/traces/{key[0]}/{key[1]}/: no call of this run is recorded in the ledger, although it "
                    f"began ({started.isoformat()}) after the store was created ({created}): added or copied in, "
                    "or saved without the store?"
                )
    return problems


def _symlink_problems(project: Path) -> list[str]:
    """Trace saves write plain files and folders only: a symlink anywhere under ``.aris/traces`` or
    ``.aris/meta`` (a file pointing at same-content bytes elsewhere, a folder moved out) is reported."""
    problems: list[str] = []
    aris = traces_root(project).parent
    for top in (aris, aris / "traces", aris / "meta"):
        if top.is_symlink():
            problems.append(f"{top.relative_to(project)}: a symlink (to {os.readlink(top)}), not a folder")
            return problems
    for path in (aris / "traces", aris / "meta", aris / "meta" / "pending"):
        if path.exists() and not path.is_dir():
            problems.append(f"{path.relative_to(project)}: a file where trace saves keep a folder")
    events = aris / "meta" / "events.jsonl"
    if events.exists() and not events.is_symlink() and not events.is_file():
        problems.append(f"{events.relative_to(project)}: not a regular file (trace saves append their lines to one)")
    for top in (aris / "traces", aris / "meta"):
        for folder, dirs, files in os.walk(top):
            for name in sorted(dirs + files):
                path = Path(folder) / name
                if path.is_symlink():
                    problems.append(
                        f"{path.relative_to(project)}: a symlink (to {os.readlink(path)}); trace saves never write one"
                    )
    return problems


def _marker_problems(store: Store, project: Path, calls: list[RecordedCall], markers: list[Pending]) -> list[str]:
    recorded = {c.call_key for c in calls}
    problems: list[str] = []
    for m in markers:
        if m.live or m.key in recorded:
            continue  # a save in progress, or one that was recorded (its marker is left over)
        run = traces_root(project) / m.skill / m.run_id
        files = call_files(run, m.call_number, m.purpose)
        where = f".aris/traces/{m.skill}/{m.run_id}/{m.stem}"
        if files.meta.exists() and not save_began(store, m, calls):
            problems.append(
                f"{where}: written but unrecorded in the ledger, with a pending marker "
                f".aris/meta/pending/{m.path.name} the ledger does not vouch for (no trace.save-begun@1 record of "
                "its save: forged, or saved while the store was unavailable); repair records nothing of it: "
                "remove the files and the marker, or save the call again"
            )
        elif files.meta.exists():
            problems.append(
                f"{where}: written but unrecorded in the ledger (interrupted save?); "
                "'reviewtrail verify --repair' records it"
            )
        elif files.request.exists() or files.response.exists():
            problems.append(
                f"{where}: incomplete call, unrecorded (interrupted save?): its meta file was never written; "
                "save the call again and remove these files"
            )
        elif run.is_dir() and not any(parse_call_filename(p.name) for p in run.iterdir()):
            problems.append(
                f".aris/traces/{m.skill}/{m.run_id}/: a run folder with no call (interrupted save?); "
                "'reviewtrail verify --repair' removes it"
            )
        else:
            problems.append(
                f"{where}: an interrupted save wrote no file of this call; "
                f"'reviewtrail verify --repair' removes its marker .aris/meta/pending/{m.path.name}"
            )
    return problems


def run_of_line(doc: dict[str, Any]) -> tuple[str, str] | None:
    """(skill, run id) of an event line's ``trace_path``, or None."""
    path = doc.get("trace_path")
    if not isinstance(path, str):
        return None
    parts = path.strip("/").split("/")
    if len(parts) != 4 or parts[:2] != [".aris", "traces"] or RUN_ID.fullmatch(parts[3]) is None:
        return None
    return parts[2], parts[3]


class _LineIndex:
    """Event lines by their bytes' digest and by the call they name, each line used at most once."""

    def __init__(self, lines: list[EventLine]) -> None:
        self.used: set[int] = set()
        self.by_digest: dict[tuple[str, int], list[EventLine]] = {}
        self.by_call: dict[tuple[Any, Any, Any], list[EventLine]] = {}
        for line in lines:
            self.by_digest.setdefault((_sha(line.raw), len(line.raw)), []).append(line)
            if line.doc is not None:
                key = (line.doc.get("trace_path"), line.doc.get("call_number"), line.doc.get("purpose"))
                if all(isinstance(k, (str, int)) for k in key):
                    self.by_call.setdefault(key, []).append(line)

    def take(self, call: RecordedCall) -> EventLine | None:
        if call.event is not None:
            candidates = self.by_digest.get(call.event, [])
        else:
            candidates = self.by_call.get((call.trace_path, call.number, call.purpose), [])
        for line in candidates:
            if line.number not in self.used:
                self.used.add(line.number)
                return line
        return None


def _event_problems(
    project: Path, calls: list[RecordedCall], markers: list[Pending], in_scope: Any, *, report_unreadable: bool
) -> list[str]:
    lines = read_event_lines(project)
    index = _LineIndex(lines)
    problems: list[str] = []
    for call in calls:
        line = index.take(call)
        if line is None:
            problems.append(
                f"{EVENTS_LABEL}: no line for {call.label} ({call.skill}/{call.run_id} call {call.stem}): "
                "deleted or edited"
            )
            continue
        if call.event is None and line.doc is not None:
            expected = event_from_meta(call.skill, call.trace_path, call.meta)
            keys = [k for k in sorted(line.doc) if k in expected and line.doc[k] != expected[k]]
            if keys:
                problems.append(f"{EVENTS_LABEL} line {line.number}: differs from {call.label} on {', '.join(keys)}")
    first = {key: min(c.number for c in recs) for key, recs in _by_run(calls).items()}
    marked = {m.key for m in markers}
    for line in lines:
        if line.doc is None:
            if report_unreadable:
                problems.append(f"{EVENTS_LABEL} line {line.number}: {line.problem}")
            continue
        if line.number in index.used:
            continue
        key = run_of_line(line.doc)
        if key is None or key not in first or not in_scope(*key):
            continue
        number, purpose = line.doc.get("call_number"), line.doc.get("purpose")
        if (*key, number, purpose) in marked:
            continue
        if isinstance(number, int) and number < first[key]:
            continue
        label = f"{number:03d}" if isinstance(number, int) else "?"
        problems.append(
            f"{EVENTS_LABEL} line {line.number}: not recorded in the ledger ({key[0]}/{key[1]} call {label}): "
            "added, duplicated or edited?"
        )
    return problems
