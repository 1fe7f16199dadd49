"""The ledger head an export names: the hash and seq of the last record it read from.

An export reads the head once, inside ``ledger.snapshot()`` together with its other reads, so
everything it says comes from the ledger as it stood at that record. Anyone holding the
ledger can then check the export against it (``reviewtrail ledger show``, ``verify``): a
later export of the same thing names a later head, and a head that the ledger no longer
holds at that seq shows its history was rewritten.
"""

from __future__ import annotations

from typing import Any

from reviewtrail._value import Value
from reviewtrail.cas import is_hex
from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger.contract._protocol import Ledger
from reviewtrail.ledger.records._envelope import GENESIS_HASH

__all__ = ["LedgerHead", "ledger_head"]

_MAX_SEQ = 2**53 - 1  # what a JSON reader holds exactly


class LedgerHead(Value):
    """The hash (64 lowercase hex digits) and seq of a ledger's last record; an empty ledger's
    head is the genesis hash at seq 0. A malformed one is :class:`InvalidInputError` naming
    ``ledgerHead.hash`` or ``ledgerHead.seq``."""

    hash: str
    seq: int

    def __post_init__(self) -> None:
        if not is_hex(self.hash):
            raise InvalidInputError("must be 64 lowercase hex digits", field="ledgerHead.hash")
        if type(self.seq) is not int or not 0 <= self.seq <= _MAX_SEQ:
            raise InvalidInputError("must be a whole number >= 0", field="ledgerHead.seq")
        if self.seq == 0 and self.hash != GENESIS_HASH:
            raise InvalidInputError("seq 0 is the empty ledger, whose head is the genesis hash", field="ledgerHead")

    def to_json(self) -> dict[str, Any]:
        return {"hash": self.hash, "seq": self.seq}


def ledger_head(ledger: Ledger) -> LedgerHead:
    """The head of ``ledger`` now. Read it inside ``ledger.snapshot()`` with the rest of an
    export's reads, so that the export says what the ledger held at exactly this head."""
    head = ledger.head()
    return LedgerHead(GENESIS_HASH, 0) if head is None else LedgerHead(head.hash, head.seq)
