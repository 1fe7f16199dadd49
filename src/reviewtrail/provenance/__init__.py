"""Provenance: sandboxed execution runs, sessions, artifacts and versions, lineage.

Public API::

    from reviewtrail.provenance import create_session, run_code, declare_artifact, upload_artifact
    from reviewtrail.provenance import lineage, render_tree, versions_of, get_version
    from reviewtrail.provenance import run_in_kernel, list_kernels, stop_kernels   # persistent kernels
"""

import typing

from reviewtrail import _face

# Each name loads on first use: the composition root reads the record types and query tables alone.
if typing.TYPE_CHECKING:
    from reviewtrail.provenance.artifacts._catalog import VersionInfo as VersionInfo
    from reviewtrail.provenance.artifacts._catalog import declare_artifact as declare_artifact
    from reviewtrail.provenance.artifacts._catalog import get_version as get_version
    from reviewtrail.provenance.artifacts._catalog import list_artifacts as list_artifacts
    from reviewtrail.provenance.artifacts._catalog import parse_spec as parse_spec
    from reviewtrail.provenance.artifacts._catalog import record_version as record_version
    from reviewtrail.provenance.artifacts._catalog import upload_artifact as upload_artifact
    from reviewtrail.provenance.artifacts._catalog import versions_of as versions_of
    from reviewtrail.provenance.artifacts._diff import VersionDiff as VersionDiff
    from reviewtrail.provenance.artifacts._graph import Edge as Edge
    from reviewtrail.provenance.artifacts._graph import LineageGraph as LineageGraph
    from reviewtrail.provenance.artifacts._graph import Node as Node
    from reviewtrail.provenance.artifacts._lineage import lineage as lineage
    from reviewtrail.provenance.artifacts._lineage import render_tree as render_tree
    from reviewtrail.provenance.catalog import PROJECTIONS as PROJECTIONS
    from reviewtrail.provenance.catalog import RECORD_TYPE_NAMES as RECORD_TYPE_NAMES
    from reviewtrail.provenance.export._signed import VerifiedStatement as VerifiedStatement
    from reviewtrail.provenance.export._signed import verify_envelope as verify_envelope
    from reviewtrail.provenance.export._views import PROVENANCE_FORMATS as PROVENANCE_FORMATS
    from reviewtrail.provenance.export._views import ProvenanceFormat as ProvenanceFormat
    from reviewtrail.provenance.export._views import ProvenanceQuery as ProvenanceQuery
    from reviewtrail.provenance.export._views import ProvenanceView as ProvenanceView
    from reviewtrail.provenance.export._views import diff_versions as diff_versions
    from reviewtrail.provenance.export._views import provenance_query as provenance_query
    from reviewtrail.provenance.export._views import provenance_view as provenance_view
    from reviewtrail.provenance.kernels._client import KernelAnswer as KernelAnswer
    from reviewtrail.provenance.kernels._client import KernelEntry as KernelEntry
    from reviewtrail.provenance.kernels._client import list_kernels as list_kernels
    from reviewtrail.provenance.kernels._client import run_in_kernel as run_in_kernel
    from reviewtrail.provenance.kernels._client import stop_kernels as stop_kernels
    from reviewtrail.provenance.kernels._host import KernelHostConfig as KernelHostConfig
    from reviewtrail.provenance.kernels._host import serve_kernel_host as serve_kernel_host
    from reviewtrail.provenance.kernels._session_kernel import SessionKernel as SessionKernel
    from reviewtrail.provenance.records._records import ORIGINS as ORIGINS
    from reviewtrail.provenance.records._records import RECORD_TYPES as RECORD_TYPES
    from reviewtrail.provenance.records._records import ArtifactDerivation as ArtifactDerivation
    from reviewtrail.provenance.records._records import ArtifactVersion as ArtifactVersion
    from reviewtrail.provenance.records._records import ExecutionRun as ExecutionRun
    from reviewtrail.provenance.records._records import SessionCreated as SessionCreated
    from reviewtrail.provenance.records._records import SessionDeleted as SessionDeleted
    from reviewtrail.provenance.records._records import artifact_id_for as artifact_id_for
    from reviewtrail.provenance.runs._pending import PendingRun as PendingRun
    from reviewtrail.provenance.runs._pending import pending_run_problems as pending_run_problems
    from reviewtrail.provenance.runs._pending import pending_runs as pending_runs
    from reviewtrail.provenance.runs._pending_repair import repair_pending_runs as repair_pending_runs
    from reviewtrail.provenance.runs._request import RunRequest as RunRequest
    from reviewtrail.provenance.runs._request import run_request as run_request
    from reviewtrail.provenance.runs._request import start_run as start_run
    from reviewtrail.provenance.runs._runs import RunOutcome as RunOutcome
    from reviewtrail.provenance.runs._runs import run_code as run_code
    from reviewtrail.provenance.runs._sessions import DEFAULT_PROJECT as DEFAULT_PROJECT
    from reviewtrail.provenance.runs._sessions import SessionInfo as SessionInfo
    from reviewtrail.provenance.runs._sessions import SessionRemoval as SessionRemoval
    from reviewtrail.provenance.runs._sessions import create_session as create_session
    from reviewtrail.provenance.runs._sessions import delete_session as delete_session
    from reviewtrail.provenance.runs._sessions import finish_session_removals as finish_session_removals
    from reviewtrail.provenance.runs._sessions import get_session as get_session
    from reviewtrail.provenance.runs._sessions import list_sessions as list_sessions
    from reviewtrail.provenance.runs._sessions import orphan_workspaces as orphan_workspaces
    from reviewtrail.provenance.runs._sessions import remove_orphan_workspaces as remove_orphan_workspaces
    from reviewtrail.provenance.runs._sessions import unfinished_session_removals as unfinished_session_removals
    from reviewtrail.provenance.runs._sessions import workspace_problems as workspace_problems
    from reviewtrail.provenance.sandbox._bwrap import require_bwrap as require_bwrap
    from reviewtrail.provenance.sandbox._limits import DEFAULT_LIMITS as DEFAULT_LIMITS
    from reviewtrail.provenance.sandbox._limits import ResourceLimits as ResourceLimits
    from reviewtrail.provenance.sandbox._limits import parse_size as parse_size
else:
    __getattr__, __dir__ = _face.lazy(__name__)
