"""Reviewer-call tracing in the ``.aris/traces`` protocol layout.

Each part is a package with its own public API; import the one you use::

    from reviewtrail.tracing.files import ReviewCall, resolve_mode, verify_traces, iter_runs  # the trace files
    from reviewtrail.tracing.custody import record_call, trace_review, traced_review  # vs. the ledger
    from reviewtrail.tracing.rules import model_family, assess, positive_gate  # the pure rules
    from reviewtrail.tracing.commands import save_trace, check_traces, show_run  # the trace commands
    from reviewtrail.tracing.otel import export_trace_runs  # the OpenTelemetry export
    from reviewtrail.tracing.native import validate_native_evidence  # host-session evidence of native reviewers

Here stand only the record types (and their names) and query tables, which the composition root takes
from every package. Every name loads on first use: saving a trace needs neither the record model, the
OTLP export, the debugging views nor the checks against the ledger, and must start fast.
"""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.tracing.catalog import PROJECTIONS as PROJECTIONS
    from reviewtrail.tracing.catalog import RECORD_TYPE_NAMES as RECORD_TYPE_NAMES
    from reviewtrail.tracing.custody._call_record import RECORD_TYPES as RECORD_TYPES
else:
    __getattr__, __dir__ = _face.lazy(__name__)
