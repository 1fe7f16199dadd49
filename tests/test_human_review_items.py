"""Review item rules: the item id over the unordered pair, the balanced blinded display order, and
the candidate digest over every training-relevant field (docs/human-review.md, "Review items")."""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.canonical import canonical_json
from reviewtrail.errors import CanonicalJSONError, InvalidInputError
from reviewtrail.human_review.records import CampaignRef, CriterionIdentity, ItemCandidate, ReviewItem
from reviewtrail.human_review.rules import (
    CandidateFacts,
    candidate_digest,
    display_order,
    displayed_runs,
    item_id,
    item_problems,
)
from reviewtrail.human_review.rules._item_rules import candidate_digest_of

ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=20)


@given(prompt=ids, criterion=ids, version=st.integers(1, 50), runs=st.lists(ids, min_size=2, max_size=2, unique=True))
def test_the_item_id_is_deterministic_over_the_unordered_pair(
    prompt: str, criterion: str, version: int, runs: list[str]
) -> None:
    a, b = runs
    made = item_id(prompt, criterion, version, a, b)
    assert made == item_id(prompt, criterion, version, b, a)
    assert uuid.UUID(made).version == 5
    assert displayed_runs(made, a, b) == displayed_runs(made, b, a)
    assert sorted(displayed_runs(made, a, b)) == sorted(runs)


@given(
    base=st.tuples(ids, ids, st.integers(1, 50), ids, ids),
    other=st.tuples(ids, ids, st.integers(1, 50), ids, ids),
)
def test_different_prompts_criteria_or_pairs_address_different_items(
    base: tuple[str, str, int, str, str], other: tuple[str, str, int, str, str]
) -> None:
    def key(t: tuple[str, str, int, str, str]) -> tuple[Any, ...]:
        return (t[0], t[1], t[2], frozenset(t[3:]))

    if base[3] == base[4] or other[3] == other[4]:
        return
    same = key(base) == key(other)
    assert (item_id(*base) == item_id(*other)) is same


def test_the_fields_of_an_item_id_are_not_confused_with_each_other() -> None:
    assert item_id("p", "c1", 1, "a", "b") != item_id("p", "c", 11, "a", "b")
    assert item_id("p", "c", 1, "a", "b") != item_id("c", "p", 1, "a", "b")


def test_a_run_is_not_paired_with_itself() -> None:
    with pytest.raises(InvalidInputError) as err:
        item_id("p", "c", 1, "run-1", "run-1")
    assert err.value.field == "runB"


def test_the_display_order_is_balanced_across_a_thousand_items_and_stable() -> None:
    items = [item_id(f"prompt-{i}", "helpful", 1, f"run-{i}-a", f"run-{i}-b") for i in range(1000)]
    orders = [display_order(i) for i in items]
    assert set(orders) == {(0, 1), (1, 0)}
    sorted_first = sum(1 for o in orders if o == (0, 1))
    assert 450 <= sorted_first <= 550
    assert orders == [display_order(i) for i in items]
    shown = [displayed_runs(i, f"run-{n}-a", f"run-{n}-b") for n, i in enumerate(items)]
    assert sum(1 for n, pair in enumerate(shown) if pair[0] == f"run-{n}-a") == sorted_first


def facts(**changes: Any) -> CandidateFacts:
    wire: dict[str, Any] = {
        "runId": "run-a",
        "run": {"status": "completed", "triggerEventId": "p1", "agentId": "agent-a", "endedAt": "2026-01-01T00:00:00Z"},
        "outputEventId": "o-a",
        "outputPayloadHash": "ab" * 32,
        "contextManifest": {"inputs": ["p1"], "whole": True, "payloadFields": None},
        "model": "m-1",
        "provider": "local",
        "promptHash": "cd" * 32,
        "executionAdapter": "chat@1",
        "learnedAdapter": None,
        "catalogGeneration": "gen-7",
        "runPrivacy": "public-source",
        "outputPrivacy": "public-source",
    }
    wire.update(changes)
    return msgspec.convert(wire, CandidateFacts)  # not through JSON: a lone surrogate stays


CHANGES = {
    "runId": "run-z",
    "run": {"status": "completed", "triggerEventId": "p1", "agentId": "agent-a", "endedAt": "2026-01-01T00:00:01Z"},
    "outputEventId": "o-z",
    "outputPayloadHash": "ef" * 32,
    "contextManifest": {"inputs": ["p1"], "whole": True, "payloadFields": ["prompt"]},
    "model": "m-2",
    "provider": "remote",
    "promptHash": "00" * 32,
    "executionAdapter": "chat@2",
    "learnedAdapter": "lora-3",
    "catalogGeneration": "gen-8",
    "runPrivacy": "private",
    "outputPrivacy": "sensitive",
}


def test_the_digest_covers_exactly_the_training_relevant_fields() -> None:
    wire_names = {f.encode_name for f in msgspec.structs.fields(CandidateFacts)}
    assert wire_names == set(CHANGES)


@pytest.mark.parametrize("field", sorted(CHANGES))
def test_a_change_to_any_digested_field_changes_the_digest(field: str) -> None:
    assert candidate_digest(facts(**{field: CHANGES[field]})) != candidate_digest(facts())


@given(field=st.sampled_from(["run", "contextManifest"]), key=ids, value=st.one_of(st.integers(-5, 5), ids, st.none()))
def test_any_change_inside_the_run_or_context_manifest_changes_the_digest(field: str, key: str, value: Any) -> None:
    base = facts()
    nested = dict(getattr(base, "run" if field == "run" else "context_manifest"))
    if key in nested and nested[key] == value:
        return
    nested[key] = value
    assert candidate_digest(facts(**{field: nested})) != candidate_digest(base)


def test_the_digest_is_canonical_and_fits_an_item() -> None:
    digest = candidate_digest(facts())
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest)
    reordered = dict(reversed(list(facts().run.items())))
    assert candidate_digest(facts(run=reordered)) == digest
    ItemCandidate(run_id="run-a", output_event_id="o-a", digest=digest)


def frozen_item(a: CandidateFacts, b: CandidateFacts) -> ReviewItem:
    made = item_id("p1", "helpful", 1, a.run_id, b.run_id)
    first, second = sorted((a, b), key=lambda f: f.run_id)
    return ReviewItem(
        item_id=made,
        campaign=CampaignRef(id="c1", version=1),
        prompt_event_id="p1",
        criterion=CriterionIdentity(id="helpful", version=1),
        candidates=[
            ItemCandidate(run_id=f.run_id, output_event_id=f.output_event_id, digest=candidate_digest(f))
            for f in (first, second)
        ],
        display_order=list(displayed_runs(made, a.run_id, b.run_id)),
    )


@given(field=st.sampled_from(sorted(set(CHANGES) - {"runId"})), which=st.sampled_from([0, 1]))
def test_any_change_to_a_digested_field_after_freezing_makes_the_item_invalid(field: str, which: int) -> None:
    pair = [facts(), facts(runId="run-b", outputEventId="o-b")]
    item = frozen_item(*pair)
    assert item_problems(item, {f.run_id: f for f in pair}) == []
    pair[which] = facts(**{**pair[which].wire(), field: CHANGES[field]})
    problems = item_problems(item, {"run-a": pair[0], "run-b": pair[1]})
    assert len(problems) == 1 and problems[0].startswith(f"candidate {('run-a', 'run-b')[which]}:")


def test_a_candidate_no_longer_recorded_makes_the_item_invalid() -> None:
    pair = [facts(), facts(runId="run-b", outputEventId="o-b")]
    item = frozen_item(*pair)
    assert item_problems(item, {"run-a": pair[0]}) == ["candidate run-b: the run is not a completed candidate"]
    assert len(item_problems(item, {"run-a": pair[1], "run-b": pair[1]})) == 1


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@given(
    run=st.dictionaries(st.text(max_size=8), json_values, max_size=5),
    manifest=st.dictionaries(st.text(max_size=8), json_values, max_size=5),
    model=st.text(min_size=1),
    adapter=st.one_of(st.none(), st.text()),
)
def test_the_spliced_digest_is_the_digest_when_the_stored_bytes_are_canonical(
    run: dict[str, Any], manifest: dict[str, Any], model: str, adapter: str | None
) -> None:
    made = facts(run=run, contextManifest=manifest, model=model, learnedAdapter=adapter)
    try:
        run_bytes, manifest_bytes = canonical_json(made.run), canonical_json(made.context_manifest)
    except CanonicalJSONError:  # a lone surrogate: no record could hold it
        return
    assert candidate_digest_of(made, run_bytes, manifest_bytes) == candidate_digest(made)


def test_stored_bytes_that_are_not_canonical_give_another_digest() -> None:
    made = facts()
    canonical = canonical_json(made.run)
    spaced = json.dumps(made.run, sort_keys=True).encode()  # the same value, other bytes
    assert spaced != canonical
    manifest = canonical_json(made.context_manifest)
    assert candidate_digest_of(made, canonical, manifest) == candidate_digest(made)
    assert candidate_digest_of(made, spaced, manifest) != candidate_digest(made)


def test_the_candidate_digest_known_answer() -> None:
    # Published in every review item: the bytes digested may never change silently.
    made = facts()
    expected = (
        '{"catalogGeneration":"gen-7","contextManifest":{"inputs":["p1"],"payloadFields":null,"whole":true},'
        '"digestVersion":1,"executionAdapter":"chat@1","learnedAdapter":null,"model":"m-1",'
        '"outputEventId":"o-a","outputPayloadHash":"' + "ab" * 32 + '","outputPrivacy":"public-source",'
        '"promptHash":"' + "cd" * 32 + '","provider":"local","run":{"agentId":"agent-a",'
        '"endedAt":"2026-01-01T00:00:00Z","status":"completed","triggerEventId":"p1"},"runId":"run-a",'
        '"runPrivacy":"public-source"}'
    )
    digest = "sha256:" + hashlib.sha256(expected.encode()).hexdigest()
    assert candidate_digest(made) == digest
    assert candidate_digest_of(made, canonical_json(made.run), canonical_json(made.context_manifest)) == digest


def test_a_lone_surrogate_in_a_spliced_digest_is_refused_like_the_digest() -> None:
    made = facts(model="m-\ud800")
    run_bytes, manifest_bytes = canonical_json(made.run), canonical_json(made.context_manifest)
    with pytest.raises(CanonicalJSONError):
        candidate_digest(made)
    with pytest.raises(CanonicalJSONError):
        candidate_digest_of(made, run_bytes, manifest_bytes)
