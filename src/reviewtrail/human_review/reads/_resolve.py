"""Reading human-review records as they stand now: amendments applied, candidate facts recomputed
(docs/human-review.md, "Amendments" and "Re-check"). Every decision, history and export path
resolves an item through :func:`resolve_item`, so a frozen pair is checked against the current
records each time and never rebound to other bytes; the review queue's cards are built from it
(:mod:`._queue`).

Amendments are followed by :mod:`._chains`.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter
from typing import Any

import msgspec

from reviewtrail._struct import read
from reviewtrail.errors import NotFoundError
from reviewtrail.human_review.reads._candidates import candidate_parts
from reviewtrail.human_review.reads._chains import (
    Current,
    Records,
    amended_problems,
    current,
    run_state,
)
from reviewtrail.human_review.records._records import ReviewDecision, ReviewItem, ReviewPrompt, ReviewResponse
from reviewtrail.human_review.records._run_records import CandidateRun, ContextReceipt
from reviewtrail.human_review.rules._decision_rules import (
    ActiveDecision,
    DecisionFact,
    active_decisions,
    check_decision,
)
from reviewtrail.human_review.rules._frozen import blind
from reviewtrail.human_review.rules._item_rules import CandidateFacts, candidate_digest_of, item_problems
from reviewtrail.human_review.rules._run_rules import PromptRef, RunFacts
from reviewtrail.ledger import Privacy

__all__ = [
    "ResolvedItem",
    "active_decision",
    "blinded_problems",
    "candidate_facts",
    "item_decisions",
    "prompt_ref",
    "resolve_item",
    "run_candidate",
    "run_facts",
    "runs_over",
]

_SEQ = itemgetter("seq")


def run_facts(ledger: Records, run_id: str) -> RunFacts | None:
    """The run as recorded now, for the pairing rules; None when the run id has no single current
    record."""
    state = run_state(ledger, run_id)
    if state is None:
        return None
    return RunFacts(
        run=read(CandidateRun, state.run.content.payload),
        seq=state.run.original_seq,
        receipts=tuple(read(ContextReceipt, r.content.payload) for r in state.receipts),
        outputs=tuple(o.content.id for o in state.outputs),
    )


def candidate_facts(
    run: CandidateRun,
    run_wire: dict[str, Any],
    *,
    output_event_id: str,
    output_payload_hash: str,
    context_manifest: dict[str, Any],
    run_privacy: Privacy,
    output_privacy: Privacy,
) -> CandidateFacts:
    """The digested facts of one candidate from its run (and the run payload as recorded), its
    output event and its context receipt: pure, so a batch builder can compute them before
    appending."""
    agent = run.agent
    return CandidateFacts(
        run_id=run.run_id,
        run=run_wire,
        output_event_id=output_event_id,
        output_payload_hash=output_payload_hash,
        context_manifest=context_manifest,
        model=agent.model,
        provider=agent.provider,
        prompt_hash=run.prompt_hash,
        execution_adapter=agent.execution_adapter,
        learned_adapter=agent.learned_adapter,
        catalog_generation=agent.catalog_generation,
        run_privacy=run_privacy,
        output_privacy=output_privacy,
    )


def run_candidate(ledger: Records, run_id: str) -> tuple[CandidateFacts, str] | None:
    """A completed run's candidate facts as recorded now and its exact response; None when the
    run is not a completed run with exactly one current output and one current receipt."""
    found = _candidate(ledger, run_id)
    return None if found is None else found[0]


def _candidate(ledger: Records, run_id: str) -> tuple[tuple[CandidateFacts, str], str] | None:
    """:func:`run_candidate`, with the candidate's digest (its run and receipt spliced in as
    stored, :func:`candidate_digest_of`): the records of :func:`~._candidates.candidate_parts`,
    read through their payload models."""
    parts = candidate_parts(ledger, run_id)
    if parts is None:
        return None
    run = read(CandidateRun, parts.run.payload)
    if run.status != "completed":
        return None
    facts = candidate_facts(run, parts.run.payload_value, **parts.recorded_facts())
    digest = candidate_digest_of(facts, parts.run.payload, parts.receipt.payload)
    return (facts, read(ReviewResponse, parts.output.payload).response), digest


def prompt_ref(ledger: Records, prompt_event_id: str) -> tuple[PromptRef, Current]:
    """The review prompt a run or item names, as recorded (a prompt is never rebound to a
    correction: an amended prompt makes its items invalid)."""
    env = ledger.get(prompt_event_id)
    prompt = read(ReviewPrompt, env.payload)
    return PromptRef(env.id, env.payload_hash, prompt), current(ledger, env)


class ResolvedItem(msgspec.Struct, frozen=True):
    """A review item checked against the current records."""

    item: ReviewItem
    prompt: ReviewPrompt
    prompt_privacy: Privacy
    item_privacy: Privacy
    candidates: dict[str, tuple[CandidateFacts, str]]
    problems: tuple[str, ...]
    # What the re-check of the candidates alone found (``item_problems``: run, output event,
    # digest), a part of ``problems``; an export reuses it instead of recomputing every digest.
    candidate_problems: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        return not self.problems


def resolve_item(ledger: Records, item_id: str) -> ResolvedItem:
    """The item ``item_id`` with its prompt and its candidates' current facts and responses, and
    every reason it no longer binds what it froze (an amended prompt or item, a run that is no
    longer a completed candidate, another output event, a digest that differs)."""
    rows = ledger.rows("hr_items", item_id=item_id)
    if not rows:
        raise NotFoundError(f"no review item {item_id}", field="item")
    env = ledger.get(rows[0]["record_id"])
    item = read(ReviewItem, env.payload)
    ref, prompt_now = ledger.memo(prompt_ref, item.prompt_event_id)
    item_now = current(ledger, env)
    candidates = {}
    now = {}
    digests = {}
    for run_id in item.run_ids():
        found = ledger.memo(_candidate, run_id)
        if found is not None:
            candidates[run_id], digests[run_id] = found
            now[run_id] = found[0][0]
    problems = item_problems(item, now, digests)
    candidate_problems = tuple(problems)
    problems = amended_problems(ledger, ref.event_id, prompt_now.amended, env, item_now.amended) + problems
    return ResolvedItem(
        item=item,
        prompt=ref.prompt,
        prompt_privacy=prompt_now.privacy,
        item_privacy=item_now.privacy,
        candidates=candidates,
        problems=tuple(problems),
        candidate_problems=candidate_problems,
    )


def runs_over(ledger: Records, prompt_event_id: str) -> Iterable[str]:
    """The run ids triggered by a prompt, in the order first recorded."""
    seen: dict[str, int] = {}
    for row in ledger.rows("hr_runs", trigger_event_id=prompt_event_id):
        seen.setdefault(row["run_id"], row["seq"])
        seen[row["run_id"]] = min(seen[row["run_id"]], row["seq"])
    return sorted(seen, key=lambda run: seen[run])


def item_decisions(ledger: Records, item: ReviewItem, prompt: ReviewPrompt) -> list[DecisionFact]:
    """Every decision recorded on ``item``, in seq order, each checked against the item and its
    criterion (a decision another writer recorded may not fit: it is kept but never counts)."""
    facts = []
    for row in sorted(ledger.rows("hr_decisions", item_id=item.item_id), key=_SEQ):
        env = ledger.get(row["record_id"])
        decision = read(ReviewDecision, env.payload)
        valid = check_decision(decision, item, prompt.criterion) is None
        facts.append(DecisionFact(env.id, env.seq, decision, valid, env.actor))
    return facts


def active_decision(facts: list[DecisionFact], item_id: str) -> ActiveDecision | None:
    """The one active decision among ``facts`` of an item, or None."""
    return active_decisions(facts).get(item_id)


def blinded_problems(resolved: ResolvedItem) -> tuple[str, ...]:
    """The item's problems with every run id replaced by its position and every output event id
    withheld, so that saying why an item is invalid reveals nothing a blinded card hides."""
    withheld = [value for c in resolved.item.candidates for value in (c.output_event_id, c.digest)]
    withheld += [facts.output_event_id for facts, _ in resolved.candidates.values()]
    return blind(resolved.problems, resolved.item.display_order, withheld)
