"""A typed payload together with the envelope it was recorded in: what a write returns and
what a read gives back, for every record type."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Self, TypeVar

from reviewtrail._struct import PayloadStruct, read
from reviewtrail.ledger.records._envelope import Envelope

__all__ = ["Recorded"]

P = TypeVar("P", bound=PayloadStruct)


@dataclass(frozen=True)
class Recorded(Generic[P]):
    """``record`` (the payload model) and ``envelope`` (its place in the chain)."""

    record: P
    envelope: Envelope

    @classmethod
    def of(cls, model: type[P], envelope: Envelope) -> Self:
        """The payload of ``envelope`` read as ``model`` (its stored bytes decoded once)."""
        return cls(read(model, envelope.payload), envelope)

    @property
    def id(self) -> str:
        return self.envelope.id

    def to_json(self) -> dict[str, Any]:
        """The payload's wire form with ``recordId``, the envelope's id."""
        doc = self.record.payload_json()
        doc["recordId"] = self.envelope.id
        return doc
