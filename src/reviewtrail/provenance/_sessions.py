"""Sessions own workspaces. Deleting a session removes its workspace only."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from reviewtrail.errors import ConflictError, InvalidInputError, NotFoundError
from reviewtrail.ledger import new_record
from reviewtrail.ledger._envelope import format_time, new_id
from reviewtrail.provenance._records import SESSION, SessionCreated, SessionDeleted
from reviewtrail.store import Store

__all__ = [
    "DEFAULT_PROJECT",
    "SessionInfo",
    "check_project",
    "create_session",
    "delete_session",
    "get_session",
    "list_sessions",
    "workspace_of",
]

DEFAULT_PROJECT = "default"
_PROJECT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_SESSION = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass(frozen=True)
class SessionInfo:
    session_id: str
    project_id: str
    workspace: Path
    created_at: str
    record_id: str
    deleted: bool

    def to_json(self) -> dict[str, object]:
        return {
            "sessionId": self.session_id,
            "projectId": self.project_id,
            "workspace": str(self.workspace),
            "createdAt": self.created_at,
            "recordId": self.record_id,
            "deleted": self.deleted,
        }


def check_project(project_id: str) -> str:
    if _PROJECT.fullmatch(project_id) is None:
        raise InvalidInputError(f"{project_id!r} is not a project id (letters, digits, '.', '_', '-')", field="project")
    return project_id


def _check_session_id(session_id: str) -> str:
    if not isinstance(session_id, str) or _SESSION.fullmatch(session_id) is None:
        raise InvalidInputError(f"{session_id!r} is not a session id", field="session")
    return session_id


def _workspaces(store: Store) -> Path:
    if store.root is None:
        raise InvalidInputError("sessions need a store on disk (for their workspaces)", field="store")
    return store.root / "workspaces"


def workspace_of(store: Store, session_id: str) -> Path:
    return _workspaces(store) / _check_session_id(session_id)


def create_session(store: Store, project_id: str = DEFAULT_PROJECT, *, actor: str = "user") -> SessionInfo:
    check_project(project_id)
    session_id = new_id()
    workspace = workspace_of(store, session_id)
    workspace.mkdir(parents=True, exist_ok=False)
    created = format_time(datetime.now(UTC))
    payload = SessionCreated(
        session_id=session_id, project_id=project_id, workspace=f"workspaces/{session_id}", created_at=created
    )
    try:
        [env] = store.append([new_record(payload, actor=actor, privacy="private", subject=f"session:{session_id}")])
    except BaseException:
        shutil.rmtree(workspace, ignore_errors=True)
        raise
    return SessionInfo(session_id, project_id, workspace, created, env.id, False)


def get_session(store: Store, session_id: str) -> SessionInfo:
    _check_session_id(session_id)
    rows = store.ledger.rows("prov_sessions", session_id=session_id)
    if not rows:
        raise NotFoundError(f"no session {session_id}", field="session")
    env = store.ledger.get(rows[0]["record_id"])
    p = env.payload_value
    deleted = bool(store.ledger.rows("prov_session_deletions", session_id=session_id))
    return SessionInfo(session_id, p["projectId"], workspace_of(store, session_id), p["createdAt"], env.id, deleted)


def list_sessions(store: Store, project_id: str | None = None) -> list[SessionInfo]:
    out = []
    for env in store.ledger.read(type=SESSION):
        p = env.payload_value
        if project_id is None or p["projectId"] == project_id:
            deleted = bool(store.ledger.rows("prov_session_deletions", session_id=p["sessionId"]))
            out.append(
                SessionInfo(
                    p["sessionId"], p["projectId"], workspace_of(store, p["sessionId"]), p["createdAt"], env.id, deleted
                )
            )
    return out


def delete_session(store: Store, session_id: str, *, actor: str = "user") -> SessionInfo:
    """Record the deletion, then remove the workspace. Artifacts, versions, derivations and CAS
    objects stay; lineage reports the session as deleted."""
    info = get_session(store, session_id)
    if info.deleted:
        raise ConflictError(f"session {session_id} is already deleted", field="session")
    payload = SessionDeleted(session_id=session_id, deleted_at=format_time(datetime.now(UTC)), workspace_removed=True)
    store.append([new_record(payload, actor=actor, privacy="private", subject=f"session:{session_id}")])
    shutil.rmtree(info.workspace, ignore_errors=True)
    return SessionInfo(info.session_id, info.project_id, info.workspace, info.created_at, info.record_id, True)


def require_live_session(store: Store, session_id: str) -> SessionInfo:
    info = get_session(store, session_id)
    if info.deleted:
        raise ConflictError(f"session {session_id} was deleted; start a new one", field="session")
    if not info.workspace.is_dir():
        raise NotFoundError(f"the workspace of session {session_id} is missing: {info.workspace}", field="session")
    return info
