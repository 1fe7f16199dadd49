"""Reading human-review records as they stand now: amendments applied, candidate facts recomputed
(docs/human-review.md, "Amendments" and "Re-check"). Every queue, decision and export path
resolves an item through :func:`resolve_item`, so a frozen pair is checked against the current
records each time and never rebound to other bytes.

A record is *amended* by later records that name it in the envelope's ``supersedes``: a record of
the same type is a correction (it becomes the current content), and a
``human-review.privacy-reclassification@1`` makes its privacy stricter.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from reviewtrail.errors import NotFoundError
from reviewtrail.human_review._decision_rules import (
    ActiveDecision,
    DecisionFact,
    active_decisions,
    check_decision,
)
from reviewtrail.human_review._eligibility import PRIVACY_ORDER
from reviewtrail.human_review._item_rules import CandidateFacts, candidate_digest_of, item_problems
from reviewtrail.human_review._records import RESPONSE, ReviewDecision, ReviewItem, ReviewPrompt, ReviewResponse
from reviewtrail.human_review._run_records import RECLASSIFICATION, CandidateRun, ContextReceipt
from reviewtrail.human_review._run_rules import PromptRef, RunFacts
from reviewtrail.ledger import Envelope, Privacy

__all__ = [
    "Current",
    "Records",
    "ResolvedItem",
    "active_decision",
    "candidate_facts",
    "current",
    "item_decisions",
    "prompt_ref",
    "resolve_item",
    "run_candidate",
    "run_facts",
    "runs_over",
    "stricter",
]


class Records(Protocol):
    """What the rules here read: a record by id, the records naming one in ``supersedes`` (in
    append order) and checked query-table rows. The live :class:`~reviewtrail.ledger.Ledger` is
    one; a page of items preloaded in a few bulk reads is another (``_bulk_resolve``), so both
    paths resolve through the same rules."""

    def get(self, record_id: str) -> Envelope: ...

    def superseded_by(self, record_id: str) -> list[str]: ...

    def rows(self, table: str, **where: Any) -> list[dict[str, Any]]: ...


def stricter(a: str, b: str) -> Privacy:
    """The stricter of two privacy levels."""
    return PRIVACY_ORDER[max(PRIVACY_ORDER.index(a), PRIVACY_ORDER.index(b))]


@dataclass(frozen=True)
class Current:
    """A record as it stands: the seq of the record asked about, its current content (the latest
    correction, or itself), the privacy in force (reclassifications applied) and whether anything
    amended it."""

    original_seq: int
    content: Envelope
    privacy: Privacy
    amended: bool
    forked: bool  # two corrections of one record: neither is taken as current


def current(ledger: Records, env: Envelope) -> Current:
    """Follow the corrections and reclassifications of ``env``."""
    content, privacy, amended, forked = env, env.privacy, False, False
    seen = {env.id}
    while True:
        by = ledger.superseded_by(content.id)
        if not by:
            break
        amended = True
        corrections = []
        for later_id in by:
            later = ledger.get(later_id)
            if later.type == RECLASSIFICATION:
                privacy = stricter(privacy, later.privacy)
            elif later.type == content.type and later.id not in seen:
                corrections.append(later)
        if not corrections:
            break
        if len(corrections) > 1:
            forked = True
        content = corrections[-1]
        seen.add(content.id)
        privacy = stricter(privacy, content.privacy)
    return Current(env.seq, content, privacy, amended, forked)  # type: ignore[arg-type]


def _heads(ledger: Records, envs: list[Envelope]) -> list[Current]:
    """The records of ``envs`` (in seq order) no later one of them corrects, each as it stands:
    its ``original`` is the first record of its correction chain (a corrected record keeps its
    place), and its privacy is the strictest along the chain, reclassifications of every earlier
    record included (a correction never reopens what was reclassified)."""
    by_id = {env.id: env for env in envs}
    corrected = {env.supersedes for env in envs if env.supersedes in by_id}
    heads = []
    for env in envs:
        if env.id in corrected:
            continue
        now, root = current(ledger, env), env
        privacy: Privacy = now.privacy
        while root.supersedes is not None and root.supersedes in by_id:
            root = by_id[root.supersedes]
            privacy = stricter(privacy, current(ledger, root).privacy)
        heads.append(replace(now, original_seq=root.seq, privacy=privacy))
    return heads


def _records(ledger: Records, table: str, run_id: str) -> list[Envelope]:
    return [ledger.get(r["record_id"]) for r in sorted(ledger.rows(table, run_id=run_id), key=lambda r: r["seq"])]


def _latest_runs(ledger: Records, run_id: str) -> list[Current]:
    return _heads(ledger, _records(ledger, "hr_runs", run_id))


def _parts(ledger: Records, run_id: str) -> tuple[list[Current], list[Current]]:
    receipts: list[Current] = []
    outputs: list[Current] = []
    for now in _heads(ledger, _records(ledger, "hr_run_parts", run_id)):
        (outputs if now.content.type == RESPONSE else receipts).append(now)
    return receipts, outputs


@dataclass(frozen=True)
class _RunState:
    run: Current
    receipts: list[Current]
    outputs: list[Current]


def _run_state(ledger: Records, run_id: str) -> _RunState | None:
    runs = _latest_runs(ledger, run_id)
    if len(runs) != 1 or runs[0].forked:
        return None
    receipts, outputs = _parts(ledger, run_id)
    return _RunState(runs[0], receipts, outputs)


def run_facts(ledger: Records, run_id: str) -> RunFacts | None:
    """The run as recorded now, for the pairing rules; None when the run id has no single current
    record."""
    state = _run_state(ledger, run_id)
    if state is None:
        return None
    return RunFacts(
        run=CandidateRun.model_validate(state.run.content.payload_value),
        seq=state.run.original_seq,
        receipts=tuple(ContextReceipt.model_validate(r.content.payload_value) for r in state.receipts),
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
    return None if found is None else (found[0], found[1])


def _candidate(ledger: Records, run_id: str) -> tuple[CandidateFacts, str, str] | None:
    """:func:`run_candidate`, with the candidate's digest (its run and receipt spliced in as
    stored, :func:`candidate_digest_of`)."""
    state = _run_state(ledger, run_id)
    if state is None or len(state.outputs) != 1 or len(state.receipts) != 1:
        return None
    run_record = state.run.content
    run = CandidateRun.model_validate(run_record.payload_value)
    if run.status != "completed":
        return None
    output, receipt = state.outputs[0], state.receipts[0]
    facts = candidate_facts(
        run,
        run_record.payload_value,
        output_event_id=output.content.id,
        output_payload_hash=output.content.payload_hash,
        context_manifest=receipt.content.payload_value,
        run_privacy=stricter(state.run.privacy, receipt.privacy),
        output_privacy=output.privacy,
    )
    digest = candidate_digest_of(facts, run_record.payload, receipt.content.payload)
    return facts, ReviewResponse.model_validate(output.content.payload_value).response, digest


def prompt_ref(ledger: Records, prompt_event_id: str) -> tuple[PromptRef, Current]:
    """The review prompt a run or item names, as recorded (a prompt is never rebound to a
    correction: an amended prompt makes its items invalid)."""
    env = ledger.get(prompt_event_id)
    prompt = ReviewPrompt.model_validate(env.payload_value)
    return PromptRef(env.id, env.payload_hash, prompt), current(ledger, env)


@dataclass(frozen=True)
class ResolvedItem:
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
    item = ReviewItem.model_validate(env.payload_value)
    ref, prompt_now = prompt_ref(ledger, item.prompt_event_id)
    item_now = current(ledger, env)
    candidates = {}
    digests = {}
    for run_id in item.run_ids():
        found = _candidate(ledger, run_id)
        if found is not None:
            candidates[run_id] = (found[0], found[1])
            digests[run_id] = found[2]
    problems = item_problems(item, {run: pair[0] for run, pair in candidates.items()}, digests)
    candidate_problems = tuple(problems)
    later = _amended_after(ledger, ref.event_id, env.seq) if prompt_now.amended else None
    if later is not None:
        how = f"reclassified {later.privacy} by" if later.type == RECLASSIFICATION else "corrected by"
        problems.insert(0, f"the prompt {ref.event_id} was {how} {later.id} after the item was frozen")
    if item_now.amended:
        problems.insert(0, f"the item record {env.id} was amended")
    return ResolvedItem(
        item=item,
        prompt=ref.prompt,
        prompt_privacy=prompt_now.privacy,
        item_privacy=item_now.privacy,
        candidates=candidates,
        problems=tuple(problems),
        candidate_problems=candidate_problems,
    )


def _amended_after(ledger: Records, record_id: str, seq: int) -> Envelope | None:
    """The first record amending ``record_id`` (or one of its corrections) appended after ``seq``:
    an amendment recorded before an item was frozen is part of what the item froze."""
    todo, seen = [record_id], {record_id}
    found: Envelope | None = None
    while todo:
        for later_id in ledger.superseded_by(todo.pop()):
            if later_id in seen:
                continue
            seen.add(later_id)
            later = ledger.get(later_id)
            if later.seq > seq and (found is None or later.seq < found.seq):
                found = later
            todo.append(later_id)
    return found


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
    for row in sorted(ledger.rows("hr_decisions", item_id=item.item_id), key=lambda r: r["seq"]):
        env = ledger.get(row["record_id"])
        decision = ReviewDecision.model_validate(env.payload_value)
        valid = check_decision(decision, item, prompt.criterion) is None
        facts.append(DecisionFact(env.id, env.seq, decision, valid))
    return facts


def active_decision(facts: list[DecisionFact], item_id: str) -> ActiveDecision | None:
    """The one active decision among ``facts`` of an item, or None."""
    return active_decisions(facts).get(item_id)
