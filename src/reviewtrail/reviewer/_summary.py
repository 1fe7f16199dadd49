"""Review summaries in context (seed 002): the latest Reviewer Specialist findings of an artifact
version as a short, bounded text an agent puts in its next prompt, with the review run it came
from, so the agent's next trace can cite it. Read-only feedback: nothing is recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reviewtrail.errors import NotFoundError
from reviewtrail.reviewer._specialist import version_reviews
from reviewtrail.store import Store

__all__ = ["ReviewSummary", "review_summary"]


@dataclass(frozen=True)
class ReviewSummary:
    """The latest review run of one artifact version: its id, decision and summary (at most
    ``SUMMARY_LIMIT`` characters, as recorded)."""

    review_run_id: str
    name: str
    version: int
    decision: str
    summary: str
    reviewed_at: str

    def context_text(self) -> str:
        """The text for an agent's next prompt: the summary, then where it came from."""
        return (
            f"{self.summary}\n"
            f"(Reviewer Specialist feedback, read-only: review run {self.review_run_id} of "
            f"{self.name}@{self.version}, {self.reviewed_at})"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "reviewRunId": self.review_run_id,
            "name": self.name,
            "version": self.version,
            "decision": self.decision,
            "summary": self.summary,
            "reviewedAt": self.reviewed_at,
            "context": self.context_text(),
        }


def review_summary(store: Store, spec: str, project_id: str) -> ReviewSummary:
    """The latest review of ``NAME@VERSION`` (``NAME`` alone: the artifact's latest version). An
    unknown artifact or version is exit 3 (``name``, ``version``); a version with no review run
    is exit 3 (field ``review``), naming it: the latest version's feedback is never taken from an
    older version's review."""
    from reviewtrail.provenance.artifacts import parse_spec

    name, version = parse_spec(spec)
    info, runs = version_reviews(store, name, version, project_id)
    if not runs:
        shown = f"{name}@{info.version.version}"
        raise NotFoundError(f"{shown} has no review run yet (reviewtrail review run {shown} makes one)", field="review")
    run = runs[-1].run
    return ReviewSummary(run.review_run_id, run.name, run.version, run.decision, run.summary, run.ended_at)
