"""Appending the key records: declare a writer key, revoke one, rotate, require signatures (the
library of ``reviewtrail key add | revoke | rotate | require | list``). Each reads the chain's key records (checked)
first, and refuses what would leave the store unable to take signed records."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reviewtrail.errors import ConfigError, ConflictError, InvalidInputError, NotFoundError
from reviewtrail.ledger.keys._signing_keys import SIGNING_KEY_FIELD
from reviewtrail.ledger.keys._writer_keys import (
    KEY_DECLARED,
    KEY_REVOKED,
    SIGNATURES_REQUIRED,
    KeyBook,
    is_key_id,
)

if TYPE_CHECKING:
    from reviewtrail.ledger.contract._protocol import Ledger
    from reviewtrail.ledger.records._envelope import Envelope
    from reviewtrail.ledger.records._new_record import NewRecord

__all__ = ["WriterKeys", "declare_key", "require_signatures", "revoke_key", "rotate_key", "writer_keys"]

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
    from reviewtrail.ledger.signing._check import key_book

    return key_book(ledger, checked=True)


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


def _record(type_: str, payload: dict[str, Any], actor: str, subject: str | None) -> NewRecord:
    from reviewtrail.ledger.records._new_record import NewRecord

    return NewRecord.make(type=type_, actor=actor, privacy="private", payload=payload, subject=subject)


def _declaration(book: KeyBook, public_key_pem: bytes, name: str, actor: str) -> NewRecord:
    """The ``store.key.declared@1`` record of a key the chain neither declares nor ever revoked."""
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    from reviewtrail.ledger.keys._ed25519 import load_public_key, public_key_id

    key = load_public_key(public_key_pem)
    if not name.strip() or len(name) > 200:
        raise InvalidInputError("must be 1..200 characters", field="name")
    key_id = public_key_id(key)
    if key_id in book.revoked:
        raise ConflictError(
            f"key {key_id} was revoked at seq {book.revoked[key_id]}; a revoked key stays revoked", field="public_key"
        )
    if key_id in book.declared:
        raise ConflictError(f"key {key_id} is already declared (seq {book.declared[key_id].seq})", field="public_key")
    raw = key.public_bytes(Encoding.Raw, PublicFormat.Raw)
    payload = {"alg": "ed25519", "keyId": key_id, "publicKey": base64.b64encode(raw).decode("ascii"), "name": name}
    return _record(KEY_DECLARED, payload, actor, f"key:{key_id}")


def _revocation(book: KeyBook, key_id: str, reason: str, actor: str, *, next_key: str | None = None) -> NewRecord:
    """The ``store.key.revoked@1`` record of a declared, unrevoked key (``next_key``: one declared
    in the same batch)."""
    if not is_key_id(key_id):
        raise InvalidInputError("must be 64 lowercase hex digits (see 'reviewtrail key list')", field="key_id")
    if not reason.strip() or len(reason) > 1000:
        raise InvalidInputError("must be 1..1000 characters", field="reason")
    if key_id in book.revoked:
        raise ConflictError(f"key {key_id} is already revoked (seq {book.revoked[key_id]})", field="key_id")
    if key_id not in book.declared:
        raise NotFoundError(f"no record declares key {key_id}", field="key_id")
    keys = [*book.declared, *([next_key] if next_key is not None else [])]
    if book.required_from is not None and not [k for k in keys if k not in book.revoked and k != key_id]:
        raise ConflictError(
            f"key {key_id} is the last declared key and signatures are required from seq {book.required_from}: "
            "nothing could sign after its revocation; rotate to the next key instead ('reviewtrail key rotate')",
            field="key_id",
        )
    return _record(KEY_REVOKED, {"keyId": key_id, "reason": reason}, actor, f"key:{key_id}")


def declare_key(ledger: Ledger, public_key_pem: bytes, *, name: str, actor: str = _ADMIN) -> Envelope:
    """Append ``store.key.declared@1`` for the Ed25519 public key in ``public_key_pem`` (PEM, or
    one OpenSSH line), held by the writer ``name``. A key already declared or ever revoked is
    :class:`ConflictError` (exit 6); a malformed key :class:`InvalidInputError` (exit 2)."""
    book = _book(ledger)
    record = _declaration(book, public_key_pem, name, actor)
    _refuse_unsigned(ledger, book, "a key declaration")
    [env] = ledger.append([record])
    return env


def revoke_key(ledger: Ledger, key_id: str, *, reason: str, actor: str = _ADMIN) -> Envelope:
    """Append ``store.key.revoked@1``: records ``key_id`` signs after it are invalid. An unknown
    key is :class:`NotFoundError` (exit 3), one already revoked :class:`ConflictError` (exit 6), and
    so is the last declared key while signatures are required (nothing could sign after it:
    rotate instead)."""
    book = _book(ledger)
    record = _revocation(book, key_id, reason, actor)
    _refuse_unsigned(ledger, book, "a key revocation")
    [env] = ledger.append([record])
    return env


def rotate_key(
    ledger: Ledger, public_key_pem: bytes, *, name: str, old_key_id: str, reason: str, actor: str = _ADMIN
) -> list[Envelope]:
    """Declare the new key, then revoke ``old_key_id``: the two records in one append (both or
    neither). This process signs them with its key, which may be the old one (a key's own
    revocation is signed before it takes effect); sign with the new key afterwards."""
    book = _book(ledger)
    declaration = _declaration(book, public_key_pem, name, actor)
    revocation = _revocation(book, old_key_id, reason, actor, next_key=str(declaration.payload["keyId"]))
    _refuse_unsigned(ledger, book, "a key rotation")
    return ledger.append([declaration, revocation])


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
    [env] = ledger.append([_record(SIGNATURES_REQUIRED, {}, actor, None)])
    return env


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
