"""``campaign import-runs``: externally produced runs validated like local ones; runs that fail a
condition are kept as evidence of their exclusion; a malformed file changes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import init_cli_store, open_cli_store, run_cli
from reviewtrail._struct import parse, words
from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.campaigns import MAX_IMPORT_OUTPUTS, import_runs, prompt_text_hash
from reviewtrail.human_review.records import RECEIPT, RESPONSE, RUN, CandidateRun
from reviewtrail.ledger import Envelope
from reviewtrail.store import Store
from support.human_review import add_prompt, new_store, prompt_entry

_ids = iter(range(1, 1_000_000))


def run_line(prompt: Envelope, agent_id: str, **changes: Any) -> dict[str, Any]:
    """One import line (wire names): a completed run of ``agent_id`` over ``prompt`` with a receipt
    proving the prompt was its only, whole input, and one output."""
    run_id = changes.pop("run_id", f"ext-run-{next(_ids)}")
    run: dict[str, Any] = {
        "runId": run_id,
        "campaign": {
            "id": prompt.payload_value["campaign"]["id"],
            "version": prompt.payload_value["campaign"]["version"],
        },
        "triggerEventId": prompt.id,
        "agent": {
            "id": agent_id,
            "model": f"model-{agent_id}",
            "provider": "openai",
            "executionAdapter": "chat-completions@1",
            "learnedAdapter": None,
            "catalogGeneration": "gen-1",
        },
        "status": "completed",
        "startedAt": "2026-11-30T10:00:00Z",
        "endedAt": "2026-11-30T10:00:02Z",
        "promptHash": prompt_text_hash(prompt.payload_value["prompt"]),
    }
    run.update(changes.pop("run", {}))
    receipt: dict[str, Any] | None = {
        "runId": run_id,
        "inputs": [{"eventId": prompt.id, "payloadHash": prompt.payload_hash, "inclusion": "whole"}],
        "toolEvidence": [],
        "externalActionAuthority": False,
    }
    if "receipt" in changes:
        change = changes.pop("receipt")
        receipt = None if change is None else {**(receipt or {}), **change}
    line = {
        "run": run,
        "receipt": receipt,
        "outputs": [{"response": f"External answer of {agent_id} ({run_id})"}],
        "privacy": prompt.privacy,
    }
    line.update(changes)
    return line


def jsonl(*lines: dict[str, Any]) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


def of_type(store: Store, type_: str) -> list[Envelope]:
    return [e for e in store.ledger.tail(100_000) if e.type == type_]


def test_valid_runs_are_recorded_as_imported_and_pairable(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    prompt = add_prompt(store)
    a = run_line(prompt, "agent-a", run={"origin": "local"})
    b = run_line(prompt, "agent-b")
    report = import_runs(store, jsonl(a, b))
    doc = report.to_json()
    assert (doc["imported"], doc["alreadyPresent"], doc["pairable"], doc["excluded"]) == (2, 0, 2, 0)
    runs = [parse(CandidateRun, e.payload_value, field="payload") for e in of_type(store, RUN)]
    assert [r.origin for r in runs] == ["imported", "imported"]
    outputs = of_type(store, RESPONSE)
    assert sorted(e.subject or "" for e in outputs) == sorted([a["run"]["runId"], b["run"]["runId"]])
    assert len(of_type(store, RECEIPT)) == 2
    for env in of_type(store, RUN) + of_type(store, RECEIPT):
        for out in outputs:
            assert out.payload_value["response"] not in json.dumps(env.payload_value)


def test_importing_twice_appends_nothing(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    prompt = add_prompt(store)
    text = jsonl(run_line(prompt, "agent-a"), run_line(prompt, "agent-b", outputs=[]))
    import_runs(store, text)
    head = store.ledger.head()
    again = import_runs(store, text)
    assert store.ledger.head() == head
    assert [r.status for r in again.runs] == ["already-present", "already-present"]
    assert [r.pairable for r in again.runs] == [True, False]
    assert [e.code for e in again.runs[1].exclusions] == ["no-output"]


def test_a_stricter_privacy_is_kept(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    prompt = add_prompt(store)
    import_runs(store, jsonl(run_line(prompt, "agent-a", privacy="sensitive")))
    assert {e.privacy for e in of_type(store, RUN) + of_type(store, RECEIPT) + of_type(store, RESPONSE)} == {
        "sensitive"
    }


Lines = Callable[[Envelope, Envelope], list[dict[str, Any]]]

# Each case: the lines to import (over a prompt declaring agent-a and agent-b, and another prompt),
# and the exclusion code the last line's run must carry.
EXCLUSION_CASES: dict[str, Lines] = {
    "not-completed": lambda p, q: [run_line(p, "agent-a", run={"status": "failed", "error": "timeout"}, outputs=[])],
    "other-campaign": lambda p, q: [run_line(p, "agent-a", run={"campaign": {"id": "camp", "version": 9}})],
    "undeclared-agent": lambda p, q: [run_line(p, "agent-z")],
    "replaced": lambda p, q: [
        run_line(p, "agent-a", run_id="first", outputs=[]),
        run_line(p, "agent-b"),
        run_line(p, "agent-a", run={"retryOf": "first"}),
    ],
    "duplicate-agent": lambda p, q: [run_line(p, "agent-a"), run_line(p, "agent-a")],
    "no-output": lambda p, q: [run_line(p, "agent-a", outputs=[])],
    "several-outputs": lambda p, q: [run_line(p, "agent-a", outputs=[{"response": "one"}, {"response": "two"}])],
    "invalid-output": lambda p, q: [run_line(p, "agent-a", outputs=[{"response": ""}])],
    "no-receipt": lambda p, q: [run_line(p, "agent-a", receipt=None)],
    "receipt-other-input": lambda p, q: [
        run_line(
            p,
            "agent-a",
            receipt={
                "inputs": [
                    {"eventId": p.id, "payloadHash": p.payload_hash, "inclusion": "whole"},
                    {"eventId": q.id, "payloadHash": q.payload_hash, "inclusion": "whole"},
                ]
            },
        )
    ],
    "receipt-not-whole": lambda p, q: [
        run_line(
            p,
            "agent-a",
            receipt={"inputs": [{"eventId": p.id, "payloadHash": p.payload_hash, "inclusion": "projected"}]},
        )
    ],
    "receipt-projected": lambda p, q: [
        run_line(
            p,
            "agent-a",
            receipt={
                "inputs": [
                    {"eventId": p.id, "payloadHash": p.payload_hash, "inclusion": "whole", "payloadFields": ["prompt"]}
                ]
            },
        )
    ],
    "receipt-tool-evidence": lambda p, q: [run_line(p, "agent-a", receipt={"toolEvidence": ["web-search-1"]})],
    "receipt-action-authority": lambda p, q: [run_line(p, "agent-a", receipt={"externalActionAuthority": True})],
}


@pytest.mark.parametrize("code", sorted(EXCLUSION_CASES))
def test_every_exclusion_is_reachable_and_the_run_is_kept(tmp_path: Path, code: str) -> None:
    store = new_store(tmp_path)
    prompt, other = add_prompt(store), add_prompt(store)
    lines = EXCLUSION_CASES[code](prompt, other)
    report = import_runs(store, jsonl(*lines))
    excluded = [r for r in report.runs if not r.pairable]
    assert excluded, report.to_json()
    target = excluded[-1] if code != "replaced" else excluded[0]
    assert code in [e.code for e in target.exclusions], report.to_json()
    assert target.status == "imported"
    recorded = {e.payload_value["runId"] for e in of_type(store, RUN)}
    assert {r.run_id for r in report.runs} <= recorded  # kept as evidence


def test_a_retry_replaces_the_run_it_names(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    prompt = add_prompt(store)
    first = run_line(prompt, "agent-a", run_id="first", outputs=[])
    retry = run_line(prompt, "agent-a", run={"retryOf": "first"})
    report = import_runs(store, jsonl(first, retry))
    assert [[e.code for e in r.exclusions] for r in report.runs] == [["replaced"], []]
    assert [r.pairable for r in report.runs] == [False, True]


def test_a_run_naming_another_prompt_is_never_a_candidate_over_the_first(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    prompt, other = add_prompt(store), add_prompt(store)
    line = run_line(other, "agent-a")
    line["receipt"]["inputs"] = [{"eventId": prompt.id, "payloadHash": prompt.payload_hash, "inclusion": "whole"}]
    report = import_runs(store, jsonl(line))
    [run] = report.runs
    assert run.trigger_event_id == other.id and not run.pairable
    assert [e.code for e in run.exclusions] == ["receipt-other-input"]


def _bad_cases(p: Envelope, q: Envelope) -> dict[str, tuple[str, str]]:
    """Name → (the second line of a file whose first line is good, the field refused)."""
    good = run_line(p, "agent-b")
    dup = dict(good)
    return {
        "not json": ("{not json", "line 2: line"),
        "not an object": ("[1, 2]", "line 2: line"),
        "unknown field": (json.dumps({**run_line(p, "agent-a"), "extra": 1}), "line 2: extra"),
        "run field missing": (
            json.dumps(run_line(p, "agent-a", run={"agent": {"id": "agent-a"}})),
            "line 2: run.agent.model",
        ),
        "bad status": (json.dumps(run_line(p, "agent-a", run={"status": "done"})), "line 2: run.status"),
        "receipt shape": (json.dumps(run_line(p, "agent-a", receipt={"inputs": "all"})), "line 2: receipt.inputs"),
        "receipt of another run": (
            json.dumps(run_line(p, "agent-a", receipt={"runId": "someone-else"})),
            "line 2: receipt.runId",
        ),
        "output shape": (
            json.dumps(run_line(p, "agent-a", outputs=[{"response": "x", "model": "m"}])),
            "line 2: outputs.0.model",
        ),
        "output not text": (
            json.dumps(run_line(p, "agent-a", outputs=[{"response": 5}])),
            "line 2: outputs.0.response",
        ),
        "privacy unknown": (json.dumps(run_line(p, "agent-a", privacy="public")), "line 2: privacy"),
        "privacy more open": (json.dumps(run_line(q, "agent-a", privacy="public-source")), "line 2: privacy"),
        "unknown trigger": (
            json.dumps(run_line(p, "agent-a", run={"triggerEventId": "no-such-record"})),
            "line 2: run.triggerEventId",
        ),
        "trigger not a prompt": (
            json.dumps(run_line(p, "agent-a", run={"triggerEventId": "__FIRST_RECORD__"})),
            "line 2: run.triggerEventId",
        ),
        "repeated run id": (json.dumps(dup), "line 2: run.runId"),
        "_good": (json.dumps(good), ""),
    }


@pytest.mark.parametrize(
    "case",
    [
        "not json",
        "not an object",
        "unknown field",
        "run field missing",
        "bad status",
        "receipt shape",
        "receipt of another run",
        "output shape",
        "output not text",
        "privacy unknown",
        "privacy more open",
        "unknown trigger",
        "trigger not a prompt",
        "repeated run id",
    ],
)
def test_a_malformed_file_is_refused_whole_and_changes_nothing(tmp_path: Path, case: str) -> None:
    store = new_store(tmp_path)
    prompt = add_prompt(store)
    private = add_prompt(store, privacy="private")
    cases = _bad_cases(prompt, private)
    bad, field = cases[case]
    bad = bad.replace("__FIRST_RECORD__", store.ledger.tail(1_000_000)[0].id)
    good = cases["_good"][0] if case != "repeated run id" else bad
    head = store.ledger.head()
    with pytest.raises(InvalidInputError) as caught:
        import_runs(store, good + "\n" + bad + "\n")
    assert caught.value.field == field
    assert store.ledger.head() == head


def test_too_many_outputs_are_refused_in_words(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    line = run_line(add_prompt(store), "agent-a", outputs=[{"response": "x"}] * (MAX_IMPORT_OUTPUTS + 1))
    with pytest.raises(InvalidInputError) as caught:
        import_runs(store, json.dumps(line) + "\n")
    assert caught.value.field == "line 1: outputs"
    assert words(caught.value) == f"List should have at most {MAX_IMPORT_OUTPUTS} items"


def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    with pytest.raises(InvalidInputError) as caught:
        import_runs(store, "\n\n")
    assert caught.value.field == "file"


def test_cli_import_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = init_cli_store(tmp_path, monkeypatch)
    (tmp_path / "prompts.jsonl").write_text(json.dumps(prompt_entry()) + "\n")
    assert run_cli("campaign", "import", "prompts.jsonl")[0] == 0
    with open_cli_store(project) as store:
        [prompt] = of_type(store, "stream.thought.source.review.prompt@1")
    (tmp_path / "runs.jsonl").write_text(jsonl(run_line(prompt, "agent-a"), run_line(prompt, "agent-b", receipt=None)))
    code, out, err = run_cli("campaign", "import-runs", "runs.jsonl", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert (doc["imported"], doc["pairable"], doc["excluded"]) == (2, 1, 1)
    assert [e["code"] for e in doc["runs"][1]["exclusions"]] == ["no-receipt"]
    code, out, _ = run_cli("campaign", "import-runs", "runs.jsonl")
    assert code == 0 and "0 imported, 2 already present, 1 excluded" in out
    (tmp_path / "bad.jsonl").write_text('{"run": {}}\n')
    code, _, err = run_cli("campaign", "import-runs", "bad.jsonl")
    assert code == 2 and "line 1: outputs" in err


def test_a_receipt_may_name_the_prompt_by_its_hash_in_any_given_form_or_by_its_import_digest(tmp_path: Path) -> None:
    from reviewtrail.human_review.campaigns import import_campaign

    store = new_store(tmp_path)
    for form in ("sha256:{hash}", "{digest}", "{bare_digest}"):
        imported = import_campaign(store, json.dumps(prompt_entry()) + "\n", name="c.jsonl").to_json()["prompts"][0]
        prompt = store.ledger.get(imported["recordId"])
        assert imported["payloadHash"] == prompt.payload_hash  # printed by campaign import --json
        given = form.format(
            hash=prompt.payload_hash, digest=imported["promptDigest"], bare_digest=imported["promptDigest"][7:]
        )
        inputs = [{"eventId": prompt.id, "payloadHash": given, "inclusion": "whole"}]
        report = import_runs(store, jsonl(run_line(prompt, "agent-a", receipt={"inputs": inputs})))
        assert [r.pairable for r in report.runs] == [True], (form, report.to_json())
    receipts = of_type(store, RECEIPT)
    assert len(receipts) == 3
    for env in receipts:  # recorded as the bare payload hash of the prompt named
        [given_input] = env.payload_value["inputs"]
        assert given_input["payloadHash"] == store.ledger.get(given_input["eventId"]).payload_hash


@pytest.mark.parametrize("given", ["0" * 64, "sha256:" + "1" * 64, "abc", "SHA256:XYZ", 7])
def test_a_receipt_naming_the_prompt_by_another_hash_is_refused_saying_which_to_give(
    tmp_path: Path, given: object
) -> None:
    store = new_store(tmp_path)
    prompt = add_prompt(store)
    head = store.ledger.head()
    line = run_line(
        prompt, "agent-a", receipt={"inputs": [{"eventId": prompt.id, "payloadHash": given, "inclusion": "whole"}]}
    )
    with pytest.raises(InvalidInputError) as err:
        import_runs(store, jsonl(run_line(prompt, "agent-b"), line))
    assert err.value.field == "line 2: receipt.inputs.0.payloadHash"
    assert prompt.payload_hash in str(err.value) and "campaign import --json" in str(err.value)
    assert store.ledger.head() == head  # nothing recorded, no exclusion kept for ever
