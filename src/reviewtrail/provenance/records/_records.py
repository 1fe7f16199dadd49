"""Provenance record types and their projections (docs/architecture.md, "Provenance").

Wire names are camelCase; Python attributes are snake_case.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Annotated, Any, Literal

from msgspec import Meta, field

from reviewtrail._struct import PayloadStruct
from reviewtrail.ledger import Envelope, Projection, ProjectionTable, record_type

__all__ = [
    "ARTIFACT_VERSION",
    "DERIVATION",
    "EXECUTION_RUN",
    "ORIGINS",
    "PROJECTIONS",
    "PROVENANCE_PROJECTION",
    "RECORD_TYPES",
    "SESSION",
    "SESSION_DELETED",
    "ArtifactDerivation",
    "ArtifactVersion",
    "ExecutionRun",
    "Origin",
    "SessionCreated",
    "SessionDeleted",
    "artifact_id_for",
]

SESSION = "provenance.session@1"
SESSION_DELETED = "provenance.session-deleted@1"
EXECUTION_RUN = "provenance.execution-run@1"
DERIVATION = "provenance.artifact-derivation@1"
ARTIFACT_VERSION = "provenance.artifact-version@1"

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


def _rows(env: Envelope) -> Iterable[tuple[str, dict[str, Any]]]:
    if not env.type.startswith("provenance."):
        return
    p = env.payload_value
    if env.type == SESSION:
        yield (
            "prov_sessions",
            {
                "session_id": p["sessionId"],
                "project_id": p["projectId"],
                "record_id": env.id,
                "deleted_record_id": None,
            },
        )
    elif env.type == SESSION_DELETED:
        yield "prov_session_deletions", {"session_id": p["sessionId"], "record_id": env.id}
    elif env.type == EXECUTION_RUN:
        yield (
            "prov_runs",
            {
                "record_id": env.id,
                "run_id": p["runId"],
                "session_id": p["sessionId"],
                "seq": env.seq,
                "status": p["status"],
            },
        )
    elif env.type == DERIVATION:
        yield (
            "prov_derivations",
            {
                "record_id": env.id,
                "session_id": p["sessionId"],
                "path": p["path"],
                "digest": p["content"]["digest"],
                "seq": env.seq,
            },
        )
    elif env.type == ARTIFACT_VERSION:
        yield (
            "prov_artifact_versions",
            {
                "artifact_id": p["artifactId"],
                "version": p["version"],
                "project_id": p["projectId"],
                "name": p["name"],
                "record_id": env.id,
                "seq": env.seq,
            },
        )


PROVENANCE_PROJECTION = Projection(
    name="provenance",
    version=1,
    tables=(
        ProjectionTable(
            "prov_sessions",
            (("session_id", "text"), ("project_id", "text"), ("record_id", "text"), ("deleted_record_id", "text")),
            key=("session_id",),
        ),
        ProjectionTable("prov_session_deletions", (("session_id", "text"), ("record_id", "text")), key=("session_id",)),
        ProjectionTable(
            "prov_runs",
            (("record_id", "text"), ("run_id", "text"), ("session_id", "text"), ("seq", "int"), ("status", "text")),
            key=("record_id",),
            indexes=(("run_id",), ("session_id",)),
        ),
        ProjectionTable(
            "prov_derivations",
            (("record_id", "text"), ("session_id", "text"), ("path", "text"), ("digest", "text"), ("seq", "int")),
            key=("record_id",),
            indexes=(("session_id", "path"), ("digest",)),
        ),
        ProjectionTable(
            "prov_artifact_versions",
            (
                ("artifact_id", "text"),
                ("version", "int"),
                ("project_id", "text"),
                ("name", "text"),
                ("record_id", "text"),
                ("seq", "int"),
            ),
            key=("artifact_id", "version"),
            indexes=(("project_id", "name"),),
            on_conflict="error",
        ),
    ),
    rows=_rows,
)

# What this package adds to the application's record catalog (see reviewtrail.app).
RECORD_TYPES: tuple[type[PayloadStruct], ...] = (
    SessionCreated,
    SessionDeleted,
    ExecutionRun,
    ArtifactDerivation,
    ArtifactVersion,
)
PROJECTIONS: tuple[Projection, ...] = (PROVENANCE_PROJECTION,)
