"""Appending the key records: declare a writer key, revoke one, require signatures (the library of
``reviewtrail key add | revoke | require | list``). Each reads the chain's key records (checked)
first, and refuses what would leave the store unable to take signed records."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reviewtrail.errors import ConfigError, ConflictError, InvalidInputError, NotFoundError
from reviewtrail.ledger._signing_keys import SIGNING_KEY_FIELD
from reviewtrail.ledger._writer_keys import (
    KEY_DECLARED,
    KEY_RECORD_TYPES,
    KEY_REVOKED,
    SIGNATURES_REQUIRED,
    KeyBook,
    is_key_id,
)

if TYPE_CHECKING:
    from reviewtrail.ledger._envelope import Envelope
    from reviewtrail.ledger._protocol import Ledger

__all__ = ["WriterKeys", "declare_key", "require_signatures", "revoke_key", "writer_keys"]

_ADMIN = "reviewtrail"


@dataclass(frozen=True)
class WriterKeys:
    """The writer keys a ledger's chain declares (``key list``)."""

    keys: tuple[dict[str, Any], ...]
    required_from: int | None
    signer_key_id: str | None

    def to_json(self) -> dict[str, Any]:
        return {"keys": list(self.keys), "requiredFrom": self.required_from, "signingKeyId": self.signer_key_id}


def _book(ledger: Ledger) -> KeyBook:
    """The chain's key records, each read from the records themselves and checked."""
    records = [env for type_ in KEY_RECORD_TYPES for env in ledger.read(type=type_)]
    book = KeyBook()
    for env in ledger.checked_records(records):
        book.add(env.seq, env.type, env.payload_value)
    return book


def _signer_key(ledger: Ledger) -> str | None:
    return ledger.signer.load().key_id if ledger.signer is not None else None


def _refuse_unsigned(ledger: Ledger, book: KeyBook, what: str) -> None:
    """Once signatures are required, a key record must be signed by a declared, unrevoked key."""
    if book.required_from is None:
        return
    key_id = _signer_key(ledger)
    if key_id is None or key_id not in book.declared or key_id in book.revoked:
        held = "no signing key is set" if key_id is None else f"the signing key {key_id} is not declared or revoked"
        raise ConfigError(
            f"signatures are required from seq {book.required_from}, and {held}: {what} must be signed by a "
            "declared key (set REVIEWTRAIL_SIGNING_KEY to its private key file)",
            field=SIGNING_KEY_FIELD,
        )


def _append(ledger: Ledger, type_: str, payload: dict[str, Any], actor: str, subject: str | None) -> Envelope:
    from reviewtrail.ledger._new_record import NewRecord

    [env] = ledger.append(
        [NewRecord.make(type=type_, actor=actor, privacy="private", payload=payload, subject=subject)]
    )
    return env


def declare_key(ledger: Ledger, public_key_pem: bytes, *, name: str, actor: str = _ADMIN) -> Envelope:
    """Append ``store.key.declared@1`` for the Ed25519 public key in ``public_key_pem`` (PEM, or
    one OpenSSH line), held by the writer ``name``. A key already declared or ever revoked is
    :class:`ConflictError` (exit 6); a malformed key :class:`InvalidInputError` (exit 2)."""
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    from reviewtrail.ledger._ed25519 import load_public_key, public_key_id

    key = load_public_key(public_key_pem)
    if not name.strip() or len(name) > 200:
        raise InvalidInputError("must be 1..200 characters", field="name")
    key_id = public_key_id(key)
    book = _book(ledger)
    if key_id in book.revoked:
        raise ConflictError(f"key {key_id} was revoked at seq {book.revoked[key_id]}; a revoked key stays revoked")
    if key_id in book.declared:
        raise ConflictError(f"key {key_id} is already declared (seq {book.declared[key_id].seq})", field="key")
    _refuse_unsigned(ledger, book, "a key declaration")
    raw = key.public_bytes(Encoding.Raw, PublicFormat.Raw)
    payload = {"alg": "ed25519", "keyId": key_id, "publicKey": base64.b64encode(raw).decode("ascii"), "name": name}
    return _append(ledger, KEY_DECLARED, payload, actor, f"key:{key_id}")


def revoke_key(ledger: Ledger, key_id: str, *, reason: str, actor: str = _ADMIN) -> Envelope:
    """Append ``store.key.revoked@1``: records ``key_id`` signs after it are invalid. An unknown
    key is :class:`NotFoundError` (exit 3), one already revoked :class:`ConflictError` (exit 6), and
    so is the last declared key while signatures are required (nothing could sign after it:
    declare the next key first)."""
    if not is_key_id(key_id):
        raise InvalidInputError("must be 64 lowercase hex digits (see 'reviewtrail key list')", field="key_id")
    if not reason.strip():
        raise InvalidInputError("must not be empty", field="reason")
    book = _book(ledger)
    if key_id in book.revoked:
        raise ConflictError(f"key {key_id} is already revoked (seq {book.revoked[key_id]})", field="key_id")
    if key_id not in book.declared:
        raise NotFoundError(f"no record declares key {key_id}", field="key_id")
    left = [k for k in book.declared if k not in book.revoked and k != key_id]
    if book.required_from is not None and not left:
        raise ConflictError(
            f"key {key_id} is the last declared key and signatures are required from seq {book.required_from}: "
            "nothing could sign after its revocation; declare the next key first ('reviewtrail key add')",
            field="key_id",
        )
    _refuse_unsigned(ledger, book, "a key revocation")
    return _append(ledger, KEY_REVOKED, {"keyId": key_id, "reason": reason}, actor, f"key:{key_id}")


def require_signatures(ledger: Ledger, *, actor: str = _ADMIN) -> Envelope:
    """Append ``store.signatures.required@1``: from it on, every record must be signed by a
    declared, unrevoked key. The record itself is signed, so this process must sign with a
    declared key (:class:`ConfigError`, exit 5, otherwise); when signatures are already required
    it is :class:`ConflictError` (exit 6): only the earliest requirement counts."""
    book = _book(ledger)
    if book.required_from is not None:
        raise ConflictError(
            f"signatures are already required from seq {book.required_from}; a later requirement changes nothing",
            field="require",
        )
    key_id = _signer_key(ledger)
    if key_id is None or key_id not in book.declared or key_id in book.revoked:
        held = "no signing key is set" if key_id is None else f"the signing key {key_id} is not a declared key"
        raise ConfigError(
            f"{held}: the requirement is itself signed, by a declared key ('reviewtrail key add' it, then set "
            "REVIEWTRAIL_SIGNING_KEY to its private key file)",
            field=SIGNING_KEY_FIELD,
        )
    return _append(ledger, SIGNATURES_REQUIRED, {}, actor, None)


def writer_keys(ledger: Ledger) -> WriterKeys:
    """The declared keys (with the seq of their declaration and revocation), the seq signatures
    are required from, and the key this process signs with."""
    book = _book(ledger)
    keys = tuple(
        {
            "keyId": k.key_id,
            "name": k.name,
            "declaredAt": k.seq,
            "revokedAt": book.revoked.get(k.key_id),
        }
        for k in sorted(book.declared.values(), key=lambda d: d.seq)
    )
    return WriterKeys(keys, book.required_from, _signer_key(ledger))
