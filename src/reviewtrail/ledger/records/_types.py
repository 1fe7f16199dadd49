"""Typed record payloads: a pydantic model per ``name@version``, validated on append.

Producers declare a payload model with :func:`record_type`, which names its type and nothing
more: a package lists its models in its ``RECORD_TYPES``, and a ledger opened with a
:class:`~reviewtrail.ledger.RecordCatalog` of them validates each appended payload against its
model (field names are the wire names, via aliases).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger.records._fields import TYPE_PATTERN, Privacy
from reviewtrail.ledger.records._new_record import NewRecord

__all__ = ["RecordPayload", "new_record", "record_type", "validate_with"]


class RecordPayload(BaseModel):
    """Base of every typed payload. Subclasses get ``record_type`` from :func:`record_type`."""

    # ser_json_inf_nan="constants": a NaN or Infinity anywhere in a payload reaches canonical JSON,
    # which refuses it naming its path (pydantic's default would write it as null, silently).
    model_config = ConfigDict(
        frozen=True, populate_by_name=True, extra="forbid", defer_build=True, ser_json_inf_nan="constants"
    )
    record_type: ClassVar[str]


M = TypeVar("M", bound=type[RecordPayload])


def record_type(type_: str) -> Callable[[M], M]:
    """Class decorator: ``cls`` is the payload model of ``type_`` (``name@version``). Nothing is
    registered: the model takes effect in a ledger whose catalog lists it."""
    if TYPE_PATTERN.fullmatch(type_) is None:
        raise ValueError(f"{type_!r} is not 'name@version'")

    def name(cls: M) -> M:
        cls.record_type = type_
        return cls

    return name


def validate_with(model: type[RecordPayload], type_: str, payload: Any, *, field: str = "payload") -> None:
    """Raise :class:`InvalidInputError` naming the first bad field when ``payload`` breaks ``model``."""
    try:
        # The wire form, strictly: no coercion ("3" is not an int), as a reader of the JSON will see it.
        model.model_validate_json(json.dumps(payload, allow_nan=False), strict=True)
    except (TypeError, ValueError) as exc:
        if not isinstance(exc, ValidationError):
            raise InvalidInputError(f"not a JSON value ({exc})", field=field) from exc
        raise _named(exc, type_, field) from exc


def _named(exc: ValidationError, type_: str, field: str) -> InvalidInputError:
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in (field, *first["loc"]))
    return InvalidInputError(f"{first['msg']} (record type {type_})", field=loc)


def new_record(
    payload: RecordPayload,
    *,
    actor: str,
    privacy: Privacy,
    subject: str | None = None,
    supersedes: str | None = None,
    **extra: Any,
) -> NewRecord:
    """A :class:`NewRecord` whose type and payload come from a typed payload model."""
    return NewRecord.make(
        type=type(payload).record_type,
        actor=actor,
        privacy=privacy,
        payload=payload.model_dump(mode="json", by_alias=True),
        subject=subject,
        supersedes=supersedes,
        **extra,
    )
