"""Pure rules of candidate runs: which runs may be paired, and why the others are excluded
(docs/human-review.md, "Candidate runs"). Nothing here reads a store.

A run is pairable when it is completed, names its prompt as trigger (and that prompt's campaign),
comes from an agent the prompt declares, is the current run of that agent over that prompt, has
exactly one contract-valid output event, and its one context receipt proves the prompt was the
only input, included whole, not projected through ``payloadFields``, with no tool evidence gained
and no external action authority.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from reviewtrail.human_review.records._records import ReviewPrompt
from reviewtrail.human_review.records._run_records import CandidateRun, ContextReceipt

__all__ = [
    "EXCLUSION_CODES",
    "Exclusion",
    "PromptRef",
    "RunFacts",
    "pairable_runs",
    "receipt_exclusions",
    "run_exclusions",
]

#: Every reason a run is not paired, in the order they are checked.
EXCLUSION_CODES: tuple[str, ...] = (
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


class Exclusion(msgspec.Struct, frozen=True):
    """Why a run is never paired: a code of :data:`EXCLUSION_CODES` and a sentence."""

    code: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "detail": self.detail}


class PromptRef(msgspec.Struct, frozen=True):
    """The review prompt a run must name: its record id, its payload hash and its payload."""

    event_id: str
    payload_hash: str
    prompt: ReviewPrompt


class RunFacts(msgspec.Struct, frozen=True):
    """One run as recorded now: its current run payload and seq, its current context receipts and
    the record ids of its current review-response outputs."""

    run: CandidateRun
    seq: int
    receipts: tuple[ContextReceipt, ...] = ()
    outputs: tuple[str, ...] = ()


def receipt_exclusions(receipt: ContextReceipt, prompt: PromptRef) -> list[Exclusion]:
    """What a context receipt fails to prove about the prompt being the run's only, whole input."""
    out = []
    others = [i.event_id for i in receipt.inputs if i.event_id != prompt.event_id]
    mine = [i for i in receipt.inputs if i.event_id == prompt.event_id]
    if others or len(mine) != 1:
        named = ", ".join(others) or "none"
        out.append(Exclusion("receipt-other-input", f"the prompt must be the only input (other inputs: {named})"))
    for given in mine:
        if given.inclusion != "whole" or given.payload_hash != prompt.payload_hash:
            out.append(Exclusion("receipt-not-whole", "the prompt was not included whole (inclusion or payload hash)"))
        if given.payload_fields is not None:
            out.append(Exclusion("receipt-projected", "the prompt was projected through payloadFields"))
    if receipt.tool_evidence:
        gained = ", ".join(receipt.tool_evidence)
        out.append(Exclusion("receipt-tool-evidence", f"the run gained tool evidence: {gained}"))
    if receipt.external_action_authority:
        out.append(Exclusion("receipt-action-authority", "the run had external action authority"))
    return out


def run_exclusions(facts: RunFacts, prompt: PromptRef) -> list[Exclusion]:
    """Why ``facts`` cannot be a candidate over ``prompt`` on its own (without looking at other
    runs of the same agent: see :func:`pairable_runs`). Empty when it can."""
    run = facts.run
    out = []
    if run.status != "completed":
        out.append(Exclusion("not-completed", f"the run {run.status}: {run.error or 'no error given'}"))
    if run.trigger_event_id != prompt.event_id:
        out.append(Exclusion("other-trigger", f"the run was triggered by {run.trigger_event_id}"))
    campaign = prompt.prompt.campaign
    if (run.campaign.id, run.campaign.version) != (campaign.id, campaign.version):
        out.append(Exclusion("other-campaign", f"the run names campaign {run.campaign.id} v{run.campaign.version}"))
    if run.agent.id not in prompt.prompt.candidate_agent_ids:
        out.append(Exclusion("undeclared-agent", f"the prompt does not declare agent {run.agent.id}"))
    if run.output_problem is not None:
        out.append(Exclusion("invalid-output", run.output_problem))
    elif not facts.outputs:
        out.append(Exclusion("no-output", "the run has no review-response output event"))
    elif len(facts.outputs) > 1:
        out.append(Exclusion("several-outputs", f"the run has {len(facts.outputs)} output events"))
    if not facts.receipts:
        out.append(Exclusion("no-receipt", "the run has no context receipt"))
    elif len(facts.receipts) > 1:
        out.append(Exclusion("several-receipts", f"the run has {len(facts.receipts)} context receipts"))
    else:
        out.extend(receipt_exclusions(facts.receipts[0], prompt))
    return out


def pairable_runs(
    runs: Iterable[RunFacts], prompt: PromptRef
) -> tuple[dict[str, RunFacts], dict[str, list[Exclusion]]]:
    """The runs over ``prompt`` that may be paired, by agent id (at most one per agent), and the
    exclusions of every other run, by run id.

    Runs are taken in seq order per agent. A run whose ``retryOf`` names an earlier run of the same
    agent and trigger replaces it (the earlier one is ``replaced``); a later run that replaces
    nothing while an earlier one stands is a ``duplicate-agent``. A current run that fails any
    condition of :func:`run_exclusions` is excluded too, and its agent has no candidate."""
    by_agent: dict[str, list[RunFacts]] = {}
    excluded: dict[str, list[Exclusion]] = {}
    for facts in sorted(runs, key=lambda f: f.seq):
        by_agent.setdefault(facts.run.agent.id, []).append(facts)
    pairable: dict[str, RunFacts] = {}
    for agent, group in by_agent.items():
        standing = _standing(group, excluded)
        if standing is None:
            continue
        problems = run_exclusions(standing, prompt)
        if problems:
            excluded[standing.run.run_id] = problems
        else:
            pairable[agent] = standing
    return pairable, excluded


def _standing(group: Sequence[RunFacts], excluded: dict[str, list[Exclusion]]) -> RunFacts | None:
    standing: RunFacts | None = None
    for facts in group:
        run = facts.run
        if standing is None:
            standing = facts
        elif run.retry_of == standing.run.run_id:
            excluded[standing.run.run_id] = [Exclusion("replaced", f"replaced by the retry {run.run_id}")]
            standing = facts
        else:
            excluded[run.run_id] = [
                Exclusion("duplicate-agent", f"agent {run.agent.id} already has run {standing.run.run_id} here")
            ]
    return standing
