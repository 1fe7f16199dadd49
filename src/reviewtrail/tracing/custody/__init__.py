"""Traces in the store's custody: recording a call's trace files as a ``trace.review-call@1``
ledger record (and its save as ``trace.save-begun@1``), the payload models and their plain
checks, and comparing the trace files with their records and completing interrupted saves.
"""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.tracing.custody._call_record import ReviewCallRecord as ReviewCallRecord
    from reviewtrail.tracing.custody._ledger_check import trace_ledger_check as trace_ledger_check
    from reviewtrail.tracing.custody._ledger_check import trace_ledger_problems as trace_ledger_problems
    from reviewtrail.tracing.custody._ledger_repair import repair_trace_links as repair_trace_links
    from reviewtrail.tracing.custody._record import TraceResult as TraceResult
    from reviewtrail.tracing.custody._record import record_call as record_call
    from reviewtrail.tracing.custody._record import trace_review as trace_review
    from reviewtrail.tracing.custody._record import traced_review as traced_review
else:
    __getattr__, __dir__ = _face.lazy(__name__)
