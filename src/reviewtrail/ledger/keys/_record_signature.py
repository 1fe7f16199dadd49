"""Record signatures: what a writer's Ed25519 key signs for each record it appends (pure, no I/O).

Signed message (documented in docs/architecture.md, "Signed records")::

    message = b"reviewtrail-record-v1\\x00" || ascii(keyId) || b"\\x00" || ascii(hash)

``keyId`` is the signing key's id (:func:`~reviewtrail.ledger.public_key_id`: SHA-256 of the raw
32-byte public key, 64 lowercase hex digits) and ``hash`` the record's envelope hash (64 lowercase
hex digits). The envelope hash covers the header, which covers the payload's hash: one signature
vouches for the whole record, and nothing is re-encoded to check it. The signature is not part of
the header, so the chain rule and every hash are the same whether a record is signed or not.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

__all__ = [
    "RECORD_SIGNATURE_DOMAIN",
    "RecordSignature",
    "RecordSigner",
    "signature_verifies",
    "signed_message",
]

#: The prefix of every signed record message: it keeps a record signature from ever being taken
#: for a signature over anything else the same key signs (a checkpoint, an export).
RECORD_SIGNATURE_DOMAIN = b"reviewtrail-record-v1\x00"


def signed_message(key_id: str, record_hash: str) -> bytes:
    """The bytes a writer signs for the record whose envelope hash is ``record_hash``."""
    return (
        RECORD_SIGNATURE_DOMAIN
        + key_id.encode("utf-8", "backslashreplace")
        + b"\x00"
        + (record_hash.encode("utf-8", "backslashreplace"))
    )


@dataclass(frozen=True, slots=True)
class RecordSignature:
    """A record's signature as stored beside it: the signing key's id and the 64 raw bytes of the
    Ed25519 signature. Values are kept as read: a tampered row keeps its odd ones, and the check
    (:func:`signature_verifies`) refuses them."""

    key_id: str
    value: bytes

    @property
    def base64(self) -> str:
        return base64.b64encode(self.value).decode("ascii")

    def to_json(self) -> dict[str, Any]:
        return {"alg": "ed25519", "keyId": self.key_id, "value": self.base64}


def signature_verifies(key: Ed25519PublicKey, signature: RecordSignature, record_hash: str) -> bool:
    """Whether ``signature`` is ``key``'s over the record with ``record_hash``. A signature of
    another length than 64 bytes never verifies."""
    from cryptography.exceptions import InvalidSignature

    value = signature.value
    if type(value) is not bytes or len(value) != 64 or type(signature.key_id) is not str:
        return False
    try:
        key.verify(value, signed_message(signature.key_id, str(record_hash)))
    except InvalidSignature:
        return False
    return True


class RecordSigner:
    """A writer's private key, used to sign each record it appends (the key is held in memory
    only; it never enters the store)."""

    def __init__(self, key: Ed25519PrivateKey) -> None:
        from reviewtrail.ledger.keys._ed25519 import public_key_id

        self._key = key
        self.public_key: Ed25519PublicKey = key.public_key()
        self.key_id: str = public_key_id(self.public_key)
        self._prefix = RECORD_SIGNATURE_DOMAIN + self.key_id.encode("ascii") + b"\x00"

    @classmethod
    def from_pem(cls, pem: bytes) -> RecordSigner:
        """A signer of the Ed25519 private key in ``pem`` (PKCS#8, unencrypted); another key is
        :class:`~reviewtrail.errors.InvalidInputError` (field ``key``)."""
        from reviewtrail.ledger.keys._ed25519 import load_private_key

        return cls(load_private_key(pem))

    def load(self) -> RecordSigner:
        """Itself (a signer ready to sign; see :class:`~reviewtrail.ledger.FileSigner`)."""
        return self

    def sign(self, record_hash: str) -> RecordSignature:
        """The signature of the record whose envelope hash is ``record_hash``."""
        return RecordSignature(self.key_id, self._key.sign(self._prefix + record_hash.encode("ascii")))

    def __repr__(self) -> str:
        return f"RecordSigner(key_id={self.key_id!r})"
