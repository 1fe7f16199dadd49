"""The fixed decision schema: the only body the write route accepts (docs/human-review.md,
"Writes: the review capability").

:class:`DecisionSubmission` is what a browser sends (through the proxy); :class:`SignedDecision`
is what the proxy signs and the inspector reads: the same fields and the reviewer, the proxy's
pseudonymous actor id for the session. Unknown fields are refused, a key given twice in one
object is refused (at any depth, as everywhere in reviewtrail: :func:`~reviewtrail.canonical.unique_members`),
every string and list is bounded, and nothing in it can name another kind of record: the route
can only record a review decision on an item of the campaign version named.
"""

from __future__ import annotations

from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reviewtrail.canonical import loads_document, unique_members
from reviewtrail.errors import InvalidInputError

__all__ = [
    "DecisionSubmission",
    "RepeatedKeyError",
    "SignedDecision",
    "parse_signed_decision",
    "parse_submission",
    "valid_reviewer",
]

# Ids as the records hold them (IDENT_PATTERN of the human-review records), bounded here.
_ID = r"^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,199}$"
_SUBMISSION = r"^[A-Za-z0-9][A-Za-z0-9._:@/-]{15,127}$"  # 16 to 128 characters
_REVIEWER = r"^[A-Za-z0-9][A-Za-z0-9._@+:-]{0,127}$"  # then check_reviewer_id, as review decide checks it
_TEXT_MAX = 100_000  # a correction's replacement response
_NOTE_MAX = 4_000
_LIST_MAX = 32


class DecisionSubmission(BaseModel):
    """A review decision as the Review page submits it: the item, its campaign version, a random
    submission id (a retry with the same id records nothing new), and the decision fields in the
    wire names of ``review decide`` (``preferred`` is the position shown, ``A`` or ``B``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    item_id: str = Field(alias="itemId", pattern=_ID)
    campaign_id: str = Field(alias="campaignId", pattern=_ID)
    campaign_version: int = Field(alias="campaignVersion", ge=1, le=2**31)
    submission_id: str = Field(alias="submissionId", pattern=_SUBMISSION)
    disposition: Literal["prefer", "tie", "correct", "underdetermined", "malformed", "skip"]
    preferred: Literal["A", "B"] | None = None
    strength: Literal["slight", "strong"] | None = None
    replacement: str | None = Field(default=None, min_length=1, max_length=_TEXT_MAX)
    confidence: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)
    reason_codes: list[str] = Field(default_factory=list, alias="reasonCodes", max_length=_LIST_MAX)
    response_tags: list[str] = Field(default_factory=list, alias="responseTags", max_length=_LIST_MAX)
    note: str | None = Field(default=None, max_length=_NOTE_MAX)
    use_for_training: bool = Field(default=False, alias="useForTraining")
    supersedes: str | None = Field(default=None, pattern=_ID)


class SignedDecision(DecisionSubmission):
    """A submission with the reviewer the proxy maps its session to: the body it signs."""

    reviewer: str = Field(pattern=_REVIEWER)


def valid_reviewer(value: str) -> bool:
    """Whether ``value`` is a reviewer id as a signed decision may carry one."""
    import re

    return re.fullmatch(_REVIEWER[1:-1], value) is not None


_Model = TypeVar("_Model", bound=BaseModel)


class RepeatedKeyError(InvalidInputError):
    """A body with a key given twice in one object, where a JSON reader would keep the last one
    (HTTP 400 at the proxy and at the inspector; field ``body``)."""


def _refuse_repeated_keys(body: bytes) -> None:
    try:
        loads_document(body, object_pairs_hook=unique_members("body", RepeatedKeyError))
    except RepeatedKeyError:
        raise
    except (ValueError, TypeError):
        pass  # not JSON: the schema says so, naming the problem


def _parse(model: type[_Model], body: bytes) -> _Model:
    _refuse_repeated_keys(body)
    try:
        return model.model_validate_json(body, by_alias=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        problem = f"{first['msg']} ({exc.error_count()} problem(s) in the decision)"
        raise InvalidInputError(problem, field=where) from None


def parse_submission(body: bytes) -> DecisionSubmission:
    """The browser's decision in ``body`` (JSON), or exit 2 naming the first bad field."""
    return _parse(DecisionSubmission, body)


def parse_signed_decision(body: bytes) -> SignedDecision:
    """The signed decision in ``body`` (JSON), or exit 2 naming the first bad field."""
    return _parse(SignedDecision, body)
