"""Provenance record types and their projections (docs/architecture.md, "Provenance").

Wire names are camelCase; Python attributes are snake_case.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from msgspec import Meta, field

from reviewtrail._struct import PayloadStruct
from reviewtrail.ledger import record_type
from reviewtrail.provenance.catalog import (
    ARTIFACT_VERSION,
    DERIVATION,
    EXECUTION_RUN,
    SESSION,
    SESSION_DELETED,
)

__all__ = [
    "ORIGINS",
    "RECORD_TYPES",
    "ArtifactDerivation",
    "ArtifactVersion",
    "ExecutionRun",
    "Origin",
    "SessionCreated",
    "SessionDeleted",
    "artifact_id_for",
]

Origin = Literal["user_upload", "mcp_download", "llm_declared", "legacy_auto"]
ORIGINS: tuple[Origin, ...] = ("user_upload", "mcp_download", "llm_declared", "legacy_auto")
RunStatus = Literal["succeeded", "failed", "cancelled"]
Ref = dict[str, Any]  # a CasRef in wire form: {pool, digest, size, mediaType}

_ARTIFACT_NS = uuid.UUID("6f1c0f0e-2b1a-4d3c-9a57-2c4e8d1f0a11")


def artifact_id_for(project_id: str, name: str) -> str:
    """The stable artifact id of ``(projectId, name)``: the same on every machine, for ever."""
    return str(uuid.uuid5(_ARTIFACT_NS, f"{project_id}\x00{name}"))


@record_type(SESSION)
class SessionCreated(PayloadStruct, frozen=True, rename="camel"):
    session_id: str
    project_id: str
    workspace: str
    created_at: str


@record_type(SESSION_DELETED)
class SessionDeleted(PayloadStruct, frozen=True, rename="camel"):
    session_id: str
    deleted_at: str
    workspace_removed: bool


@record_type(EXECUTION_RUN)
class ExecutionRun(PayloadStruct, frozen=True, kw_only=True, rename="camel"):
    run_id: str
    session_id: str
    tool_name: str
    language: Literal["python", "bash"]
    code: Ref
    stdout: Ref | None
    stderr: Ref | None
    stdout_truncated: bool
    stderr_truncated: bool
    exit_code: int | None
    started_at: str
    ended_at: str
    environment_revision_id: str
    kernel_mode: Literal["one-shot", "persistent"]
    kernel_id: str | None
    permission_epoch_id: str
    network_policy: Literal["none", "allowlist"] = "none"
    network_access_revision: str | None
    sandbox: Literal["bubblewrap"] = "bubblewrap"
    created_files: list[str]
    modified_files: list[str]
    status: RunStatus
    working_directory: str
    env_snapshot: Ref | None
    timeout_seconds: float
    error: str | None = None
    # Optional (absent from older records): the allowlist, its pinned addresses and the proxy's
    # decisions ({host, port, decision: allowed|denied, reason, time, method, address|error});
    # the resource limits the run had and the one it hit.
    network_allowlist: list[str] | None = None
    network_resolve: dict[str, str] | None = None
    network_decisions: list[dict[str, Any]] | None = None
    network_decisions_dropped: int | None = None
    resource_limits: dict[str, int] | None = None
    limit_exceeded: Literal["memory", "procs", "file-size", "output", "time"] | None = None
    # Optional (absent from older records): which mechanism enforced each limit, e.g.
    # {"memory": "cgroup-v1", "procs": "cgroup-v1", "file-size": "rlimit-fsize", ...}.
    enforced_by: dict[str, str] | None = None


@record_type(DERIVATION)
class ArtifactDerivation(PayloadStruct, frozen=True, rename="camel"):
    path: str
    content: Ref
    execution_run_ids: list[str]
    session_id: str
    previous_content: Ref | None = None


@record_type(ARTIFACT_VERSION)
class ArtifactVersion(PayloadStruct, frozen=True, kw_only=True, rename="camel"):
    artifact_id: str
    project_id: str
    name: str
    version: Annotated[int, Meta(ge=1)]
    origin: Origin
    content: Ref
    session_snapshot: dict[str, Any] | None
    source_path: str | None = None
    derivation_ids: list[str] = field(default_factory=list)
    prompt_manifest_id: str | None = None
    external_ref: str | None = None
    created_at: str


# What this package adds to the application's record catalog (see reviewtrail.app).
RECORD_TYPES: tuple[type[PayloadStruct], ...] = (
    SessionCreated,
    SessionDeleted,
    ExecutionRun,
    ArtifactDerivation,
    ArtifactVersion,
)
