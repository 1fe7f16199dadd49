"""The OpenTelemetry export of trace runs (``trace export-otel``): spans and their GenAI
attributes, the ledger facts of reviewer-specialist calls, the OTLP settings, the protobuf
encoding, and the sending to a file or a collector.
"""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.tracing.otel._otel_request import OtelExportOutcome as OtelExportOutcome
    from reviewtrail.tracing.otel._otel_request import OtelExportRequest as OtelExportRequest
    from reviewtrail.tracing.otel._otel_request import export_trace_runs as export_trace_runs
    from reviewtrail.tracing.otel._otel_request import otel_export_request as otel_export_request
else:
    __getattr__, __dir__ = _face.lazy(__name__)
