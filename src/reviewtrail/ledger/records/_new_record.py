"""The record to append: a msgspec model, checked when it is made.

Loaded only where records are made: reading, tailing and checking records (and opening a store)
never import this module. Its rules are in ``__post_init__``, so a record made by its constructor,
by :meth:`NewRecord.make` or unpickled keeps them alike; a refusal is
:class:`~reviewtrail.errors.InvalidInputError` naming the field.
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from datetime import datetime
from typing import Any

import msgspec

from reviewtrail._struct import FieldProblem, Model
from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger.records._fields import PRIVACY_LEVELS, TYPE_PATTERN, Privacy, new_id

__all__ = ["MAX_TEXT", "NewRecord"]

MAX_TEXT = 1024
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_TEXTS = ("actor", "id")
_OPTIONAL_TEXTS = ("subject", "supersedes")
_PRIVACY_WORDS = ", ".join(repr(p) for p in PRIVACY_LEVELS[:-1]) + f" or {PRIVACY_LEVELS[-1]!r}"
_CHECKED: ContextVar[bool] = ContextVar("new_record_checked", default=True)


def _text(value: object, field: str) -> None:
    if not isinstance(value, str):
        raise FieldProblem(field, "Input should be a valid string")
    if not value or len(value) > MAX_TEXT or _CONTROL.search(value) is not None:
        raise FieldProblem(field, f"value must be 1..{MAX_TEXT} printable characters")


class NewRecord(Model, frozen=True):
    """A record to append; the ledger assigns ``seq`` and the hashes."""

    type: str
    actor: str
    privacy: Privacy
    payload: Any = msgspec.field(default_factory=dict)
    subject: str | None = None
    supersedes: str | None = None
    id: str = msgspec.field(default_factory=new_id)
    time: datetime | None = None

    def __post_init__(self) -> None:
        if not _CHECKED.get():
            return
        kind = self.type
        if not isinstance(kind, str):
            raise FieldProblem("type", "Input should be a valid string")
        if TYPE_PATTERN.fullmatch(kind) is None:
            raise FieldProblem("type", f"{kind!r} is not 'name@version' (e.g. 'cas.put@1')")
        for name in _TEXTS:
            _text(getattr(self, name), name)
        if self.privacy not in PRIVACY_LEVELS or not isinstance(self.privacy, str):
            raise FieldProblem("privacy", f"Input should be {_PRIVACY_WORDS}")
        for name in _OPTIONAL_TEXTS:
            value = getattr(self, name)
            if value is not None:
                _text(value, name)
        if self.time is not None and not isinstance(self.time, datetime):
            raise FieldProblem("time", "Input should be a valid datetime")

    @classmethod
    def make(cls, **fields: Any) -> NewRecord:
        """Build a record; a field missing or unknown is refused as :class:`InvalidInputError` too."""
        for name in _REQUIRED:
            if name not in fields:
                raise InvalidInputError("Field required", field=name)
        for name in fields:
            if name not in _FIELDS:
                raise InvalidInputError("Extra inputs are not permitted", field=name)
        return cls(**fields)

    @classmethod
    def model_construct(cls, **fields: Any) -> NewRecord:
        """A record of exactly these values, unchecked (defaults for those not given)."""
        token = _CHECKED.set(False)
        try:
            return cls(**fields)
        finally:
            _CHECKED.reset(token)


_FIELDS = frozenset(NewRecord.__struct_fields__)  # the names alone: no type resolved at import
_REQUIRED = ("type", "actor", "privacy")
