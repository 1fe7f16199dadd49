"""Attribute mapping for the OpenTelemetry export: a trace call's fields -> OTLP attributes. Pure.

What goes on a call span:

- the GenAI inference attributes of the semantic conventions: ``gen_ai.operation.name``,
  ``gen_ai.provider.name``, ``gen_ai.request.model``, ``gen_ai.response.model``,
  ``gen_ai.response.id``, ``gen_ai.response.finish_reasons``, ``gen_ai.usage.input_tokens``,
  ``gen_ai.usage.output_tokens``, ``gen_ai.usage.cache_read.input_tokens``,
  ``gen_ai.usage.cache_creation.input_tokens``, ``gen_ai.conversation.id``,
  ``server.address`` with ``server.port`` (always together, as the conventions require; an
  endpoint recorded as ``host:port`` gives both, one recorded without a port is HTTPS's 443,
  since the recorders write every other port) and ``error.type``;
- the reviewer identity and assurance under ``reviewtrail.*``;
- the prompt's and response's SHA-256 and size, never their text, unless the caller opts in
  to message content: then ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (and
  ``gen_ai.system_instructions``) carry the conventions' JSON message form
  (``[{"role": ..., "parts": [{"type": "text", "content": ...}]}]``): a recorded SDK request by its
  roles and parts (:mod:`reviewtrail.tracing.otel._otel_messages`), any other prompt as one
  ``user`` text part.

Facts read from the ledger (a reviewer-specialist call's prompt manifest) arrive as a
:class:`CallFacts` and win over what the trace files say.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from reviewtrail.tracing.files._reader import TraceCall
from reviewtrail.tracing.otel._otel_messages import input_messages
from reviewtrail.tracing.otel._otel_provider import PLATFORMS, genai_provider_name
from reviewtrail.tracing.rules._assurance import SUCCESS_STATUSES, is_sentinel, normalize_reported

__all__ = [
    "OPERATION",
    "STATUS_ERROR",
    "STATUS_OK",
    "STATUS_UNSET",
    "CallFacts",
    "attributes",
    "call_attributes",
    "call_status",
    "count",
    "merged_fields",
    "model_name",
    "run_attributes",
    "server_address",
    "server_endpoint",
    "text",
]

OPERATION = "chat"
STATUS_UNSET = 0
STATUS_OK = 1
STATUS_ERROR = 2

_INT64 = (-(2**63), 2**63 - 1)
_MAX_MESSAGE = 1024
# A host name (or IPv4 address), as ``server.address`` wants it: no scheme, path or port.
_HOST = re.compile(
    r"(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+"
)
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")  # a one-label host: localhost
_PORT = re.compile(r"[0-9]{1,5}")
HTTPS_PORT = 443

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


@dataclass(frozen=True)
class CallFacts:
    """What the ledger knows of one call (its prompt manifest); ``None``: not known there."""

    start_ns: int | None = None
    end_ns: int | None = None
    server_address: str | None = None
    server_port: int | None = None
    response_model: str | None = None
    response_id: str | None = None
    finish_reasons: tuple[str, ...] = ()
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_creation_tokens: int | None = None


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


def attributes(pairs: Iterable[tuple[str, object]]) -> list[dict[str, Any]]:
    """OTLP/JSON key-value list: the first value of each key, nulls and objects left out."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for key, value in pairs:
        encoded = _any_value(value)
        if encoded is None or key in seen:
            continue
        seen.add(key)
        out.append({"key": key, "value": encoded})
    return out


def text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def model_name(value: object) -> str | None:
    """A model name, or ``None`` for a missing one or a sentinel (``unknown``, ``none``...)."""
    return value.strip() if isinstance(value, str) and not is_sentinel(value) else None


def count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def server_endpoint(value: object, *, one_label: bool = False) -> tuple[str, int] | None:
    """``(server.address, server.port)`` of an endpoint written ``host``, ``host:port`` or
    ``[ipv6]:port`` (a port left out is HTTPS's 443), else ``None``: a tool name such as ``codex``
    is a backend, not a server. ``one_label``: a name without a dot (``localhost``) is a host too,
    for values known to name one (a prompt manifest's ``endpointHost``)."""
    name = text(value)
    if name is None:
        return None
    if name.startswith("["):
        host, closing, rest = name[1:].partition("]")
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return None
        if not closing:
            return None
    else:
        host, colon, port_text = name.rpartition(":")
        host, rest = (host, colon + port_text) if colon else (port_text, "")
        known = _HOST.fullmatch(host) is not None or (one_label and _LABEL.fullmatch(host) is not None)
        if not known or host.lower() in PLATFORMS:
            return None
    port = HTTPS_PORT
    if rest:
        if not rest.startswith(":") or _PORT.fullmatch(rest[1:]) is None or not 0 < int(rest[1:]) < 65536:
            return None
        port = int(rest[1:])
    return host.lower(), port


def server_address(value: object) -> str | None:
    """The ``server.address`` of :func:`server_endpoint`, without its port."""
    found = server_endpoint(value)
    return found[0] if found is not None else None


def _finish_reasons(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple):
        return ()
    return tuple(r for r in (text(v) for v in value) if r is not None)


# --- call fields ---------------------------------------------------------------------------------


def merged_fields(call: TraceCall, run_meta: Mapping[str, Any]) -> dict[str, Any]:
    """The call's fields: ``run.meta.json``'s executor and backend, then the request, then the meta file."""
    fields: dict[str, Any] = {
        k: v for k, v in run_meta.items() if k in {"executor", "executor_model", "executor_family"}
    }
    if run_meta.get("reviewer_backend") is not None:
        fields["backend"] = run_meta["reviewer_backend"]
    fields.update(call.request or {})
    fields.update(call.meta or {})
    # The prompt text (full mode) is never a plain field of the export.
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
            ("reviewtrail.prompt.sha256", text(request.get("prompt_sha256"))),
            ("reviewtrail.prompt.bytes", count(request.get("prompt_bytes"))),
        ]
    sha, size = text(fields.get("response_sha256")), count(fields.get("response_bytes"))
    if sha is None or size is None:
        try:
            data = call.files.response.read_bytes()
        except OSError:
            pass
        else:
            sha, size = hashlib.sha256(data).hexdigest(), len(data)
    out += [("reviewtrail.response.sha256", sha), ("reviewtrail.response.bytes", size)]
    return out


def _content(call: TraceCall, finish_reasons: tuple[str, ...]) -> list[tuple[str, object]]:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages`` in the conventions' JSON form (opt-in)."""
    out: list[tuple[str, object]] = []
    request = call.request or {}
    prompt = request.get("prompt")
    if isinstance(prompt, str):
        read = input_messages(prompt, request.get("tool"))
        messages, system = read if read is not None else ([{"role": "user", "parts": [_text_part(prompt)]}], None)
        out.append(("gen_ai.input.messages", json.dumps(messages, ensure_ascii=False)))
        if system:
            out.append(("gen_ai.system_instructions", json.dumps(system, ensure_ascii=False)))
    response = call.response_text()
    if response is not None:
        answer = {
            "role": "assistant",
            "parts": [_text_part(response)],
            "finish_reason": finish_reasons[0] if finish_reasons else "stop",
        }
        out.append(("gen_ai.output.messages", json.dumps([answer], ensure_ascii=False)))
    return out


def _text_part(content: str) -> dict[str, str]:
    return {"type": "text", "content": content}


def call_status(fields: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """(OTLP status, ``error.type``). Success leaves the status unset, as the conventions ask;
    a failed call is ERROR with a message (the call's ``error.message``, else its status)."""
    status = fields.get("status")
    error = fields.get("error") if isinstance(fields.get("error"), dict) else None
    if isinstance(status, str) and status.strip().lower() in SUCCESS_STATUSES:
        return {"code": STATUS_UNSET}, None
    if status is None and error is None:
        return {"code": STATUS_UNSET}, None
    kind = text((error or {}).get("type"))
    if kind is None:
        raw = text(status)
        kind = raw if raw is not None and raw.lower() != "error" else "_OTHER"
    message = text((error or {}).get("message")) or f"reviewer call ended with status {status!r}"
    return {"code": STATUS_ERROR, "message": message[:_MAX_MESSAGE]}, kind


def call_attributes(
    call: TraceCall,
    fields: Mapping[str, Any],
    *,
    skill: str,
    run_id: str,
    error_type: str | None,
    facts: CallFacts | None = None,
    content: bool = False,
) -> tuple[list[dict[str, Any]], str | None]:
    """(the call span's attributes, its ``gen_ai.request.model``)."""
    facts = facts or CallFacts()
    request_model = model_name(fields.get("requested_reviewer_model")) or model_name(fields.get("model"))
    reported = fields.get("reported_reviewer_model")
    response_model = facts.response_model or (normalize_reported(reported) if isinstance(reported, str) else None)
    backend = text(fields.get("backend"))
    provider = genai_provider_name(
        family=text(fields.get("model_family")),
        backend=backend,
        models=[text(fields.get("reviewer_model")), request_model, text(fields.get("model"))],
    )
    finish = facts.finish_reasons or _finish_reasons(fields.get("finish_reasons") or fields.get("finish_reason"))
    server = _server(facts, fields, backend)
    cache_read = _first_count(facts.cache_read_tokens, fields, "cache_read_input_tokens", "cache_read_tokens")
    cache_write = _first_count(facts.cache_creation_tokens, fields, "cache_creation_input_tokens", "cache_write_tokens")
    number = fields.get("call_number")
    pairs: list[tuple[str, object]] = [
        ("gen_ai.operation.name", OPERATION),
        ("gen_ai.provider.name", provider),
        ("gen_ai.request.model", request_model),
        ("gen_ai.response.model", response_model),
        ("gen_ai.response.id", facts.response_id or text(fields.get("response_id"))),
        ("gen_ai.response.finish_reasons", list(finish) or None),
        ("gen_ai.usage.input_tokens", _first_count(facts.input_tokens, fields, "input_tokens")),
        ("gen_ai.usage.output_tokens", _first_count(facts.output_tokens, fields, "output_tokens")),
        ("gen_ai.usage.cache_read.input_tokens", cache_read),
        ("gen_ai.usage.cache_creation.input_tokens", cache_write),
        ("gen_ai.conversation.id", text(fields.get("thread_id"))),
        ("server.address", server[0] if server is not None else None),
        ("server.port", server[1] if server is not None else None),
        ("error.type", error_type),
        ("reviewtrail.skill", skill),
        ("reviewtrail.run_id", run_id),
        ("reviewtrail.purpose", call.purpose),
        ("reviewtrail.call_number", number if count(number) is not None else call.number),
        *((f"reviewtrail.{name}", fields.get(name)) for name in _CALL_FIELDS),
        *_digests(call, fields),
    ]
    if content:
        pairs += _content(call, finish)
    return attributes(pairs), request_model


def _server(facts: CallFacts, fields: Mapping[str, Any], backend: str | None) -> tuple[str, int] | None:
    """The call's server: the ledger's, else the trace's ``server_address``, ``endpoint_host`` or a
    backend that names a host (the reviewer specialist's ``127.0.0.1:8080``)."""
    if facts.server_address is not None:
        return facts.server_address, facts.server_port if facts.server_port is not None else HTTPS_PORT
    for value in (fields.get("server_address"), fields.get("endpoint_host"), backend):
        found = server_endpoint(value)
        if found is not None:
            return found
    return None


def _first_count(known: int | None, fields: Mapping[str, Any], *names: str) -> int | None:
    if known is not None:
        return known
    return next((c for c in (count(fields.get(n)) for n in names) if c is not None), None)


def run_attributes(
    skill: str, run_id: str, run_meta: Mapping[str, Any] | None, *, calls: int, errors: int, incomplete: list[int]
) -> list[dict[str, Any]]:
    meta = run_meta or {}
    return attributes(
        [
            ("reviewtrail.skill", skill),
            ("reviewtrail.run_id", run_id),
            *((f"reviewtrail.{name}", meta.get(name)) for name in _RUN_FIELDS),
            ("reviewtrail.call_count", calls),
            ("reviewtrail.error_call_count", errors),
            ("reviewtrail.incomplete_call_count", len(incomplete)),
            ("reviewtrail.incomplete_calls", incomplete or None),
            ("reviewtrail.run_meta_present", run_meta is not None),
        ]
    )
