"""Amendments only by appending: privacy reclassifications (never more open), corrected outputs and
runs, and the re-check that makes an item invalid, with its reason, after any change to what it
froze (docs/human-review.md, "Amendments" and "Re-check on every path")."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import init_cli_store, open_cli_store, run_cli
from reviewtrail._struct import parse
from reviewtrail.errors import ConflictError, InvalidInputError, NotFoundError
from reviewtrail.human_review.campaigns import correct_output, correct_run, materialize, reclassify
from reviewtrail.human_review.reads import current, resolve_item, run_candidate
from reviewtrail.human_review.records import RECEIPT, RESPONSE, RUN, ContextReceipt, ReviewItem, ReviewResponse
from reviewtrail.human_review.records import CandidateRun as RunRecord
from reviewtrail.ledger import Envelope, new_record
from reviewtrail.store import Store
from support.human_review import add_prompt, add_run, campaign_with_items, new_store


def part(store: Store, run_id: str, type_: str) -> Envelope:
    """The first record of ``type_`` with subject ``run_id``."""
    return next(e for e in store.ledger.read(subject=run_id) if e.type == type_)


def one_item(store: Store, **entry: Any) -> ReviewItem:
    [item] = campaign_with_items(store, 1, **entry)
    return item


# --- reclassify -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["prompt", RUN, RECEIPT, RESPONSE])
def test_reclassifying_makes_the_item_invalid_and_names_the_record(tmp_path: Path, kind: str) -> None:
    with new_store(tmp_path) as store:
        item = one_item(store)
        run_id = item.candidates[0].run_id
        target = store.ledger.get(item.prompt_event_id) if kind == "prompt" else part(store, run_id, kind)
        done = reclassify(store, target.id, "private", reason="names a customer")
        appended = store.ledger.get(done.record_id)
        assert appended.supersedes == target.id and appended.subject == target.subject
        assert appended.privacy == "private" and done.target_id == target.id and done.action == "reclassified"
        resolved = resolve_item(store.ledger, item.item_id)
        assert not resolved.valid
        wanted = f"the prompt {item.prompt_event_id}" if kind == "prompt" else f"candidate {run_id}: the digest differs"
        assert any(p.startswith(wanted) for p in resolved.problems), resolved.problems


def test_a_prompt_reclassified_before_materializing_gives_valid_stricter_items(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        prompt = add_prompt(store)
        add_run(store, prompt, "agent-a")
        add_run(store, prompt, "agent-b")
        reclassify(store, prompt.id, "sensitive", reason="holds account numbers")
        [made] = materialize(store, "camp", 1).prompts[0].created
        resolved = resolve_item(store.ledger, made)
        assert resolved.valid, resolved.problems
        assert resolved.item_privacy == "sensitive" and resolved.prompt_privacy == "sensitive"


@pytest.mark.parametrize(
    ("start", "wanted"), [("private", "public-source"), ("private", "private"), ("sensitive", "private")]
)
def test_reclassify_refuses_a_level_that_is_not_stricter_and_appends_nothing(
    tmp_path: Path, start: str, wanted: str
) -> None:
    with new_store(tmp_path) as store:
        prompt = add_prompt(store, privacy=start)
        head = store.ledger.head()
        with pytest.raises(InvalidInputError) as err:
            reclassify(store, prompt.id, wanted, reason="open it up")
        assert err.value.field == "privacy" and f"is {start}" in str(err.value)
        assert store.ledger.head() == head


def test_reclassify_compares_with_the_privacy_in_force(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        prompt = add_prompt(store)
        reclassify(store, prompt.id, "private", reason="first")
        with pytest.raises(InvalidInputError) as err:
            reclassify(store, prompt.id, "private", reason="again")
        assert err.value.field == "privacy"
        assert reclassify(store, prompt.id, "sensitive", reason="stricter still").privacy == "sensitive"


@pytest.mark.parametrize(("record", "privacy", "reason", "error", "field"), [
    ("missing", "private", "r", NotFoundError, "record"),
    ("item", "private", "r", InvalidInputError, "record"),
    ("prompt", "secret", "r", InvalidInputError, "privacy"),
    ("prompt", "private", "", InvalidInputError, "reason"),
])  # fmt: skip
def test_reclassify_refusals_name_the_field(
    tmp_path: Path, record: str, privacy: str, reason: str, error: type[Exception], field: str
) -> None:
    with new_store(tmp_path) as store:
        item = one_item(store)
        ids = {"missing": "no-such-record", "prompt": item.prompt_event_id}
        ids["item"] = store.ledger.rows("hr_items", item_id=item.item_id)[0]["record_id"]
        head = store.ledger.head()
        with pytest.raises(error) as err:
            reclassify(store, ids[record], privacy, reason=reason)
        assert err.value.field == field  # type: ignore[attr-defined]
        assert store.ledger.head() == head


def test_a_correction_keeps_the_privacy_in_force_and_a_reclassification_follows_the_correction(
    tmp_path: Path,
) -> None:
    with new_store(tmp_path) as store:
        item = one_item(store)
        run_id = item.candidates[0].run_id
        output = part(store, run_id, RESPONSE)
        reclassify(store, output.id, "sensitive", reason="quotes a customer")
        fixed = correct_output(store, output.id, "A corrected answer.")
        assert store.ledger.get(fixed.record_id).privacy == "sensitive"
        run = part(store, run_id, RUN)
        corrected = correct_run(store, run_id, agent={"model": "model-fixed"})
        moved = reclassify(store, run.id, "private", reason="internal model")
        assert moved.target_id == corrected.record_id
        found = run_candidate(store.ledger, run_id)
        assert found is not None
        facts, response = found
        assert facts.model == "model-fixed" and facts.run_privacy == "private"
        assert facts.output_privacy == "sensitive" and response == "A corrected answer."


# --- corrections ------------------------------------------------------------------------------


def test_a_corrected_output_makes_the_item_invalid_naming_both_output_events(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        item = one_item(store)
        frozen = item.candidates[1]
        done = correct_output(store, frozen.output_event_id, "Refunds are possible within 30 days.")
        appended = store.ledger.get(done.record_id)
        assert appended.supersedes == frozen.output_event_id and appended.subject == frozen.run_id
        [problem] = resolve_item(store.ledger, item.item_id).problems
        assert problem == (
            f"candidate {frozen.run_id}: the output event is {done.record_id}, the item froze {frozen.output_event_id}"
        )


def test_a_corrected_run_makes_the_item_invalid(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        item = one_item(store)
        run_id = item.candidates[0].run_id
        old = part(store, run_id, RUN)
        done = correct_run(store, run_id, agent={"model": "gpt-4.1-fixed"})
        appended = store.ledger.get(done.record_id)
        assert appended.supersedes == old.id and appended.subject == run_id and appended.type == RUN
        assert appended.payload_value["agent"]["model"] == "gpt-4.1-fixed"
        assert appended.payload_value["agent"]["provider"] == old.payload_value["agent"]["provider"]
        [problem] = resolve_item(store.ledger, item.item_id).problems
        assert problem.startswith(f"candidate {run_id}: the digest differs")


@pytest.mark.parametrize(("changes", "field"), [
    ({}, "changes"),
    ({"runId": "run-other"}, "runId"),
    ({"agent": {"model": ""}}, "agent.model"),
    ({"agent": {"model": "model-agent-a"}}, "changes"),
    ({"colour": "red"}, "colour"),
    ({"status": "failed"}, "run"),
])  # fmt: skip
def test_correct_run_refusals_name_the_field(tmp_path: Path, changes: dict[str, Any], field: str) -> None:
    with new_store(tmp_path) as store:
        item = one_item(store)
        run_id = next(
            c.run_id for c in item.candidates if part(store, c.run_id, RUN).payload_value["agent"]["id"] == "agent-a"
        )
        head = store.ledger.head()
        with pytest.raises(InvalidInputError) as err:
            correct_run(store, run_id, **changes)
        assert err.value.field == field
        assert store.ledger.head() == head


def test_correct_run_of_an_unknown_run_is_not_found(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        with pytest.raises(NotFoundError) as err:
            correct_run(store, "run-nope", agent={"model": "m"})
        assert err.value.field == "run"


def test_correct_run_refuses_a_run_with_two_current_records(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        prompt = add_prompt(store)
        run_id = add_run(store, prompt, "agent-a")
        add_run(store, prompt, "agent-a", run_id=run_id)  # a second, unrelated record of the same run id
        with pytest.raises(ConflictError) as err:
            correct_run(store, run_id, agent={"model": "m"})
        assert err.value.field == "run"


@pytest.mark.parametrize(
    ("target", "response"), [("output", ""), ("output", "same"), ("run", "text"), ("missing", "x")]
)
def test_correct_output_refusals_name_the_field(tmp_path: Path, target: str, response: str) -> None:
    with new_store(tmp_path) as store:
        prompt = add_prompt(store)
        run_id = add_run(store, prompt, "agent-a", response="same")
        ids = {"output": part(store, run_id, RESPONSE).id, "run": part(store, run_id, RUN).id, "missing": "nope"}
        head = store.ledger.head()
        with pytest.raises((InvalidInputError, NotFoundError)) as err:
            correct_output(store, ids[target], response)
        assert err.value.field == ("response" if target == "output" else "output")  # type: ignore[union-attr]
        assert store.ledger.head() == head


# --- any change to a digested field after materialization ------------------------------------

RUN_CHANGES: list[dict[str, Any]] = [
    {"agent": {"model": "model-other"}},
    {"agent": {"provider": "anthropic"}},
    {"agent": {"executionAdapter": "responses@1"}},
    {"agent": {"learnedAdapter": "lora-7"}},
    {"agent": {"catalogGeneration": "gen-2"}},
    {"promptHash": "sha256:" + "0" * 64},
]
RECEIPT_CHANGES: list[dict[str, Any]] = [{"toolEvidence": ["search-1"]}, {"externalActionAuthority": True}]

amendments = st.one_of(
    st.tuples(st.just("run"), st.sampled_from(range(len(RUN_CHANGES)))),
    st.tuples(st.just("output"), st.text(min_size=1, max_size=40).filter(str.strip)),
    st.tuples(st.just("receipt"), st.sampled_from(range(len(RECEIPT_CHANGES)))),
    st.tuples(st.just("reclassify"), st.sampled_from(["prompt", RUN, RECEIPT, RESPONSE])),
)


def once(which: int, change: tuple[str, Any]) -> tuple[Any, ...]:
    """What a list of amendments holds at most once (a second identical one would be refused)."""
    kind, value = change
    if kind == "reclassify":
        return ("prompt",) if value == "prompt" else (which, kind, value)
    return (which, kind) if kind == "output" else (which, kind, value)


def once_key(change: tuple[int, tuple[str, Any]]) -> tuple[Any, ...]:
    return once(*change)


def amend(store: Store, item: ReviewItem, which: int, change: tuple[str, Any]) -> None:
    run_id = item.candidates[which].run_id
    kind, value = change
    if kind == "run":
        correct_run(store, run_id, **RUN_CHANGES[value])
    elif kind == "output":
        correct_output(store, item.candidates[which].output_event_id, "corrected: " + value)
    elif kind == "receipt":
        now = current(store.ledger, part(store, run_id, RECEIPT))
        receipt = parse(ContextReceipt, {**now.content.payload_value, **RECEIPT_CHANGES[value]}, field="payload")
        correction = new_record(receipt, actor="test", privacy=now.privacy, subject=run_id, supersedes=now.content.id)
        store.append([correction])
    else:
        target = item.prompt_event_id if value == "prompt" else part(store, run_id, value).id
        reclassify(store, target, "sensitive", reason="reclassified")


@settings(max_examples=30, deadline=None)
@given(changes=st.lists(st.tuples(st.integers(0, 1), amendments), max_size=3, unique_by=once_key))
def test_any_amendment_after_materializing_makes_the_item_invalid_with_a_reason(
    changes: list[tuple[int, tuple[str, Any]]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp, new_store(Path(tmp)) as store:
        prompt = add_prompt(store)
        add_run(store, prompt, "agent-a")
        add_run(store, prompt, "agent-b")
        [made] = materialize(store, "camp", 1).prompts[0].created
        item = resolve_item(store.ledger, made).item
        for which, change in changes:
            amend(store, item, which, change)
        resolved = resolve_item(store.ledger, made)
        assert resolved.valid == (not changes), resolved.problems
        for problem in resolved.problems:
            assert problem.startswith(("candidate ", "the prompt ")) and len(problem) > 40


# --- CLI ----------------------------------------------------------------------------------------


def test_cli_reclassify_and_correct_output_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = init_cli_store(tmp_path, monkeypatch)
    with open_cli_store(project) as store:
        item = one_item(store)
    frozen = item.candidates[0]
    code, out, err = run_cli("campaign", "reclassify", item.prompt_event_id, "--privacy", "private", "--reason", "pii")
    assert code == 0, err
    assert f"prompt {item.prompt_event_id} amended by" in out and "(privacy private)" in out
    code, out, err = run_cli(
        "campaign", "reclassify", item.prompt_event_id, "--privacy", "private", "--reason", "pii", "--json"
    )
    assert code == 2 and "error: privacy:" in err
    assert json.loads(out)["error"]["field"] == "privacy"
    fixed = tmp_path / "fixed.txt"
    fixed.write_text("A corrected answer.", encoding="utf-8")
    code, out, err = run_cli(
        "campaign", "correct-output", frozen.output_event_id, "--response-file", str(fixed), "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["action"] == "corrected" and data["kind"] == "output" and data["targetId"] == frozen.output_event_id
    with open_cli_store(project) as store:
        assert store.ledger.get(data["recordId"]).payload_value == {"response": "A corrected answer."}
        assert not resolve_item(store.ledger, item.item_id).valid
    code, _, err = run_cli(
        "campaign", "correct-output", frozen.output_event_id, "--response-file", str(tmp_path / "no")
    )
    assert code == 2 and "error: response-file:" in err


# --- what a correction cannot change ----------------------------------------------------------


@pytest.mark.parametrize("type_", [RUN, RECEIPT, RESPONSE])
def test_a_correction_appended_by_hand_cannot_reopen_a_reclassified_record(tmp_path: Path, type_: str) -> None:
    with new_store(tmp_path) as store:
        prompt = add_prompt(store)
        run_id = add_run(store, prompt, "agent-a")
        old = part(store, run_id, type_)
        reclassify(store, old.id, "sensitive", reason="quotes a customer")
        payload = dict(old.payload_value)
        if type_ == RUN:
            payload["agent"] = {**payload["agent"], "model": "model-fixed"}
        elif type_ == RESPONSE:
            payload["response"] = "A corrected answer."
        else:
            payload["toolEvidence"] = []
        record = parse(
            {RUN: RunRecord, RECEIPT: ContextReceipt, RESPONSE: ReviewResponse}[type_], payload, field="payload"
        )
        store.append([new_record(record, actor="t", privacy="public-source", subject=run_id, supersedes=old.id)])
        found = run_candidate(store.ledger, run_id)
        assert found is not None
        facts, _ = found
        assert (facts.output_privacy if type_ == RESPONSE else facts.run_privacy) == "sensitive"


def test_a_corrected_run_keeps_its_place_among_its_agents_runs(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        prompt = add_prompt(store)
        first = add_run(store, prompt, "agent-a")
        duplicate = add_run(store, prompt, "agent-a")
        other = add_run(store, prompt, "agent-b")
        correct_run(store, first, agent={"model": "model-fixed"})
        report = materialize(store, "camp", 1)
        [made] = report.prompts[0].created
        assert set(resolve_item(store.ledger, made).item.run_ids()) == {first, other}
        assert [e.code for e in report.prompts[0].excluded[duplicate]] == ["duplicate-agent"]
