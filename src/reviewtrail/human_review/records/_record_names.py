"""The names and bounds of human review's records, and the prompt digest, with no payload model:
what the query tables and the read paths that build no model (the review queue) need.

The payload models (:mod:`._records`, :mod:`._run_records`) are declared with these bounds and
re-export the names, so a bound is written once.
"""

from __future__ import annotations

from typing import Any

from reviewtrail.canonical import canonical_sha256
from reviewtrail.ledger import Privacy

__all__ = [
    "ACTOR",
    "CAMPAIGN",
    "CODE_PATTERN",
    "DECISION",
    "ERROR_MAX_CHARS",
    "EVIDENCE_MAX_CHARS",
    "IDENT_PATTERN",
    "INSTRUCTIONS_MAX_CHARS",
    "ITEM",
    "LABEL_MAX_CHARS",
    "MAX_ALLOWLIST",
    "MAX_CANDIDATE_AGENTS",
    "MAX_REASON_CODES",
    "MAX_RESPONSE_TAGS",
    "NOTE_MAX_CHARS",
    "PRIVACY_ORDER",
    "PROMPT",
    "PROMPT_MAX_CHARS",
    "RECEIPT",
    "RECLASSIFICATION",
    "RESPONSE",
    "RESPONSE_MAX_CHARS",
    "RUN",
    "SECOND_JUDGMENT",
    "TRAINING_RECEIPT",
    "prompt_digest",
]

PROMPT = "stream.thought.source.review.prompt@1"
RESPONSE = "stream.thought.output.review-response@1"
ITEM = "stream.thought.review.item.created@1"
DECISION = "stream.thought.review.decision@1"
CAMPAIGN = "human-review.campaign@1"
RUN = "human-review.candidate-run@1"
RECEIPT = "human-review.context-receipt@1"
RECLASSIFICATION = "human-review.privacy-reclassification@1"
TRAINING_RECEIPT = "human-review.training-receipt@1"
#: A second reviewer's judgment of a decided item, recorded for agreement only (never a decision).
SECOND_JUDGMENT = "human-review.second-judgment@1"
#: The actor of the records this package makes unless the caller names another.
ACTOR = "reviewtrail.human-review"

#: The complete prompt shown to the candidate models.
PROMPT_MAX_CHARS = 32_768
#: The optional evidence a reviewer needs to judge a response.
EVIDENCE_MAX_CHARS = 32_768
#: A criterion's instructions to the reviewer.
INSTRUCTIONS_MAX_CHARS = 4_096
#: One candidate response, and a reviewer's replacement response.
RESPONSE_MAX_CHARS = 32_768
#: A reviewer's optional note.
NOTE_MAX_CHARS = 2_000
#: Human labels (campaign, criterion) and the scenario family.
LABEL_MAX_CHARS = 200
#: At most this many reason codes (and response tags) in a criterion's allowlist.
MAX_ALLOWLIST = 32
#: At most this many candidate agents declared by one prompt.
MAX_CANDIDATE_AGENTS = 16
#: A decision carries at most this many reason codes, and at most this many response tags.
MAX_REASON_CODES = 2
MAX_RESPONSE_TAGS = 2
#: A failed run's error message.
ERROR_MAX_CHARS = 2_000

#: Identifiers (1 to 200 characters): printable, no spaces.
IDENT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@/-]*$"
#: Allowlisted reason codes and response tags (1 to 64 characters): lower-case tokens.
CODE_PATTERN = r"^[a-z][a-z0-9_-]*$"

#: Privacy levels from the most open to the strictest.
PRIVACY_ORDER: tuple[Privacy, ...] = ("public-source", "private", "sensitive")


def prompt_digest(payload: Any, privacy: str) -> str:
    """The identity of an imported prompt: ``sha256:`` over the RFC 8785 bytes of its campaign id
    and version, its whole payload (as recorded, wire names) and its privacy. Importing the same
    entry again gives the same digest, so it is recognised and not appended twice."""
    campaign = payload["campaign"]
    value = {
        "campaignId": campaign["id"],
        "campaignVersion": campaign["version"],
        "payload": payload,
        "privacy": privacy,
    }
    return "sha256:" + canonical_sha256(value, field="prompt")
