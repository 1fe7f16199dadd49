"""Signed reads: a scope in which every record a ledger's checked reads return must be signed by a
key the reader trusts (docs/architecture.md, "Reads that gate").

Inside ``with signed_reads(ledger, trusted):`` each record that :meth:`Ledger.checked_records`
(and every read built on it: ``records_about``, ``records_superseding``, ``checked_get_many``,
query rows held against their records) returns must carry a signature that verifies under one of
the trusted keys, made before any revocation of that key; otherwise the read is refused
(:class:`~reviewtrail.errors.IntegrityError`, exit 4) naming the record's seq and type. The check
rides on the reads the gate makes anyway (one extra query per read for the signatures), never on
a pass over the whole store. The revocations are read from the chain when the scope opens: open it
inside ``ledger.snapshot()``, with the reads it guards.

The scope is per thread (and per asyncio task): a context variable, so other readers of the same
ledger are not affected.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from reviewtrail.ledger.contract._gate_scope import ACTIVE_GATE

if TYPE_CHECKING:
    from reviewtrail.ledger.contract._protocol import Ledger
    from reviewtrail.ledger.keys._signing_keys import TrustedKeys
    from reviewtrail.ledger.records._envelope import Envelope

__all__ = ["SignatureGate", "signed_reads"]


class SignatureGate:
    """The trusted keys and the chain's revocations, and the records already found signed."""

    def __init__(self, ledger: Ledger, trusted: TrustedKeys, revoked: dict[str, int]) -> None:
        self.ledger = ledger
        self.trusted = trusted
        self.revoked = revoked
        self._signed: set[tuple[int, str]] = set()

    def check(self, records: Iterable[Envelope]) -> None:
        """Refuse (exit 4, field ``trusted_keys``) the first of ``records`` not signed by a
        trusted, unrevoked key."""
        from reviewtrail.errors import IntegrityError
        from reviewtrail.ledger.keys._record_signature import signature_verifies

        todo = [env for env in records if (env.seq, env.hash) not in self._signed]
        if not todo:
            return
        signatures = self.ledger.signatures_at([env.seq for env in todo])
        for env in sorted(todo, key=lambda e: e.seq):
            signature = signatures.get(env.seq)
            key = self.trusted.get(signature.key_id) if signature is not None else None
            if signature is None:
                why = "is not signed"
            elif key is None:
                why = f"is signed by key {signature.key_id}, which is not a trusted key"
            elif not signature_verifies(key, signature, env.hash):
                why = f"has a signature by key {signature.key_id} that does not verify"
            elif self.revoked.get(signature.key_id, env.seq) < env.seq:
                why = (
                    f"is signed by key {signature.key_id} after its revocation at seq {self.revoked[signature.key_id]}"
                )
            else:
                self._signed.add((env.seq, env.hash))
                continue
            raise IntegrityError(
                f"ledger seq {env.seq} ({env.type}) {why}; only records signed by the trusted keys "
                f"({self.trusted.source or 'given'}) are read here; run 'reviewtrail verify --trusted-keys'",
                field="trusted_keys",
            )


@contextlib.contextmanager
def signed_reads(ledger: Ledger, trusted: TrustedKeys) -> Iterator[SignatureGate]:
    """The scope (see the module); the revocations are read from the chain, each record checked."""
    from reviewtrail.errors import IntegrityError
    from reviewtrail.ledger.keys._writer_keys import KEY_REVOKED, is_key_id

    revoked: dict[str, int] = {}
    for env in ledger.checked_records(ledger.read(type=KEY_REVOKED)):
        payload = env.payload_value
        key_id = payload.get("keyId") if isinstance(payload, dict) else None
        if not is_key_id(key_id):
            # Fail closed: a revocation takes effect whoever wrote it, so one naming no key stops
            # every signed read until it is looked into.
            raise IntegrityError(
                f"ledger seq {env.seq} ({env.type}) names no key id; run 'reviewtrail verify'", field="trusted_keys"
            )
        revoked.setdefault(str(key_id), env.seq)
    gate = SignatureGate(ledger, trusted, revoked)
    token = ACTIVE_GATE.set(gate)
    try:
        yield gate
    finally:
        ACTIVE_GATE.reset(token)
