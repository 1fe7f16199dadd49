"""The signature gate of checked reads: every record a gate serves is held to the rule ``verify``
holds it to (:meth:`~reviewtrail.ledger.KeyBook.problem`), so a record ``verify`` would reject
is never served.

Each ledger object has a gate of its own (:meth:`Ledger.checked_records` and every read built on
it consult it), holding records to the store's key records: once the chain holds any key record,
each record a checked read returns must have a signature that verifies under the key it names
and was not made after that key's revocation, and, from the require point on, be signed by a key
declared before it. ``signed_reads(ledger, trusted)`` puts a gate with trusted keys in its place
for a scope: the records from the trusted require point on (every record when no requirement is
signed by a trusted key) must also be signed by one of those keys, as ``verify --trusted-keys``
holds them. A revocation that names no key stops every gated read (fail closed).

The key records are read (hashed and linked, never through the gate) to the head on the first
check, then only those past the highest seq checked so far: a store that never declared a key
costs its gate a read by type per key record type when the records read pass that seq, and no
signature read.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Protocol

from reviewtrail.errors import IntegrityError
from reviewtrail.ledger.contract._key_state import KeyState, payload_of
from reviewtrail.ledger.keys._writer_keys import KEY_RECORD_TYPES, KEY_REVOKED, KeyBook
from reviewtrail.ledger.records._envelope import stored_problem

if TYPE_CHECKING:
    from reviewtrail.ledger.keys._record_signature import RecordSignature
    from reviewtrail.ledger.keys._signing_keys import TrustedKeys
    from reviewtrail.ledger.records._envelope import Envelope

__all__ = ["SignatureGate"]


class _Reads(Protocol):
    """The reads of a ledger a gate makes (``Ledger``'s, which this module sits below)."""

    def read(self, *, start: int = ..., end: int | None = ..., type: str | None = ...) -> Iterator[Envelope]: ...

    def check_links(self, envs: Iterable[Envelope], *, field: str = ...) -> int: ...

    def signatures_at(self, seqs: Iterable[int]) -> dict[int, RecordSignature]: ...

    def head_seq(self) -> int: ...


class SignatureGate:
    """The key records of ``ledger`` read so far and the ``trusted`` keys (``None``: the store's
    own rule). The signatures are read with each check, so a signature row changed since an
    earlier read is never taken on that read's word."""

    def __init__(self, ledger: _Reads, trusted: TrustedKeys | None = None) -> None:
        self.ledger = ledger
        self.trusted = trusted
        self._keys = KeyState()
        self._lock = threading.Lock()

    def _advance(self, upto: int) -> None:
        """Read the key records in ``(seen, upto]``, each hashed and its link checked."""
        ledger, state = self.ledger, self._keys
        found = [env for type_ in KEY_RECORD_TYPES for env in ledger.read(start=state.seen + 1, end=upto, type=type_)]
        for env in found:
            problem = stored_problem(env)
            if problem is not None:
                raise IntegrityError(f"{problem}; run 'reviewtrail verify'", field=self._field)
        ledger.check_links(found, field=self._field)
        found.sort(key=lambda e: e.seq)
        signatures = ledger.signatures_at(env.seq for env in found)
        state.advance(upto, ((e.seq, e.type, e.hash, payload_of(e), signatures.get(e.seq)) for e in found))

    @property
    def _field(self) -> str:
        return "trusted_keys" if self.trusted is not None else "signatures"

    def read_to(self, upto: int) -> None:
        """Read the key records up to seq ``upto`` now (:func:`~reviewtrail.ledger.signed_reads`
        does at the head when its scope opens), refusing a revocation that names no key."""
        with self._lock:
            self._book(upto)

    def _book(self, upto: int) -> KeyBook:
        if upto > self._keys.seen:
            self._advance(upto)
        book = self._keys.book
        if book.unnamed_revocations:
            seq = book.unnamed_revocations[0]
            raise IntegrityError(
                f"ledger seq {seq} ({KEY_REVOKED}) names no key id, so whose key it revokes cannot be told: no "
                "record is served until it is looked into; run 'reviewtrail verify'",
                field=self._field,
            )
        return book

    def check(self, records: Iterable[Envelope]) -> None:
        """Refuse (exit 4; field ``trusted_keys`` with trusted keys, else ``signatures``) the
        first of ``records`` (one at least) that ``verify`` would reject, naming it as ``verify``
        does."""
        todo = list(records)
        trusted = self.trusted
        with self._lock:
            upto = max(env.seq for env in todo)
            # The first check reads to the head: a revocation past the records read still counts.
            book = self._book(max(upto, self.ledger.head_seq()) if not self._keys.seen else upto)
            if trusted is None and book.empty:
                return  # no key record: no signature can break the rule
            trusted_from = 1
            if trusted is not None:
                trusted_from = book.trusted_from(trusted, self._keys.signatures, self._keys.hashes)
        signatures = self.ledger.signatures_at(env.seq for env in todo)
        for env in sorted(todo, key=lambda e: e.seq):
            problem = book.problem(
                env.seq, env.hash, signatures.get(env.seq), trusted=trusted, trusted_from=trusted_from
            )
            if problem is None:
                continue
            held = (
                f"only records signed by the trusted keys ({trusted.source or 'given'}) are read here; run "
                "'reviewtrail verify --trusted-keys'"
                if trusted is not None
                else "a record verify rejects is never read; run 'reviewtrail verify'"
            )
            raise IntegrityError(f"ledger seq {env.seq} ({env.type}): {problem}; {held}", field=self._field)
