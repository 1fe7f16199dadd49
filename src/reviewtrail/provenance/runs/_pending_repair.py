"""Completing runs whose recording process died: each interrupted run is recorded as failed.

The markers and the session lock are in :mod:`._pending`; recording uses :func:`._runs.record_run`,
so this step sits above both.
"""

from __future__ import annotations

from reviewtrail.provenance.runs._pending import (
    marker_before,
    pending_runs,
    read_marker,
    remove_marker,
    try_session_lock,
)
from reviewtrail.provenance.runs._runs import record_run
from reviewtrail.provenance.runs._sessions import get_session
from reviewtrail.store import Store

__all__ = ["repair_pending_runs"]


def _recorded(store: Store, run_id: str) -> bool:
    return bool(store.ledger.rows("prov_runs", run_id=run_id))


def repair_pending_runs(store: Store) -> list[str]:
    """Record every interrupted run as failed, crediting the files that differ from its pre-run
    snapshot; remove the markers of runs already recorded. One line per marker handled."""
    done = []
    for pending in pending_runs(store):
        with try_session_lock(store, pending.session_id) as free:
            if not free:
                done.append(f"run {pending.run_id} in session {pending.session_id}: still running; left alone")
                continue
            doc = read_marker(pending.path)
            if doc is None:  # recorded and removed by its own run while we waited for the lock
                continue
            if _recorded(store, pending.run_id):
                remove_marker(pending.path)
                done.append(f"run {pending.run_id}: already recorded; removed its marker")
                continue
            workspace = get_session(store, pending.session_id).workspace  # if deleted since: no files to credit
            note = "interrupted: the recording process died; recorded by 'reviewtrail verify --repair'"
            code = doc.get("code")
            outcome = record_run(
                store,
                session_id=pending.session_id,
                workspace=workspace,
                code=None if isinstance(code, dict) else "",
                code_ref=code if isinstance(code, dict) else None,
                lang=str(doc.get("lang", "python")),
                result=None,
                before=marker_before(doc),
                timeout=float(doc.get("timeoutSeconds", 60.0)),
                network=doc.get("networkPolicy", "none"),
                allowlist=list(doc.get("allowlist", [])),
                resolve=dict(doc.get("resolve", {})),
                tool_name=str(doc.get("toolName", "reviewtrail.run")),
                actor=str(doc.get("actor", "user")),
                failure=note,
                run_id=pending.run_id,
                started_at=pending.started_at,
                kernel_id=doc.get("kernelId"),
            )
            remove_marker(pending.path)
            files = [*outcome.run.created_files, *outcome.run.modified_files]
            done.append(
                f"run {pending.run_id} in session {pending.session_id}: recorded as failed (interrupted), "
                f"{len(files)} file(s) credited"
            )
    return done
