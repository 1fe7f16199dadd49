"""Reviewer-call tracing in the ``.aris/traces`` protocol layout.

Public API::

    from reviewtrail.tracing import ReviewCall, record_call, trace_review, traced_review
    from reviewtrail.tracing import model_family, assess, resolve_mode, verify_traces
    from reviewtrail.tracing import trace_ledger_problems, trace_ledger_check, repair_trace_links  # vs. the ledger
    from reviewtrail.tracing import validate_native_evidence  # host-session evidence of native reviewers
"""

import typing

from reviewtrail import _face

# Every name is loaded on first use, from the module that defines it: saving a trace needs neither
# the record model (pydantic), the OTLP export (protobuf), the debugging views (``trace list/show/diff``)
# nor the checks against the ledger, and must start fast.
if typing.TYPE_CHECKING:
    from reviewtrail.tracing.catalog import PROJECTIONS as PROJECTIONS
    from reviewtrail.tracing.catalog import RECORD_TYPE_NAMES as RECORD_TYPE_NAMES
    from reviewtrail.tracing.commands._debug import Divergence as Divergence
    from reviewtrail.tracing.commands._debug import RunSummary as RunSummary
    from reviewtrail.tracing.commands._debug import RunView as RunView
    from reviewtrail.tracing.commands._debug import Step as Step
    from reviewtrail.tracing.commands._debug import diff_calls as diff_calls
    from reviewtrail.tracing.commands._debug import divergence as divergence
    from reviewtrail.tracing.commands._debug import list_runs as list_runs
    from reviewtrail.tracing.commands._debug import show_run as show_run
    from reviewtrail.tracing.commands._save_request import TraceSaveRequest as TraceSaveRequest
    from reviewtrail.tracing.commands._save_request import save_trace as save_trace
    from reviewtrail.tracing.commands._save_request import trace_save_request as trace_save_request
    from reviewtrail.tracing.commands._trace_check import TraceCheck as TraceCheck
    from reviewtrail.tracing.commands._trace_check import check_traces as check_traces
    from reviewtrail.tracing.custody._call_record import RECORD_TYPES as RECORD_TYPES
    from reviewtrail.tracing.custody._call_record import ReviewCallRecord as ReviewCallRecord
    from reviewtrail.tracing.custody._ledger_check import trace_ledger_check as trace_ledger_check
    from reviewtrail.tracing.custody._ledger_check import trace_ledger_problems as trace_ledger_problems
    from reviewtrail.tracing.custody._ledger_repair import repair_trace_links as repair_trace_links
    from reviewtrail.tracing.custody._record import TraceResult as TraceResult
    from reviewtrail.tracing.custody._record import record_call as record_call
    from reviewtrail.tracing.custody._record import trace_review as trace_review
    from reviewtrail.tracing.custody._record import traced_review as traced_review
    from reviewtrail.tracing.files._documents import ReviewCall as ReviewCall
    from reviewtrail.tracing.files._documents import TraceMode as TraceMode
    from reviewtrail.tracing.files._gitignore import with_traces_ignored as with_traces_ignored
    from reviewtrail.tracing.files._helper import InstalledHelper as InstalledHelper
    from reviewtrail.tracing.files._helper import install_helper as install_helper
    from reviewtrail.tracing.files._helper import resolve_helper as resolve_helper
    from reviewtrail.tracing.files._layout import check_name as check_name
    from reviewtrail.tracing.files._layout import existing_project_root as existing_project_root
    from reviewtrail.tracing.files._layout import project_root as project_root
    from reviewtrail.tracing.files._modes import inline_mode as inline_mode
    from reviewtrail.tracing.files._modes import resolve_mode as resolve_mode
    from reviewtrail.tracing.files._reader import TraceCall as TraceCall
    from reviewtrail.tracing.files._reader import TraceRun as TraceRun
    from reviewtrail.tracing.files._reader import find_run as find_run
    from reviewtrail.tracing.files._reader import iter_runs as iter_runs
    from reviewtrail.tracing.files._reader import load_run as load_run
    from reviewtrail.tracing.files._verify import load_schema as load_schema
    from reviewtrail.tracing.files._verify import verify_traces as verify_traces
    from reviewtrail.tracing.native._native_evidence import NativeEvidence as NativeEvidence
    from reviewtrail.tracing.native._native_evidence import validate_native_evidence as validate_native_evidence
    from reviewtrail.tracing.otel._otel_request import OtelExportOutcome as OtelExportOutcome
    from reviewtrail.tracing.otel._otel_request import OtelExportRequest as OtelExportRequest
    from reviewtrail.tracing.otel._otel_request import export_trace_runs as export_trace_runs
    from reviewtrail.tracing.otel._otel_request import otel_export_request as otel_export_request
    from reviewtrail.tracing.rules._assurance import SENTINELS as SENTINELS
    from reviewtrail.tracing.rules._assurance import SUCCESS_STATUSES as SUCCESS_STATUSES
    from reviewtrail.tracing.rules._assurance import Assurance as Assurance
    from reviewtrail.tracing.rules._assurance import Identity as Identity
    from reviewtrail.tracing.rules._assurance import acceptance_status as acceptance_status
    from reviewtrail.tracing.rules._assurance import assess as assess
    from reviewtrail.tracing.rules._assurance import declared_mismatches as declared_mismatches
    from reviewtrail.tracing.rules._assurance import effective_reviewer as effective_reviewer
    from reviewtrail.tracing.rules._assurance import independence_verified as independence_verified
    from reviewtrail.tracing.rules._assurance import normalize_reported as normalize_reported
    from reviewtrail.tracing.rules._assurance import review_independence as review_independence
    from reviewtrail.tracing.rules._families import FAMILIES as FAMILIES
    from reviewtrail.tracing.rules._families import UNKNOWN as UNKNOWN
    from reviewtrail.tracing.rules._families import model_family as model_family
    from reviewtrail.tracing.rules._gate import AUTO_REVIEW_LOOP_MIN_SCORE as AUTO_REVIEW_LOOP_MIN_SCORE
    from reviewtrail.tracing.rules._gate import AUTO_REVIEW_LOOP_VERDICTS as AUTO_REVIEW_LOOP_VERDICTS
    from reviewtrail.tracing.rules._gate import GateOutcome as GateOutcome
    from reviewtrail.tracing.rules._gate import positive_gate as positive_gate
else:
    __getattr__, __dir__ = _face.lazy(__name__)
