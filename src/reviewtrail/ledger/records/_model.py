"""What a record catalog asks of a payload model, whichever library it is built on.

A payload model is a class with a ``record_type`` (``name@version``, given by :func:`record_type`)
that checks a payload in its JSON form (``check_payload``), describes it (``payload_schema``: the
published JSON Schema) and gives an instance's JSON form (``payload_json``). msgspec models
(:class:`reviewtrail._struct.PayloadStruct`) and the pydantic models not yet converted
(:class:`~reviewtrail.ledger.records._types.RecordPayload`) both are. Nothing here loads either.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from reviewtrail.ledger.records._fields import TYPE_PATTERN, Privacy

if TYPE_CHECKING:
    from reviewtrail.ledger.records._new_record import NewRecord

__all__ = ["PayloadModel", "new_record", "record_type"]


class PayloadModel(Protocol):
    """A record payload model, as the catalog uses it."""

    record_type: ClassVar[str]

    @classmethod
    def check_payload(cls, type_: str, payload: Any, *, field: str = "payload") -> None:
        """Raise :class:`~reviewtrail.errors.InvalidInputError` naming the first bad field."""

    @classmethod
    def payload_schema(cls) -> dict[str, Any]:
        """The JSON Schema of the payload (wire names)."""

    def payload_json(self) -> dict[str, Any]:
        """This payload's JSON form under its wire names."""


M = TypeVar("M", bound=type[Any])


def record_type(type_: str) -> Callable[[M], M]:
    """Class decorator: ``cls`` is the payload model of ``type_`` (``name@version``). Nothing is
    registered: the model takes effect in a ledger whose catalog lists it."""
    if TYPE_PATTERN.fullmatch(type_) is None:
        raise ValueError(f"{type_!r} is not 'name@version'")

    def name(cls: M) -> M:
        cls.record_type = type_
        return cls

    return name


def new_record(
    payload: PayloadModel,
    *,
    actor: str,
    privacy: Privacy,
    subject: str | None = None,
    supersedes: str | None = None,
    **extra: Any,
) -> NewRecord:
    """A :class:`NewRecord` whose type and payload come from a typed payload model."""
    from reviewtrail.ledger.records._new_record import NewRecord

    return NewRecord.make(
        type=type(payload).record_type,
        actor=actor,
        privacy=privacy,
        payload=payload.payload_json(),
        subject=subject,
        supersedes=supersedes,
        **extra,
    )
