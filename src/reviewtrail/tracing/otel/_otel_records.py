"""Ledger facts for the export: what the prompt manifests say of the calls that have one.

A call an instrumented SDK client made (``reviewtrail.instrument``) inside a ``reviewer_call``
block names its manifest in its meta file (``prompt_manifest_id``); the span takes the same facts
from it as below.

The Reviewer Specialist makes each model call through ``reviewtrail.models.invoke`` (a
``provenance.prompt-manifest@1`` record, timed around the call itself) and then writes the
call's trace files. Its review record (``reviewer.artifact-review-run@1``) lists both, in
call order: ``promptManifestIds`` and ``tracePaths`` (the calls' meta files). The trace
call's ``thread_id`` is the review's ``reviewRunId``.

So for a trace call of skill ``reviewer-specialist``, the manifest is the one at the index of
its meta file in ``tracePaths`` (or, if that path is not listed, at its round number
``...-round-<n>``), and the span takes from it: start and end, ``server.address`` and
``server.port`` (the endpoint host), the reported model, token counts, and where the manifest has them the
response id, finish reasons and cache token counts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from reviewtrail.errors import ReviewtrailError
from reviewtrail.ledger import Ledger
from reviewtrail.tracing.files._reader import TraceCall, TraceRun
from reviewtrail.tracing.otel._otel import FactsKey, parse_ns
from reviewtrail.tracing.otel._otel_attrs import CallFacts, count, server_endpoint, text

__all__ = [
    "MANIFEST_TYPE",
    "REVIEW_RUN_TYPE",
    "SPECIALIST_SKILL",
    "ledger_facts",
    "manifest_facts",
    "named_manifest",
    "wants_ledger",
]

SPECIALIST_SKILL = "reviewer-specialist"
# The record types, by name (the reviewer and models packages build on this one, not the reverse).
REVIEW_RUN_TYPE = "reviewer.artifact-review-run@1"
MANIFEST_TYPE = "provenance.prompt-manifest@1"

T = TypeVar("T")

_ROUND = re.compile(r"-round-([0-9]+)$")


def manifest_facts(payload: Mapping[str, Any]) -> CallFacts:
    """A prompt manifest's payload as call facts (a missing or malformed field is simply unknown)."""
    raw_usage = payload.get("usage")
    usage: Mapping[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    reasons = payload.get("finishReasons", payload.get("finishReason"))
    if isinstance(reasons, str):
        reasons = [reasons]
    finish = tuple(r for r in (text(v) for v in reasons) if r) if isinstance(reasons, list) else ()
    server = server_endpoint(payload.get("endpointHost"), one_label=True)
    return CallFacts(
        start_ns=parse_ns(payload.get("startedAt")),
        end_ns=parse_ns(payload.get("endedAt")),
        server_address=server[0] if server is not None else None,
        server_port=server[1] if server is not None else None,
        response_model=_first(payload, text, "reportedModel", "modelReported"),
        response_id=text(payload.get("responseId")),
        finish_reasons=finish,
        input_tokens=count(usage.get("inputTokens")),
        output_tokens=count(usage.get("outputTokens")),
        cache_read_tokens=_first(usage, count, "cacheReadTokens", "cacheReadInputTokens"),
        cache_creation_tokens=_first(usage, count, "cacheWriteTokens", "cacheCreationInputTokens"),
    )


def _first(doc: Mapping[str, Any], read: Callable[[object], T | None], *names: str) -> T | None:
    return next((v for v in (read(doc.get(n)) for n in names) if v is not None), None)


def _thread(call: TraceCall) -> str | None:
    return text((call.meta or {}).get("thread_id")) or text((call.request or {}).get("thread_id"))


def _manifest_index(call: TraceCall, trace_paths: list[str]) -> int | None:
    meta = str(call.files.meta.resolve())
    for index, path in enumerate(trace_paths):
        try:
            if str(Path(path).resolve()) == meta:
                return index
        except (OSError, ValueError):
            continue
    match = _ROUND.search(call.purpose)
    return int(match.group(1)) - 1 if match else None


def _review_runs(ledger: Ledger, wanted: set[str]) -> dict[str, Mapping[str, Any]]:
    found: dict[str, Mapping[str, Any]] = {}
    for env in ledger.read(type=REVIEW_RUN_TYPE):
        payload = env.payload_value
        if isinstance(payload, dict) and payload.get("reviewRunId") in wanted:
            found[payload["reviewRunId"]] = payload
    return found


def named_manifest(call: TraceCall) -> str | None:
    """The prompt manifest a call's meta file names (a call an instrumented SDK client made)."""
    return text((call.meta or {}).get("prompt_manifest_id")) if call.complete else None


def wants_ledger(runs: Iterable[TraceRun]) -> bool:
    """Whether any call of ``runs`` has facts in the ledger: a reviewer-specialist run, or a call
    that names its prompt manifest."""
    return any(run.skill == SPECIALIST_SKILL or any(named_manifest(c) for c in run.calls) for run in runs)


def _manifest(ledger: Ledger, manifest_id: str) -> CallFacts | None:
    try:
        env = ledger.get(manifest_id)
    except ReviewtrailError:
        return None
    if env.type == MANIFEST_TYPE and isinstance(env.payload_value, dict):
        return manifest_facts(env.payload_value)
    return None


def ledger_facts(ledger: Ledger, runs: Iterable[TraceRun]) -> dict[FactsKey, CallFacts]:
    """Facts for every complete call of ``runs`` whose manifest the ledger holds: the one its meta
    file names (``prompt_manifest_id``), else for a reviewer-specialist call the one its review lists."""
    runs = list(runs)
    facts: dict[FactsKey, CallFacts] = {}
    for run in runs:
        for call in run.calls:
            named = named_manifest(call)
            found = _manifest(ledger, named) if named is not None else None
            if found is not None:
                facts[(run.key, call.number)] = found
    calls = [
        (run, call)
        for run in runs
        if run.skill == SPECIALIST_SKILL
        for call in run.calls
        if call.complete and (run.key, call.number) not in facts
    ]
    wanted = {t for _, call in calls if (t := _thread(call)) is not None}
    if not wanted:
        return facts
    reviews = _review_runs(ledger, wanted)
    for run, call in calls:
        review = reviews.get(_thread(call) or "")
        if review is None:
            continue
        ids = [i for i in review.get("promptManifestIds") or [] if isinstance(i, str)]
        paths = [p for p in review.get("tracePaths") or [] if isinstance(p, str)]
        index = _manifest_index(call, paths)
        if index is None or not 0 <= index < len(ids):
            continue
        found = _manifest(ledger, ids[index])
        if found is not None:
            facts[(run.key, call.number)] = found
    return facts
