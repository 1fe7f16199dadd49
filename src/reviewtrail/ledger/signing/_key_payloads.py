"""The payload models of the key records (``store.key.declared@1``, ``store.key.revoked@1``,
``store.signatures.required@1``; see :mod:`reviewtrail.ledger.keys._writer_keys`). Pydantic models, loaded only where
key records are validated or their schemas made."""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Literal

from pydantic import Field, model_validator

from reviewtrail.ledger.keys._writer_keys import KEY_DECLARED, KEY_REVOKED, SIGNATURES_REQUIRED
from reviewtrail.ledger.records._model import record_type
from reviewtrail.ledger.records._types import RecordPayload

__all__ = ["KEY_PAYLOADS", "KeyDeclared", "KeyRevoked", "SignaturesRequired"]

_KEY_ID = r"^[0-9a-f]{64}$"


@record_type(KEY_DECLARED)
class KeyDeclared(RecordPayload):
    """A writer's Ed25519 public key: the records after this one may be signed with it."""

    alg: Literal["ed25519"] = Field(description="The key's algorithm; only Ed25519.")
    key_id: str = Field(alias="keyId", pattern=_KEY_ID, description="SHA-256 (hex) of the raw public key.")
    public_key: str = Field(
        alias="publicKey", min_length=44, max_length=44, description="The raw 32-byte public key, base64."
    )
    name: str = Field(min_length=1, max_length=200, description="The writer: a host, a service, a person.")

    @model_validator(mode="after")
    def _key_matches_its_id(self) -> KeyDeclared:
        try:
            raw = base64.b64decode(self.public_key, validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) != 32:
            raise ValueError("publicKey must be the base64 of a 32-byte Ed25519 public key")
        if hashlib.sha256(raw).hexdigest() != self.key_id:
            raise ValueError("keyId must be the SHA-256 (hex) of the public key's 32 bytes")
        return self


@record_type(KEY_REVOKED)
class KeyRevoked(RecordPayload):
    """A writer key withdrawn: a record it signs after this one is invalid."""

    key_id: str = Field(alias="keyId", pattern=_KEY_ID)
    reason: str = Field(min_length=1, max_length=1000)


@record_type(SIGNATURES_REQUIRED)
class SignaturesRequired(RecordPayload):
    """From this record on, every record must be signed by a declared, unrevoked writer key."""


#: The key records' payload models (given to the application's catalog).
KEY_PAYLOADS: tuple[type[RecordPayload], ...] = (KeyDeclared, KeyRevoked, SignaturesRequired)
