"""``campaign run``: declared agents over each prompt through the models layer; failures and
invalid outputs recorded and never paired; re-running fills only what is missing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import init_cli_store, open_cli_store, run_cli
from reviewtrail._struct import parse
from reviewtrail.errors import ConfigError, NotFoundError
from reviewtrail.human_review.campaigns import AgentConfig, parse_agents_file, run_campaign
from reviewtrail.human_review.reads import prompt_ref, run_facts, runs_over
from reviewtrail.human_review.records import RECEIPT, RESPONSE, RUN, CandidateRun
from reviewtrail.human_review.rules import pairable_runs
from reviewtrail.ledger import Envelope
from reviewtrail.models import ModelBackend, ScriptedBackend
from reviewtrail.store import Store
from support.fake_llm_server import FakeLLMServer
from support.human_review import add_prompt, new_store, prompt_entry


def agent_entry(agent_id: str, backend: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "id": agent_id,
        "model": f"model-{agent_id}",
        "provider": "openai",
        "executionAdapter": "chat-completions@1",
        "learnedAdapter": None,
        "catalogGeneration": "gen-2026-11",
        "backend": backend or {"kind": "scripted", "template": "{agent} answers: {prompt}"},
    }


def agents(*ids: str, **backends: dict[str, Any]) -> list[AgentConfig]:
    entries = [agent_entry(a, backends.get(a.replace("-", "_"))) for a in ids]
    return parse_agents_file(json.dumps({"agents": entries}), "agents.json")


def records(store: Store, type_: str) -> list[Envelope]:
    return [e for e in store.ledger.tail(100_000) if e.type == type_]


def pairable(store: Store, prompt: Envelope) -> tuple[dict[str, str], dict[str, list[str]]]:
    ref, _ = prompt_ref(store.ledger, prompt.id)
    facts = [f for f in (run_facts(store.ledger, r) for r in runs_over(store.ledger, prompt.id)) if f]
    ok, excluded = pairable_runs(facts, ref)
    return {a: f.run.run_id for a, f in ok.items()}, {r: [e.code for e in ex] for r, ex in excluded.items()}


def assert_no_output_copied(store: Store, texts: list[str]) -> None:
    for env in records(store, RUN) + records(store, RECEIPT):
        wire = json.dumps(env.payload_value)
        for text in texts:
            assert text not in wire, f"candidate output copied into {env.type}"


def test_each_declared_agent_runs_once_over_each_prompt(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    prompts = [add_prompt(store), add_prompt(store)]
    report = run_campaign(store, "camp", 1, agents("agent-a", "agent-b"))
    assert report.to_json()["counts"] == {
        "recorded": 4,
        "already-present": 0,
        "failed": 0,
        "invalid-output": 0,
        "not-configured": 0,
    }
    for prompt in prompts:
        ok, excluded = pairable(store, prompt)
        assert sorted(ok) == ["agent-a", "agent-b"] and excluded == {}
    outputs = [e.payload_value["response"] for e in records(store, RESPONSE)]
    assert len(outputs) == 4 and all("answers: A customer asks" in o for o in outputs)
    assert_no_output_copied(store, outputs)


def test_a_run_records_the_prompt_whole_as_the_only_message_and_its_manifest(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    prompt = add_prompt(store, privacy="private")
    seen: list[ScriptedBackend] = []

    def backend_for(agent: AgentConfig) -> ModelBackend:
        seen.append(ScriptedBackend(["fine"], model=agent.model))
        return seen[-1]

    run_campaign(store, "camp", 1, agents("agent-a", "agent-b"), backend_for=backend_for)
    for backend in seen:
        [call] = backend.calls
        assert call.messages == [{"role": "user", "content": prompt.payload_value["prompt"]}]
        assert call.system is None
    for env in records(store, RUN):
        run = parse(CandidateRun, env.payload_value, field="payload")
        assert env.privacy == "private" and run.origin == "local" and run.status == "completed"
        manifest = store.ledger.get(run.prompt_manifest_id or "")
        assert manifest.type == "provenance.prompt-manifest@1" and manifest.privacy == "private"
        sent = json.loads(store.cas.read(manifest.payload_value["inputMessages"]["digest"]))
        assert sent == [{"role": "user", "content": prompt.payload_value["prompt"]}]
        assert run.started_at <= run.ended_at and run.trigger_event_id == prompt.id
    assert {e.privacy for e in records(store, RECEIPT) + records(store, RESPONSE)} == {"private"}


def test_running_again_appends_nothing(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    add_prompt(store)
    run_campaign(store, "camp", 1, agents("agent-a", "agent-b"))
    head = store.ledger.head()
    again = run_campaign(store, "camp", 1, agents("agent-a", "agent-b"))
    assert store.ledger.head() == head
    assert again.count("already-present") == 2 and again.count("recorded") == 0


def test_a_backend_failure_is_recorded_never_paired_and_retried_alone(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    prompt = add_prompt(store)

    def failing_b(agent: AgentConfig) -> ModelBackend:
        return ScriptedBackend([] if agent.id == "agent-b" else ["ok"], model=agent.model)

    first = run_campaign(store, "camp", 1, agents("agent-a", "agent-b"), backend_for=failing_b)
    [failed] = [e for e in first.entries if e.status == "failed"]
    assert failed.agent_id == "agent-b" and "BackendUnavailableError" in (failed.problem or "")
    ok, excluded = pairable(store, prompt)
    assert list(ok) == ["agent-a"] and excluded == {failed.run_id: ["not-completed", "no-output"]}
    run = parse(CandidateRun, records(store, RUN)[-1].payload_value, field="payload")
    assert run.status == "failed" and run.error and run.prompt_manifest_id is None

    calls: list[str] = []

    def working(agent: AgentConfig) -> ModelBackend:
        calls.append(agent.id)
        return ScriptedBackend(["retried"], model=agent.model)

    second = run_campaign(store, "camp", 1, agents("agent-a", "agent-b"), backend_for=working)
    assert calls == ["agent-b"]
    [retried] = [e for e in second.entries if e.status == "recorded"]
    assert retried.agent_id == "agent-b" and retried.retry_of == failed.run_id
    assert parse(CandidateRun, records(store, RUN)[-1].payload_value, field="payload").retry_of == failed.run_id
    ok, excluded = pairable(store, prompt)
    assert ok["agent-b"] == retried.run_id and excluded == {failed.run_id: ["replaced"]}


@pytest.mark.parametrize("answer", ["", "x" * 40_000])
def test_an_invalid_response_is_recorded_with_its_problem_and_no_output(tmp_path: Path, answer: str) -> None:
    store = new_store(tmp_path)
    prompt = add_prompt(store)
    scripted = {"kind": "scripted", "responses": [answer]}
    report = run_campaign(store, "camp", 1, agents("agent-a", "agent-b", agent_b=scripted))
    [bad] = [e for e in report.entries if e.status == "invalid-output"]
    assert bad.agent_id == "agent-b" and bad.problem
    run = parse(CandidateRun, records(store, RUN)[-1].payload_value, field="payload")
    assert run.status == "completed" and run.output_problem == bad.problem
    assert [e.subject for e in records(store, RESPONSE)] != [] and bad.run_id not in {
        e.subject for e in records(store, RESPONSE)
    }
    assert pairable(store, prompt)[1] == {bad.run_id: ["invalid-output"]}
    if answer:
        assert_no_output_copied(store, [answer])


def test_an_agent_missing_from_the_config_is_reported_and_nothing_recorded(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    add_prompt(store, agents=("agent-a", "agent-b", "agent-c"))
    report = run_campaign(store, "camp", 1, agents("agent-a", "agent-b", "agent-z"))
    assert [(e.agent_id, e.status) for e in report.entries] == [
        ("agent-a", "recorded"),
        ("agent-b", "recorded"),
        ("agent-c", "not-configured"),
    ]
    assert sorted(e.payload_value["agent"]["id"] for e in records(store, RUN)) == ["agent-a", "agent-b"]


def test_progress_is_called_once_per_model_call(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    add_prompt(store)
    add_prompt(store)
    ticks: list[tuple[int, int, str]] = []
    run_campaign(
        store, "camp", 1, agents("agent-a", "agent-b"), progress=lambda d, t, e: ticks.append((d, t, e.agent_id))
    )
    assert ticks == [(1, 4, "agent-a"), (2, 4, "agent-b"), (3, 4, "agent-a"), (4, 4, "agent-b")]


def test_an_unknown_campaign_is_not_found(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    add_prompt(store)
    with pytest.raises(NotFoundError) as caught:
        run_campaign(store, "camp", 2, agents("agent-a"))
    assert caught.value.field == "campaign"


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    srv = FakeLLMServer().start()
    yield srv
    srv.stop()


def test_an_openai_compatible_agent_calls_the_endpoint_with_the_key_from_the_environment(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    store = new_store(tmp_path)
    prompt = add_prompt(store)
    server.answer = "Store credit applies after 30 days."
    backend = {"kind": "openai", "endpoint": f"{server.url}/v1", "apiKeyEnv": "CAMPAIGN_TEST_KEY"}
    config = agents("agent-a", "agent-b", agent_a=backend, agent_b=backend)
    report = run_campaign(store, "camp", 1, config, env={"CAMPAIGN_TEST_KEY": "sk-test"})
    assert report.count("recorded") == 2
    assert len(server.received) == 2
    for req in server.received:
        assert req.path == "/v1/chat/completions"
        assert req.headers["authorization"] == "Bearer sk-test"
        assert req.json()["messages"] == [{"role": "user", "content": prompt.payload_value["prompt"]}]
    assert {e.payload_value["response"] for e in records(store, RESPONSE)} == {server.answer}
    assert_no_output_copied(store, [server.answer])
    assert sorted(pairable(store, prompt)[0]) == ["agent-a", "agent-b"]


def test_an_unreachable_endpoint_is_a_failed_run(tmp_path: Path, server: FakeLLMServer) -> None:
    store = new_store(tmp_path)
    prompt = add_prompt(store)
    for _ in range(10):
        server.fail_next(400, {"error": {"message": "bad request"}})
    backend = {"kind": "openai", "endpoint": f"{server.url}/v1"}
    report = run_campaign(store, "camp", 1, agents("agent-a", "agent-b", agent_a=backend))
    assert [(e.agent_id, e.status) for e in report.entries] == [("agent-a", "failed"), ("agent-b", "recorded")]
    assert list(pairable(store, prompt)[0]) == ["agent-b"]


def test_a_missing_key_variable_is_a_config_error_before_any_call(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    add_prompt(store)
    head = store.ledger.head()
    backend = {"kind": "anthropic", "apiKeyEnv": "NOT_SET_ANYWHERE"}
    with pytest.raises(ConfigError) as caught:
        run_campaign(store, "camp", 1, agents("agent-a", "agent-b", agent_b=backend), env={})
    assert caught.value.field == "backend.apiKeyEnv" and "NOT_SET_ANYWHERE" in str(caught.value)
    assert store.ledger.head() == head


def write_campaign(tmp_path: Path) -> None:
    (tmp_path / "prompts.jsonl").write_text(json.dumps(prompt_entry()) + "\n" + json.dumps(prompt_entry()) + "\n")
    agents_yaml = "agents:\n" + "".join(
        f"  - id: {a}\n    model: model-{a}\n    provider: local\n    executionAdapter: chat-completions@1\n"
        f"    catalogGeneration: gen-1\n    backend: {{kind: scripted, responses: [one, two]}}\n"
        for a in ("agent-a", "agent-b")
    )
    (tmp_path / "agents.yaml").write_text(agents_yaml)


def test_cli_campaign_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = init_cli_store(tmp_path, monkeypatch)
    write_campaign(tmp_path)
    assert run_cli("campaign", "import", "prompts.jsonl")[0] == 0
    code, out, err = run_cli("campaign", "run", "camp", "--version", "1", "--agents", "agents.yaml", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["counts"]["recorded"] == 4 and len(doc["runs"]) == 4
    code, out, _ = run_cli("campaign", "run", "camp", "--version", "1", "--agents", "agents.yaml")
    assert code == 0 and "4 already present" in out
    with open_cli_store(project) as store:
        assert sorted(e.payload_value["response"] for e in records(store, RESPONSE)) == ["one", "one", "two", "two"]


def test_cli_campaign_run_refuses_a_bad_agents_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    init_cli_store(tmp_path, monkeypatch)
    write_campaign(tmp_path)
    (tmp_path / "agents.yaml").write_text(
        (tmp_path / "agents.yaml").read_text().replace("model: model-agent-b", "modle: x")
    )
    assert run_cli("campaign", "import", "prompts.jsonl")[0] == 0
    code, _, err = run_cli("campaign", "run", "camp", "--version", "1", "--agents", "agents.yaml")
    assert code == 2 and "line 9: agents[1].modle: Extra inputs are not permitted" in err  # the misspelt key


def test_cli_campaign_run_draws_a_progress_bar_on_stderr_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    init_cli_store(tmp_path, monkeypatch)
    write_campaign(tmp_path)
    assert run_cli("campaign", "import", "prompts.jsonl")[0] == 0
    code, out, err = run_cli(
        "campaign", "run", "camp", "--version", "1", "--agents", "agents.yaml", "--progress", "--json"
    )
    assert code == 0, err
    assert "running runs" in err and "4/4" in err
    assert json.loads(out)["counts"]["recorded"] == 4
