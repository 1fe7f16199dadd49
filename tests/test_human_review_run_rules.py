"""The pairing rules on their own, with no store: each exclusion code from the one condition that
raises it, with its detail, and the choice of one standing run per agent (docs/human-review.md,
"Pairing rules")."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from reviewtrail._struct import parse
from reviewtrail.human_review.records import CandidateRun, ContextReceipt, ReviewPrompt
from reviewtrail.human_review.rules import (
    EXCLUSION_CODES,
    Exclusion,
    PromptRef,
    RunFacts,
    pairable_runs,
    receipt_exclusions,
    run_exclusions,
)

HASH = "ab" * 32
OTHER_HASH = "cd" * 32
PROMPT = parse(
    ReviewPrompt,
    {
        "campaign": {"id": "camp", "version": 2, "label": "Camp"},
        "scenarioFamily": "refunds",
        "prompt": "A customer asks for a refund. Reply.",
        "criterion": {"id": "faithful", "version": 1, "label": "Faithful", "instructions": "Prefer the faithful."},
        "candidateAgentIds": ["agent-a", "agent-b", "agent-c"],
    },
    field="payload",
)
REF = PromptRef(event_id="prompt-1", payload_hash=HASH, prompt=PROMPT)


def run(run_id: str = "run-1", agent_id: str = "agent-a", **changes: Any) -> CandidateRun:
    wire: dict[str, Any] = {
        "runId": run_id,
        "campaign": {"id": "camp", "version": 2},
        "triggerEventId": "prompt-1",
        "agent": {
            "id": agent_id,
            "model": "m",
            "provider": "p",
            "executionAdapter": "chat@1",
            "catalogGeneration": "gen-1",
        },
        "status": "completed",
        "startedAt": "2026-01-01T00:00:00Z",
        "endedAt": "2026-01-01T00:00:01Z",
        "promptHash": "sha256:" + HASH,
    }
    wire.update(changes)
    return parse(CandidateRun, wire, field="payload")


def given_input(**changes: Any) -> dict[str, Any]:
    return {"eventId": "prompt-1", "payloadHash": HASH, "inclusion": "whole", **changes}


def receipt(**changes: Any) -> ContextReceipt:
    wire: dict[str, Any] = {
        "runId": "run-1",
        "inputs": [given_input()],
        "toolEvidence": [],
        "externalActionAuthority": False,
    }
    wire.update(changes)
    return parse(ContextReceipt, wire, field="payload")


def facts(
    candidate: CandidateRun | None = None,
    *,
    seq: int = 1,
    receipts: tuple[ContextReceipt, ...] | None = None,
    outputs: tuple[str, ...] = ("out-1",),
) -> RunFacts:
    return RunFacts(
        run=candidate or run(), seq=seq, receipts=(receipt(),) if receipts is None else receipts, outputs=outputs
    )


# One condition broken at a time -> exactly the exclusions it gives, in order, with their details.
CASES: list[tuple[str, RunFacts, list[Exclusion]]] = [
    (
        "failed",
        facts(run(status="failed", error="timeout after 30 s")),
        [Exclusion("not-completed", "the run failed: timeout after 30 s")],
    ),
    (
        "other trigger",
        facts(run(triggerEventId="prompt-9")),
        [Exclusion("other-trigger", "the run was triggered by prompt-9")],
    ),
    (
        "other campaign id",
        facts(run(campaign={"id": "other", "version": 2})),
        [Exclusion("other-campaign", "the run names campaign other v2")],
    ),
    (
        "other campaign version",
        facts(run(campaign={"id": "camp", "version": 1})),
        [Exclusion("other-campaign", "the run names campaign camp v1")],
    ),
    (
        "undeclared agent",
        facts(run(agent_id="agent-z")),
        [Exclusion("undeclared-agent", "the prompt does not declare agent agent-z")],
    ),
    (
        "invalid output",
        facts(run(outputProblem="not a review response"), outputs=()),
        [Exclusion("invalid-output", "not a review response")],
    ),
    (
        "invalid output beside an output",
        facts(run(outputProblem="too long"), outputs=("out-1", "out-2")),
        [Exclusion("invalid-output", "too long")],
    ),
    ("no output", facts(outputs=()), [Exclusion("no-output", "the run has no review-response output event")]),
    (
        "several outputs",
        facts(outputs=("out-1", "out-2")),
        [Exclusion("several-outputs", "the run has 2 output events")],
    ),
    ("no receipt", facts(receipts=()), [Exclusion("no-receipt", "the run has no context receipt")]),
    (
        "several receipts",
        facts(receipts=(receipt(), receipt())),
        [Exclusion("several-receipts", "the run has 2 context receipts")],
    ),
    (
        "several receipts, one of them bad",
        facts(receipts=(receipt(), receipt(externalActionAuthority=True))),
        [Exclusion("several-receipts", "the run has 2 context receipts")],
    ),
    (
        "another input beside the prompt",
        facts(receipts=(receipt(inputs=[given_input(), given_input(eventId="doc-7")]),)),
        [Exclusion("receipt-other-input", "the prompt must be the only input (other inputs: doc-7)")],
    ),
    (
        "only other inputs",
        facts(receipts=(receipt(inputs=[given_input(eventId="doc-7"), given_input(eventId="doc-8")]),)),
        [Exclusion("receipt-other-input", "the prompt must be the only input (other inputs: doc-7, doc-8)")],
    ),
    (
        "no input",
        facts(receipts=(receipt(inputs=[]),)),
        [Exclusion("receipt-other-input", "the prompt must be the only input (other inputs: none)")],
    ),
    (
        "the prompt twice",
        facts(receipts=(receipt(inputs=[given_input(), given_input()]),)),
        [Exclusion("receipt-other-input", "the prompt must be the only input (other inputs: none)")],
    ),
    (
        "projected, with the prompt's hash",
        facts(receipts=(receipt(inputs=[given_input(inclusion="projected")]),)),
        [Exclusion("receipt-not-whole", "the prompt was not included whole (inclusion or payload hash)")],
    ),
    (
        "whole, with another hash",
        facts(receipts=(receipt(inputs=[given_input(payloadHash=OTHER_HASH)]),)),
        [Exclusion("receipt-not-whole", "the prompt was not included whole (inclusion or payload hash)")],
    ),
    (
        "through payloadFields",
        facts(receipts=(receipt(inputs=[given_input(payloadFields=["prompt"])]),)),
        [Exclusion("receipt-projected", "the prompt was projected through payloadFields")],
    ),
    (
        "through no payloadFields",
        facts(receipts=(receipt(inputs=[given_input(payloadFields=[])]),)),
        [Exclusion("receipt-projected", "the prompt was projected through payloadFields")],
    ),
    (
        "tool evidence",
        facts(receipts=(receipt(toolEvidence=["search-1", "fetch-2"]),)),
        [Exclusion("receipt-tool-evidence", "the run gained tool evidence: search-1, fetch-2")],
    ),
    (
        "action authority",
        facts(receipts=(receipt(externalActionAuthority=True),)),
        [Exclusion("receipt-action-authority", "the run had external action authority")],
    ),
]


def test_a_run_that_meets_every_condition_has_no_exclusion() -> None:
    assert run_exclusions(facts(), REF) == []
    assert receipt_exclusions(receipt(), REF) == []
    assert pairable_runs([facts()], REF) == ({"agent-a": facts()}, {})


@pytest.mark.parametrize(("case", "given", "expected"), CASES, ids=[c[0] for c in CASES])
def test_each_condition_gives_its_own_exclusion(case: str, given: RunFacts, expected: list[Exclusion]) -> None:
    assert run_exclusions(given, REF) == expected
    pairable, excluded = pairable_runs([given], REF)
    assert pairable == {}
    assert excluded == {"run-1": expected}


def test_a_receipt_with_every_fault_names_each_in_order() -> None:
    bad = receipt(
        inputs=[given_input(inclusion="projected", payloadFields=["prompt"]), given_input(eventId="doc-7")],
        toolEvidence=["search-1"],
        externalActionAuthority=True,
    )
    assert [e.code for e in receipt_exclusions(bad, REF)] == [
        "receipt-other-input",
        "receipt-not-whole",
        "receipt-projected",
        "receipt-tool-evidence",
        "receipt-action-authority",
    ]


def test_a_run_with_every_fault_names_each_in_the_order_checked() -> None:
    bad = run(status="failed", error="boom", triggerEventId="prompt-9", campaign={"id": "x", "version": 1})
    bad = msgspec.structs.replace(bad, **{"agent": run(agent_id="agent-z").agent})
    codes = [e.code for e in run_exclusions(facts(bad, outputs=(), receipts=()), REF)]
    assert codes == ["not-completed", "other-trigger", "other-campaign", "undeclared-agent", "no-output", "no-receipt"]
    assert codes == [c for c in EXCLUSION_CODES if c in codes]


def test_every_exclusion_code_is_one_the_rules_give() -> None:
    given = {e.code for _, f, expected in CASES for e in expected}
    given |= {"replaced", "duplicate-agent"}  # from pairable_runs, below
    assert given == set(EXCLUSION_CODES)
    assert len(EXCLUSION_CODES) == len(set(EXCLUSION_CODES))


def test_exclusions_read_as_json() -> None:
    assert Exclusion("no-output", "why").to_json() == {"code": "no-output", "detail": "why"}


# --- one standing run per agent --------------------------------------------------------------------


def test_a_retry_replaces_the_standing_run_whatever_order_the_runs_are_given_in() -> None:
    first = facts(run("run-1"), seq=3)
    retry = facts(run("run-2", retryOf="run-1"), seq=7)
    for given in ([first, retry], [retry, first]):
        pairable, excluded = pairable_runs(given, REF)
        assert pairable == {"agent-a": retry}
        assert excluded == {"run-1": [Exclusion("replaced", "replaced by the retry run-2")]}


def test_a_later_run_that_replaces_nothing_is_a_duplicate() -> None:
    first = facts(run("run-1"), seq=1)
    later = facts(run("run-2"), seq=2)
    stray = facts(run("run-3", retryOf="run-9"), seq=3)
    pairable, excluded = pairable_runs([stray, later, first], REF)
    assert pairable == {"agent-a": first}
    assert excluded == {
        "run-2": [Exclusion("duplicate-agent", "agent agent-a already has run run-1 here")],
        "run-3": [Exclusion("duplicate-agent", "agent agent-a already has run run-1 here")],
    }


def test_a_chain_of_retries_leaves_the_last_standing() -> None:
    runs = [
        facts(run("run-1", status="failed", error="boom"), seq=1),
        facts(run("run-2", retryOf="run-1"), seq=2),
        facts(run("run-3", retryOf="run-2"), seq=3),
    ]
    pairable, excluded = pairable_runs(runs, REF)
    assert pairable == {"agent-a": runs[2]}
    assert excluded == {
        "run-1": [Exclusion("replaced", "replaced by the retry run-2")],
        "run-2": [Exclusion("replaced", "replaced by the retry run-3")],
    }


def test_a_standing_run_that_fails_leaves_its_agent_without_a_candidate_and_others_unaffected() -> None:
    bad = facts(run("run-1", agent_id="agent-a", status="failed", error="boom"), seq=1)
    good_b = facts(run("run-2", agent_id="agent-b"), seq=2)
    good_c = facts(run("run-3", agent_id="agent-c"), seq=3)
    pairable, excluded = pairable_runs([good_c, bad, good_b], REF)
    assert pairable == {"agent-b": good_b, "agent-c": good_c}
    assert excluded == {"run-1": [Exclusion("not-completed", "the run failed: boom")]}


def test_a_retry_that_fails_is_excluded_and_the_run_it_replaced_stays_replaced() -> None:
    first = facts(run("run-1"), seq=1)
    retry = facts(run("run-2", retryOf="run-1"), seq=2, outputs=())
    pairable, excluded = pairable_runs([first, retry], REF)
    assert pairable == {}
    assert excluded == {
        "run-1": [Exclusion("replaced", "replaced by the retry run-2")],
        "run-2": [Exclusion("no-output", "the run has no review-response output event")],
    }


def test_no_runs_give_nothing() -> None:
    assert pairable_runs([], REF) == ({}, {})
