"""OTLP/HTTP export as collectors receive it: gzip protobuf by default, the standard
``OTEL_EXPORTER_OTLP_*`` settings, retries, error status, GenAI attributes and opt-in content.

A real HTTP receiver runs on loopback in a thread and decodes what it gets with
``opentelemetry-proto``. Environment precedence is tested by passing a dict to the loader.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from reviewtrail import __version__
from reviewtrail.errors import BackendUnavailableError, ConfigError, InvalidInputError
from reviewtrail.ledger import LedgerHead
from reviewtrail.tracing.files._reader import find_run
from reviewtrail.tracing.otel._otel import otlp_json, spans_for_run
from reviewtrail.tracing.otel._otel_attrs import CallFacts
from reviewtrail.tracing.otel._otel_export import export_to_endpoint, export_to_file, retry_delay
from reviewtrail.tracing.otel._otlp_settings import OtlpSettings, load_settings, parse_header_list
from test_trace_otel import (
    PROMPT,
    RESPONSE,
    CallSpec,
    RunSpec,
    attrs,
    cli,
    meta_doc,
    request_doc,
    standard_run,
    write_run,
)

# --- a loopback OTLP/HTTP receiver ---------------------------------------------------------------


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Receiver:
    url: str
    requests: list[dict[str, Any]]
    replies: list[Reply]  # consumed in order; the last one repeats

    def spans(self, index: int = -1) -> list[Span]:
        """The spans of request ``index``, decoded as a collector would (gunzip, then protobuf)."""
        req = self.requests[index]
        assert req["headers"]["Content-Type"] == "application/x-protobuf"
        assert req["headers"]["Content-Encoding"] == "gzip"
        message = ExportTraceServiceRequest.FromString(gzip.decompress(req["body"]))
        return [s for rs in message.resource_spans for ss in rs.scope_spans for s in ss.spans]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    received: list[dict[str, Any]] = []
    replies = [Reply()]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            received.append({"path": self.path, "headers": dict(self.headers.items()), "body": body})
            reply = replies.pop(0) if len(replies) > 1 else replies[0]
            self.send_response(reply.status)
            headers = {"Content-Type": "application/x-protobuf", **reply.headers}
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Receiver(f"http://127.0.0.1:{server.server_address[1]}", received, replies)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def value(v: AnyValue) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


def pattrs(span: Span) -> dict[str, Any]:
    return {kv.key: value(kv.value) for kv in span.attributes}


def settings(receiver: Receiver, **over: Any) -> OtlpSettings:
    return OtlpSettings(url=receiver.url + "/v1/traces", **over)


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


# --- protobuf over HTTP --------------------------------------------------------------------------


def test_default_export_is_gzip_protobuf_with_spans_attributes_and_status(tmp_path: Path, receiver: Receiver) -> None:
    run = standard_run(tmp_path)
    result = export_to_endpoint([run], settings(receiver))
    [req] = receiver.requests
    assert req["path"] == "/v1/traces"
    root, first, second = receiver.spans()
    doc_root, _, doc_second = spans_for_run(run)
    assert root.trace_id.hex() == doc_root["traceId"] and root.span_id.hex() == doc_root["spanId"]
    assert first.parent_span_id == root.span_id and second.parent_span_id == root.span_id
    assert root.kind == Span.SPAN_KIND_INTERNAL and first.kind == Span.SPAN_KIND_CLIENT
    assert first.name == "chat gpt-6-astra"
    assert str(second.start_time_unix_nano) == doc_second["startTimeUnixNano"]
    assert second.end_time_unix_nano - second.start_time_unix_nano == 90_500_000_000
    a = pattrs(second)
    assert a["gen_ai.provider.name"] == "x_ai" and a["gen_ai.usage.input_tokens"] == 1234
    assert a["reviewtrail.files_referenced"] == ["paper/sections/3_method.tex", "results/table1.csv"]
    assert second.status.code == Status.STATUS_CODE_ERROR
    assert second.status.message == "reviewer did not answer within 300 s"
    assert first.status.code == Status.STATUS_CODE_UNSET
    # The run's root reflects its failed call.
    assert root.status.code == Status.STATUS_CODE_ERROR and "002" in root.status.message
    assert pattrs(first)["gen_ai.conversation.id"] == "thread-abc"
    assert PROMPT.encode() not in gzip.decompress(req["body"])
    assert result.protocol == "http/protobuf" and result.attempts == 1 and result.spans == 3


def test_json_stays_available_with_hex_ids(tmp_path: Path, receiver: Receiver) -> None:
    run = standard_run(tmp_path)
    export_to_endpoint([run], settings(receiver, protocol="http/json"))
    [req] = receiver.requests
    assert req["headers"]["Content-Type"] == "application/json"
    assert req["headers"]["Content-Encoding"] == "gzip"
    doc = json.loads(gzip.decompress(req["body"]))
    assert doc == otlp_json([run])
    assert len(doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]) == 32


# --- the ledger head the export read at (a format change, pinned) --------------------------------

HEAD = LedgerHead("a1" * 32, 42)
HEAD_ATTRIBUTES = [
    {"key": "reviewtrail.ledger.head", "value": {"stringValue": "a1" * 32}},
    {"key": "reviewtrail.ledger.head_seq", "value": {"intValue": "42"}},
]
# KeyValue{key: "reviewtrail.ledger.head_seq", value: {int_value: 42}}: field 1 (27 bytes of key),
# field 2 (AnyValue, 2 bytes: field 3 varint 0x2a)
HEAD_SEQ_PROTOBUF = "0a1b" + b"reviewtrail.ledger.head_seq".hex() + "1202182a"
# KeyValue{key: "reviewtrail.ledger.head", value: {string_value: 64 hex digits}}
HEAD_PROTOBUF = "0a17" + b"reviewtrail.ledger.head".hex() + "12420a40" + ("a1" * 32).encode().hex()


def test_the_ledger_head_is_a_resource_attribute_of_the_otlp_json_document(tmp_path: Path) -> None:
    run = standard_run(tmp_path)
    resource = otlp_json([run], ledger_head=HEAD)["resourceSpans"][0]["resource"]
    assert resource == {
        "attributes": [
            {"key": "service.name", "value": {"stringValue": "reviewtrail"}},
            {"key": "service.version", "value": {"stringValue": __version__}},
            *HEAD_ATTRIBUTES,
        ]
    }
    plain = otlp_json([run])["resourceSpans"][0]["resource"]["attributes"]
    assert [a["key"] for a in plain] == ["service.name", "service.version"]  # no ledger read: no head
    out = tmp_path / "x.json"
    export_to_file([run], out, ledger_head=HEAD)
    assert json.loads(out.read_text(encoding="utf-8"))["resourceSpans"][0]["resource"] == resource


def test_the_ledger_head_goes_over_http_as_protobuf_and_as_json(tmp_path: Path, receiver: Receiver) -> None:
    run = standard_run(tmp_path)
    export_to_endpoint([run], settings(receiver, compression="none"), ledger_head=HEAD)
    export_to_endpoint([run], settings(receiver, protocol="http/json", compression="none"), ledger_head=HEAD)
    proto, as_json = receiver.requests
    [resource_spans] = ExportTraceServiceRequest.FromString(proto["body"]).resource_spans
    received = {kv.key: value(kv.value) for kv in resource_spans.resource.attributes}
    assert received["reviewtrail.ledger.head"] == "a1" * 32 and received["reviewtrail.ledger.head_seq"] == 42
    assert resource_spans.resource.attributes[-1].value.WhichOneof("value") == "int_value"
    # each KeyValue is field 1 of the Resource: tag 0x0a, its length (93, 33), its bytes
    assert "0a5d" + HEAD_PROTOBUF + "0a21" + HEAD_SEQ_PROTOBUF in proto["body"].hex()
    assert json.loads(as_json["body"])["resourceSpans"][0]["resource"]["attributes"][2:] == HEAD_ATTRIBUTES


def test_the_pinned_protobuf_of_the_head_is_what_opentelemetry_proto_encodes() -> None:
    """The pins above are written out by hand from the protobuf wire format; the library agrees."""
    seq = KeyValue(key="reviewtrail.ledger.head_seq", value=AnyValue(int_value=42))
    head = KeyValue(key="reviewtrail.ledger.head", value=AnyValue(string_value="a1" * 32))
    assert (seq.SerializeToString().hex(), head.SerializeToString().hex()) == (HEAD_SEQ_PROTOBUF, HEAD_PROTOBUF)


def test_uncompressed_when_asked(tmp_path: Path, receiver: Receiver) -> None:
    export_to_endpoint([standard_run(tmp_path)], settings(receiver, compression="none"))
    [req] = receiver.requests
    assert "Content-Encoding" not in req["headers"]
    assert len(ExportTraceServiceRequest.FromString(req["body"]).resource_spans[0].scope_spans[0].spans) == 3


def test_protobuf_partial_success_is_reported(tmp_path: Path, receiver: Receiver) -> None:
    answer = ExportTraceServiceResponse()
    answer.partial_success.rejected_spans = 1
    answer.partial_success.error_message = "span too large"
    receiver.replies[0] = Reply(body=answer.SerializeToString())
    result = export_to_endpoint([standard_run(tmp_path)], settings(receiver))
    assert result.rejected_spans == 1 and result.warning == "the endpoint rejected 1 span(s): span too large"


def test_the_domain_function_never_reads_the_environment(
    tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-from-env=1")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
    export_to_endpoint([standard_run(tmp_path)], settings(receiver))
    [req] = receiver.requests
    assert "x-from-env" not in {k.lower() for k in req["headers"]}
    assert req["headers"]["Content-Type"] == "application/x-protobuf"


# --- retries -------------------------------------------------------------------------------------


def test_429_then_200_is_retried_after_retry_after(tmp_path: Path, receiver: Receiver) -> None:
    receiver.replies[:] = [Reply(429, b"slow down", {"Retry-After": "3"}), Reply(200)]
    sleeps = Sleeps()
    result = export_to_endpoint([standard_run(tmp_path)], settings(receiver), sleep=sleeps)
    assert sleeps == [3.0]
    assert len(receiver.requests) == 2 and result.attempts == 2
    assert receiver.requests[0]["body"] == receiver.requests[1]["body"]
    assert len(receiver.spans()) == 3


@pytest.mark.parametrize("status", [502, 503, 504])
def test_unavailable_is_retried_with_bounded_exponential_backoff_then_fails(
    tmp_path: Path, receiver: Receiver, status: int
) -> None:
    receiver.replies[0] = Reply(status, b"down")
    sleeps = Sleeps()
    chosen = settings(receiver, max_attempts=5, initial_backoff=1.0, max_backoff=5.0)
    with pytest.raises(BackendUnavailableError, match=f"HTTP {status} \\(after 5 attempts\\)") as info:
        export_to_endpoint([standard_run(tmp_path)], chosen, sleep=sleeps)
    assert info.value.exit_code == 5
    assert sleeps == [1.0, 2.0, 4.0, 5.0] and len(receiver.requests) == 5


def test_other_errors_are_not_retried(tmp_path: Path, receiver: Receiver) -> None:
    receiver.replies[0] = Reply(400, b"bad request")
    sleeps = Sleeps()
    with pytest.raises(BackendUnavailableError, match="HTTP 400"):
        export_to_endpoint([standard_run(tmp_path)], settings(receiver), sleep=sleeps)
    assert sleeps == [] and len(receiver.requests) == 1


def test_retry_after_as_an_http_date_and_the_cap() -> None:
    chosen = OtlpSettings(url="http://h/v1/traces", max_backoff=30.0)
    now = datetime(2026, 4, 15, 12, 0, 0, tzinfo=UTC)
    later = format_datetime(now + timedelta(seconds=7), usegmt=True)
    assert retry_delay(1, later, chosen, now=now.timestamp()) == 7.0
    assert retry_delay(1, "3600", chosen, now=0) == 30.0
    assert retry_delay(1, format_datetime(now - timedelta(seconds=9), usegmt=True), chosen, now=now.timestamp()) == 0
    assert retry_delay(3, "soon", chosen, now=0) == 4.0  # unreadable: backoff 1, 2, 4...


@pytest.mark.parametrize("value", ["\u00b2", "\u0663", "1.5", "-1", ""])
def test_retry_after_that_is_not_ascii_delta_seconds_falls_back_to_backoff(value: str) -> None:
    """Digits of other scripts ('²', Arabic-Indic three) are not delta-seconds (RFC 9110: DIGIT is ASCII)."""
    chosen = OtlpSettings(url="http://h/v1/traces", max_backoff=30.0)
    assert retry_delay(2, value, chosen, now=0) == 2.0


@given(
    attempt=st.integers(1, 60),
    retry_after=st.one_of(st.none(), st.text(max_size=40), st.integers(0, 10**12).map(str)),
    cap=st.floats(0.1, 120),
)
def test_retry_delay_is_always_within_zero_and_the_cap(attempt: int, retry_after: str | None, cap: float) -> None:
    chosen = OtlpSettings(url="http://h/v1/traces", max_backoff=cap)
    assert 0 <= retry_delay(attempt, retry_after, chosen, now=1.7e9) <= cap


# --- settings from the environment (a dict, never os.environ) ------------------------------------


def test_endpoint_precedence() -> None:
    base = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}
    loaded = load_settings(base)
    assert loaded is not None and loaded.url == "http://collector:4318/v1/traces"
    loaded = load_settings({"OTEL_EXPORTER_OTLP_ENDPOINT": "https://gw.example/otlp/"})
    assert loaded is not None and loaded.url == "https://gw.example/otlp/v1/traces"  # appended to a base path
    both = {**base, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://traces:9999/custom"}
    loaded = load_settings(both)
    assert loaded is not None and loaded.url == "http://traces:9999/custom"  # used as is
    loaded = load_settings({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://traces:9999"})
    assert loaded is not None and loaded.url == "http://traces:9999"
    loaded = load_settings(both, endpoint="http://option:4318")
    assert loaded is not None and loaded.url == "http://option:4318/v1/traces"
    assert load_settings({}) is None
    assert load_settings({"OTEL_EXPORTER_OTLP_ENDPOINT": "  "}) is None
    with pytest.raises(ConfigError, match="OTEL_EXPORTER_OTLP_ENDPOINT"):
        load_settings({"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"})


def test_defaults_are_protobuf_gzip_and_ten_seconds() -> None:
    loaded = load_settings({}, endpoint="http://h:4318")
    assert loaded is not None
    assert (loaded.protocol, loaded.compression, loaded.timeout, dict(loaded.headers)) == (
        "http/protobuf",
        "gzip",
        10.0,
        {},
    )


def test_headers_precedence_and_percent_decoding() -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318",
        "OTEL_EXPORTER_OTLP_HEADERS": "api-key=general,x-only-general=1",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS": " api-key = Bearer%20t%3Dk%2Cen , x-team=reviews ,",
    }
    loaded = load_settings(env)
    assert loaded is not None
    # The traces-specific variable replaces the general one as a whole.
    assert dict(loaded.headers) == {"api-key": "Bearer t=k,en", "x-team": "reviews"}
    loaded = load_settings(env, headers=["x-team=from-option"])
    assert loaded is not None and loaded.headers["x-team"] == "from-option" and loaded.headers["api-key"]
    general = {k: v for k, v in env.items() if "TRACES" not in k}
    loaded = load_settings(general)
    assert loaded is not None and dict(loaded.headers) == {"api-key": "general", "x-only-general": "1"}
    with pytest.raises(ConfigError, match="OTEL_EXPORTER_OTLP_TRACES_HEADERS"):
        load_settings({**env, "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "no-equals-sign"})
    with pytest.raises(ConfigError, match="OTEL_EXPORTER_OTLP_HEADERS"):
        load_settings({**general, "OTEL_EXPORTER_OTLP_HEADERS": "bad name=1"})
    with pytest.raises(ConfigError, match="line break"):
        load_settings({**general, "OTEL_EXPORTER_OTLP_HEADERS": "a=x%0D%0Ay"})


def test_timeout_precedence_in_milliseconds() -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318", "OTEL_EXPORTER_OTLP_TIMEOUT": "2500"}
    loaded = load_settings(env)
    assert loaded is not None and loaded.timeout == 2.5
    loaded = load_settings({**env, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "750"})
    assert loaded is not None and loaded.timeout == 0.75
    loaded = load_settings({**env, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "750"}, timeout=4)
    assert loaded is not None and loaded.timeout == 4
    for bad in ("0", "-1", "ten", "inf"):
        with pytest.raises(ConfigError, match="OTEL_EXPORTER_OTLP_TIMEOUT"):
            load_settings({**env, "OTEL_EXPORTER_OTLP_TIMEOUT": bad})


def test_protocol_and_compression_precedence() -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json",
        "OTEL_EXPORTER_OTLP_COMPRESSION": "none",
    }
    loaded = load_settings(env)
    assert loaded is not None and (loaded.protocol, loaded.compression) == ("http/json", "none")
    loaded = load_settings(env, protocol="http/protobuf", compression="gzip")
    assert loaded is not None and (loaded.protocol, loaded.compression) == ("http/protobuf", "gzip")
    with pytest.raises(ConfigError, match="gRPC is not supported"):
        load_settings({**env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"})
    with pytest.raises(InvalidInputError, match="protocol"):
        load_settings(env, protocol="thrift")


_HEADER_NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.", min_size=1, max_size=20)
_HEADER_VALUE = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=30)


@given(st.dictionaries(_HEADER_NAME, _HEADER_VALUE, max_size=5))
def test_percent_encoded_header_lists_round_trip(headers: dict[str, str]) -> None:
    """Encoded characters are literal: spaces, commas and '=' survive; only the raw text is trimmed."""
    text = ",".join(f" {quote(k, safe='')} = {quote(v, safe='')} " for k, v in headers.items())
    assert parse_header_list(text, field="X") == headers


@given(_HEADER_VALUE, st.characters(categories=("Cc",), exclude_characters="\t"), _HEADER_VALUE)
def test_a_control_character_in_a_header_value_is_refused(before: str, control: str, after: str) -> None:
    with pytest.raises(InvalidInputError, match="control character"):
        parse_header_list("k=" + quote(before + control + after, safe=""), field="X")


# --- GenAI attributes and opt-in content ---------------------------------------------------------


def _rich_run(project: Path, **meta_over: Any) -> list[dict[str, Any]]:
    meta = meta_doc(
        1,
        "r",
        backend="api.anthropic.com",
        model_family="anthropic",
        reported_reviewer_model="claude-opus-4-1",
        response_id="msg_01ABC",
        finish_reasons=["end_turn"],
        input_tokens=2000,
        output_tokens=300,
        cache_read_input_tokens=1500,
        cache_creation_input_tokens=400,
        **meta_over,
    )
    request = request_doc(1, "r", backend="api.anthropic.com", requested_reviewer_model="claude-opus-4")
    write_run(project, RunSpec(calls=[CallSpec(1, "r", request, meta, RESPONSE)]))
    return spans_for_run(find_run(project, "2026-04-15_run01"))


def test_recommended_genai_attributes(tmp_path: Path) -> None:
    _, span = _rich_run(tmp_path)
    a = attrs(span)
    assert a["server.address"] == "api.anthropic.com"
    assert a["gen_ai.response.id"] == "msg_01ABC"
    assert a["gen_ai.response.finish_reasons"] == ["end_turn"]
    assert a["gen_ai.usage.cache_read.input_tokens"] == 1500
    assert a["gen_ai.usage.cache_creation.input_tokens"] == 400
    assert a["gen_ai.provider.name"] == "anthropic"


def test_a_tool_name_backend_is_no_server_address(tmp_path: Path) -> None:
    _, first, _ = spans_for_run(standard_run(tmp_path))
    assert "server.address" not in attrs(first)  # backend "codex" is a tool, not a host


def test_message_content_only_when_asked(tmp_path: Path) -> None:
    run = standard_run(tmp_path)
    plain = json.dumps(otlp_json([run]))
    assert PROMPT not in plain and "gen_ai.input.messages" not in plain
    _, first, _ = spans_for_run(run, content=True)
    a = attrs(first)
    assert json.loads(a["gen_ai.input.messages"]) == [{"role": "user", "parts": [{"type": "text", "content": PROMPT}]}]
    assert json.loads(a["gen_ai.output.messages"]) == [
        {"role": "assistant", "parts": [{"type": "text", "content": RESPONSE}], "finish_reason": "stop"}
    ]


def test_ledger_facts_replace_trace_times_and_fill_attributes(tmp_path: Path) -> None:
    run = standard_run(tmp_path)
    facts = {
        (run.key, 1): CallFacts(
            start_ns=1_776_234_000_000_000_000,
            end_ns=1_776_234_012_345_678_000,
            server_address="api.openai.com",
            response_id="chatcmpl-9",
            finish_reasons=("stop",),
            cache_read_tokens=64,
        )
    }
    root, first, second = spans_for_run(run, facts=facts)
    assert (first["startTimeUnixNano"], first["endTimeUnixNano"]) == ("1776234000000000000", "1776234012345678000")
    a = attrs(first)
    assert a["server.address"] == "api.openai.com" and a["gen_ai.response.id"] == "chatcmpl-9"
    assert a["gen_ai.response.finish_reasons"] == ["stop"] and a["gen_ai.usage.cache_read.input_tokens"] == 64
    assert "gen_ai.response.id" not in attrs(second)
    assert int(root["startTimeUnixNano"]) <= int(first["startTimeUnixNano"])


def test_root_span_is_unset_when_every_call_succeeded(tmp_path: Path) -> None:
    write_run(tmp_path, RunSpec(calls=[CallSpec(1, "r", request_doc(1, "r"), meta_doc(1, "r"))]))
    root, _ = spans_for_run(find_run(tmp_path, "2026-04-15_run01"))
    assert root["status"] == {"code": 0}


def test_a_failed_status_without_error_details_still_has_a_message(tmp_path: Path) -> None:
    meta = meta_doc(1, "r", status="timeout", error=None)
    write_run(tmp_path, RunSpec(calls=[CallSpec(1, "r", request_doc(1, "r"), meta)]))
    root, span = spans_for_run(find_run(tmp_path, "2026-04-15_run01"))
    assert span["status"] == {"code": 2, "message": "reviewer call ended with status 'timeout'"}
    assert root["status"] == {"code": 2, "message": "1 of 1 reviewer call(s) failed: 001"}


# --- CLI: the standard variables ----------------------------------------------------------------


def test_cli_uses_the_standard_environment(tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    standard_run(tmp_path)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20s3cret,x-team=r%C3%A9views")
    code, stdout, err = cli("export-otel", "--project-dir", str(tmp_path), "--json")
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["destination"] == receiver.url + "/v1/traces" and summary["protocol"] == "http/protobuf"
    [req] = receiver.requests
    assert req["headers"]["authorization"] == "Bearer s3cret"
    assert req["headers"]["x-team"].encode("latin-1").decode("utf-8") == "réviews"  # sent as UTF-8 bytes
    assert len(receiver.spans()) == 3
    code, _, err = cli("export-otel", "--project-dir", str(tmp_path), "--protocol", "http/json")
    assert code == 0, err
    assert json.loads(gzip.decompress(receiver.requests[-1]["body"]))["resourceSpans"]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "soon")
    code, _, err = cli("export-otel", "--project-dir", str(tmp_path))
    assert code == 5 and "OTEL_EXPORTER_OTLP_TIMEOUT" in err


def test_cli_capture_content_flag(tmp_path: Path) -> None:
    standard_run(tmp_path)
    out = tmp_path / "x.json"
    code, _, err = cli("export-otel", "-o", str(out), "--project-dir", str(tmp_path))
    assert code == 0, err
    assert PROMPT not in out.read_text(encoding="utf-8")
    code, _, err = cli("export-otel", "-o", str(out), "--capture-content", "--project-dir", str(tmp_path))
    assert code == 0, err
    assert "gen_ai.input.messages" in out.read_text(encoding="utf-8")
