"""A candidate run as it stands now: the one rule every read path finds an item's candidates by
(docs/human-review.md, "Re-check"). :func:`candidate_parts` says which records a candidate rests
on; the review queue reads their payloads as plain JSON (:func:`current_candidate`, no model
loaded) and :func:`~._resolve.resolve_item` through the payload models (pydantic-core checks a
run payload about 3x faster than the plain checks), the two readers held to each other by
tests/test_review_queue_fast_payloads.py, so no path can disagree on what a candidate is now.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reviewtrail.human_review.reads._chains import Records, run_state, stricter
from reviewtrail.human_review.reads._plain_records import candidate_run, candidate_wire, review_response
from reviewtrail.human_review.rules._frozen import facts_digest, spliced_digest
from reviewtrail.ledger import Envelope, Privacy

__all__ = ["Candidate", "CandidateParts", "candidate_parts", "current_candidate"]


@dataclass(frozen=True)
class CandidateParts:
    """The records a candidate rests on as they stand: its one current run record, its one
    current output and its one current context receipt (each its current content), and the
    privacy in force of the run (the stricter of the run's and the receipt's) and of the output."""

    run: Envelope
    output: Envelope
    receipt: Envelope
    run_privacy: Privacy
    output_privacy: Privacy

    def recorded_facts(self) -> dict[str, Any]:
        """What the candidate's facts take from these records besides the run payload, as the
        keywords of ``candidate_wire`` and ``candidate_facts``."""
        return {
            "output_event_id": self.output.id,
            "output_payload_hash": self.output.payload_hash,
            "context_manifest": self.receipt.payload_value,
            "run_privacy": self.run_privacy,
            "output_privacy": self.output_privacy,
        }


def candidate_parts(ledger: Records, run_id: str) -> CandidateParts | None:
    """The records ``run_id`` rests on as a candidate, or None when it has no single current run
    record, or not exactly one current output and one current receipt. Whether the run completed
    is read from its payload by the caller (:func:`current_candidate`, or the payload models of
    :func:`~._resolve.run_candidate`, held to each other by tests/test_review_queue_fast_payloads.py)."""
    state = run_state(ledger, run_id)
    if state is None or len(state.outputs) != 1 or len(state.receipts) != 1:
        return None
    output, receipt = state.outputs[0], state.receipts[0]
    return CandidateParts(
        run=state.run.content,
        output=output.content,
        receipt=receipt.content,
        run_privacy=stricter(state.run.privacy, receipt.privacy),
        output_privacy=output.privacy,
    )


@dataclass(frozen=True)
class Candidate:
    """A completed candidate as recorded now: its facts (wire names, as ``CandidateFacts`` holds
    them: checked as the model checks them), its exact response and its digest."""

    facts: dict[str, Any]
    response: str
    digest: str


def current_candidate(ledger: Records, run_id: str) -> Candidate | None:
    """``run_id`` as a completed candidate now (:func:`candidate_parts`), read as plain payloads:
    a payload its model would refuse is refused in the model's words (:mod:`._plain_records`).
    The digest splices the run's and the receipt's stored payload bytes in as stored
    (:func:`~._frozen.spliced_digest`)."""
    parts = candidate_parts(ledger, run_id)
    if parts is None:
        return None
    run = candidate_run(parts.run.payload_value)
    if run["status"] != "completed":
        return None
    facts = candidate_wire(run, parts.run.payload_value, **parts.recorded_facts())
    flat = {k: v for k, v in facts.items() if k not in ("run", "contextManifest")}
    digest = spliced_digest(flat, parts.run.payload, parts.receipt.payload)
    if digest is None:  # a lone surrogate: the encoder names it
        digest = facts_digest(facts)
    return Candidate(facts, review_response(parts.output.payload_value), digest)
