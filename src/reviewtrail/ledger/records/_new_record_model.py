"""The pydantic model of the record to append, kept to word a refusal.

:class:`reviewtrail.ledger.NewRecord` checks its fields with plain Python; a record it cannot
accept that way is given to this model, which refuses it with the message (and pydantic's
``ValidationError``) records have always been refused with, or accepts it with pydantic's
conversions. Loaded only then: making a valid record loads no pydantic.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from reviewtrail.ledger.records._fields import TYPE_PATTERN, Privacy, new_id

__all__ = ["MAX_TEXT", "NewRecord"]

MAX_TEXT = 1024
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _check_text(value: str, field: str) -> str:
    if not value or len(value) > MAX_TEXT or _CONTROL.search(value) is not None:
        raise ValueError(f"{field} must be 1..{MAX_TEXT} printable characters")
    return value


class NewRecord(BaseModel):
    """A record to append; the ledger assigns ``seq`` and the hashes."""

    # Named as the record is (``NewRecord``), so a refusal reads as it always has.

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    type: str
    actor: str
    privacy: Privacy
    payload: Any = Field(default_factory=dict)
    subject: str | None = None
    supersedes: str | None = None
    id: str = Field(default_factory=new_id)
    time: datetime | None = None

    @field_validator("type")
    @classmethod
    def _type(cls, v: str) -> str:
        if TYPE_PATTERN.fullmatch(v) is None:
            raise ValueError(f"{v!r} is not 'name@version' (e.g. 'cas.put@1')")
        return v

    @field_validator("actor", "id")
    @classmethod
    def _text(cls, v: str) -> str:
        return _check_text(v, "value")

    @field_validator("subject", "supersedes")
    @classmethod
    def _opt_text(cls, v: str | None) -> str | None:
        return None if v is None else _check_text(v, "value")
