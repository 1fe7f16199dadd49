"""A candidate run as it stands now: the one rule every read path finds an item's candidates by
(docs/human-review.md, "Re-check"). :func:`candidate_parts` says which records a candidate rests
on; :func:`~._resolve.resolve_item` reads them through their payload models.
"""

from __future__ import annotations

from typing import Any

import msgspec

from reviewtrail.human_review.reads._chains import Records, run_state, stricter
from reviewtrail.ledger import Envelope, Privacy

__all__ = ["CandidateParts", "candidate_parts"]


class CandidateParts(msgspec.Struct, frozen=True):
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
        keywords of ``candidate_facts``."""
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
    is read from its payload by the caller (:func:`~._resolve.run_candidate`)."""
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
