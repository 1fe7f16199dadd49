"""Trace runs exported as OpenTelemetry GenAI spans (OTLP/JSON): structure, attributes, file and HTTP export.

Decision tested here: a call without a meta file (still being written, or interrupted) gets
no span; the run's root span lists its number in ``reviewtrail.incomplete_calls``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import typer
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from typer.testing import CliRunner

from reviewtrail.cli.trace._export import register
from reviewtrail.errors import EXIT_BACKEND, BackendUnavailableError, InvalidInputError
from reviewtrail.tracing.files._reader import TraceRun, find_run, iter_runs
from reviewtrail.tracing.otel._otel import KIND_CLIENT, KIND_INTERNAL, otlp_json, spans_for_run
from reviewtrail.tracing.otel._otel_attrs import STATUS_ERROR, STATUS_UNSET
from reviewtrail.tracing.otel._otel_export import export_to_endpoint, export_to_file
from reviewtrail.tracing.otel._otel_provider import genai_provider_name
from reviewtrail.tracing.otel._otlp_settings import OtlpSettings, traces_url

PROMPT = "SECRET-PROMPT: please review section 3 of the confidential paper"
RESPONSE = "SECRET-RESPONSE: the method is sound, score 7, verdict ready\n"
PROMPT_2 = "SECRET-PROMPT-TWO: second round, focus on the ablation"
RESPONSE_2 = "SECRET-RESPONSE-TWO: the ablation is missing\n"

RUN_META = {
    "skill": "auto-review-loop",
    "run_id": "2026-04-15_run01",
    "started_at": "2026-04-15T14:30:00+08:00",
    "executor": "codex",
    "executor_model": "gpt-6-astra",
    "executor_family": "openai",
    "executor_model_source": "caller-declared",
    "reviewer_backend": "codex",
    "project_dir": "/home/alice/secret-project",
}


def request_doc(number: int, purpose: str, **over: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "call_number": number,
        "purpose": purpose,
        "timestamp": "2026-04-15T14:31:00+08:00",
        "tool": "spawn_agent",
        "model": "gpt-6-astra",
        "effort": "xhigh",
        "backend": "codex",
        "executor_model": "gpt-6-astra",
        "executor_family": "openai",
        "requested_reviewer_model": "gpt-6-astra",
        "reported_reviewer_model": None,
        "reviewer_model": "gpt-6-astra",
        "reviewer_model_source": "requested",
        "review_independence": "same-family",
        "acceptance_status": "provisional",
        "review_completed": True,
        "review_scope_complete": True,
        "verdict": "ready",
        "files_referenced": ["paper/sections/3_method.tex", "results/table1.csv"],
        "prompt": PROMPT,
        "review_positive": True,
        "thread_id": "thread-abc",
    }
    doc.update(over)
    return doc


def meta_doc(number: int, purpose: str, **over: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "call_number": number,
        "purpose": purpose,
        "timestamp": "2026-04-15T14:33:00+08:00",
        "agent_id": "019d8fe0-b25d",
        "thread_id": "thread-abc",
        "model": "gpt-6-astra",
        "reviewer_model": "gpt-6-astra",
        "reviewer_model_source": "requested",
        "requested_reviewer_model": "gpt-6-astra",
        "reported_reviewer_model": None,
        "model_family": "openai",
        "review_completed": True,
        "review_scope_complete": True,
        "verdict": "ready",
        "review_independence": "same-family",
        "acceptance_status": "provisional",
        "independence_verified": False,
        "duration_ms": 120000,
        "status": "ok",
        "review_positive": True,
        "error": None,
        "trace_mode": "full",
        "reviewer_kind": "model",
    }
    doc.update(over)
    return doc


@dataclass
class CallSpec:
    number: int
    purpose: str
    request: dict[str, Any] | None
    meta: dict[str, Any] | None
    response: str | None = None


@dataclass
class RunSpec:
    skill: str = "auto-review-loop"
    run_id: str = "2026-04-15_run01"
    meta: dict[str, Any] | None = field(default_factory=lambda: dict(RUN_META))
    calls: list[CallSpec] = field(default_factory=list)


def write_run(project: Path, spec: RunSpec) -> Path:
    folder = project / ".aris" / "traces" / spec.skill / spec.run_id
    folder.mkdir(parents=True)
    if spec.meta is not None:
        (folder / "run.meta.json").write_text(json.dumps(spec.meta), encoding="utf-8")
    for c in spec.calls:
        stem = f"{c.number:03d}-{c.purpose}"
        if c.request is not None:
            (folder / f"{stem}.request.json").write_text(json.dumps(c.request), encoding="utf-8")
        if c.response is not None:
            (folder / f"{stem}.response.md").write_bytes(c.response.encode("utf-8"))
        if c.meta is not None:
            (folder / f"{stem}.meta.json").write_text(json.dumps(c.meta), encoding="utf-8")
    return folder


def standard_run(project: Path) -> TraceRun:
    """Call 1: full mode, ok, requested-only; call 2: grok, reported model, tokens, error; call 3: unfinished."""
    write_run(
        project,
        RunSpec(
            calls=[
                CallSpec(
                    1, "round-1-review", request_doc(1, "round-1-review"), meta_doc(1, "round-1-review"), RESPONSE
                ),
                CallSpec(
                    2,
                    "round-2-review",
                    request_doc(
                        2,
                        "round-2-review",
                        timestamp="2026-04-15T14:40:00.250+08:00",
                        backend="grok",
                        tool="mcp__grok__grok",
                        requested_reviewer_model="grok-4",
                        reported_reviewer_model="grok-4-0709",
                        prompt=PROMPT_2,
                        thread_id=None,
                    ),
                    meta_doc(
                        2,
                        "round-2-review",
                        timestamp="2026-04-15T14:41:30.750+08:00",
                        requested_reviewer_model="grok-4",
                        reported_reviewer_model="grok-4-0709",
                        reviewer_model="grok-4-0709",
                        reviewer_model_source="backend-reported",
                        model="grok-4-0709",
                        model_family="xai",
                        review_independence="cross-family",
                        thread_id=None,
                        agent_id=None,
                        status="error",
                        error={"type": "TimeoutError", "message": "reviewer did not answer within 300 s"},
                        review_completed=False,
                        review_positive=False,
                        verdict=None,
                        input_tokens=1234,
                        output_tokens=56,
                        duration_ms=90500,
                    ),
                    RESPONSE_2,
                ),
                CallSpec(3, "round-3-review", request_doc(3, "round-3-review"), None),
            ]
        ),
    )
    return find_run(project, "auto-review-loop/2026-04-15_run01")


def attrs(span: dict[str, Any]) -> dict[str, Any]:
    """Attribute key -> plain Python value (AnyValue decoded)."""

    def decode(value: dict[str, Any]) -> Any:
        [(kind, v)] = value.items()
        if kind == "intValue":
            assert isinstance(v, str)
            return int(v)
        if kind == "arrayValue":
            return [decode(x) for x in v["values"]]
        return v

    keys = [a["key"] for a in span["attributes"]]
    assert len(keys) == len(set(keys)), "duplicate attribute keys"
    return {a["key"]: decode(a["value"]) for a in span["attributes"]}


def ns(iso: str) -> int:
    moment = datetime.fromisoformat(iso)
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1_000


# --- structure ---------------------------------------------------------------------------------


def test_document_shape_resource_and_scope(tmp_path: Path) -> None:
    run = standard_run(tmp_path)
    doc = otlp_json([run])
    [rs] = doc["resourceSpans"]
    resource = {a["key"]: a["value"] for a in rs["resource"]["attributes"]}
    assert resource["service.name"] == {"stringValue": "reviewtrail"}
    [ss] = rs["scopeSpans"]
    assert ss["scope"]["name"] == "reviewtrail.tracing" and ss["scope"]["version"]
    assert ss["spans"] == spans_for_run(run)
    json.dumps(doc, allow_nan=False)  # plain JSON, nothing exotic


def test_one_trace_per_run_with_a_root_and_one_client_span_per_complete_call(tmp_path: Path) -> None:
    run = standard_run(tmp_path)
    root, first, second = spans_for_run(run)
    assert root["name"] == "review_run auto-review-loop" and root["kind"] == KIND_INTERNAL
    assert "parentSpanId" not in root
    for span in (first, second):
        assert span["kind"] == KIND_CLIENT == 3
        assert span["traceId"] == root["traceId"] and span["parentSpanId"] == root["spanId"]
    assert first["name"] == "chat gpt-6-astra"
    assert second["name"] == "chat grok-4"
    assert len(root["traceId"]) == 32 and int(root["traceId"], 16) != 0
    assert all(len(s["spanId"]) == 16 and int(s["spanId"], 16) != 0 for s in (root, first, second))
    assert len({s["spanId"] for s in (root, first, second)}) == 3


def test_times_are_nanosecond_strings_from_request_start_and_meta_end(tmp_path: Path) -> None:
    run = standard_run(tmp_path)
    root, first, second = spans_for_run(run)
    assert first["startTimeUnixNano"] == str(ns("2026-04-15T14:31:00+08:00"))
    assert first["endTimeUnixNano"] == str(ns("2026-04-15T14:33:00+08:00"))
    assert second["startTimeUnixNano"] == str(ns("2026-04-15T14:40:00.250+08:00"))
    assert second["endTimeUnixNano"] == str(ns("2026-04-15T14:41:30.750+08:00"))
    assert int(second["endTimeUnixNano"]) - int(second["startTimeUnixNano"]) == 90_500_000_000
    # The root spans the run: from started_at to the last call's end.
    assert root["startTimeUnixNano"] == str(ns("2026-04-15T14:30:00+08:00"))
    assert root["endTimeUnixNano"] == second["endTimeUnixNano"]


def test_missing_timestamps_are_derived_from_duration(tmp_path: Path) -> None:
    request = request_doc(1, "r")
    del request["timestamp"]
    meta = meta_doc(1, "r", duration_ms=1500)
    meta2 = meta_doc(2, "s", duration_ms=2500)
    del meta2["timestamp"]
    write_run(tmp_path, RunSpec(calls=[CallSpec(1, "r", request, meta), CallSpec(2, "s", request_doc(2, "s"), meta2)]))
    _, first, second = spans_for_run(find_run(tmp_path, "2026-04-15_run01"))
    end = ns("2026-04-15T14:33:00+08:00")
    assert (first["startTimeUnixNano"], first["endTimeUnixNano"]) == (str(end - 1_500_000_000), str(end))
    start = ns("2026-04-15T14:31:00+08:00")
    assert (second["startTimeUnixNano"], second["endTimeUnixNano"]) == (str(start), str(start + 2_500_000_000))


# --- attributes --------------------------------------------------------------------------------


def test_genai_attributes_of_a_successful_requested_only_call(tmp_path: Path) -> None:
    _, first, _ = spans_for_run(standard_run(tmp_path))
    a = attrs(first)
    assert a["gen_ai.operation.name"] == "chat"
    assert a["gen_ai.provider.name"] == "openai"
    assert a["gen_ai.request.model"] == "gpt-6-astra"
    assert "gen_ai.response.model" not in a  # reported model is null: never copy the request
    assert "gen_ai.usage.input_tokens" not in a and "gen_ai.usage.output_tokens" not in a
    assert a["gen_ai.conversation.id"] == "thread-abc"
    assert "error.type" not in a
    assert first["status"] == {"code": STATUS_UNSET}


def test_reviewtrail_attributes_carry_identity_and_assurance_with_types(tmp_path: Path) -> None:
    _, first, _ = spans_for_run(standard_run(tmp_path))
    a = attrs(first)
    expected = {
        "reviewtrail.skill": "auto-review-loop",
        "reviewtrail.run_id": "2026-04-15_run01",
        "reviewtrail.purpose": "round-1-review",
        "reviewtrail.call_number": 1,
        "reviewtrail.reviewer_model": "gpt-6-astra",
        "reviewtrail.reviewer_model_source": "requested",
        "reviewtrail.review_independence": "same-family",
        "reviewtrail.acceptance_status": "provisional",
        "reviewtrail.independence_verified": False,
        "reviewtrail.review_completed": True,
        "reviewtrail.review_scope_complete": True,
        "reviewtrail.review_positive": True,
        "reviewtrail.verdict": "ready",
        "reviewtrail.status": "ok",
        "reviewtrail.backend": "codex",
        "reviewtrail.tool": "spawn_agent",
        "reviewtrail.executor_model": "gpt-6-astra",
        "reviewtrail.executor_family": "openai",
        "reviewtrail.trace_mode": "full",
        "reviewtrail.reviewer_kind": "model",
        "reviewtrail.effort": "xhigh",
        "reviewtrail.duration_ms": 120000,
        "reviewtrail.files_referenced": ["paper/sections/3_method.tex", "results/table1.csv"],
        "reviewtrail.prompt.sha256": hashlib.sha256(PROMPT.encode()).hexdigest(),
        "reviewtrail.prompt.bytes": len(PROMPT.encode()),
        "reviewtrail.response.sha256": hashlib.sha256(RESPONSE.encode()).hexdigest(),
        "reviewtrail.response.bytes": len(RESPONSE.encode()),
    }
    assert {k: a.get(k) for k in expected} == expected
    raw = {x["key"]: x["value"] for x in first["attributes"]}
    assert raw["reviewtrail.call_number"] == {"intValue": "1"}
    assert raw["reviewtrail.review_positive"] == {"boolValue": True}
    assert raw["reviewtrail.files_referenced"] == {
        "arrayValue": {
            "values": [{"stringValue": "paper/sections/3_method.tex"}, {"stringValue": "results/table1.csv"}]
        }
    }
    # Null values are left out, never encoded as empty values.
    assert all(next(iter(x["value"].values())) is not None for x in first["attributes"])


def test_error_call_has_error_status_error_type_response_model_and_usage(tmp_path: Path) -> None:
    _, _, second = spans_for_run(standard_run(tmp_path))
    a = attrs(second)
    assert second["status"] == {"code": STATUS_ERROR, "message": "reviewer did not answer within 300 s"}
    assert a["error.type"] == "TimeoutError"
    assert a["gen_ai.provider.name"] == "x_ai"
    assert a["gen_ai.request.model"] == "grok-4"
    assert a["gen_ai.response.model"] == "grok-4-0709"
    raw = {x["key"]: x["value"] for x in second["attributes"]}
    assert raw["gen_ai.usage.input_tokens"] == {"intValue": "1234"}
    assert raw["gen_ai.usage.output_tokens"] == {"intValue": "56"}
    assert "gen_ai.conversation.id" not in a  # thread_id null
    assert "reviewtrail.verdict" not in a and "reviewtrail.agent_id" not in a
    assert a["reviewtrail.status"] == "error" and a["reviewtrail.reviewer_model_source"] == "backend-reported"


@pytest.mark.parametrize(
    ("status", "error", "code", "error_type"),
    [
        ("ok", None, STATUS_UNSET, None),
        ("fallback_used", None, STATUS_UNSET, None),
        ("success", None, STATUS_UNSET, None),
        ("completed", None, STATUS_UNSET, None),
        ("error", None, STATUS_ERROR, "_OTHER"),
        ("timeout", None, STATUS_ERROR, "timeout"),
        ("error", {"type": "RateLimited", "message": "429 from backend"}, STATUS_ERROR, "RateLimited"),
    ],
)
def test_status_mapping(tmp_path: Path, status: str, error: Any, code: int, error_type: str | None) -> None:
    write_run(
        tmp_path, RunSpec(calls=[CallSpec(1, "r", request_doc(1, "r"), meta_doc(1, "r", status=status, error=error))])
    )
    _, span = spans_for_run(find_run(tmp_path, "2026-04-15_run01"))
    assert span["status"]["code"] == code
    assert attrs(span).get("error.type") == error_type
    if code == STATUS_ERROR:
        assert span["status"]["message"] == (
            error["message"] if error else f"reviewer call ended with status {status!r}"
        )
    else:
        assert "message" not in span["status"]


def test_sentinel_reported_model_is_no_response_model_and_model_is_the_request_fallback(tmp_path: Path) -> None:
    request = request_doc(1, "r", requested_reviewer_model=None, model="claude-opus-4", backend="claude-code")
    meta = meta_doc(
        1,
        "r",
        requested_reviewer_model=None,
        reported_reviewer_model="unknown",
        model="claude-opus-4",
        model_family="unknown",
        reviewer_model=None,
    )
    write_run(tmp_path, RunSpec(calls=[CallSpec(1, "r", request, meta)]))
    _, span = spans_for_run(find_run(tmp_path, "2026-04-15_run01"))
    a = attrs(span)
    assert span["name"] == "chat claude-opus-4"
    assert a["gen_ai.request.model"] == "claude-opus-4"
    assert "gen_ai.response.model" not in a
    assert a["gen_ai.provider.name"] == "anthropic"


def test_no_model_at_all_gives_span_name_chat_and_provider_from_backend(tmp_path: Path) -> None:
    request = request_doc(1, "r", requested_reviewer_model=None, model=None, reviewer_model=None, backend="grok")
    meta = meta_doc(1, "r", requested_reviewer_model=None, model=None, reviewer_model=None, model_family="unknown")
    write_run(tmp_path, RunSpec(calls=[CallSpec(1, "r", request, meta)]))
    _, span = spans_for_run(find_run(tmp_path, "2026-04-15_run01"))
    assert span["name"] == "chat"
    assert "gen_ai.request.model" not in attrs(span)
    assert attrs(span)["gen_ai.provider.name"] == "x_ai"


@pytest.mark.parametrize(
    ("family", "backend", "models", "expected"),
    [
        ("openai", "codex", ["gpt-5"], "openai"),
        ("anthropic", "claude-code", ["claude-opus-4"], "anthropic"),
        ("google", "antigravity", ["gemini-2.5-pro"], "gcp.gemini"),
        ("deepseek", "deepseek", ["deepseek-v3"], "deepseek"),
        ("xai", "grok", ["grok-4"], "x_ai"),
        ("mistral", None, ["mistral-large"], "mistral_ai"),
        ("qwen", None, ["qwen3-max"], "qwen"),  # no well-known value: the family name
        (None, None, ["openrouter/moonshotai/kimi-k2"], "moonshot"),  # family from the model name
        ("anthropic", "bedrock", ["anthropic.claude-opus-4"], "aws.bedrock"),  # platform wins
        (None, None, ["bedrock/anthropic.claude-opus-4"], "aws.bedrock"),
        ("openai", None, ["azure/gpt-4o"], "azure.ai.openai"),
        ("meta", None, ["azure/llama-3"], "azure.ai.inference"),
        ("unknown", "grok", [None], "x_ai"),  # family implied by the backend
        ("unknown", "codex", [], "openai"),
        ("unknown", "my-local-proxy", ["mystery-model"], "my-local-proxy"),
        (None, None, [], "unknown"),
    ],
)
def test_provider_name_mapping(
    family: str | None, backend: str | None, models: list[str | None], expected: str
) -> None:
    assert genai_provider_name(family=family, backend=backend, models=models) == expected


# --- ids -----------------------------------------------------------------------------------------


def test_ids_are_deterministic_and_distinct_per_run(tmp_path: Path) -> None:
    a = standard_run(tmp_path / "a")
    again = find_run(tmp_path / "a", "auto-review-loop/2026-04-15_run01")
    assert otlp_json([a]) == otlp_json([again])
    # Same skill and run id in another project (another started_at): another trace.
    other_meta = dict(RUN_META, started_at="2026-04-15T09:00:00+02:00")
    write_run(tmp_path / "b", RunSpec(meta=other_meta, calls=[CallSpec(1, "r", request_doc(1, "r"), meta_doc(1, "r"))]))
    b = find_run(tmp_path / "b", "auto-review-loop/2026-04-15_run01")
    assert spans_for_run(a)[0]["traceId"] != spans_for_run(b)[0]["traceId"]
    write_run(
        tmp_path / "a",
        RunSpec(run_id="2026-04-15_run02", calls=[CallSpec(1, "r", request_doc(1, "r"), meta_doc(1, "r"))]),
    )
    runs = list(iter_runs(tmp_path / "a"))
    assert len({spans_for_run(r)[0]["traceId"] for r in runs}) == 2


def test_a_call_finishing_later_keeps_the_other_ids(tmp_path: Path) -> None:
    run = standard_run(tmp_path)
    before = spans_for_run(run)
    (run.path / "003-round-3-review.meta.json").write_text(json.dumps(meta_doc(3, "round-3-review")), encoding="utf-8")
    after = spans_for_run(find_run(tmp_path, "2026-04-15_run01"))
    assert [s["spanId"] for s in after[1:3]] == [s["spanId"] for s in before[1:3]]
    assert len(after) == 4 and after[3]["parentSpanId"] == before[0]["spanId"]
    assert "reviewtrail.incomplete_calls" not in attrs(after[0])


# --- incomplete calls, meta mode, privacy ------------------------------------------------------


def test_incomplete_call_has_no_span_and_is_listed_on_the_root(tmp_path: Path) -> None:
    root, *calls = spans_for_run(standard_run(tmp_path))
    assert [attrs(c)["reviewtrail.call_number"] for c in calls] == [1, 2]
    a = attrs(root)
    assert a["reviewtrail.incomplete_calls"] == [3]
    assert a["reviewtrail.incomplete_call_count"] == 1
    assert a["reviewtrail.call_count"] == 2
    assert a["reviewtrail.error_call_count"] == 1
    assert a["reviewtrail.executor_model"] == "gpt-6-astra"
    assert a["reviewtrail.reviewer_backend"] == "codex"
    assert "reviewtrail.project_dir" not in a


def test_meta_mode_call_exports_the_recorded_digests(tmp_path: Path) -> None:
    request = request_doc(1, "r", trace_mode="meta")
    del request["prompt"]
    request.update(prompt_sha256="ab" * 32, prompt_bytes=4096)
    meta = meta_doc(1, "r", trace_mode="meta", response_sha256="cd" * 32, response_bytes=777)
    write_run(tmp_path, RunSpec(calls=[CallSpec(1, "r", request, meta)]))  # no response file
    _, span = spans_for_run(find_run(tmp_path, "2026-04-15_run01"))
    a = attrs(span)
    assert a["reviewtrail.trace_mode"] == "meta"
    assert a["reviewtrail.prompt.sha256"] == "ab" * 32 and a["reviewtrail.prompt.bytes"] == 4096
    assert a["reviewtrail.response.sha256"] == "cd" * 32 and a["reviewtrail.response.bytes"] == 777


def test_meta_mode_without_any_digest_has_no_digest_attributes(tmp_path: Path) -> None:
    request = request_doc(1, "r", trace_mode="meta")
    del request["prompt"]
    write_run(tmp_path, RunSpec(calls=[CallSpec(1, "r", request, meta_doc(1, "r", trace_mode="meta"))]))
    _, span = spans_for_run(find_run(tmp_path, "2026-04-15_run01"))
    assert not [k for k in attrs(span) if k.startswith(("reviewtrail.prompt", "reviewtrail.response"))]


def test_no_prompt_or_response_text_anywhere_in_the_export(tmp_path: Path) -> None:
    run = standard_run(tmp_path)
    text = json.dumps(otlp_json([run]))
    for secret in (PROMPT, RESPONSE, PROMPT_2, RESPONSE_2, "SECRET", "/home/alice"):
        assert secret not in text


def test_run_without_run_meta_still_exports(tmp_path: Path) -> None:
    write_run(tmp_path, RunSpec(meta=None, calls=[CallSpec(1, "r", request_doc(1, "r"), meta_doc(1, "r"))]))
    root, span = spans_for_run(find_run(tmp_path, "2026-04-15_run01"))
    assert attrs(root)["reviewtrail.run_meta_present"] is False
    assert root["startTimeUnixNano"] == span["startTimeUnixNano"]


# --- file export -------------------------------------------------------------------------------


def test_export_to_file_is_atomic_and_complete(tmp_path: Path) -> None:
    run = standard_run(tmp_path)
    out = tmp_path / "out" / "traces.json"
    out.parent.mkdir()
    out.write_text("old content", encoding="utf-8")
    result = export_to_file([run], out)
    assert json.loads(out.read_text(encoding="utf-8")) == otlp_json([run])
    assert result.spans == 3 and result.runs == 1 and result.destination == str(out)
    assert result.trace_ids == [spans_for_run(run)[0]["traceId"]]
    assert sorted(p.name for p in out.parent.iterdir()) == ["traces.json"]  # no temp file left


def test_export_to_file_in_a_missing_folder_or_onto_a_folder_is_invalid_input(tmp_path: Path) -> None:
    run = standard_run(tmp_path)
    with pytest.raises(InvalidInputError, match="cannot write"):
        export_to_file([run], tmp_path / "nope" / "x.json")
    with pytest.raises(InvalidInputError, match="is a folder"):
        export_to_file([run], tmp_path)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_export_to_file_keeps_the_mode_of_a_replaced_file(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    out.write_text("{}", encoding="utf-8")
    out.chmod(0o600)
    export_to_file([standard_run(tmp_path)], out)
    assert out.stat().st_mode & 0o777 == 0o600
    fresh = tmp_path / "fresh.json"
    export_to_file([standard_run(tmp_path / "p")], fresh)
    assert fresh.stat().st_mode & 0o777 == 0o644


# --- endpoint export against a real HTTP server ------------------------------------------------


@dataclass
class Collector:
    url: str
    requests: list[dict[str, Any]]
    status: list[int]
    replies: list[bytes]


@pytest.fixture
def collector() -> Iterator[Collector]:
    received: list[dict[str, Any]] = []
    status = [200]
    replies = [b"{}"]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            received.append({"path": self.path, "headers": dict(self.headers.items()), "body": body})
            reply = replies[0] if status[0] == 200 else b"collector is overloaded"
            self.send_response(status[0])
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Collector(f"http://127.0.0.1:{server.server_address[1]}", received, status, replies)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_traces_url() -> None:
    assert traces_url("http://localhost:4318") == "http://localhost:4318/v1/traces"
    assert traces_url("http://localhost:4318/") == "http://localhost:4318/v1/traces"
    assert traces_url("https://otel.example/custom/traces") == "https://otel.example/custom/traces"
    with pytest.raises(InvalidInputError):
        traces_url("localhost:4318")
    with pytest.raises(InvalidInputError):
        traces_url("ftp://host/x")


def to(endpoint: str, **over: Any) -> OtlpSettings:
    return OtlpSettings(url=traces_url(endpoint), **over)


def test_export_to_endpoint_posts_the_document(tmp_path: Path, collector: Collector) -> None:
    """OTLP/JSON, uncompressed, stays available (protobuf is the default: tests/test_otlp_export.py)."""
    run = standard_run(tmp_path)
    settings = to(collector.url, protocol="http/json", compression="none", headers={"Authorization": "Bearer t0ken"})
    result = export_to_endpoint([run], settings)
    [req] = collector.requests
    assert req["path"] == "/v1/traces"
    assert req["headers"]["Content-Type"] == "application/json"
    assert req["headers"]["Authorization"] == "Bearer t0ken"
    assert json.loads(req["body"]) == otlp_json([run])
    assert PROMPT.encode() not in req["body"]
    assert result.spans == 3 and result.destination == collector.url + "/v1/traces"
    assert result.rejected_spans == 0 and result.warning is None


def test_export_to_endpoint_keeps_an_explicit_path(tmp_path: Path, collector: Collector) -> None:
    export_to_endpoint([standard_run(tmp_path)], to(collector.url + "/otlp/v1/traces"))
    assert collector.requests[0]["path"] == "/otlp/v1/traces"


def test_endpoint_partial_success_is_reported(tmp_path: Path, collector: Collector) -> None:
    collector.replies[0] = b'{"partialSuccess": {"rejectedSpans": "2", "errorMessage": "spans too old"}}'
    result = export_to_endpoint([standard_run(tmp_path)], to(collector.url))
    assert result.rejected_spans == 2 and result.warning == "the endpoint rejected 2 span(s): spans too old"
    assert result.to_json()["rejected_spans"] == 2


def test_endpoint_http_500_is_backend_unavailable(tmp_path: Path, collector: Collector) -> None:
    collector.status[0] = 500
    with pytest.raises(BackendUnavailableError, match="HTTP 500: collector is overloaded") as info:
        export_to_endpoint([standard_run(tmp_path)], to(collector.url))
    assert info.value.exit_code == EXIT_BACKEND == 5
    assert len(collector.requests) == 1, "HTTP 500 is not retried"


def test_endpoint_closed_port_is_backend_unavailable(tmp_path: Path) -> None:
    with pytest.raises(BackendUnavailableError, match="cannot reach the OTLP endpoint") as info:
        export_to_endpoint([standard_run(tmp_path)], to(closed_port_url(), timeout=2))
    assert info.value.exit_code == 5


def test_endpoint_password_in_url_is_not_echoed(tmp_path: Path) -> None:
    url = closed_port_url().replace("http://", "http://user:hunter2@")
    with pytest.raises(BackendUnavailableError) as info:
        export_to_endpoint([standard_run(tmp_path)], to(url, timeout=2))
    assert "hunter2" not in str(info.value)


# --- CLI ---------------------------------------------------------------------------------------

runner = CliRunner()


def cli_app() -> typer.Typer:
    app = typer.Typer(rich_markup_mode=None)

    @app.callback()
    def main() -> None:
        """Trace commands."""

    register(app)
    return app


def cli(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(cli_app(), list(args))
    return result.exit_code, result.stdout, result.stderr


def test_cli_help_has_an_example() -> None:
    code, out, _ = cli("export-otel", "--help")
    assert code == 0 and "Example: reviewtrail trace export-otel" in out


def test_cli_exports_every_run_to_a_file(tmp_path: Path) -> None:
    standard_run(tmp_path)
    write_run(
        tmp_path, RunSpec(skill="research-review", calls=[CallSpec(1, "r", request_doc(1, "r"), meta_doc(1, "r"))])
    )
    out = tmp_path / "all.json"
    code, stdout, _ = cli("export-otel", "--output", str(out), "--project-dir", str(tmp_path))
    assert code == 0 and f"exported 5 span(s) from 2 run(s) to {out}" in stdout
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert len(doc["resourceSpans"][0]["scopeSpans"][0]["spans"]) == 5


def test_cli_selects_runs_and_skill_with_json(tmp_path: Path) -> None:
    standard_run(tmp_path)
    write_run(
        tmp_path, RunSpec(skill="research-review", calls=[CallSpec(1, "r", request_doc(1, "r"), meta_doc(1, "r"))])
    )
    out = tmp_path / "one.json"
    args = ["export-otel", "--skill", "research-review", "-o", str(out), "--project-dir", str(tmp_path), "--json"]
    code, stdout, _ = cli(*args)
    assert code == 0
    summary = json.loads(stdout)
    assert summary["runs"] == 1 and summary["spans"] == 2 and summary["destination"] == str(out)
    code, stdout, _ = cli(
        "export-otel", "2026-04-15_run01", "--skill", "auto-review-loop", "-o", str(out), "--project-dir", str(tmp_path)
    )
    assert code == 0 and "3 span(s) from 1 run(s)" in stdout
    folder = tmp_path / ".aris" / "traces" / "research-review" / "2026-04-15_run01"
    code, stdout, _ = cli(
        "export-otel", str(folder), "research-review/2026-04-15_run01", "-o", str(out), "--project-dir", str(tmp_path)
    )
    assert code == 0 and "2 span(s) from 1 run(s)" in stdout  # the same run given twice counts once


def test_cli_posts_to_an_endpoint_with_headers(tmp_path: Path, collector: Collector) -> None:
    standard_run(tmp_path)
    code, stdout, _ = cli(
        "export-otel", "--endpoint", collector.url, "-H", "X-Team=reviews", "--project-dir", str(tmp_path)
    )
    assert code == 0 and "exported 3 span(s)" in stdout and "/v1/traces" in stdout
    [req] = collector.requests
    assert req["headers"]["X-Team"] == "reviews"
    assert req["headers"]["Content-Type"] == "application/x-protobuf"
    message = ExportTraceServiceRequest.FromString(gzip.decompress(req["body"]))
    assert len(message.resource_spans[0].scope_spans[0].spans) == 3


def test_cli_endpoint_failures_exit_5(tmp_path: Path, collector: Collector) -> None:
    standard_run(tmp_path)
    collector.status[0] = 500
    code, stdout, err = cli("export-otel", "--endpoint", collector.url, "--project-dir", str(tmp_path), "--json")
    assert code == 5 and "HTTP 500" in err
    assert json.loads(stdout)["error"]["type"] == "BackendUnavailableError"
    code, _, err = cli("export-otel", "--endpoint", closed_port_url(), "--timeout", "2", "--project-dir", str(tmp_path))
    assert code == 5 and "cannot reach" in err


def test_cli_needs_exactly_one_destination(tmp_path: Path) -> None:
    standard_run(tmp_path)
    base = ["export-otel", "--project-dir", str(tmp_path)]
    code, _, err = cli(*base)
    assert code == 2 and "exactly one of --output" in err
    code, _, err = cli(*base, "-o", str(tmp_path / "x.json"), "--endpoint", "http://127.0.0.1:1")
    assert code == 2 and "exactly one of --output" in err
    code, _, err = cli(*base, "-o", str(tmp_path / "x.json"), "-H", "A=b")
    assert code == 2 and "--header" in err
    code, _, err = cli(*base, "--endpoint", "http://127.0.0.1:1", "-H", "no-equals-sign")
    assert code == 2 and "header" in err
    code, _, err = cli(*base, "--endpoint", "not a url")
    assert code == 2 and "endpoint" in err


def test_cli_without_runs_or_with_unknown_run_exits_3(tmp_path: Path) -> None:
    code, _, err = cli("export-otel", "-o", str(tmp_path / "x.json"), "--project-dir", str(tmp_path))
    assert code == 3 and "no trace runs" in err
    assert not (tmp_path / "x.json").exists()
    standard_run(tmp_path)
    code, _, _ = cli("export-otel", "2026-04-16_run01", "-o", str(tmp_path / "x.json"), "--project-dir", str(tmp_path))
    assert code == 3
    code, _, err = cli(
        "export-otel",
        "auto-review-loop/2026-04-15_run01",
        "--skill",
        "research-review",
        "-o",
        str(tmp_path / "x.json"),
        "--project-dir",
        str(tmp_path),
    )
    assert code == 2 and "not a run of skill" in err
