"""Human review's published values: item ids, display orders and candidate digests are a format
(docs/human-review.md, "Review items"). Each vector below was computed once and written down; a
change to the namespace, the keys or the bytes digested changes it, and so every id and digest
already recorded."""

from __future__ import annotations

import hashlib
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from reviewtrail._struct import parse
from reviewtrail.canonical import canonical_json
from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.campaigns._run_batch import new_item_record_of
from reviewtrail.human_review.records import CampaignRef, CriterionIdentity, ItemCandidate, ReviewItem, ReviewPrompt
from reviewtrail.human_review.records._records import CandidateSelfIdentification
from reviewtrail.human_review.rules import (
    EXCLUSION_CODES,
    CandidateFacts,
    candidate_digest,
    display_order,
    displayed_runs,
    item_id,
    item_problems,
)
from reviewtrail.human_review.rules._frozen import DIGEST_VERSION
from reviewtrail.human_review.rules._item_rules import ITEM_NAMESPACE, candidate_digest_of
from reviewtrail.human_review.rules._run_rules import PromptRef

# --- item ids -----------------------------------------------------------------------------------

#: (prompt event id, criterion id, criterion version, run a, run b) -> item id, display order
ITEM_VECTORS: list[tuple[tuple[str, str, int, str, str], str, tuple[int, int]]] = [
    (("prompt-0", "helpful", 1, "run-a", "run-b"), "0c567cd6-999f-5f77-b118-f7bce64736b8", (1, 0)),
    (("prompt-1", "helpful", 1, "run-a", "run-b"), "31501f32-8308-53f6-9996-037574b60abc", (0, 1)),
    (("prompt-2", "helpful", 1, "run-a", "run-b"), "f54d58a4-6e73-5ee1-a0b6-9d6650454664", (0, 1)),
    (("prompt-3", "helpful", 1, "run-a", "run-b"), "55c6955e-b02d-5c79-a286-f1e1ddf8aef6", (1, 0)),
    (("prompt-4", "helpful", 1, "run-a", "run-b"), "d26bab05-a599-575d-8d05-a47c6b98cc6a", (1, 0)),
    (("01J9-prompt", "accuracy", 3, "run-y", "run-x"), "3fab8336-b7c1-5593-83d4-80997c5458fa", (1, 0)),
]


def test_the_item_namespace_and_digest_version() -> None:
    assert uuid.UUID("4d2b8e61-0c5f-5a7e-9b13-6f0e2a9c7d44") == ITEM_NAMESPACE
    assert DIGEST_VERSION == 1


@pytest.mark.parametrize(("args", "expected", "order"), ITEM_VECTORS)
def test_item_id_known_answers(args: tuple[str, str, int, str, str], expected: str, order: tuple[int, int]) -> None:
    prompt, criterion, version, run_a, run_b = args
    assert item_id(prompt, criterion, version, run_a, run_b) == expected
    assert item_id(prompt, criterion, version, run_b, run_a) == expected


def test_the_item_id_is_uuid5_of_these_bytes() -> None:
    # The name hashed: RFC 8785 bytes, keys sorted, run ids sorted.
    name = '{"criterionId":"accuracy","criterionVersion":3,"promptEventId":"01J9-prompt","runIds":["run-x","run-y"]}'
    assert str(uuid.uuid5(ITEM_NAMESPACE, name)) == "3fab8336-b7c1-5593-83d4-80997c5458fa"
    assert item_id("01J9-prompt", "accuracy", 3, "run-x", "run-y") == "3fab8336-b7c1-5593-83d4-80997c5458fa"


@pytest.mark.parametrize(("args", "expected", "order"), ITEM_VECTORS)
def test_display_order_known_answers(
    args: tuple[str, str, int, str, str], expected: str, order: tuple[int, int]
) -> None:
    # The lowest bit of the first byte of SHA-256 of the item id: 1 shows the later run id first.
    assert display_order(expected) == order
    assert (hashlib.sha256(expected.encode()).digest()[0] & 1) == order[0]
    runs = sorted(args[3:])
    assert displayed_runs(expected, args[3], args[4]) == (runs[order[0]], runs[order[1]])


def test_a_run_paired_with_itself_is_refused_with_its_reason() -> None:
    with pytest.raises(InvalidInputError) as err:
        item_id("prompt-1", "helpful", 1, "run-a", "run-a")
    assert err.value.field == "runB"
    assert str(err.value) == "runB: a review item pairs two different runs"


# --- candidate digests --------------------------------------------------------------------------

FACTS: dict[str, Any] = {
    "runId": "run-a",
    "run": {
        "runId": "run-a",
        "status": "completed",
        "triggerEventId": "prompt-1",
        "agent": {"id": "agent-a", "model": "gpt-4o"},
        "endedAt": "2026-01-01T00:00:00Z",
    },
    "outputEventId": "out-a",
    "outputPayloadHash": "ab" * 32,
    "contextManifest": {
        "runId": "run-a",
        "inputs": [{"eventId": "prompt-1", "inclusion": "whole"}],
        "toolEvidence": [],
        "externalActionAuthority": False,
    },
    "model": "gpt-4o",
    "provider": "openai",
    "promptHash": "sha256:" + "cd" * 32,
    "executionAdapter": "chat-completions@1",
    "learnedAdapter": "lora-é",
    "catalogGeneration": "gen-2026-11",
    "runPrivacy": "public-source",
    "outputPrivacy": "private",
}
DIGEST = "sha256:2a245fa82e163e7652ab895933442cc566f498b5546bbb71839b6f62a7d032cd"
DIGEST_NO_LEARNED_ADAPTER = "sha256:7f044e81eed2de1fbc1b5f7bd7d0082d3e72aa31f8fb1a85c1ec30f542bc8318"


def test_candidate_digest_known_answers() -> None:
    facts = parse(CandidateFacts, FACTS, field="payload")
    assert candidate_digest(facts) == DIGEST
    no_adapter = parse(CandidateFacts, {**FACTS, "learnedAdapter": None}, field="payload")
    assert candidate_digest(no_adapter) == DIGEST_NO_LEARNED_ADAPTER


def test_the_spliced_candidate_digest_known_answer() -> None:
    facts = parse(CandidateFacts, FACTS, field="payload")
    run_bytes, manifest_bytes = canonical_json(facts.run), canonical_json(facts.context_manifest)
    assert candidate_digest_of(facts, run_bytes, manifest_bytes) == DIGEST


def test_the_candidate_digest_is_sha256_of_these_bytes() -> None:
    # Wire names and digestVersion, RFC 8785: keys sorted, no spaces, non-ASCII written as itself.
    text = (
        '{"catalogGeneration":"gen-2026-11","contextManifest":{"externalActionAuthority":false,'
        '"inputs":[{"eventId":"prompt-1","inclusion":"whole"}],"runId":"run-a","toolEvidence":[]},'
        '"digestVersion":1,"executionAdapter":"chat-completions@1","learnedAdapter":"lora-é",'
        '"model":"gpt-4o","outputEventId":"out-a","outputPayloadHash":"' + "ab" * 32 + '",'
        '"outputPrivacy":"private","promptHash":"sha256:' + "cd" * 32 + '","provider":"openai",'
        '"run":{"agent":{"id":"agent-a","model":"gpt-4o"},"endedAt":"2026-01-01T00:00:00Z",'
        '"runId":"run-a","status":"completed","triggerEventId":"prompt-1"},"runId":"run-a",'
        '"runPrivacy":"public-source"}'
    )
    assert "sha256:" + hashlib.sha256(text.encode()).hexdigest() == DIGEST


# --- re-check with digests already computed -----------------------------------------------------


def _pair() -> tuple[ReviewItem, dict[str, CandidateFacts]]:
    a = parse(CandidateFacts, FACTS, field="payload")
    b = parse(CandidateFacts, {**FACTS, "runId": "run-b", "outputEventId": "out-b"}, field="payload")
    made = item_id("prompt-1", "helpful", 1, "run-a", "run-b")
    item = ReviewItem(
        item_id=made,
        campaign=CampaignRef(id="c1", version=1),
        prompt_event_id="prompt-1",
        criterion=CriterionIdentity(id="helpful", version=1),
        candidates=[
            ItemCandidate(run_id=f.run_id, output_event_id=f.output_event_id, digest=candidate_digest(f))
            for f in (a, b)
        ],
        display_order=list(displayed_runs(made, "run-a", "run-b")),
    )
    return item, {"run-a": a, "run-b": b}


def test_the_re_check_takes_the_digests_it_is_given() -> None:
    item, current = _pair()
    other = "sha256:" + "00" * 32
    assert item_problems(item, current, {}) == []
    assert item_problems(item, current, {"run-b": item.candidates[1].digest}) == []
    problems = item_problems(item, current, {"run-a": other})
    assert len(problems) == 1 and problems[0].startswith("candidate run-a: the digest differs")


def test_the_re_check_computes_a_digest_it_is_not_given() -> None:
    item, current = _pair()
    changed_b = {**FACTS, "runId": "run-b", "outputEventId": "out-b", "model": "gpt-4"}
    changed = {**current, "run-b": parse(CandidateFacts, changed_b, field="payload")}
    problems = item_problems(item, changed, {"run-a": item.candidates[0].digest})
    assert len(problems) == 1 and problems[0].startswith("candidate run-b: the digest differs")


# --- exclusion codes ----------------------------------------------------------------------------


def test_the_exclusion_codes_in_the_order_checked() -> None:
    assert EXCLUSION_CODES == (
        "not-completed",
        "other-trigger",
        "other-campaign",
        "undeclared-agent",
        "replaced",
        "duplicate-agent",
        "no-output",
        "several-outputs",
        "invalid-output",
        "no-receipt",
        "several-receipts",
        "receipt-other-input",
        "receipt-not-whole",
        "receipt-projected",
        "receipt-tool-evidence",
        "receipt-action-authority",
    )


def test_the_docs_list_every_exclusion_code_in_order() -> None:
    text = (Path(__file__).parent.parent / "docs" / "human-review.md").read_text(encoding="utf-8")
    section = text.split("### Pairing rules", 1)[1].split("\n### ", 1)[0]
    documented = tuple(re.findall(r"^\| `([a-z-]+)` \|", section, flags=re.MULTILINE))
    assert documented == EXCLUSION_CODES


# --- the item record ----------------------------------------------------------------------------

PROMPT = parse(
    ReviewPrompt,
    {
        "campaign": {"id": "camp", "version": 1, "label": "Camp"},
        "scenarioFamily": "refunds",
        "prompt": "A customer asks for a refund. Reply.",
        "criterion": {"id": "helpful", "version": 1, "label": "Helpful", "instructions": "Prefer the helpful."},
        "candidateAgentIds": ["agent-a", "agent-b"],
    },
    field="payload",
)
ITEM_HEAD = (
    '{"campaign":{"id":"camp","version":1},"candidates":[{"digest":"' + DIGEST + '","outputEventId":"out-a",'
    '"runId":"run-a"},{"digest":"sha256:9fa1aa99300eaaeab3e271b0b961dc02a49e5515bd0d5fb8130ca96448f4215e",'
    '"outputEventId":"out-b","runId":"run-b"}],"criterion":{"id":"helpful","version":1},'
    '"displayOrder":["run-a","run-b"],"itemId":"31501f32-8308-53f6-9996-037574b60abc","promptEventId":"prompt-1"'
)


def test_an_item_record_known_answer_with_and_without_self_identification() -> None:
    # The selfIdentification field is beside the frozen pair: the item id, the digests and every
    # other byte of the payload are those of an item recorded before the field existed.
    ref = PromptRef(event_id="prompt-1", payload_hash="ab" * 32, prompt=PROMPT)
    a = parse(CandidateFacts, FACTS, field="payload")
    b = parse(CandidateFacts, {**FACTS, "runId": "run-b", "outputEventId": "out-b"}, field="payload")
    unchecked = new_item_record_of(ref, "public-source", a, b)
    assert canonical_json(unchecked.payload).decode() == ITEM_HEAD + "}"
    flags = [CandidateSelfIdentification(run_id="run-b", named=["own-model", "other-provider"])]
    flagged = new_item_record_of(ref, "public-source", b, a, self_identification=flags)
    assert canonical_json(flagged.payload).decode() == (
        ITEM_HEAD + ',"selfIdentification":[{"named":["own-model","other-provider"],"runId":"run-b"}]}'
    )
    checked = new_item_record_of(ref, "public-source", a, b, self_identification=[])
    assert canonical_json(checked.payload).decode() == ITEM_HEAD + ',"selfIdentification":[]}'
    assert unchecked.privacy == flagged.privacy == "private"  # FACTS' output is private
