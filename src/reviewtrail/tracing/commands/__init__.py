"""The trace commands as library calls: ``trace save`` as a request (its options and input
handling), ``trace verify`` against the schemas, the rules and the project's store, and the
debugging views of ``trace ls``, ``show``, ``diff`` and ``divergence``.
"""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
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
else:
    __getattr__, __dir__ = _face.lazy(__name__)
