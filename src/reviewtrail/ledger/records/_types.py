"""Typed record payloads as pydantic models: the base of the payload models not yet msgspec
models (:class:`reviewtrail._struct.PayloadStruct`), validated on append.

Producers declare a payload model with :func:`~reviewtrail.ledger.record_type`, which names its
type and nothing more: a package lists its models in its ``RECORD_TYPES``, and a ledger opened
with a :class:`~reviewtrail.ledger.RecordCatalog` of them validates each appended payload against
its model (field names are the wire names, via aliases). Both kinds keep the catalog's protocol
(:class:`~reviewtrail.ledger.records._model.PayloadModel`).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from reviewtrail.errors import InvalidInputError

__all__ = ["RecordPayload", "validate_with"]


class RecordPayload(BaseModel):
    """Base of every typed payload. Subclasses get ``record_type`` from :func:`record_type`."""

    # ser_json_inf_nan="constants": a NaN or Infinity anywhere in a payload reaches canonical JSON,
    # which refuses it naming its path (pydantic's default would write it as null, silently).
    model_config = ConfigDict(
        frozen=True, populate_by_name=True, extra="forbid", defer_build=True, ser_json_inf_nan="constants"
    )
    record_type: ClassVar[str]

    @classmethod
    def check_payload(cls, type_: str, payload: Any, *, field: str = "payload") -> None:
        validate_with(cls, type_, payload, field=field)

    @classmethod
    def payload_schema(cls) -> dict[str, Any]:
        return cls.model_json_schema(by_alias=True)

    def payload_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


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
