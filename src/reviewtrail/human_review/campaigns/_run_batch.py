"""The records of one candidate run, and of one review item over two runs (docs/human-review.md,
"Candidate runs" and "Review items"): built here, appended by the caller in one batch."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass

import msgspec

from reviewtrail._struct import parse, words
from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.reads._resolve import run_candidate
from reviewtrail.human_review.records._record_names import ACTOR
from reviewtrail.human_review.records._records import (
    CampaignRef,
    CandidateSelfIdentification,
    ItemCandidate,
    ReviewItem,
    ReviewResponse,
    new_item_record,
)
from reviewtrail.human_review.records._run_records import (
    AgentIdentity,
    CandidateRun,
    ContextInput,
    ContextReceipt,
)
from reviewtrail.human_review.rules._eligibility import privacy_join
from reviewtrail.human_review.rules._item_rules import (
    CandidateFacts,
    candidate_digest,
    displayed_runs,
    item_id,
    self_identification_of,
)
from reviewtrail.human_review.rules._run_rules import PromptRef
from reviewtrail.ledger import Ledger, NewRecord, Privacy, new_record

__all__ = [
    "RunOutcome",
    "item_record",
    "new_item_record_of",
    "new_run_id",
    "prompt_text_hash",
    "response_problem",
    "run_records",
]


def new_run_id() -> str:
    return f"run-{uuid.uuid4()}"


def prompt_text_hash(prompt: str) -> str:
    """``sha256:`` over the UTF-8 bytes of the prompt exactly as a candidate was given it."""
    return "sha256:" + hashlib.sha256(prompt.encode("utf-8")).hexdigest()


def response_problem(text: object) -> str | None:
    """Why ``text`` is not a contract-valid review response, or None."""
    try:
        parse(ReviewResponse, {"response": text}, field="response")
    except InvalidInputError as exc:
        return f"the output is not a valid review response: {words(exc)}"
    return None


@dataclass(frozen=True)
class RunOutcome:
    """What a candidate run produced: a response, or an error; its times and model-call record."""

    started_at: str
    ended_at: str
    response: str | None = None
    error: str | None = None
    prompt_manifest_id: str | None = None
    trace: str | None = None


def run_records(
    prompt: PromptRef,
    agent: AgentIdentity,
    outcome: RunOutcome,
    *,
    privacy: Privacy,
    run_id: str | None = None,
    retry_of: str | None = None,
    origin: str = "local",
    actor: str = ACTOR,
) -> list[NewRecord]:
    """The run record, its context receipt (the prompt, whole, as the only input; no tool
    evidence; no external action authority) and, when the response is contract-valid, its one
    ``stream.thought.output.review-response@1`` output. A failed run has no output and carries its
    error; an invalid response is kept out and the run says why (``outputProblem``)."""
    rid = run_id or new_run_id()
    problem = response_problem(outcome.response) if outcome.error is None else None
    run = parse(
        CandidateRun,
        {
            "runId": rid,
            "campaign": {"id": prompt.prompt.campaign.id, "version": prompt.prompt.campaign.version},
            "triggerEventId": prompt.event_id,
            "agent": msgspec.to_builtins(agent),
            "status": "failed" if outcome.error is not None else "completed",
            "origin": origin,
            "startedAt": outcome.started_at,
            "endedAt": outcome.ended_at,
            "promptHash": prompt_text_hash(prompt.prompt.prompt),
            "promptManifestId": outcome.prompt_manifest_id,
            "trace": outcome.trace,
            "retryOf": retry_of,
            "error": outcome.error[:2000] if outcome.error is not None else None,
            "outputProblem": problem,
        },
        field="run",
    )
    receipt = ContextReceipt(
        run_id=rid,
        inputs=[ContextInput(event_id=prompt.event_id, payload_hash=prompt.payload_hash, inclusion="whole")],
        tool_evidence=[],
        external_action_authority=False,
    )
    records = [
        new_record(run, actor=actor, privacy=privacy, subject=rid),
        new_record(receipt, actor=actor, privacy=privacy, subject=rid),
    ]
    if outcome.error is None and problem is None:
        response = ReviewResponse(response=str(outcome.response))
        records.append(new_record(response, actor=actor, privacy=privacy, subject=rid))
    return records


def item_record(ledger: Ledger, prompt: PromptRef, prompt_privacy: str, run_a: str, run_b: str) -> NewRecord:
    """The ``stream.thought.review.item.created@1`` record freezing two completed runs over
    ``prompt`` as recorded now (see :func:`new_item_record_of`), with the candidates whose text
    names a candidate's identity (:func:`self_identification_of`)."""
    found = []
    for run in (run_a, run_b):
        facts = run_candidate(ledger, run)
        if facts is None:
            raise InvalidInputError(f"run {run} is not a completed candidate run", field="runId")
        found.append(facts)
    flags = self_identification_of(prompt.prompt, found[0], found[1])
    return new_item_record_of(prompt, prompt_privacy, found[0][0], found[1][0], self_identification=flags)


def new_item_record_of(
    prompt: PromptRef,
    prompt_privacy: str,
    a: CandidateFacts,
    b: CandidateFacts,
    *,
    self_identification: list[CandidateSelfIdentification] | None = None,
) -> NewRecord:
    """The item record over two candidates' facts (pure): their output event ids and candidate
    digests, the display order from the item id, the criterion of the prompt, and
    ``self_identification`` (None: not checked); its privacy is the join of the prompt's and
    both candidates' run and output privacy."""
    criterion = prompt.prompt.criterion
    made = item_id(prompt.event_id, criterion.id, criterion.version, a.run_id, b.run_id)
    first, second = sorted((a, b), key=lambda f: f.run_id)
    item = ReviewItem(
        item_id=made,
        campaign=CampaignRef(id=prompt.prompt.campaign.id, version=prompt.prompt.campaign.version),
        prompt_event_id=prompt.event_id,
        criterion=criterion.identity(),
        candidates=[
            ItemCandidate(run_id=f.run_id, output_event_id=f.output_event_id, digest=candidate_digest(f))
            for f in (first, second)
        ],
        display_order=list(displayed_runs(made, a.run_id, b.run_id)),
        self_identification=self_identification,
    )
    levels = [prompt_privacy, *(p for f in (a, b) for p in (f.run_privacy, f.output_privacy))]
    return new_item_record(item, privacy_join(levels))
