"""Sessions own workspaces. Deleting a session removes its workspace only.

Deletion is resumable: the deletion is recorded first, then the workspace is removed. A
process killed in between (or a workspace that could not be removed) leaves a session
recorded as deleted whose folder still exists; ``session rm`` again, or
``finish_session_removals`` (``verify --repair``), removes the rest without recording the
deletion a second time.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from reviewtrail.errors import ConflictError, IntegrityError, InvalidInputError, NotFoundError
from reviewtrail.ledger import format_time, new_id, new_record
from reviewtrail.provenance.catalog import SESSION
from reviewtrail.provenance.records._records import SessionCreated, SessionDeleted
from reviewtrail.provenance.records._storage_errors import disk_full_errors, refuse_read_only
from reviewtrail.provenance.runs._declare_guards import no_pending_runs
from reviewtrail.provenance.runs._workspace_fs import removal_lock, remove_workspace
from reviewtrail.store import Store

if TYPE_CHECKING:
    from reviewtrail.ledger import Envelope

__all__ = [
    "DEFAULT_PROJECT",
    "SessionInfo",
    "SessionRemoval",
    "check_project",
    "create_session",
    "delete_session",
    "finish_session_removals",
    "get_session",
    "list_sessions",
    "orphan_workspaces",
    "remove_orphan_workspaces",
    "unfinished_session_removals",
    "workspace_of",
    "workspace_problems",
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
    refuse_read_only(store, "creating a session")
    session_id = new_id()
    workspace = workspace_of(store, session_id)
    with disk_full_errors("creating the workspace of a new session", field="session"):
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
        session_id, project, created = _session_fields(env)
        if project_id is None or project == project_id:
            deleted = bool(store.ledger.rows("prov_session_deletions", session_id=session_id))
            out.append(SessionInfo(session_id, project, workspace_of(store, session_id), created, env.id, deleted))
    return out


def _session_fields(env: Envelope) -> tuple[str, str, str]:
    """(sessionId, projectId, createdAt) of a session record; ``IntegrityError`` (exit 4) naming the
    record when its payload cannot say (validated on write, so it was altered since)."""
    try:
        p = env.payload_value
        fields = (_check_session_id(p["sessionId"]), p["projectId"], p["createdAt"])
        if not all(isinstance(value, str) for value in fields):
            raise TypeError("a field is not a string")
    except (ValueError, KeyError, TypeError) as exc:  # not JSON, or not a session's fields
        raise IntegrityError(
            f"the session record at seq {env.seq} ({env.id}) cannot be read ({type(exc).__name__}: {exc}): "
            "it was altered; run 'reviewtrail verify'",
            field="ledger",
        ) from None
    return fields


@dataclass(frozen=True)
class SessionRemoval(SessionInfo):
    """What :func:`delete_session` did. ``resumed``: the deletion was already recorded by an
    earlier, interrupted removal; this one only removed what was left of the workspace."""

    resumed: bool = False

    def to_json(self) -> dict[str, object]:
        return {**super().to_json(), "resumed": self.resumed}


def delete_session(store: Store, session_id: str, *, actor: str = "user") -> SessionRemoval:
    """Record the deletion, then remove the workspace. Artifacts, versions, derivations and CAS
    objects stay; lineage reports the session as deleted.

    Re-running it after an interrupted removal finishes the job (``resumed``) and records
    nothing more; a session already deleted with no workspace left is a ConflictError.
    """
    get_session(store, session_id)  # not found / not a session id, before taking the lock
    with removal_lock(_workspaces(store)):
        info = get_session(store, session_id)
        if info.deleted and not os.path.lexists(info.workspace):
            raise ConflictError(f"session {session_id} is already deleted", field="session")
        if info.deleted:
            remove_workspace(info.workspace, session_id)
        else:
            # Not while a run writes there; an interrupted run is recorded by `verify --repair` from its workspace.
            with no_pending_runs(store, session_id, then="delete the session again", shared=False):
                payload = SessionDeleted(
                    session_id=session_id, deleted_at=format_time(datetime.now(UTC)), workspace_removed=True
                )
                store.append([new_record(payload, actor=actor, privacy="private", subject=f"session:{session_id}")])
                remove_workspace(info.workspace, session_id)
    return SessionRemoval(
        info.session_id, info.project_id, info.workspace, info.created_at, info.record_id, True, resumed=info.deleted
    )


def _deleted_with_workspace(store: Store) -> list[tuple[str, Path]]:
    if store.root is None:
        return []
    out = []
    for row in store.ledger.rows("prov_session_deletions"):
        session_id = row["session_id"]
        if not isinstance(session_id, str) or _SESSION.fullmatch(session_id) is None:
            continue
        workspace = workspace_of(store, session_id)
        if os.path.lexists(workspace):
            out.append((session_id, workspace))
    return sorted(out)


def unfinished_session_removals(store: Store) -> list[str]:
    """Problems for ``verify``: sessions recorded as deleted whose workspace folder still exists."""
    return [
        f"session {session_id} is recorded as deleted but its workspace still exists ({workspace}): "
        f"run `reviewtrail verify --repair` (or `reviewtrail session rm {session_id}`) to remove the rest"
        for session_id, workspace in _deleted_with_workspace(store)
    ]


def finish_session_removals(store: Store) -> list[str]:
    """For ``verify --repair``: remove what is left of deleted sessions' workspaces; returns what was done.

    Nothing is recorded (the deletions already are). Raises BackendUnavailableError naming
    the first workspace that cannot be removed.
    """
    if store.root is None:
        return []
    done = []
    with removal_lock(_workspaces(store)):
        for session_id, workspace in _deleted_with_workspace(store):
            if remove_workspace(workspace, session_id):
                done.append(f"removed the rest of the workspace of deleted session {session_id} ({workspace})")
    return done


def _not_a_folder_in_the_store(workspace: Path) -> str | None:
    """Why a workspace is not a plain folder of the store (a symlink would bind its target as /workspace)."""
    for path in (workspace.parent, workspace):
        if path.is_symlink():
            return f"{path} is a symlink (to {os.readlink(path)}), not a folder in the store"
    return None


def workspace_problems(store: Store) -> list[str]:
    """Problems for ``verify``: live sessions whose workspace is missing or is not a plain folder."""
    if store.root is None:
        return []
    problems: list[str] = []
    for env in store.ledger.read(type=SESSION):
        try:
            session_id, _, _ = _session_fields(env)
        except IntegrityError as exc:  # a damaged record: reported, and the other sessions checked
            problems.append(str(exc))
            continue
        if store.ledger.rows("prov_session_deletions", session_id=session_id):
            continue
        workspace = workspace_of(store, session_id)
        why = _not_a_folder_in_the_store(workspace)
        if why is not None:
            problems.append(f"session {session_id}: workspace {why}")
        elif not workspace.is_dir():
            problems.append(f"session {session_id}: workspace {workspace} is missing")
    return problems


_ORPHAN_MIN_AGE_S = 60.0


def _orphan_workspaces(store: Store) -> list[Path]:
    base = _workspaces(store)
    if base.is_symlink() or not base.is_dir():
        return []
    known: set[str] = set()
    for env in store.ledger.read(type=SESSION):
        try:
            known.add(_session_fields(env)[0])
        except IntegrityError:  # a damaged record (workspace_problems reports it) might name any folder
            return []
    return [p for p in sorted(base.iterdir()) if not p.name.startswith(".") and p.name not in known]


def orphan_workspaces(store: Store) -> list[str]:
    """Notes for ``verify``: folders under ``workspaces/`` with no recorded session — a
    ``session new`` killed between making the folder and recording it (or one in progress)."""
    if store.root is None:
        return []
    return [
        f"workspaces/{p.name}: a folder with no recorded session (an interrupted or running 'session new'); "
        "'reviewtrail verify --repair' removes it when it is empty"
        for p in _orphan_workspaces(store)
    ]


def remove_orphan_workspaces(store: Store) -> list[str]:
    """For ``verify --repair``: remove empty workspace folders no session record names."""
    if store.root is None:
        return []
    import time

    done: list[str] = []
    settled = time.time() - _ORPHAN_MIN_AGE_S  # a `session new` in progress records its folder in milliseconds
    for path in _orphan_workspaces(store):
        if path.is_dir() and not path.is_symlink() and path.stat().st_mtime < settled and not any(path.iterdir()):
            path.rmdir()
            done.append(f"removed workspaces/{path.name}, an empty folder no session record names")
    return done


def require_live_session(store: Store, session_id: str) -> SessionInfo:
    info = get_session(store, session_id)
    if info.deleted:
        raise ConflictError(f"session {session_id} was deleted; start a new one", field="session")
    why = _not_a_folder_in_the_store(info.workspace)
    if why is not None:
        raise IntegrityError(f"the workspace of session {session_id}: {why}; refusing to run there", field="session")
    if not info.workspace.is_dir():
        raise NotFoundError(f"the workspace of session {session_id} is missing: {info.workspace}", field="session")
    return info
