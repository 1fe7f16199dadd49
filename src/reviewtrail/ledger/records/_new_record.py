"""The record to append, checked with plain Python when it is made.

Loaded only where records are made: reading, tailing and checking records (and opening a store)
never import this module. Making a record loads no pydantic either: a record whose fields are
each of their exact kind (``str``, a ``datetime``, ``None``) and keep the rules is made here.
Any other is given to the pydantic model in :mod:`reviewtrail.ledger.records._new_record_model`, which
refuses it with the same ``ValidationError`` as ever (``make``: :class:`InvalidInputError`
naming the field), or accepts it with pydantic's conversions (a ``str`` subclass, a time given
as text). ``tests/test_trace_save_fast_records.py`` checks that both agree.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger.records._fields import PRIVACY_LEVELS, TYPE_PATTERN, Privacy, new_id

__all__ = ["NewRecord"]

_MAX_TEXT = 1024  # as the model's MAX_TEXT
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
FIELDS = ("type", "actor", "privacy", "payload", "subject", "supersedes", "id", "time")
_FIELD_SET = frozenset(FIELDS)
_REQUIRED = frozenset({"type", "actor", "privacy"})


def _text(value: object) -> bool:
    return type(value) is str and 0 < len(value) <= _MAX_TEXT and _CONTROL.search(value) is None


def _plain(fields: Mapping[str, Any]) -> dict[str, Any] | None:
    """The record's values when plain checks accept every field as the model would, unchanged;
    None when the model must decide (a refusal to word, or a value pydantic converts)."""
    if not (_REQUIRED <= fields.keys() <= _FIELD_SET):
        return None
    kind, privacy = fields["type"], fields["privacy"]
    if type(kind) is not str or TYPE_PATTERN.fullmatch(kind) is None or not _text(fields["actor"]):
        return None
    if type(privacy) is not str or privacy not in PRIVACY_LEVELS:
        return None
    for name in ("subject", "supersedes"):
        value = fields.get(name)
        if value is not None and not _text(value):
            return None
    time = fields.get("time")
    if time is not None and type(time) is not datetime:
        return None
    if "id" in fields:
        if not _text(fields["id"]):
            return None
        record_id = fields["id"]
    else:
        record_id = new_id()
    return {
        "type": kind,
        "actor": fields["actor"],
        "privacy": privacy,
        "payload": fields.get("payload", {}),
        "subject": fields.get("subject"),
        "supersedes": fields.get("supersedes"),
        "id": record_id,
        "time": time,
    }


def _by_model(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The model's values for ``fields``; raises its ``ValidationError`` when it refuses them."""
    from reviewtrail.ledger.records._new_record_model import NewRecord as Model

    made = Model(**fields)
    return {name: getattr(made, name) for name in FIELDS}


class NewRecord:
    """A record to append; the ledger assigns ``seq`` and the hashes. Frozen; its ``__dict__``
    holds exactly its fields (sealing reads them from there, as from a model's)."""

    type: str
    actor: str
    privacy: Privacy
    payload: Any
    subject: str | None
    supersedes: str | None
    id: str
    time: datetime | None

    if TYPE_CHECKING:

        def __init__(
            self,
            *,
            type: str,
            actor: str,
            privacy: Privacy,
            payload: Any = ...,
            subject: str | None = None,
            supersedes: str | None = None,
            id: str = ...,
            time: datetime | None = None,
        ) -> None: ...

    else:

        def __init__(self, /, **fields: Any) -> None:
            values = _plain(fields)
            self._set(values if values is not None else _by_model(fields))

    def _set(self, values: Mapping[str, Any]) -> None:
        self.__dict__.update({name: values[name] for name in FIELDS})

    @classmethod
    def make(cls, **fields: Any) -> NewRecord:
        """Build a record, turning validation failures into :class:`InvalidInputError`."""
        values = _plain(fields)
        if values is None:
            from pydantic import ValidationError

            try:
                values = _by_model(fields)
            except ValidationError as exc:
                first = exc.errors()[0]
                loc = ".".join(str(p) for p in first["loc"]) or "record"
                raise InvalidInputError(first["msg"], field=loc) from exc
        record = cls.__new__(cls)
        record._set(values)
        return record

    @classmethod
    def model_construct(cls, **fields: Any) -> NewRecord:
        """A record of exactly these values, unchecked (defaults for those not given)."""
        record = cls.__new__(cls)
        record._set(
            {
                **{name: None for name in FIELDS},
                "payload": {},
                **({} if "id" in fields else {"id": new_id()}),
                **fields,
            }
        )
        return record

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"NewRecord is frozen: {name!r} cannot be set")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"NewRecord is frozen: {name!r} cannot be deleted")

    def _values(self) -> tuple[Any, ...]:
        fields = self.__dict__
        return tuple(fields[name] for name in FIELDS)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, NewRecord)
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return f"NewRecord({', '.join(f'{name}={getattr(self, name)!r}' for name in FIELDS)})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (dict(zip(FIELDS, self._values(), strict=True)),))


def _rebuild(values: dict[str, Any]) -> NewRecord:
    return NewRecord.model_construct(**values)
