"""Run bookkeeping on disk: the per-session run lock and the pending-run markers.

Session lock
    Runs in one session are serialized: each holds an exclusive ``flock`` on
    ``<store>/workspaces/.locks/<session>.lock`` (outside every workspace) from its pre-run
    snapshot until its record is appended, so a run is credited only with the files it wrote.
    Runs in different sessions still run in parallel. The lock dies with its process.

Pending-run markers
    Before the code starts, ``<store>/runs-pending/<run id>.json`` is written durably (temp
    file, fsync, rename, fsync of the folder): ``runId``, ``sessionId``, ``startedAt``, the
    pre-run workspace snapshot ``before`` (path -> ``{digest, size}``) and what the record
    needs (language, code, timeout, network). It is removed once the ExecutionRun is appended.
    A marker left behind means the recording process died (killed, power cut, disk full):
    :func:`pending_run_problems` reports it and ``repair_pending_runs`` (``_pending_repair``) records the run as
    ``failed`` ("interrupted: the recording process died"), crediting it with the files that
    differ from ``before``. A marker whose session lock is held belongs to a run in progress
    and is left alone.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reviewtrail._durable import fsync_dir, replace_file
from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger import format_time
from reviewtrail.provenance.runs._snapshot import FileState, Snapshot
from reviewtrail.store import Store

__all__ = [
    "PendingRun",
    "begin_run",
    "lock_path",
    "marker_before",
    "pending_dir",
    "pending_run_problems",
    "pending_runs",
    "read_marker",
    "remove_marker",
    "session_lock",
    "session_locked",
    "try_session_lock",
    "write_marker",
]


def _root(store: Store) -> Path:
    if store.root is None:
        raise InvalidInputError("runs need a store on disk (for their workspaces)", field="store")
    return store.root


def lock_path(store: Store, session_id: str) -> Path:
    return _root(store) / "workspaces" / ".locks" / f"{session_id}.lock"


def pending_dir(store: Store) -> Path:
    return _root(store) / "runs-pending"


def _open_lock(store: Store, session_id: str) -> int:
    path = lock_path(store, session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)


@contextlib.contextmanager
def session_lock(store: Store, session_id: str, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold the session's run lock; ``on_wait`` is told (once) when another run holds it."""
    fd = _open_lock(store, session_id)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait(
                    f"waiting for the run in progress in session {session_id} to finish "
                    "(runs, declarations and removals of a session take turns)"
                )
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def try_session_lock(store: Store, session_id: str, *, shared: bool = False) -> Iterator[bool]:
    """Hold the session's run lock if it is free, without waiting; yields whether it was. Runs and
    session removals hold it alone; declarations share it (``shared``) with each other."""
    fd = _open_lock(store, session_id)
    try:
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing releases the lock


def session_locked(store: Store, session_id: str) -> bool:
    """Whether a run holds the session's lock right now."""
    path = lock_path(store, session_id)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


@dataclass(frozen=True)
class PendingRun:
    """A run whose record was not (yet) appended: in progress, or interrupted."""

    run_id: str
    session_id: str
    started_at: str
    path: Path


def write_marker(store: Store, run_id: str, session_id: str, started_at: str, before: Snapshot, **meta: Any) -> Path:
    """Write ``<store>/runs-pending/<run_id>.json`` durably; its path."""
    folder = pending_dir(store)
    folder.mkdir(parents=True, exist_ok=True)
    doc = {
        "runId": run_id,
        "sessionId": session_id,
        "startedAt": started_at,
        "before": {p: {"digest": s.sha256, "size": s.size} for p, s in sorted(before.items())},
        **meta,
    }
    final = folder / f"{run_id}.json"
    replace_file(final, json.dumps(doc, sort_keys=True).encode("utf-8"), mode=0o644)
    return final


def begin_run(
    store: Store, run_id: str, session_id: str, before: Snapshot, *, code: str, lang: str, timeout: float,
    network: str, allowlist: Sequence[str], resolve: Mapping[str, str] | None, tool_name: str, actor: str,
    max_file_size: int, kernel_id: str | None = None,
) -> tuple[Path, dict[str, Any]]:  # fmt: skip
    """Store the code in the CAS and write the run's marker; (marker path, code reference)."""
    code_ref = store.cas.put(code.encode("utf-8"), pool="agent-state", media_type="text/plain").to_json()
    marker = write_marker(
        store, run_id, session_id, format_time(datetime.now(UTC)), before, lang=lang, code=code_ref,
        timeoutSeconds=timeout, networkPolicy=network, allowlist=list(allowlist), resolve=dict(resolve or {}),
        toolName=tool_name, actor=actor, maxFileSize=max_file_size, kernelId=kernel_id,
    )  # fmt: skip
    return marker, code_ref


def read_marker(path: Path) -> dict[str, Any] | None:
    """The marker's content, or None when it is unreadable (a torn write never renamed into place)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not all(isinstance(doc.get(k), str) for k in ("runId", "sessionId", "startedAt")):
        return None
    return doc


def marker_before(doc: dict[str, Any]) -> Snapshot:
    """The marker's pre-run snapshot as file states (no mtime or inode: every file is re-hashed)."""
    out = Snapshot()
    if isinstance(doc.get("maxFileSize"), int):
        out.max_file_size = doc["maxFileSize"]
    for path, state in (doc.get("before") or {}).items():
        out[str(path)] = FileState(int(state["size"]), 0, 0, str(state["digest"]))
    return out


def remove_marker(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    with contextlib.suppress(OSError):
        fsync_dir(path.parent)


# --- the public API ----------------------------------------------------------------------------
def pending_runs(store: Store) -> list[PendingRun]:
    """Every pending-run marker (oldest first): runs in progress and runs whose recorder died."""
    folder = pending_dir(store)
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.glob("*.json")):
        doc = read_marker(path)
        if doc is not None:
            out.append(PendingRun(doc["runId"], doc["sessionId"], doc["startedAt"], path))
    return sorted(out, key=lambda p: (p.started_at, p.run_id))


def _interrupted(store: Store) -> list[PendingRun]:
    return [p for p in pending_runs(store) if not session_locked(store, p.session_id)]


def _unreadable(store: Store) -> list[Path]:
    folder = pending_dir(store)
    return [p for p in sorted(folder.glob("*.json")) if read_marker(p) is None] if folder.is_dir() else []


def pending_run_problems(store: Store) -> list[str]:
    """One line per interrupted run (its marker is there and no run holds its session's lock),
    and one per marker that cannot be read."""
    return [
        *(
            f"run {p.run_id} in session {p.session_id} was interrupted (started {p.started_at}); "
            "'reviewtrail verify --repair' records it"
            for p in _interrupted(store)
        ),
        *(
            f"pending-run marker {path} cannot be read: a run of an unknown session may be unrecorded; "
            "check that session's workspace, then remove the marker"
            for path in _unreadable(store)
        ),
    ]
