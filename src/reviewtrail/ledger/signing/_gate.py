"""Signed reads: a scope in which every record a ledger's checked reads return must be signed by a
key the reader trusts (docs/architecture.md, "Reads that gate").

Inside ``with signed_reads(ledger, trusted):`` each record that :meth:`Ledger.checked_records`
(and every read built on it: ``records_about``, ``records_superseding``, ``checked_get_many``,
query rows held against their records) returns is held to the rule ``verify --trusted-keys``
holds it to (:meth:`~reviewtrail.ledger.KeyBook.problem`, with the trusted keys): from the
earliest requirement a trusted key signed (every record when there is none), signed by one of the
trusted keys, not after its revocation; and always the store's own rule. Otherwise the read is
refused (:class:`~reviewtrail.errors.IntegrityError`, exit 4, field ``trusted_keys``) naming the
record's seq and type as ``verify`` names it. The check rides on the reads the gate makes anyway
(one extra query per read for the signatures), never on a pass over the whole store. The key
records are read when the scope opens (a revocation naming no key refuses it: fail closed), then
only those past the highest seq read: open it inside ``ledger.snapshot()``, with the reads it guards.

Outside such a scope, checked reads are held to the store's own rule by the ledger's own gate
(:class:`~reviewtrail.ledger.SignatureGate` without trusted keys).

The scope is per thread (and per asyncio task): a context variable, so other readers of the same
ledger are not affected.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewtrail.ledger.contract._gate_scope import ACTIVE_GATE
from reviewtrail.ledger.contract._signature_gate import SignatureGate

if TYPE_CHECKING:
    from reviewtrail.ledger.contract._protocol import Ledger
    from reviewtrail.ledger.keys._signing_keys import TrustedKeys

__all__ = ["open_gate", "signed_reads"]


def open_gate(ledger: Ledger, trusted: TrustedKeys) -> SignatureGate:
    """The gate of a scope over ``ledger`` with the ``trusted`` keys, its key records read to the
    head (a revocation naming no key refuses it here: fail closed)."""
    gate = SignatureGate(ledger, trusted)
    gate.read_to(ledger.head_seq())
    return gate


@contextlib.contextmanager
def signed_reads(ledger: Ledger, trusted: TrustedKeys | None) -> Iterator[SignatureGate | None]:
    """The scope (see the module); ``trusted`` ``None``: no scope (the ledger's own gate holds
    its reads to the store's rule), for a caller whose trusted keys are optional."""
    if trusted is None:
        yield None
        return
    gate = open_gate(ledger, trusted)
    token = ACTIVE_GATE.set(gate)
    try:
        yield gate
    finally:
        ACTIVE_GATE.reset(token)
