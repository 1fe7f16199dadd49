"""Trace runs as OpenTelemetry spans (OTLP/JSON), following the GenAI semantic conventions.

Shape of the export:

- one trace per run; its ``traceId`` (32 hex) and every ``spanId`` (16 hex) are derived
  from SHA-256 of the run's identity (skill, run id and ``started_at`` from
  ``run.meta.json``), so exporting the same run twice yields the same ids;
- a root span ``review_run <skill>`` (kind INTERNAL) for the run;
- one child span per *complete* call (its meta file exists), kind CLIENT, named
  ``chat <gen_ai.request.model>`` with the ``gen_ai.*`` attributes of an inference span
  and the reviewer identity and assurance under ``reviewtrail.*``.

A call without a meta file is still being written, or was interrupted: it has no end
and no outcome, so it gets no span. The root span lists such calls in
``reviewtrail.incomplete_calls`` (their call numbers) instead; a later export, once the
call has finished, adds its span with the same deterministic id.

Privacy: prompt and response text are never exported, only their SHA-256 and byte length.
The only free text that leaves is the call's ``error.message`` (the span status message,
cut at 1024 characters) and the raw ``verdict`` label; object-valued fields are dropped and
``project_dir`` (a local path) is left out.

Field precedence for a call: the meta file (written last) wins; the request file fills
in what the meta file lacks, and ``run.meta.json`` fills in the executor and backend.
Times: start is the request's ``timestamp``, end the meta's ``timestamp``; a missing one is
derived from the other and ``duration_ms``. A timestamp without an offset is taken as UTC.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from reviewtrail import __version__
from reviewtrail.tracing._assurance import SUCCESS_STATUSES, is_sentinel, normalize_reported
from reviewtrail.tracing._families import FAMILIES, UNKNOWN, model_family
from reviewtrail.tracing._reader import TraceCall, TraceRun

__all__ = [
    "KIND_CLIENT",
    "KIND_INTERNAL",
    "SCOPE_NAME",
    "SERVICE_NAME",
    "STATUS_ERROR",
    "STATUS_OK",
    "STATUS_UNSET",
    "encode",
    "genai_provider_name",
    "otlp_json",
    "span_count",
    "span_id",
    "spans_for_run",
    "trace_id",
]

SERVICE_NAME = "reviewtrail"
SCOPE_NAME = "reviewtrail.tracing"
OPERATION = "chat"

# OTLP enum values (the JSON encoding carries enums as integers).
KIND_INTERNAL = 1
KIND_CLIENT = 3
STATUS_UNSET = 0
STATUS_OK = 1
STATUS_ERROR = 2

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_INT64 = (-(2**63), 2**63 - 1)
_MAX_MESSAGE = 1024

# Our model families -> the well-known ``gen_ai.provider.name`` values of the semantic conventions.
_FAMILY_PROVIDER = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google": "gcp.gemini",
    "deepseek": "deepseek",
    "xai": "x_ai",
    "mistral": "mistral_ai",
}
# Hosting platforms with their own well-known value: the telemetry flavour is the platform's,
# whatever model family it serves. Matched against the backend name.
_PLATFORM_PROVIDER = {
    "bedrock": "aws.bedrock",
    "aws-bedrock": "aws.bedrock",
    "aws.bedrock": "aws.bedrock",
    "vertex": "gcp.vertex_ai",
    "vertex-ai": "gcp.vertex_ai",
    "vertex_ai": "gcp.vertex_ai",
    "gcp.vertex_ai": "gcp.vertex_ai",
    "azure-openai": "azure.ai.openai",
    "azure.ai.openai": "azure.ai.openai",
    "azure-ai-inference": "azure.ai.inference",
    "azure.ai.inference": "azure.ai.inference",
    "groq": "groq",
    "perplexity": "perplexity",
    "cohere": "cohere",
    "watsonx": "ibm.watsonx.ai",
    "ibm.watsonx.ai": "ibm.watsonx.ai",
}
# Backend names whose family ``model_family`` cannot tell from the name alone.
_BACKEND_FAMILY = {"codex": "openai"}

# reviewtrail.* attributes copied from a call's fields, in this order.
_CALL_FIELDS = (
    "reviewer_model",
    "reviewer_model_source",
    "requested_reviewer_model",
    "reported_reviewer_model",
    "model",
    "model_family",
    "review_independence",
    "acceptance_status",
    "independence_verified",
    "identity_validated",
    "review_completed",
    "review_scope_complete",
    "review_positive",
    "verdict",
    "status",
    "backend",
    "tool",
    "effort",
    "agent_id",
    "executor",
    "executor_model",
    "executor_family",
    "reviewer_kind",
    "trace_mode",
    "duration_ms",
    "files_referenced",
)
_RUN_FIELDS = (
    "executor",
    "executor_model",
    "executor_family",
    "executor_model_source",
    "reviewer_backend",
    "trace_mode",
)


# --- ids -----------------------------------------------------------------------------------------


def _hex_id(parts: Sequence[str], length: int) -> str:
    digest = hashlib.sha256("\x00".join(("reviewtrail.otel", *parts)).encode("utf-8")).hexdigest()[:length]
    # An all-zero id is invalid in OTLP; astronomically unlikely, but never emit one.
    return digest if digest.strip("0") else "0" * (length - 1) + "1"


def _run_identity(run: TraceRun) -> tuple[str, str, str]:
    started = (run.meta or {}).get("started_at")
    return run.skill, run.run_id, started if isinstance(started, str) else ""


def trace_id(run: TraceRun) -> str:
    """The run's trace id: 32 hex digits from SHA-256 of skill, run id and ``started_at``.

    ``started_at`` keeps two projects that both have e.g. ``auto-review-loop/2026-04-15_run01``
    from sharing a trace in a common backend; it never changes once the run exists.
    """
    return _hex_id(_run_identity(run), 32)


def span_id(run: TraceRun, call: TraceCall | None = None) -> str:
    """16 hex digits: the run's root span (``call=None``) or one call's span."""
    parts = [*_run_identity(run), "run"]
    if call is not None:
        parts = [*_run_identity(run), "call", str(call.number), call.purpose]
    return _hex_id(parts, 16)


# --- values --------------------------------------------------------------------------------------


def _any_value(value: object) -> dict[str, Any] | None:
    """``value`` as an OTLP/JSON AnyValue; ``None`` (no attribute) for null and for objects."""
    if value is None:
        return None
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        if _INT64[0] <= value <= _INT64[1]:
            return {"intValue": str(value)}
        return {"stringValue": str(value)}
    if isinstance(value, float):
        if math.isfinite(value):
            return {"doubleValue": value}
        return {"doubleValue": "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, list | tuple):
        # Arrays of scalars only (nested containers are dropped, as objects are).
        items = [_any_value(item) for item in value if not isinstance(item, list | tuple | dict)]
        return {"arrayValue": {"values": [v for v in items if v is not None]}}
    # Objects have no place in a flat attribute and may hold free text: they are left out.
    return None


def _attributes(pairs: Iterable[tuple[str, object]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for key, value in pairs:
        encoded = _any_value(value)
        if encoded is None or key in seen:
            continue
        seen.add(key)
        out.append({"key": key, "value": encoded})
    return out


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _model(value: object) -> str | None:
    """A model name, or ``None`` for a missing one or a sentinel (``unknown``, ``none``...)."""
    return value.strip() if isinstance(value, str) and not is_sentinel(value) else None


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


# --- times ---------------------------------------------------------------------------------------


def _ns(moment: datetime) -> int:
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000


def _parse_ns(value: object) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    ns = _ns(moment)
    return ns if ns > 0 else None


def _run_date_ns(run: TraceRun) -> int:
    try:
        return _ns(datetime.strptime(run.run_id[:10], "%Y-%m-%d").replace(tzinfo=UTC))
    except ValueError:
        return 0


def _call_times(
    fields: Mapping[str, Any], request: Mapping[str, Any], meta: Mapping[str, Any], fallback: int
) -> tuple[int, int]:
    start = _parse_ns(request.get("timestamp"))
    end = _parse_ns(meta.get("timestamp"))
    duration = _count(fields.get("duration_ms"))
    duration_ns = duration * 1_000_000 if duration is not None else None
    if start is None:
        start = end - duration_ns if end is not None and duration_ns is not None else (end or fallback)
    if end is None:
        end = start + duration_ns if duration_ns is not None else start
    return start, max(start, end)


# --- provider ------------------------------------------------------------------------------------


def genai_provider_name(*, family: str | None, backend: str | None, models: Iterable[str | None] = ()) -> str:
    """The ``gen_ai.provider.name`` for a call.

    1. a hosting platform with a well-known value wins (backend ``bedrock``, ``vertex``,
       ``groq``..., or a model routed ``bedrock/...`` / ``azure/...``);
    2. else the model family, mapped to its well-known value (``google`` -> ``gcp.gemini``,
       ``xai`` -> ``x_ai``, ``mistral`` -> ``mistral_ai``...), or the family name itself;
    3. else the family the backend name implies (``grok`` -> ``x_ai``, ``codex`` -> ``openai``);
    4. else the backend name, else ``unknown``.
    """
    route = (backend or "").strip().lower()
    if route in _PLATFORM_PROVIDER:
        return _PLATFORM_PROVIDER[route]
    names = [m.strip().lower() for m in models if isinstance(m, str) and m.strip()]
    known = family if family in FAMILIES else UNKNOWN
    if known == UNKNOWN:
        known = next((f for f in (model_family(n) for n in names) if f != UNKNOWN), UNKNOWN)
    for name in names:
        if name.startswith("bedrock/"):
            return "aws.bedrock"
        if name.startswith("azure/"):
            return "azure.ai.openai" if known == "openai" else "azure.ai.inference"
    if known != UNKNOWN:
        return _FAMILY_PROVIDER.get(known, known)
    if route:
        implied = _BACKEND_FAMILY.get(route) or model_family(route)
        if implied != UNKNOWN:
            return _FAMILY_PROVIDER.get(implied, implied)
        return route
    return UNKNOWN


# --- spans ---------------------------------------------------------------------------------------


def _merged(call: TraceCall, run_meta: Mapping[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {
        k: v for k, v in run_meta.items() if k in {"executor", "executor_model", "executor_family"}
    }
    if run_meta.get("reviewer_backend") is not None:
        fields["backend"] = run_meta["reviewer_backend"]
    fields.update(call.request or {})
    fields.update(call.meta or {})
    # The prompt text (full mode) is never a field of the export.
    fields.pop("prompt", None)
    return fields


def _digests(call: TraceCall, fields: Mapping[str, Any]) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    request = call.request or {}
    prompt = request.get("prompt")
    if isinstance(prompt, str):
        data = prompt.encode("utf-8", errors="surrogatepass")
        out += [
            ("reviewtrail.prompt.sha256", hashlib.sha256(data).hexdigest()),
            ("reviewtrail.prompt.bytes", len(data)),
        ]
    else:
        out += [
            ("reviewtrail.prompt.sha256", _text(request.get("prompt_sha256"))),
            ("reviewtrail.prompt.bytes", _count(request.get("prompt_bytes"))),
        ]
    sha, size = _text(fields.get("response_sha256")), _count(fields.get("response_bytes"))
    if sha is None or size is None:
        try:
            data = call.files.response.read_bytes()
        except OSError:
            pass
        else:
            sha, size = hashlib.sha256(data).hexdigest(), len(data)
    out += [("reviewtrail.response.sha256", sha), ("reviewtrail.response.bytes", size)]
    return out


def _status(fields: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """(OTLP status, ``error.type``). Success statuses leave the status unset, as the conventions ask."""
    status = fields.get("status")
    error = fields.get("error") if isinstance(fields.get("error"), dict) else None
    if isinstance(status, str) and status.strip().lower() in SUCCESS_STATUSES:
        return {"code": STATUS_UNSET}, None
    if status is None and error is None:
        return {"code": STATUS_UNSET}, None
    kind = _text((error or {}).get("type"))
    if kind is None:
        raw = _text(status)
        kind = raw if raw is not None and raw.lower() != "error" else "_OTHER"
    message = _text((error or {}).get("message")) or f"reviewer call ended with status {status!r}"
    return {"code": STATUS_ERROR, "message": message[:_MAX_MESSAGE]}, kind


def _call_span(run: TraceRun, call: TraceCall, parent: str, fallback_ns: int) -> tuple[dict[str, Any], bool]:
    run_meta = run.meta or {}
    request, meta = call.request or {}, call.meta or {}
    fields = _merged(call, run_meta)
    request_model = _model(fields.get("requested_reviewer_model")) or _model(fields.get("model"))
    reported = fields.get("reported_reviewer_model")
    response_model = normalize_reported(reported) if isinstance(reported, str) else None
    family = _text(fields.get("model_family"))
    provider = genai_provider_name(
        family=family,
        backend=_text(fields.get("backend")),
        models=[_text(fields.get("reviewer_model")), request_model, _text(fields.get("model"))],
    )
    status, error_type = _status(fields)
    start, end = _call_times(fields, request, meta, fallback_ns)
    number = fields.get("call_number")
    attributes = _attributes(
        [
            ("gen_ai.operation.name", OPERATION),
            ("gen_ai.provider.name", provider),
            ("gen_ai.request.model", request_model),
            ("gen_ai.response.model", response_model),
            ("gen_ai.usage.input_tokens", _count(fields.get("input_tokens"))),
            ("gen_ai.usage.output_tokens", _count(fields.get("output_tokens"))),
            ("gen_ai.conversation.id", _text(fields.get("thread_id"))),
            ("error.type", error_type),
            ("reviewtrail.skill", run.skill),
            ("reviewtrail.run_id", run.run_id),
            ("reviewtrail.purpose", call.purpose),
            ("reviewtrail.call_number", number if _count(number) is not None else call.number),
            *((f"reviewtrail.{name}", fields.get(name)) for name in _CALL_FIELDS),
            *_digests(call, fields),
        ]
    )
    span = {
        "traceId": trace_id(run),
        "spanId": span_id(run, call),
        "parentSpanId": parent,
        "name": f"{OPERATION} {request_model}" if request_model else OPERATION,
        "kind": KIND_CLIENT,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": attributes,
        "status": status,
    }
    return span, status["code"] == STATUS_ERROR


def spans_for_run(run: TraceRun) -> list[dict[str, Any]]:
    """The run's spans in OTLP/JSON form: the root span first, then one span per complete call."""
    run_meta = run.meta or {}
    root_id = span_id(run)
    started = _parse_ns(run_meta.get("started_at"))
    fallback = started if started is not None else _run_date_ns(run)
    children: list[dict[str, Any]] = []
    incomplete: list[int] = []
    errors = 0
    for call in run.calls:
        if not call.complete:
            incomplete.append(call.number)
            continue
        span, failed = _call_span(run, call, root_id, fallback)
        children.append(span)
        errors += failed
    starts = [int(s["startTimeUnixNano"]) for s in children]
    ends = [int(s["endTimeUnixNano"]) for s in children]
    # The root span starts at the run's ``started_at`` (the run-folder date without it) or at its
    # first call if that is earlier, so every child lies within it.
    root_start = min(starts) if starts and started is None else min([fallback, *starts])
    root_end = max([root_start, *ends])
    root = {
        "traceId": trace_id(run),
        "spanId": root_id,
        "name": f"review_run {run.skill}",
        "kind": KIND_INTERNAL,
        "startTimeUnixNano": str(root_start),
        "endTimeUnixNano": str(root_end),
        "attributes": _attributes(
            [
                ("reviewtrail.skill", run.skill),
                ("reviewtrail.run_id", run.run_id),
                *((f"reviewtrail.{name}", run_meta.get(name)) for name in _RUN_FIELDS),
                ("reviewtrail.call_count", len(children)),
                ("reviewtrail.error_call_count", errors),
                ("reviewtrail.incomplete_call_count", len(incomplete)),
                ("reviewtrail.incomplete_calls", incomplete or None),
                ("reviewtrail.run_meta_present", run.meta is not None),
            ]
        ),
        "status": {"code": STATUS_UNSET},
    }
    return [root, *children]


def otlp_json(runs: Iterable[TraceRun]) -> dict[str, Any]:
    """An OTLP/JSON ``ExportTraceServiceRequest`` holding every span of ``runs``."""
    spans = [span for run in runs for span in spans_for_run(run)]
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": _attributes([("service.name", SERVICE_NAME), ("service.version", __version__)])
                },
                "scopeSpans": [{"scope": {"name": SCOPE_NAME, "version": __version__}, "spans": spans}],
            }
        ]
    }


def span_count(doc: Mapping[str, Any]) -> int:
    return sum(len(s["spans"]) for rs in doc["resourceSpans"] for s in rs["scopeSpans"])


def encode(doc: Mapping[str, Any], *, indent: int | None = None) -> bytes:
    return (json.dumps(doc, ensure_ascii=False, allow_nan=False, indent=indent) + ("\n" if indent else "")).encode(
        "utf-8"
    )
