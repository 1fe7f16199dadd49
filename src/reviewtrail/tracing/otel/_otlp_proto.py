"""OTLP protobuf encoding of the export, with the messages of ``opentelemetry-proto``. Pure.

The export is assembled once, in its OTLP/JSON form (:func:`reviewtrail.tracing.otel._otel.otlp_json`);
this module turns that document into an ``ExportTraceServiceRequest``, field by field (ids:
hex -> bytes; 64-bit integers: decimal strings -> ints).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

__all__ = ["partial_success", "to_protobuf"]

_DOUBLES = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _value(value: Mapping[str, Any]) -> AnyValue:
    [(kind, raw)] = value.items()
    if kind == "stringValue":
        return AnyValue(string_value=raw)
    if kind == "boolValue":
        return AnyValue(bool_value=raw)
    if kind == "intValue":
        return AnyValue(int_value=int(raw))
    if kind == "doubleValue":
        return AnyValue(double_value=_DOUBLES[raw] if isinstance(raw, str) else float(raw))
    if kind == "arrayValue":
        out = AnyValue()
        out.array_value.values.extend(_value(v) for v in raw.get("values", []))
        return out
    raise ValueError(f"no protobuf form for the attribute value kind {kind!r}")


def _attributes(items: Any) -> list[KeyValue]:
    return [KeyValue(key=item["key"], value=_value(item["value"])) for item in items or []]


def _span(span: Mapping[str, Any]) -> Span:
    status = span.get("status") or {}
    return Span(
        trace_id=bytes.fromhex(span["traceId"]),
        span_id=bytes.fromhex(span["spanId"]),
        parent_span_id=bytes.fromhex(span.get("parentSpanId") or ""),
        name=span["name"],
        kind=int(span["kind"]),  # type: ignore[arg-type]  # an OTLP SpanKind number
        start_time_unix_nano=int(span["startTimeUnixNano"]),
        end_time_unix_nano=int(span["endTimeUnixNano"]),
        attributes=_attributes(span.get("attributes")),
        status=Status(code=int(status.get("code", 0)), message=status.get("message", "")),  # type: ignore[arg-type]
    )


def to_protobuf(doc: Mapping[str, Any]) -> ExportTraceServiceRequest:
    """The OTLP/JSON ``doc`` as an ``ExportTraceServiceRequest`` message (ids hex -> bytes)."""
    return ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                resource=Resource(attributes=_attributes((rs.get("resource") or {}).get("attributes"))),
                scope_spans=[
                    ScopeSpans(
                        scope=InstrumentationScope(
                            name=(ss.get("scope") or {}).get("name", ""),
                            version=(ss.get("scope") or {}).get("version", ""),
                        ),
                        spans=[_span(span) for span in ss.get("spans", [])],
                    )
                    for ss in rs.get("scopeSpans", [])
                ],
            )
            for rs in doc.get("resourceSpans", [])
        ]
    )


def partial_success(body: bytes, content_type: str) -> tuple[int, str | None]:
    """(rejected spans, error message) of an ``ExportTraceServiceResponse`` body, protobuf or JSON.

    An empty or unreadable body is a full success: the status code already said so.
    """
    if not body.strip():
        return 0, None
    if "json" in content_type.lower():
        return _partial_json(body)
    response = ExportTraceServiceResponse()
    try:
        response.ParseFromString(body)
    except Exception:  # google.protobuf's DecodeError: not a protobuf body after all
        return _partial_json(body)
    if not response.HasField("partial_success"):
        return 0, None
    message = response.partial_success.error_message.strip() or None
    return int(response.partial_success.rejected_spans), message


def _partial_json(body: bytes) -> tuple[int, str | None]:
    try:
        doc = json.loads(body)
    except ValueError:
        return 0, None
    partial = doc.get("partialSuccess") if isinstance(doc, dict) else None
    if not isinstance(partial, dict):
        return 0, None
    try:
        rejected = int(partial.get("rejectedSpans") or 0)
    except (TypeError, ValueError):
        rejected = 0
    raw = partial.get("errorMessage")
    message = raw.strip() or None if isinstance(raw, str) else None
    return rejected, message
