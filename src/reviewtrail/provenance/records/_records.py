"""Provenance record types and their projections (docs/architecture.md, "Provenance").

Wire names are camelCase; Python attributes are snake_case.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field

from reviewtrail._strict import StrictBool, StrictFloat, StrictInt
from reviewtrail.ledger import Envelope, Projection, ProjectionTable, RecordPayload, record_type

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
class SessionCreated(RecordPayload):
    session_id: str = Field(alias="sessionId")
    project_id: str = Field(alias="projectId")
    workspace: str
    created_at: str = Field(alias="createdAt")


@record_type(SESSION_DELETED)
class SessionDeleted(RecordPayload):
    session_id: str = Field(alias="sessionId")
    deleted_at: str = Field(alias="deletedAt")
    workspace_removed: StrictBool = Field(alias="workspaceRemoved")


@record_type(EXECUTION_RUN)
class ExecutionRun(RecordPayload):
    run_id: str = Field(alias="runId")
    session_id: str = Field(alias="sessionId")
    tool_name: str = Field(alias="toolName")
    language: Literal["python", "bash"]
    code: Ref
    stdout: Ref | None
    stderr: Ref | None
    stdout_truncated: StrictBool = Field(alias="stdoutTruncated")
    stderr_truncated: StrictBool = Field(alias="stderrTruncated")
    exit_code: StrictInt | None = Field(alias="exitCode")
    started_at: str = Field(alias="startedAt")
    ended_at: str = Field(alias="endedAt")
    environment_revision_id: str = Field(alias="environmentRevisionId")
    kernel_mode: Literal["one-shot", "persistent"] = Field(alias="kernelMode")
    kernel_id: str | None = Field(alias="kernelId")
    permission_epoch_id: str = Field(alias="permissionEpochId")
    network_policy: Literal["none", "allowlist"] = Field(default="none", alias="networkPolicy")
    network_access_revision: str | None = Field(alias="networkAccessRevision")
    sandbox: Literal["bubblewrap"] = "bubblewrap"
    created_files: list[str] = Field(alias="createdFiles")
    modified_files: list[str] = Field(alias="modifiedFiles")
    status: RunStatus
    working_directory: str = Field(alias="workingDirectory")
    env_snapshot: Ref | None = Field(alias="envSnapshot")
    timeout_seconds: StrictFloat = Field(alias="timeoutSeconds")
    error: str | None = None
    # Optional (absent from older records): the allowlist, its pinned addresses and the proxy's
    # decisions ({host, port, decision: allowed|denied, reason, time, method, address|error});
    # the resource limits the run had and the one it hit.
    network_allowlist: list[str] | None = Field(default=None, alias="networkAllowlist")
    network_resolve: dict[str, str] | None = Field(default=None, alias="networkResolve")
    network_decisions: list[dict[str, Any]] | None = Field(default=None, alias="networkDecisions")
    network_decisions_dropped: StrictInt | None = Field(default=None, alias="networkDecisionsDropped")
    resource_limits: dict[str, StrictInt] | None = Field(default=None, alias="resourceLimits")
    limit_exceeded: Literal["memory", "procs", "file-size", "output", "time"] | None = Field(
        default=None, alias="limitExceeded"
    )
    # Optional (absent from older records): which mechanism enforced each limit, e.g.
    # {"memory": "cgroup-v1", "procs": "cgroup-v1", "file-size": "rlimit-fsize", ...}.
    enforced_by: dict[str, str] | None = Field(default=None, alias="enforcedBy")


@record_type(DERIVATION)
class ArtifactDerivation(RecordPayload):
    path: str
    content: Ref
    execution_run_ids: list[str] = Field(alias="executionRunIds")
    session_id: str = Field(alias="sessionId")
    previous_content: Ref | None = Field(default=None, alias="previousContent")


@record_type(ARTIFACT_VERSION)
class ArtifactVersion(RecordPayload):
    artifact_id: str = Field(alias="artifactId")
    project_id: str = Field(alias="projectId")
    name: str
    version: StrictInt = Field(ge=1)
    origin: Origin
    content: Ref
    session_snapshot: dict[str, Any] | None = Field(alias="sessionSnapshot")
    source_path: str | None = Field(default=None, alias="sourcePath")
    derivation_ids: list[str] = Field(default_factory=list, alias="derivationIds")
    prompt_manifest_id: str | None = Field(default=None, alias="promptManifestId")
    external_ref: str | None = Field(default=None, alias="externalRef")
    created_at: str = Field(alias="createdAt")


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
RECORD_TYPES: tuple[type[RecordPayload], ...] = (
    SessionCreated,
    SessionDeleted,
    ExecutionRun,
    ArtifactDerivation,
    ArtifactVersion,
)
PROJECTIONS: tuple[Projection, ...] = (PROVENANCE_PROJECTION,)
