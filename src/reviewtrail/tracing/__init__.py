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
    from reviewtrail.tracing._assurance import (
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
    from reviewtrail.tracing._call_record import PROJECTIONS, RECORD_TYPES, ReviewCallRecord
    from reviewtrail.tracing._debug import (
        Divergence,
        RunSummary,
        RunView,
        Step,
        diff_calls,
        divergence,
        list_runs,
        show_run,
    )
    from reviewtrail.tracing._documents import ReviewCall, TraceMode
    from reviewtrail.tracing._families import FAMILIES, UNKNOWN, model_family
    from reviewtrail.tracing._gate import (
        AUTO_REVIEW_LOOP_MIN_SCORE,
        AUTO_REVIEW_LOOP_VERDICTS,
        GateOutcome,
        positive_gate,
    )
    from reviewtrail.tracing._gitignore import with_traces_ignored
    from reviewtrail.tracing._helper import InstalledHelper, install_helper, resolve_helper
    from reviewtrail.tracing._layout import check_name, existing_project_root, project_root
    from reviewtrail.tracing._ledger_check import trace_ledger_check, trace_ledger_problems
    from reviewtrail.tracing._ledger_repair import repair_trace_links
    from reviewtrail.tracing._modes import inline_mode, resolve_mode
    from reviewtrail.tracing._native_evidence import NativeEvidence, validate_native_evidence
    from reviewtrail.tracing._otel_request import (
        OtelExportOutcome,
        OtelExportRequest,
        export_trace_runs,
        otel_export_request,
    )
    from reviewtrail.tracing._payload_checks import PAYLOAD_CHECKS
    from reviewtrail.tracing._reader import TraceCall, TraceRun, find_run, iter_runs, load_run
    from reviewtrail.tracing._record import TraceResult, record_call, trace_review, traced_review
    from reviewtrail.tracing._save_request import TraceSaveRequest, save_trace, trace_save_request
    from reviewtrail.tracing._trace_check import TraceCheck, check_traces
    from reviewtrail.tracing._verify import load_schema, verify_traces

# Every name is loaded on first use, from the module that defines it: saving a trace needs neither
# the record model (pydantic), the OTLP export (protobuf), the debugging views (``trace list/show/diff``)
# nor the checks against the ledger, and must start fast.
_LAZY = {
    "FAMILIES": "_families",
    "PAYLOAD_CHECKS": "_payload_checks",
    "PROJECTIONS": "_call_record",
    "RECORD_TYPES": "_call_record",
    "SENTINELS": "_assurance",
    "SUCCESS_STATUSES": "_assurance",
    "UNKNOWN": "_families",
    "Assurance": "_assurance",
    "Divergence": "_debug",
    "Identity": "_assurance",
    "NativeEvidence": "_native_evidence",
    "OtelExportOutcome": "_otel_request",
    "OtelExportRequest": "_otel_request",
    "ReviewCall": "_documents",
    "ReviewCallRecord": "_call_record",
    "RunView": "_debug",
    "Step": "_debug",
    "TraceCall": "_reader",
    "TraceCheck": "_trace_check",
    "TraceMode": "_documents",
    "TraceResult": "_record",
    "TraceRun": "_reader",
    "TraceSaveRequest": "_save_request",
    "acceptance_status": "_assurance",
    "assess": "_assurance",
    "check_name": "_layout",
    "check_traces": "_trace_check",
    "declared_mismatches": "_assurance",
    "diff_calls": "_debug",
    "divergence": "_debug",
    "effective_reviewer": "_assurance",
    "existing_project_root": "_layout",
    "export_trace_runs": "_otel_request",
    "find_run": "_reader",
    "independence_verified": "_assurance",
    "inline_mode": "_modes",
    "install_helper": "_helper",
    "InstalledHelper": "_helper",
    "with_traces_ignored": "_gitignore",
    "positive_gate": "_gate",
    "GateOutcome": "_gate",
    "AUTO_REVIEW_LOOP_MIN_SCORE": "_gate",
    "AUTO_REVIEW_LOOP_VERDICTS": "_gate",
    "iter_runs": "_reader",
    "list_runs": "_debug",
    "RunSummary": "_debug",
    "load_run": "_reader",
    "load_schema": "_verify",
    "model_family": "_families",
    "normalize_reported": "_assurance",
    "otel_export_request": "_otel_request",
    "project_root": "_layout",
    "record_call": "_record",
    "repair_trace_links": "_ledger_repair",
    "resolve_helper": "_helper",
    "resolve_mode": "_modes",
    "review_independence": "_assurance",
    "save_trace": "_save_request",
    "show_run": "_debug",
    "trace_ledger_check": "_ledger_check",
    "trace_ledger_problems": "_ledger_check",
    "trace_review": "_record",
    "trace_save_request": "_save_request",
    "traced_review": "_record",
    "validate_native_evidence": "_native_evidence",
    "verify_traces": "_verify",
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
    "PAYLOAD_CHECKS",
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
