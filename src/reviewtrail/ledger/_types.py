"""Typed record payloads: a pydantic model per ``name@version``, validated on append.

Producers declare a payload model with :func:`record_type`; appending a record of a
registered type validates its payload against the model (field names are the wire
names, via aliases), and :func:`payload_schemas` yields the JSON Schemas to ship.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger._envelope import TYPE_PATTERN, NewRecord, Privacy

__all__ = ["RecordPayload", "new_record", "payload_model", "payload_schemas", "record_type", "validate_payload"]


class RecordPayload(BaseModel):
    """Base of every typed payload. Subclasses get ``record_type`` from :func:`record_type`."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="forbid")
    record_type: ClassVar[str]


M = TypeVar("M", bound=type[RecordPayload])
_REGISTRY: dict[str, type[RecordPayload]] = {}


def record_type(type_: str) -> Callable[[M], M]:
    """Class decorator: register ``cls`` as the payload model of ``type_`` (``name@version``)."""
    if TYPE_PATTERN.fullmatch(type_) is None:
        raise ValueError(f"{type_!r} is not 'name@version'")

    def register(cls: M) -> M:
        existing = _REGISTRY.get(type_)
        if existing is not None and existing.__qualname__ != cls.__qualname__:
            raise ValueError(f"record type {type_!r} is already registered to {existing.__qualname__}")
        cls.record_type = type_
        _REGISTRY[type_] = cls
        return cls

    return register


def payload_model(type_: str) -> type[RecordPayload] | None:
    return _REGISTRY.get(type_)


def validate_payload(type_: str, payload: Any, *, field: str = "payload") -> None:
    """Raise :class:`InvalidInputError` naming the first bad field when ``payload`` breaks its model."""
    model = _REGISTRY.get(type_)
    if model is None:
        return
    import json

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


def payload_schemas() -> dict[str, dict[str, Any]]:
    """JSON Schema of every registered payload model, keyed by record type."""
    return {t: m.model_json_schema(by_alias=True) for t, m in sorted(_REGISTRY.items())}
