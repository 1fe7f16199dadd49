"""What ``declare_artifact`` and ``delete_session`` check before they trust (or drop) a workspace.

* A run of the session in progress holds the session's run lock; these refuse rather than
  read (or remove) files it is still writing, and hold the lock themselves meanwhile so no
  run starts under them.
* A run that started and was never recorded (``reviewtrail run`` killed) leaves its
  pending-run marker (``<store>/runs-pending/<runId>.json``) with no lock held: its files
  have no recorded origin, so these refuse until ``verify --repair`` records the run.
* Bytes that no recorded derivation produced at that path are declared anyway, with a
  warning: their lineage starts in the workspace.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from reviewtrail.errors import ConflictError
from reviewtrail.provenance.runs._pending import pending_runs, try_session_lock
from reviewtrail.store import Store

__all__ = ["no_lineage_warning", "no_pending_runs"]


@contextlib.contextmanager
def no_pending_runs(store: Store, session_id: str, *, then: str, shared: bool) -> Iterator[None]:
    """Hold the session's run lock (``shared`` with other declarations, or alone); ConflictError (exit 6)
    when a run of the session is in progress or was interrupted before it was recorded.
    ``then`` says what to do afterwards."""
    with try_session_lock(store, session_id, shared=shared) as free:
        pending = [p for p in pending_runs(store) if p.session_id == session_id]
        if not free:
            which = f"run {pending[0].run_id}" if pending else "a run or a declaration"
            raise ConflictError(
                f"{which} of session {session_id} is in progress; {then} once it has finished", field="session"
            )
        for p in pending:
            raise ConflictError(
                f"run {p.run_id} of session {session_id} (started {p.started_at}) was interrupted before it was "
                "recorded, so the workspace may hold bytes no recorded run wrote; run `reviewtrail verify --repair` "
                f"(it records the run), then {then}",
                field="session",
            )
        yield


def no_lineage_warning(path: str, session_id: str) -> str:
    return (
        f"no recorded run wrote these bytes at {path} in session {session_id}: the file was changed outside "
        "reviewtrail's recorded runs, so this version's lineage starts in the workspace"
    )
