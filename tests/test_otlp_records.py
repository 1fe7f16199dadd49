"""Reviewer-specialist spans take their times and endpoint from the ledger's prompt manifests.

The Reviewer Specialist writes a call's trace files after the model call returns, so the
trace times bracket the file writes, not the call. The prompt manifest records the call's own
``startedAt``/``endedAt``; the export uses those. A real Smart review on a real store.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import need
from reviewtrail.app import init_store
from reviewtrail.config import ReviewerSettings, Settings
from reviewtrail.errors import ConfigError
from reviewtrail.models import MANIFEST_TYPE, ScriptedBackend
from reviewtrail.models._http import endpoint_parts
from reviewtrail.provenance.artifacts import declare_artifact
from reviewtrail.provenance.runs import create_session, run_code
from reviewtrail.reviewer import review_artifact
from reviewtrail.reviewer.catalog import REVIEW_RUN
from reviewtrail.store import Store
from reviewtrail.tracing.files import iter_runs
from reviewtrail.tracing.files._reader import find_run
from reviewtrail.tracing.otel._otel import parse_ns, spans_for_run
from reviewtrail.tracing.otel._otel_attrs import server_endpoint
from reviewtrail.tracing.otel._otel_records import (
    MANIFEST_TYPE as RECORDS_MANIFEST_TYPE,
)
from reviewtrail.tracing.otel._otel_records import (
    REVIEW_RUN_TYPE,
    ledger_facts,
    manifest_facts,
)
from support.llm_wire import (
    MESSAGES,
    Project,
    Reply,
    WireServer,
    message,
    message_usage,
    project_with_store,
    stored_calls,
    wire_server,
)
from test_trace_otel import CallSpec, RunSpec, attrs, cli, meta_doc, request_doc, write_run

OFF = ReviewerSettings(tier="off")

wire = pytest.fixture(wire_server)
project = pytest.fixture(project_with_store)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    need(shutil.which("bwrap") is not None, "bubblewrap (bwrap) is not installed")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REVIEWTRAIL_REVIEWER", raising=False)
    root = tmp_path / "store"
    s = init_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}"))
    yield s  # type: ignore[misc]
    s.close()


def _smart_review(store: Store, project: Path, rounds: int = 1) -> list[str]:
    session = create_session(store)
    run_code(
        store, session_id=session.session_id, code="open('report.md', 'w').write('A short note.\\n')", lang="python"
    )
    declare_artifact(store, session_id=session.session_id, name="report.md", path="report.md")
    answers = [json.dumps({"verdict": "ready", "findings": []})] * rounds
    tier = "deep" if rounds == 2 else "smart"
    outcome = review_artifact(
        store, "report.md", tier=tier, settings=OFF, backend=ScriptedBackend(answers), project_dir=project
    )
    return list(outcome.run.prompt_manifest_ids)


def test_record_type_names_match_the_packages_that_write_them() -> None:
    assert (RECORDS_MANIFEST_TYPE, REVIEW_RUN_TYPE) == (MANIFEST_TYPE, REVIEW_RUN)


def test_specialist_spans_carry_the_manifest_times_and_endpoint(store: Store, tmp_path: Path) -> None:
    manifests = _smart_review(store, tmp_path, rounds=2)
    [run] = list(iter_runs(tmp_path, "reviewer-specialist"))
    facts = ledger_facts(store.ledger, [run])
    assert set(facts) == {(run.key, 1), (run.key, 2)}
    _, *calls = spans_for_run(run, facts=facts)
    for span, manifest_id in zip(calls, manifests, strict=True):
        payload = store.ledger.get(manifest_id).payload_value
        assert span["startTimeUnixNano"] == str(parse_ns(payload["startedAt"]))
        assert span["endTimeUnixNano"] == str(parse_ns(payload["endedAt"]))
        assert attrs(span)["server.address"] == "scripted.local"
    # Without the ledger, the spans keep the trace files' times (written after the call).
    _, *plain = spans_for_run(run)
    assert [s["startTimeUnixNano"] for s in plain] != [s["startTimeUnixNano"] for s in calls]


def test_cli_reads_the_store_for_specialist_runs(store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    [manifest_id] = _smart_review(store, tmp_path)
    payload = store.ledger.get(manifest_id).payload_value
    monkeypatch.setenv("REVIEWTRAIL_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("REVIEWTRAIL_DATABASE_URL", f"sqlite:///{tmp_path / 'store' / 'ledger.sqlite'}")
    out = tmp_path / "x.json"
    code, _, err = cli("export-otel", "-o", str(out), "--project-dir", str(tmp_path))
    assert code == 0, err
    [resource_spans] = json.loads(out.read_text(encoding="utf-8"))["resourceSpans"]
    [_, span] = resource_spans["scopeSpans"][0]["spans"]
    assert span["startTimeUnixNano"] == str(parse_ns(payload["startedAt"]))
    # the export names the ledger head it read the manifests at
    head = store.ledger.head()
    assert head is not None and head.seq > 1
    assert _resource(resource_spans)["reviewtrail.ledger.head"] == {"stringValue": head.hash}
    assert _resource(resource_spans)["reviewtrail.ledger.head_seq"] == {"intValue": str(head.seq)}
    code, _, err = cli("export-otel", "-o", str(out), "--no-ledger", "--project-dir", str(tmp_path))
    assert code == 0, err
    [resource_spans] = json.loads(out.read_text(encoding="utf-8"))["resourceSpans"]
    [_, span] = resource_spans["scopeSpans"][0]["spans"]
    assert span["startTimeUnixNano"] != str(parse_ns(payload["startedAt"]))
    assert not any(key.startswith("reviewtrail.ledger.") for key in _resource(resource_spans))


def _resource(resource_spans: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: a["value"] for a in resource_spans["resource"]["attributes"]}


def test_cli_without_a_store_warns_and_keeps_trace_times(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_trace_otel import CallSpec, RunSpec, meta_doc, request_doc, write_run

    write_run(
        tmp_path,
        RunSpec(
            skill="reviewer-specialist",
            calls=[CallSpec(1, "smart-review-round-1", request_doc(1, "x"), meta_doc(1, "x"))],
        ),
    )
    monkeypatch.setenv("REVIEWTRAIL_STORE", str(tmp_path / "no-store-here"))
    monkeypatch.delenv("REVIEWTRAIL_DATABASE_URL", raising=False)
    code, _, err = cli("export-otel", "-o", str(tmp_path / "x.json"), "--project-dir", str(tmp_path))
    assert code == 0 and "keep their trace times" in err
    [resource_spans] = json.loads((tmp_path / "x.json").read_text(encoding="utf-8"))["resourceSpans"]
    assert not any(key.startswith("reviewtrail.ledger.") for key in _resource(resource_spans))  # nothing read


def test_manifest_facts_read_what_the_manifest_has() -> None:
    facts = manifest_facts(
        {
            "startedAt": "2026-04-15T06:30:00.000001Z",
            "endedAt": "2026-04-15T06:30:02.5Z",
            "endpointHost": "api.anthropic.com",
            "responseId": "msg_1",
            "finishReason": "end_turn",
            "usage": {"inputTokens": 10, "outputTokens": 2, "cacheReadTokens": 4, "cacheWriteTokens": 3},
        }
    )
    assert facts.end_ns is not None and facts.start_ns is not None
    assert facts.end_ns - facts.start_ns == 2_499_999_000
    assert (facts.server_address, facts.response_id, facts.finish_reasons) == (
        "api.anthropic.com",
        "msg_1",
        ("end_turn",),
    )
    assert (facts.input_tokens, facts.output_tokens, facts.cache_read_tokens, facts.cache_creation_tokens) == (
        10,
        2,
        4,
        3,
    )
    empty = manifest_facts({"usage": None, "startedAt": 5})
    assert empty.start_ns is None and empty.cache_read_tokens is None and empty.finish_reasons == ()


# --- server.address and server.port --------------------------------------------------------------


@pytest.mark.parametrize(
    ("endpoint_host", "address", "port"),
    [
        ("127.0.0.1:18431", "127.0.0.1", 18431),  # http://127.0.0.1:18431/v1, as the backends record it
        ("localhost:80", "localhost", 80),
        ("[::1]:8080", "::1", 8080),
        ("api.anthropic.com", "api.anthropic.com", 443),  # recorded without a port: HTTPS's
    ],
)
def test_a_manifest_endpoint_gives_server_address_and_port(
    tmp_path: Path, endpoint_host: str, address: str, port: int
) -> None:
    facts = manifest_facts({"endpointHost": endpoint_host})
    assert (facts.server_address, facts.server_port) == (address, port)
    write_run(tmp_path, RunSpec(calls=[CallSpec(1, "r", request_doc(1, "r"), meta_doc(1, "r"))]))
    run = find_run(tmp_path, "2026-04-15_run01")
    _, span = spans_for_run(run, facts={(run.key, 1): facts})
    a = attrs(span)
    assert (a["server.address"], a["server.port"]) == (address, port)
    assert [x["value"] for x in span["attributes"] if x["key"] == "server.port"] == [{"intValue": str(port)}]


def test_a_trace_backend_with_a_port_gives_server_address_and_port(tmp_path: Path) -> None:
    request = request_doc(1, "r", backend="127.0.0.1:18431")
    write_run(tmp_path, RunSpec(calls=[CallSpec(1, "r", request, meta_doc(1, "r", backend="127.0.0.1:18431"))]))
    _, span = spans_for_run(find_run(tmp_path, "2026-04-15_run01"))
    assert (attrs(span)["server.address"], attrs(span)["server.port"]) == ("127.0.0.1", 18431)


@pytest.mark.parametrize("value", ["codex", "localhost", "bedrock", "127.0.0.1:0", "127.0.0.1:99999", "[::1", "a.b:x"])
def test_what_names_no_server_gives_no_server_attributes(value: str) -> None:
    assert server_endpoint(value) is None


_LABEL = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
# A host name's last label is never all digits (RFC 3696, 2): dotted digits are an IPv4 address.
_TOP_LABEL = st.from_regex(r"[a-z]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)


@given(
    scheme=st.sampled_from(["http", "https"]),
    labels=st.lists(_LABEL, min_size=0, max_size=3),
    top=_TOP_LABEL,
    port=st.one_of(st.none(), st.integers(1, 65535)),
)
def test_every_endpoint_a_backend_records_reads_back_as_its_host_and_port(
    scheme: str, labels: list[str], top: str, port: int | None
) -> None:
    host = ".".join([*labels, top])
    _, recorded = endpoint_parts(f"{scheme}://{host}{'' if port is None else f':{port}'}/v1")
    expected = port if port is not None else (443 if scheme == "https" else 80)
    assert server_endpoint(recorded, one_label=True) == (host, expected)


@pytest.mark.parametrize("host", ["0.0.0.0000", "0.0.0.00", "1.2.3.999"])
def test_dotted_digits_that_are_no_ipv4_address_are_not_a_url(host: str) -> None:
    with pytest.raises(ConfigError) as caught:
        endpoint_parts(f"https://{host}/v1")
    assert caught.value.field == "base_url"


# --- calls recorded by an instrumented SDK client --------------------------------------------------


def test_spans_of_instrumented_calls_carry_what_their_manifest_holds(
    wire: WireServer, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anthropic

    import reviewtrail

    usage = message_usage(100, 12, cache_read=60, cache_write=20)
    wire.queue(MESSAGES, Reply(body=message("It holds.", model="claude-sonnet-4-5-20250929", usage=usage)))
    client = reviewtrail.instrument(
        anthropic.Anthropic(base_url=wire.url, api_key="k", max_retries=0),
        store=project.store,
        project_dir=project.root,
        env=project.env,
    )
    with reviewtrail.reviewer_call(skill="research-review", purpose="round-1") as handle:
        client.messages.create(model="claude-sonnet-4-5", max_tokens=64, messages=[{"role": "user", "content": "?"}])
        handle.verdict, handle.review_completed = "ready", True
    [call] = stored_calls(project.store)
    [trace] = handle.traces
    assert trace.meta_path is not None
    assert json.loads(trace.meta_path.read_text(encoding="utf-8"))["prompt_manifest_id"] == call.manifest_id

    for name, value in project.env.items():
        monkeypatch.setenv(name, value)
    out = project.root / "spans.json"
    code, _, err = cli("export-otel", "-o", str(out), "--project-dir", str(project.root))
    assert code == 0, err
    [resource_spans] = json.loads(out.read_text(encoding="utf-8"))["resourceSpans"]
    [_, span] = resource_spans["scopeSpans"][0]["spans"]
    a = attrs(span)
    assert a["gen_ai.response.id"] == call.manifest["responseId"] == "msg_1"
    assert a["gen_ai.response.finish_reasons"] == [call.manifest["finishReason"]] == ["end_turn"]
    assert a["gen_ai.usage.cache_read.input_tokens"] == call.manifest["usage"]["cacheReadTokens"] == 60
    assert a["gen_ai.usage.cache_creation.input_tokens"] == call.manifest["usage"]["cacheWriteTokens"] == 20
    assert a["gen_ai.usage.input_tokens"] == call.manifest["usage"]["inputTokens"] == 180
    host, port = wire.url.removeprefix("http://").rsplit(":", 1)
    assert (a["server.address"], a["server.port"]) == (host, int(port))
    assert span["startTimeUnixNano"] == str(parse_ns(call.manifest["startedAt"]))
    assert span["endTimeUnixNano"] == str(parse_ns(call.manifest["endedAt"]))
