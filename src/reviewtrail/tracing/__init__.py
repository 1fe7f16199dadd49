"""Reviewer-call tracing in the ``.aris/traces`` protocol layout.

Public API::

    from reviewtrail.tracing import ReviewCall, record_call, trace_review, traced_review
    from reviewtrail.tracing import model_family, assess, resolve_mode, verify_traces
    from reviewtrail.tracing import trace_ledger_problems, trace_ledger_check, repair_trace_links  # vs. the ledger
    from reviewtrail.tracing import validate_native_evidence  # host-session evidence of native reviewers
"""

import importlib
import typing

if typing.TYPE_CHECKING:
    from reviewtrail.tracing.commands._debug import (
        Divergence,
        RunSummary,
        RunView,
        Step,
        diff_calls,
        divergence,
        list_runs,
        show_run,
    )
    from reviewtrail.tracing.commands._save_request import TraceSaveRequest, save_trace, trace_save_request
    from reviewtrail.tracing.commands._trace_check import TraceCheck, check_traces
    from reviewtrail.tracing.custody._call_record import PROJECTIONS, RECORD_TYPES, ReviewCallRecord
    from reviewtrail.tracing.custody._ledger_check import trace_ledger_check, trace_ledger_problems
    from reviewtrail.tracing.custody._ledger_repair import repair_trace_links
    from reviewtrail.tracing.custody._record import TraceResult, record_call, trace_review, traced_review
    from reviewtrail.tracing.files._documents import ReviewCall, TraceMode
    from reviewtrail.tracing.files._gitignore import with_traces_ignored
    from reviewtrail.tracing.files._helper import InstalledHelper, install_helper, resolve_helper
    from reviewtrail.tracing.files._layout import check_name, existing_project_root, project_root
    from reviewtrail.tracing.files._modes import inline_mode, resolve_mode
    from reviewtrail.tracing.files._reader import TraceCall, TraceRun, find_run, iter_runs, load_run
    from reviewtrail.tracing.files._verify import load_schema, verify_traces
    from reviewtrail.tracing.native._native_evidence import NativeEvidence, validate_native_evidence
    from reviewtrail.tracing.otel._otel_request import (
        OtelExportOutcome,
        OtelExportRequest,
        export_trace_runs,
        otel_export_request,
    )
    from reviewtrail.tracing.rules._assurance import (
        SENTINELS,
        SUCCESS_STATUSES,
        Assurance,
        Identity,
        acceptance_status,
        assess,
        declared_mismatches,
        effective_reviewer,
        independence_verified,
        normalize_reported,
        review_independence,
    )
    from reviewtrail.tracing.rules._families import FAMILIES, UNKNOWN, model_family
    from reviewtrail.tracing.rules._gate import (
        AUTO_REVIEW_LOOP_MIN_SCORE,
        AUTO_REVIEW_LOOP_VERDICTS,
        GateOutcome,
        positive_gate,
    )

# Every name is loaded on first use, from the module that defines it: saving a trace needs neither
# the record model (pydantic), the OTLP export (protobuf), the debugging views (``trace list/show/diff``)
# nor the checks against the ledger, and must start fast.
_LAZY = {
    "FAMILIES": "rules._families",
    "PROJECTIONS": "custody._call_record",
    "RECORD_TYPES": "custody._call_record",
    "SENTINELS": "rules._assurance",
    "SUCCESS_STATUSES": "rules._assurance",
    "UNKNOWN": "rules._families",
    "Assurance": "rules._assurance",
    "Divergence": "commands._debug",
    "Identity": "rules._assurance",
    "NativeEvidence": "native._native_evidence",
    "OtelExportOutcome": "otel._otel_request",
    "OtelExportRequest": "otel._otel_request",
    "ReviewCall": "files._documents",
    "ReviewCallRecord": "custody._call_record",
    "RunView": "commands._debug",
    "Step": "commands._debug",
    "TraceCall": "files._reader",
    "TraceCheck": "commands._trace_check",
    "TraceMode": "files._documents",
    "TraceResult": "custody._record",
    "TraceRun": "files._reader",
    "TraceSaveRequest": "commands._save_request",
    "acceptance_status": "rules._assurance",
    "assess": "rules._assurance",
    "check_name": "files._layout",
    "check_traces": "commands._trace_check",
    "declared_mismatches": "rules._assurance",
    "diff_calls": "commands._debug",
    "divergence": "commands._debug",
    "effective_reviewer": "rules._assurance",
    "existing_project_root": "files._layout",
    "export_trace_runs": "otel._otel_request",
    "find_run": "files._reader",
    "independence_verified": "rules._assurance",
    "inline_mode": "files._modes",
    "install_helper": "files._helper",
    "InstalledHelper": "files._helper",
    "with_traces_ignored": "files._gitignore",
    "positive_gate": "rules._gate",
    "GateOutcome": "rules._gate",
    "AUTO_REVIEW_LOOP_MIN_SCORE": "rules._gate",
    "AUTO_REVIEW_LOOP_VERDICTS": "rules._gate",
    "iter_runs": "files._reader",
    "list_runs": "commands._debug",
    "RunSummary": "commands._debug",
    "load_run": "files._reader",
    "load_schema": "files._verify",
    "model_family": "rules._families",
    "normalize_reported": "rules._assurance",
    "otel_export_request": "otel._otel_request",
    "project_root": "files._layout",
    "record_call": "custody._record",
    "repair_trace_links": "custody._ledger_repair",
    "resolve_helper": "files._helper",
    "resolve_mode": "files._modes",
    "review_independence": "rules._assurance",
    "save_trace": "commands._save_request",
    "show_run": "commands._debug",
    "trace_ledger_check": "custody._ledger_check",
    "trace_ledger_problems": "custody._ledger_check",
    "trace_review": "custody._record",
    "trace_save_request": "commands._save_request",
    "traced_review": "custody._record",
    "validate_native_evidence": "native._native_evidence",
    "verify_traces": "files._verify",
}


def __getattr__(name: str) -> typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "AUTO_REVIEW_LOOP_MIN_SCORE",
    "AUTO_REVIEW_LOOP_VERDICTS",
    "FAMILIES",
    "PROJECTIONS",
    "RECORD_TYPES",
    "SENTINELS",
    "SUCCESS_STATUSES",
    "UNKNOWN",
    "Assurance",
    "Divergence",
    "GateOutcome",
    "Identity",
    "InstalledHelper",
    "NativeEvidence",
    "OtelExportOutcome",
    "OtelExportRequest",
    "ReviewCall",
    "ReviewCallRecord",
    "RunSummary",
    "RunView",
    "Step",
    "TraceCall",
    "TraceCheck",
    "TraceMode",
    "TraceResult",
    "TraceRun",
    "TraceSaveRequest",
    "acceptance_status",
    "assess",
    "check_name",
    "check_traces",
    "declared_mismatches",
    "diff_calls",
    "divergence",
    "effective_reviewer",
    "existing_project_root",
    "export_trace_runs",
    "find_run",
    "independence_verified",
    "inline_mode",
    "install_helper",
    "iter_runs",
    "list_runs",
    "load_run",
    "load_schema",
    "model_family",
    "normalize_reported",
    "otel_export_request",
    "positive_gate",
    "project_root",
    "record_call",
    "repair_trace_links",
    "resolve_helper",
    "resolve_mode",
    "review_independence",
    "save_trace",
    "show_run",
    "trace_ledger_check",
    "trace_ledger_problems",
    "trace_review",
    "trace_save_request",
    "traced_review",
    "validate_native_evidence",
    "verify_traces",
    "with_traces_ignored",
]
