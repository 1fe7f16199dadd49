"""What ``declare_artifact`` checks before it trusts a workspace file.

* A run of the session that started but was never recorded (``reviewtrail run`` killed,
  or still running) may have written the file: its bytes would have no recorded origin.
  Such runs leave a marker ``<store>/runs-pending/<runId>.json`` holding at least
  ``{"runId", "sessionId", "startedAt"}``; declaring is refused until ``verify --repair``
  (or the end of the run) clears it.
* Bytes that no recorded derivation produced at that path are declared anyway, with a
  warning: their lineage starts in the workspace.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from reviewtrail.errors import ConflictError
from reviewtrail.store import Store

__all__ = ["PendingMarker", "no_lineage_warning", "pending_markers", "refuse_pending_runs"]

PENDING_DIR = "runs-pending"


@dataclass(frozen=True)
class PendingMarker:
    run_id: str
    session_id: str | None  # None: the marker cannot be read, so it may belong to any session
    started_at: str | None
    path: Path


def _read(path: Path) -> PendingMarker:
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError):
        doc = None
    if not isinstance(doc, dict):
        return PendingMarker(path.stem, None, None, path)
    run_id, session_id, started = doc.get("runId"), doc.get("sessionId"), doc.get("startedAt")
    return PendingMarker(
        run_id if isinstance(run_id, str) else path.stem,
        session_id if isinstance(session_id, str) else None,
        started if isinstance(started, str) else None,
        path,
    )


def pending_markers(store: Store) -> list[PendingMarker]:
    """Every pending-run marker of the store, oldest name first."""
    if store.root is None:
        return []
    folder = store.root / PENDING_DIR
    try:
        names = sorted(p for p in folder.iterdir() if p.suffix == ".json" and p.is_file())
    except FileNotFoundError:
        return []
    return [_read(p) for p in names]


def refuse_pending_runs(store: Store, session_id: str, *, then: str = "declare again") -> None:
    """ConflictError (exit 6) when a run of this session started and was never recorded."""
    for marker in pending_markers(store):
        if marker.session_id not in (session_id, None):
            continue
        started = f", started {marker.started_at}," if marker.started_at else ""
        whose = f"of session {session_id}" if marker.session_id else "(its marker cannot be read)"
        raise ConflictError(
            f"run {marker.run_id} {whose}{started} is still running or was interrupted before it was "
            "recorded, so the workspace may hold bytes no recorded run wrote; wait for it to finish, or if it "
            f"was killed run `reviewtrail verify --repair` (it records the run), then {then}",
            field="session",
        )


def no_lineage_warning(path: str, session_id: str) -> str:
    return (
        f"no recorded run wrote these bytes at {path} in session {session_id}: the file was changed outside "
        "reviewtrail's recorded runs, so this version's lineage starts in the workspace"
    )
