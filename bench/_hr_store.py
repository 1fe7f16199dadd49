"""Building a large human-review store for the benchmarks: prompts, candidate runs, frozen items
and decisions, made with the library's own record builders and appended in batches of 1,000.

:func:`build_review_store` (the queue and decide benchmarks): per item, one prompt, two candidate
runs (run, context receipt, output: six records) and the item, eight records. Decisions (each
superseding the item's previous one) fill the ledger up to the wanted record count; they go to the
items recorded first, as a reviewer working through the queue in order would leave them, so the
queue's first page must skip every decided item.

:func:`build_campaign_store` (the export benchmarks): the shape of a real campaign. Each prompt is
answered once by each of :data:`CAMPAIGN_AGENTS` agents, and every pair of its runs is an item, so
prompts and runs are shared across items; most items are decided once (every 50th is left open,
every 50th decided twice, the second superseding the first): about 2.4 ledger records per
exported example.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from reviewtrail._struct import parse
from reviewtrail.canonical import canonical_json
from reviewtrail.human_review.campaigns import RunOutcome, new_item_record_of, run_records
from reviewtrail.human_review.reads import candidate_facts
from reviewtrail.human_review.records import (
    AgentIdentity,
    CandidateRun,
    ReviewDecision,
    ReviewItem,
    ReviewPrompt,
    new_decision_record,
    new_prompt_record,
)
from reviewtrail.human_review.rules import PromptRef
from reviewtrail.ledger import NewRecord
from reviewtrail.store import Store

__all__ = ["CAMPAIGN", "CAMPAIGN_AGENTS", "build_campaign_store", "build_review_store"]

CAMPAIGN = ("bench-campaign", 1)
BATCH = 1_000
#: Candidate agents per prompt in :func:`build_campaign_store` (the most a prompt may name: 120 items per prompt).
CAMPAIGN_AGENTS = 16


def _agent(x: str) -> AgentIdentity:
    return parse(
        AgentIdentity,
        {
            "id": f"agent-{x}",
            "model": f"model-{x}",
            "provider": "openai",
            "executionAdapter": "chat-completions@1",
            "learnedAdapter": None,
            "catalogGeneration": "gen-1",
        },
        field="payload",
    )


_AGENTS = tuple(_agent(x) for x in ("a", "b"))
_MANY = tuple(_agent(f"c{i:02d}") for i in range(CAMPAIGN_AGENTS))


def _prompt(n: int, agents: tuple[AgentIdentity, ...] = _AGENTS) -> ReviewPrompt:
    return parse(
        ReviewPrompt,
        {
            "campaign": {"id": CAMPAIGN[0], "version": CAMPAIGN[1], "label": "Benchmark campaign"},
            "scenarioFamily": f"family-{n % 4}",
            "prompt": f"Customer message {n}: my order arrived late, what can you do? Reply briefly.",
            "evidence": "Policy: refunds within 30 days; store credit up to 60 days.",
            "criterion": {
                "id": "policy-faithful",
                "version": 1,
                "label": "Faithful to policy",
                "instructions": "Prefer the reply that applies the policy exactly.",
                "allowedReasonCodes": ["wrong-policy"],
                "allowedResponseTags": ["verbose"],
            },
            "candidateAgentIds": [a.id for a in agents],
            "externalExportEligible": True,
        },
        field="payload",
    )


def _payload_hash(record: NewRecord) -> str:
    return hashlib.sha256(canonical_json(record.payload)).hexdigest()


def _prompt_runs(n: int, agents: tuple[AgentIdentity, ...]) -> tuple[list[NewRecord], PromptRef, list[Any]]:
    """A prompt and one completed run of each agent on it: the records and each run's facts."""
    prompt = _prompt(n, agents)
    prompt_record = new_prompt_record(prompt, "public-source")
    ref = PromptRef(prompt_record.id, _payload_hash(prompt_record), prompt)
    records = [prompt_record]
    facts = []
    for agent in agents:
        outcome = RunOutcome(
            "2026-11-30T10:00:00Z", "2026-11-30T10:00:01Z", response=f"{agent.id} answers customer {n}: credit."
        )
        run, receipt, output = run_records(ref, agent, outcome, privacy="public-source")
        records += [run, receipt, output]
        facts.append(
            candidate_facts(
                parse(CandidateRun, run.payload, field="payload"),
                run.payload,
                output_event_id=output.id,
                output_payload_hash=_payload_hash(output),
                context_manifest=receipt.payload,
                run_privacy="public-source",
                output_privacy="public-source",
            )
        )
    return records, ref, facts


def _one_item(n: int) -> tuple[list[NewRecord], ReviewItem]:
    records, ref, facts = _prompt_runs(n, _AGENTS)
    item = new_item_record_of(ref, "public-source", facts[0], facts[1])
    records.append(item)
    return records, parse(ReviewItem, item.payload, field="payload")


def _decision(item: ReviewItem, k: int, supersedes: str | None) -> NewRecord:
    payload: dict[str, Any] = {
        "itemId": item.item_id,
        "disposition": "prefer",
        "preferred": item.display_order[k % 2],
        "strength": "slight" if k % 3 else "strong",
        "useForTraining": True,
        "submissionId": f"bench-{item.item_id}-{k}",
        "supersedes": supersedes,
    }
    return new_decision_record(
        parse(ReviewDecision, payload, field="payload"), "public-source", actor=f"reviewer-{k % 3}"
    )


def _batches(items: int, records: int) -> Iterator[tuple[list[NewRecord], list[ReviewItem]]]:
    made: list[ReviewItem] = []
    batch: list[NewRecord] = []
    for n in range(items):
        recs, item = _one_item(n)
        batch += recs
        made.append(item)
        if len(batch) >= BATCH:
            yield batch, made
            batch, made = [], []
    if batch:
        yield batch, made


def build_review_store(store: Store, *, items: int, records: int) -> list[ReviewItem]:
    """Fill ``store`` with ``items`` items of one campaign and decisions up to ``records`` records;
    the items, in the order recorded."""
    every: list[ReviewItem] = []
    for batch, made in _batches(items, records):
        store.append(batch)
        every += made
    head = store.ledger.head()
    count = head.seq if head is not None else 0
    decided = 0
    last: dict[str, str] = {}
    pending: list[NewRecord] = []
    k = 0
    # Decide the first half of the items, then supersede in rounds until the record count is met.
    while count + len(pending) < records:
        item = every[decided % max(1, len(every) // 2)]
        record = _decision(item, k, last.get(item.item_id))
        last[item.item_id] = record.id
        pending.append(record)
        decided += 1
        k += 1
        if len(pending) >= BATCH:
            store.append(pending)
            count += len(pending)
            pending = []
    if pending:
        store.append(pending)
    return every


def build_campaign_store(store: Store, *, items: int) -> int:
    """Fill ``store`` with ``items`` items of one campaign in the shape of a real campaign (see
    the module's docstring); the number of records appended."""
    appended = 0
    pending: list[NewRecord] = []
    n = 0
    while n < items:
        records, ref, facts = _prompt_runs(n, _MANY)
        pending += records
        for i, first in enumerate(facts):
            for second in facts[i + 1 :]:
                if n >= items:
                    break
                item_record = new_item_record_of(ref, "public-source", first, second)
                pending.append(item_record)
                if n % 50 != 49:
                    item = parse(ReviewItem, item_record.payload, field="payload")
                    decision = _decision(item, n, None)
                    pending.append(decision)
                    if n % 50 == 0:
                        pending.append(_decision(item, n + 1, decision.id))
                n += 1
        if len(pending) >= BATCH or n >= items:
            store.append(pending)
            appended += len(pending)
            pending = []
    return appended
