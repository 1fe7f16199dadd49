"""A candidate run as it stands now, read from its records as plain payloads: the one rule every
read path finds an item's candidates by (docs/human-review.md, "Re-check"). The review queue's
cards, :func:`~._resolve.resolve_item` (which builds its ``CandidateFacts`` from what this gives)
and the export all read a candidate here, so they cannot disagree on what a candidate is now.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reviewtrail.human_review._chains import Records, run_state, stricter
from reviewtrail.human_review._frozen import facts_digest, spliced_digest
from reviewtrail.human_review._plain_records import candidate_run, candidate_wire, review_response

__all__ = ["Candidate", "current_candidate"]


@dataclass(frozen=True)
class Candidate:
    """A completed candidate as recorded now: its facts (wire names, as ``CandidateFacts`` holds
    them: checked as the model checks them), its exact response and its digest."""

    facts: dict[str, Any]
    response: str
    digest: str


def current_candidate(ledger: Records, run_id: str) -> Candidate | None:
    """``run_id`` as a candidate now: None when it is not a completed run with exactly one current
    output and one current receipt. A payload its model would refuse is refused in the model's
    words (:mod:`._plain_records`). The digest splices the run's and the receipt's stored payload
    bytes in as stored (:func:`~._frozen.spliced_digest`)."""
    state = run_state(ledger, run_id)
    if state is None or len(state.outputs) != 1 or len(state.receipts) != 1:
        return None
    run_record = state.run.content
    run = candidate_run(run_record.payload_value)
    if run["status"] != "completed":
        return None
    output, receipt = state.outputs[0], state.receipts[0]
    facts = candidate_wire(
        run,
        run_record.payload_value,
        output_event_id=output.content.id,
        output_payload_hash=output.content.payload_hash,
        context_manifest=receipt.content.payload_value,
        run_privacy=stricter(state.run.privacy, receipt.privacy),
        output_privacy=output.privacy,
    )
    flat = {k: v for k, v in facts.items() if k not in ("run", "contextManifest")}
    digest = spliced_digest(flat, run_record.payload, receipt.content.payload)
    if digest is None:  # a lone surrogate: the encoder names it
        digest = facts_digest(facts)
    return Candidate(facts, review_response(output.content.payload_value), digest)
