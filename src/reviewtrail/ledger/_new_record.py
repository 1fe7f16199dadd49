"""The record to append: a pydantic model, validated when it is made.

Loaded only where records are made: reading, tailing and checking records (and opening a store)
never import this module, nor pydantic.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger._fields import TYPE_PATTERN, Privacy, new_id

__all__ = ["NewRecord"]

_MAX_TEXT = 1024
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _check_text(value: str, field: str) -> str:
    if not value or len(value) > _MAX_TEXT or _CONTROL.search(value) is not None:
        raise ValueError(f"{field} must be 1..{_MAX_TEXT} printable characters")
    return value


class NewRecord(BaseModel):
    """A record to append; the ledger assigns ``seq`` and the hashes."""

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

    @classmethod
    def make(cls, **fields: Any) -> NewRecord:
        """Build a record, turning validation failures into :class:`InvalidInputError`."""
        try:
            return cls(**fields)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"]) or "record"
            raise InvalidInputError(first["msg"], field=loc) from exc
