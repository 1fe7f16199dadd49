"""Provenance: sandboxed execution runs, sessions, artifacts and versions, lineage.

Public API::

    from reviewtrail.provenance import create_session, run_code, declare_artifact, upload_artifact
    from reviewtrail.provenance import lineage, render_tree, versions_of, get_version
    from reviewtrail.provenance import run_in_kernel, list_kernels, stop_kernels   # persistent kernels
"""

from reviewtrail.provenance.artifacts._catalog import (
    VersionInfo,
    declare_artifact,
    get_version,
    list_artifacts,
    parse_spec,
    record_version,
    upload_artifact,
    versions_of,
)
from reviewtrail.provenance.artifacts._diff import VersionDiff
from reviewtrail.provenance.artifacts._graph import Edge, LineageGraph, Node
from reviewtrail.provenance.artifacts._lineage import lineage, render_tree
from reviewtrail.provenance.export._signed import VerifiedStatement, verify_envelope
from reviewtrail.provenance.export._views import (
    PROVENANCE_FORMATS,
    ProvenanceFormat,
    ProvenanceQuery,
    ProvenanceView,
    diff_versions,
    provenance_query,
    provenance_view,
)
from reviewtrail.provenance.kernels._client import KernelAnswer, KernelEntry, list_kernels, run_in_kernel, stop_kernels
from reviewtrail.provenance.kernels._host import KernelHostConfig, serve_kernel_host
from reviewtrail.provenance.kernels._session_kernel import SessionKernel
from reviewtrail.provenance.records._records import (
    ORIGINS,
    PROJECTIONS,
    RECORD_TYPES,
    ArtifactDerivation,
    ArtifactVersion,
    ExecutionRun,
    SessionCreated,
    SessionDeleted,
    artifact_id_for,
)
from reviewtrail.provenance.runs._pending import PendingRun, pending_run_problems, pending_runs
from reviewtrail.provenance.runs._pending_repair import repair_pending_runs
from reviewtrail.provenance.runs._request import RunRequest, run_request, start_run
from reviewtrail.provenance.runs._runs import RunOutcome, run_code
from reviewtrail.provenance.runs._sessions import (
    DEFAULT_PROJECT,
    SessionInfo,
    SessionRemoval,
    create_session,
    delete_session,
    finish_session_removals,
    get_session,
    list_sessions,
    orphan_workspaces,
    remove_orphan_workspaces,
    unfinished_session_removals,
    workspace_problems,
)
from reviewtrail.provenance.sandbox._bwrap import require_bwrap
from reviewtrail.provenance.sandbox._limits import DEFAULT_LIMITS, ResourceLimits, parse_size

__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_PROJECT",
    "ORIGINS",
    "PROJECTIONS",
    "PROVENANCE_FORMATS",
    "RECORD_TYPES",
    "ArtifactDerivation",
    "ArtifactVersion",
    "Edge",
    "ExecutionRun",
    "KernelAnswer",
    "KernelEntry",
    "KernelHostConfig",
    "LineageGraph",
    "Node",
    "PendingRun",
    "ProvenanceFormat",
    "ProvenanceQuery",
    "ProvenanceView",
    "ResourceLimits",
    "RunOutcome",
    "RunRequest",
    "SessionCreated",
    "SessionDeleted",
    "SessionInfo",
    "SessionKernel",
    "SessionRemoval",
    "VerifiedStatement",
    "VersionDiff",
    "VersionInfo",
    "artifact_id_for",
    "create_session",
    "declare_artifact",
    "delete_session",
    "diff_versions",
    "finish_session_removals",
    "get_session",
    "get_version",
    "lineage",
    "list_artifacts",
    "list_kernels",
    "list_sessions",
    "orphan_workspaces",
    "parse_size",
    "parse_spec",
    "pending_run_problems",
    "pending_runs",
    "provenance_query",
    "provenance_view",
    "record_version",
    "remove_orphan_workspaces",
    "render_tree",
    "repair_pending_runs",
    "require_bwrap",
    "run_code",
    "run_in_kernel",
    "run_request",
    "serve_kernel_host",
    "start_run",
    "stop_kernels",
    "unfinished_session_removals",
    "upload_artifact",
    "verify_envelope",
    "versions_of",
    "workspace_problems",
]
