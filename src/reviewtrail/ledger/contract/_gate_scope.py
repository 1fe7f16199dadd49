"""The open signed-reads scope of this thread or task (see :mod:`reviewtrail.ledger.signing._gate`): kept apart so
that every checked read can ask for it without loading what checks signatures."""

from __future__ import annotations

import contextvars
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from reviewtrail.ledger.records._envelope import Envelope

__all__ = ["ACTIVE_GATE", "Gate"]


class Gate(Protocol):
    """What a checked read hands the records it returns to, inside a signed-reads scope."""

    @property
    def ledger(self) -> object: ...

    def check(self, records: Iterable[Envelope]) -> None: ...


#: The open signed-reads scope of this thread or task, if any.
ACTIVE_GATE: contextvars.ContextVar[Gate | None] = contextvars.ContextVar("signed_reads", default=None)
