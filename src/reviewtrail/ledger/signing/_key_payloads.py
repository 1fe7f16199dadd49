"""The payload models of the key records (``store.key.declared@1``, ``store.key.revoked@1``,
``store.signatures.required@1``; see :mod:`reviewtrail.ledger.keys._writer_keys`). msgspec models
(:mod:`reviewtrail._struct`), loaded only where key records are validated or their schemas made."""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Annotated, Literal

from msgspec import Meta

from reviewtrail._struct import FieldProblem, PayloadStruct
from reviewtrail.ledger.keys._writer_keys import KEY_DECLARED, KEY_REVOKED, SIGNATURES_REQUIRED
from reviewtrail.ledger.records._model import record_type

__all__ = ["KEY_PAYLOADS", "KeyDeclared", "KeyRevoked", "SignaturesRequired"]

KeyId = Annotated[str, Meta(pattern=r"^[0-9a-f]{64}$")]


@record_type(KEY_DECLARED)
class KeyDeclared(PayloadStruct, frozen=True, rename="camel"):
    """A writer's Ed25519 public key: the records after this one may be signed with it."""

    alg: Annotated[Literal["ed25519"], Meta(description="The key's algorithm; only Ed25519.")]
    key_id: Annotated[KeyId, Meta(description="SHA-256 (hex) of the raw public key.")]
    public_key: Annotated[str, Meta(min_length=44, max_length=44, description="The raw 32-byte public key, base64.")]
    name: Annotated[str, Meta(min_length=1, max_length=200, description="The writer: a host, a service, a person.")]

    def __post_init__(self) -> None:
        try:
            raw = base64.b64decode(self.public_key, validate=True)
        except (binascii.Error, ValueError, TypeError):
            raw = b""
        if len(raw) != 32:
            raise FieldProblem(None, "publicKey must be the base64 of a 32-byte Ed25519 public key")
        if hashlib.sha256(raw).hexdigest() != self.key_id:
            raise FieldProblem(None, "keyId must be the SHA-256 (hex) of the public key's 32 bytes")


@record_type(KEY_REVOKED)
class KeyRevoked(PayloadStruct, frozen=True, rename="camel"):
    """A writer key withdrawn: a record it signs after this one is invalid."""

    key_id: KeyId
    reason: Annotated[str, Meta(min_length=1, max_length=1000)]


@record_type(SIGNATURES_REQUIRED)
class SignaturesRequired(PayloadStruct, frozen=True):
    """From this record on, every record must be signed by a declared, unrevoked writer key."""


#: The key records' payload models (given to the application's catalog).
KEY_PAYLOADS: tuple[type[PayloadStruct], ...] = (KeyDeclared, KeyRevoked, SignaturesRequired)
