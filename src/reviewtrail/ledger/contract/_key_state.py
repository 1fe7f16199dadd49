"""The store's writer keys as its key records stand at a seq, kept current by reading only the key
records past it, and the rule an append is held to with them.

An append reads the key records past the seq its ledger object last read them at, inside its own
write transaction (under the lock that orders every writer), then holds each record of the batch
to :meth:`~reviewtrail.ledger.KeyBook.problem`, the rule ``verify`` holds every record to: a
record ``verify`` would reject (signed by a key never declared, or after its revocation, once
signatures are required; after a revocation at any time) is refused before anything is written.
A revocation committed by another writer between two appends counts for the second, since the
read and the append share one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from reviewtrail.errors import ConfigError, IntegrityError
from reviewtrail.ledger.keys._writer_keys import KEY_REVOKED, SIGNATURES_REQUIRED, KeyBook

if TYPE_CHECKING:
    from reviewtrail.ledger.keys._record_signature import RecordSignature
    from reviewtrail.ledger.records._envelope import Envelope

__all__ = [
    "KEY_ROWS_SQL",
    "KeyRow",
    "KeyState",
    "key_row",
    "parsed",
    "payload_of",
    "refuse_unallowed",
    "unsigned_refused",
]

#: The key records of a batch that change what its later records may be signed by.
_BATCH_KEY_TYPES = (KEY_REVOKED, SIGNATURES_REQUIRED)

#: The key records past a seq with their signatures, in seq order (SQL backends; ``?`` marks).
KEY_ROWS_SQL = (
    "SELECT r.seq, r.type, r.hash, r.payload, s.key_id, s.sig FROM rt_records r "
    "LEFT JOIN rt_signatures s ON s.seq = r.seq WHERE r.type IN (?, ?, ?) AND r.seq > ? ORDER BY r.seq"
)

#: A key record as an append reads it: seq, type, envelope hash, parsed payload, signature.
KeyRow = tuple[int, str, str, Any, "RecordSignature | None"]


class KeyState:
    """A :class:`KeyBook` read up to seq :attr:`seen`, and the requirements' hashes and
    signatures (for the trusted point of a gate). :meth:`advance` takes the key records past
    :attr:`seen`; a head below it (the database was restored from an older copy) starts over."""

    def __init__(self) -> None:
        self.book = KeyBook()
        self.seen = 0
        self.hashes: dict[int, str] = {}
        self.signatures: dict[int, RecordSignature] = {}

    def start_over_below(self, head: int) -> None:
        """Forget what was read when the chain now ends before it."""
        if head < self.seen:
            self.__init__()  # type: ignore[misc]

    def advance(self, upto: int, rows: Iterable[KeyRow]) -> KeyBook:
        """Take ``rows`` (the key records in ``(seen, upto]``, in seq order) into the book."""
        for seq, type_, record_hash, payload, signature in rows:
            self.book.add(seq, type_, payload, record_hash=record_hash, signature=signature)
            if type_ == SIGNATURES_REQUIRED:
                self.hashes[seq] = record_hash
                if signature is not None:
                    self.signatures[seq] = signature
        self.seen = max(self.seen, upto)
        return self.book


def unsigned_refused(required_from: int | None) -> ConfigError:
    """The refusal of an unsigned append to a store that requires signatures (exit 5)."""
    return ConfigError(
        f"this store requires every record to be signed from seq {required_from} on, and this process "
        "has no signing key: set REVIEWTRAIL_SIGNING_KEY (or signing_key in your user configuration) to a "
        "writer key declared in the store ('reviewtrail key list'); nothing was written",
        field="signing_key",
    )


def key_row(seq: int, type_: str, record_hash: str, payload: bytes, signature: RecordSignature | None) -> KeyRow:
    """A key record as :meth:`KeyState.advance` takes it, its payload parsed (:func:`parsed`)."""
    return seq, type_, record_hash, parsed(bytes(payload)), signature


def payload_of(env: Envelope) -> Any:
    """A record's payload parsed (:func:`parsed`)."""
    return parsed(env.payload)


def parsed(payload: bytes) -> Any:
    """``payload`` parsed as JSON; ``None`` when it is not JSON (a key record whose payload is not
    JSON declares and revokes nothing, and ``verify`` reports it)."""
    from reviewtrail.canonical import loads_json

    try:
        return loads_json(payload)
    except ValueError:
        return None


def refuse_unallowed(book: KeyBook, envs: Sequence[Envelope], signatures: Sequence[RecordSignature] | None) -> None:
    """Refuse the batch ``envs`` (sealed, not written; ``signatures``: each one's, or ``None``
    when unsigned) when ``verify`` would reject one of its records under ``book`` (the key
    records before the batch) and the batch's own key records: :class:`ConfigError` (exit 5,
    field ``signing_key``) for an unsigned record where signatures are required,
    :class:`IntegrityError` (exit 4, field ``signing_key``) naming the key otherwise.

    The batch's revocations and requirement count for its later records. Its declarations do
    not: one key signs a whole batch, so no record in it is signed by a key it declares."""
    held = book
    for i, env in enumerate(envs):
        signature = signatures[i] if signatures is not None else None
        if env.type in _BATCH_KEY_TYPES:
            if held is book:
                held = book.copy()
            held.add(env.seq, env.type, payload_of(env))
        problem = held.problem(env.seq, env.hash, signature)
        if problem is None:
            continue
        if signature is None:
            raise unsigned_refused(held.required_from)
        raise IntegrityError(
            f"the signing key {signature.key_id} may not sign here: ledger seq {env.seq} ({env.type}) would fail "
            f"verify, {problem}; nothing was written (see 'reviewtrail key list')",
            field="signing_key",
        )
