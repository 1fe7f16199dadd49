"""Span assembly: trace runs as OpenTelemetry spans (OTLP/JSON form), following the GenAI conventions.

The attributes come from :mod:`reviewtrail.tracing.otel._otel_attrs`; the protobuf encoding
from :mod:`reviewtrail.tracing.otel._otlp_proto`.

Shape of the export:

- one trace per run; its ``traceId`` (32 hex) and every ``spanId`` (16 hex) are derived
  from SHA-256 of the run's identity (skill, run id and ``started_at`` from
  ``run.meta.json``), so exporting the same run twice yields the same ids;
- a root span ``review_run <skill>`` (kind INTERNAL) for the run; its status is ERROR
  (with a message counting them) when any call failed, else unset;
- one child span per *complete* call (its meta file exists), kind CLIENT, named
  ``chat <gen_ai.request.model>`` with the ``gen_ai.*`` attributes of an inference span
  and the reviewer identity and assurance under ``reviewtrail.*``.

A call without a meta file is still being written, or was interrupted: it has no end
and no outcome, so it gets no span. The root span lists such calls in
``reviewtrail.incomplete_calls`` (their call numbers) instead; a later export, once the
call has finished, adds its span with the same deterministic id.

Privacy: prompt and response text are not exported, only their SHA-256 and byte length,
unless the caller opts in to message content (``content=True``).

Resource: ``service.name``, ``service.version`` and, when the export read the ledger (call
facts from prompt manifests), the head it read at: ``reviewtrail.ledger.head`` (the last
record's hash, 64 hex digits) and ``reviewtrail.ledger.head_seq`` (its seq, an int).
The only free text that leaves is the call's ``error.message`` (the span status message,
cut at 1024 characters) and the raw ``verdict`` label; object-valued fields are dropped and
``project_dir`` (a local path) is left out.

Field precedence for a call: the meta file (written last) wins; the request file fills
in what the meta file lacks, and ``run.meta.json`` fills in the executor and backend.
Times: start is the request's ``timestamp``, end the meta's ``timestamp``; a missing one is
derived from the other and ``duration_ms``. A timestamp without an offset is taken as UTC.
Facts from the ledger (:class:`CallFacts`, for reviewer-specialist calls and calls whose meta
names their prompt manifest: the manifest's ``startedAt``/``endedAt``) replace the trace's
times: they bracket the model call itself, where the trace files are written after it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from reviewtrail._version import __version__
from reviewtrail.ledger import LedgerHead
from reviewtrail.tracing.files._reader import TraceCall, TraceRun
from reviewtrail.tracing.otel._otel_attrs import (
    OPERATION,
    STATUS_ERROR,
    STATUS_UNSET,
    CallFacts,
    attributes,
    call_attributes,
    call_status,
    count,
    merged_fields,
    run_attributes,
)

__all__ = [
    "KIND_CLIENT",
    "KIND_INTERNAL",
    "SCOPE_NAME",
    "SERVICE_NAME",
    "FactsKey",
    "encode",
    "otlp_json",
    "parse_ns",
    "resource_attributes",
    "span_count",
    "span_id",
    "spans_for_run",
    "trace_id",
]

SERVICE_NAME = "reviewtrail"
SCOPE_NAME = "reviewtrail.tracing"

# OTLP enum values (the JSON encoding carries enums as integers).
KIND_INTERNAL = 1
KIND_CLIENT = 3

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# Ledger facts are looked up by (run key ``<skill>/<run id>``, call number).
FactsKey = tuple[str, int]


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


# --- times ---------------------------------------------------------------------------------------


def _ns(moment: datetime) -> int:
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000


def parse_ns(value: object) -> int | None:
    """An ISO 8601 time as Unix nanoseconds (no offset: UTC); ``None`` when it is not one."""
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


def _call_times(fields: Mapping[str, Any], call: TraceCall, facts: CallFacts | None, fallback: int) -> tuple[int, int]:
    if facts is not None and facts.start_ns is not None and facts.end_ns is not None:
        return facts.start_ns, max(facts.start_ns, facts.end_ns)
    start = parse_ns((call.request or {}).get("timestamp"))
    end = parse_ns((call.meta or {}).get("timestamp"))
    duration = count(fields.get("duration_ms"))
    duration_ns = duration * 1_000_000 if duration is not None else None
    if start is None:
        start = end - duration_ns if end is not None and duration_ns is not None else (end or fallback)
    if end is None:
        end = start + duration_ns if duration_ns is not None else start
    return start, max(start, end)


# --- spans ---------------------------------------------------------------------------------------


def _call_span(
    run: TraceRun, call: TraceCall, parent: str, fallback_ns: int, facts: CallFacts | None, content: bool
) -> tuple[dict[str, Any], bool]:
    fields = merged_fields(call, run.meta or {})
    status, error_type = call_status(fields)
    start, end = _call_times(fields, call, facts, fallback_ns)
    attrs, request_model = call_attributes(
        call, fields, skill=run.skill, run_id=run.run_id, error_type=error_type, facts=facts, content=content
    )
    span = {
        "traceId": trace_id(run),
        "spanId": span_id(run, call),
        "parentSpanId": parent,
        "name": f"{OPERATION} {request_model}" if request_model else OPERATION,
        "kind": KIND_CLIENT,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": attrs,
        "status": status,
    }
    return span, status["code"] == STATUS_ERROR


def spans_for_run(
    run: TraceRun, *, facts: Mapping[FactsKey, CallFacts] | None = None, content: bool = False
) -> list[dict[str, Any]]:
    """The run's spans in OTLP/JSON form: the root span first, then one span per complete call.

    ``facts``: what the ledger knows of some calls, by (run key, call number). ``content``:
    opt in to the prompt and response text (``gen_ai.input.messages`` / ``gen_ai.output.messages``).
    """
    run_meta = run.meta or {}
    root_id = span_id(run)
    started = parse_ns(run_meta.get("started_at"))
    fallback = started if started is not None else _run_date_ns(run)
    children: list[dict[str, Any]] = []
    incomplete: list[int] = []
    failed: list[int] = []
    for call in run.calls:
        if not call.complete:
            incomplete.append(call.number)
            continue
        known = (facts or {}).get((run.key, call.number))
        span, error = _call_span(run, call, root_id, fallback, known, content)
        children.append(span)
        if error:
            failed.append(call.number)
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
        "attributes": run_attributes(
            run.skill, run.run_id, run.meta, calls=len(children), errors=len(failed), incomplete=incomplete
        ),
        "status": _root_status(failed, len(children)),
    }
    return [root, *children]


def _root_status(failed: list[int], calls: int) -> dict[str, Any]:
    """ERROR when any call failed (the message names them), else unset."""
    if not failed:
        return {"code": STATUS_UNSET}
    numbers = ", ".join(f"{n:03d}" for n in failed)
    return {"code": STATUS_ERROR, "message": f"{len(failed)} of {calls} reviewer call(s) failed: {numbers}"}


def resource_attributes(ledger_head: LedgerHead | None = None) -> list[dict[str, Any]]:
    """The export's resource: the service, and the ledger head the call facts were read at (if any)."""
    pairs: list[tuple[str, object]] = [("service.name", SERVICE_NAME), ("service.version", __version__)]
    if ledger_head is not None:
        pairs += [("reviewtrail.ledger.head", ledger_head.hash), ("reviewtrail.ledger.head_seq", ledger_head.seq)]
    return attributes(pairs)


def otlp_json(
    runs: Iterable[TraceRun],
    *,
    facts: Mapping[FactsKey, CallFacts] | None = None,
    content: bool = False,
    ledger_head: LedgerHead | None = None,
) -> dict[str, Any]:
    """An OTLP/JSON ``ExportTraceServiceRequest`` holding every span of ``runs``; ``ledger_head``:
    the head of the ledger ``facts`` were read from (a resource attribute)."""
    spans = [span for run in runs for span in spans_for_run(run, facts=facts, content=content)]
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": resource_attributes(ledger_head)},
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
