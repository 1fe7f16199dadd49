"""Signed in-toto exports: a statement as a DSSE envelope signed with an Ed25519 key, and the check of one.

The payload is the statement's RFC 8785 bytes (the same statement always gives the same
bytes), its type ``application/vnd.in-toto+json``; the one signature is Ed25519 over
:func:`~reviewtrail.provenance.export._dsse.pae` of them, its ``keyid`` the SHA-256 (hex) of the raw
public key, as in ledger checkpoints (:func:`reviewtrail.ledger.public_key_id`). Keys are
loaded by the ledger's own rules (:func:`reviewtrail.ledger.load_private_key`); this module
never reads a file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reviewtrail.canonical import canonical_json, loads_json
from reviewtrail.errors import IntegrityError, InvalidInputError
from reviewtrail.ledger import public_key_id
from reviewtrail.provenance.export._common import STATEMENT_TYPE
from reviewtrail.provenance.export._dsse import IN_TOTO_PAYLOAD_TYPE, DsseSignature, envelope_json, pae, parse_envelope

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

__all__ = ["VerifiedStatement", "sign_statement", "statement_bytes", "verify_envelope", "verify_statement_envelope"]


def statement_bytes(statement: dict[str, Any]) -> bytes:
    """The statement as a DSSE payload: its RFC 8785 bytes."""
    return canonical_json(statement, field="statement")


def sign_statement(statement: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    """``statement`` in a DSSE envelope with one Ed25519 signature by ``key``."""
    payload = statement_bytes(statement)
    signature = DsseSignature(public_key_id(key.public_key()), key.sign(pae(IN_TOTO_PAYLOAD_TYPE, payload)))
    return envelope_json(IN_TOTO_PAYLOAD_TYPE, payload, [signature])


@dataclass(frozen=True)
class VerifiedStatement:
    """The statement an envelope carries, and the key ids of the given keys that signed it."""

    statement: dict[str, Any]
    keyids: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"verified": True, "keyids": list(self.keyids), "statement": self.statement}

    def summary(self) -> list[str]:
        """What was verified, in lines: the subjects and signers, and the ledger head it names."""
        subjects = self.statement.get("subject")
        named = [
            f"{s.get('name')} sha256:{(s.get('digest') or {}).get('sha256')}"
            for s in (subjects if isinstance(subjects, list) else [])
            if isinstance(s, dict)
        ]
        lines = [f"verified: {', '.join(named) or 'no subject'}; signed by keyid {', '.join(self.keyids)}"]
        predicate = self.statement.get("predicate")
        head = _at(predicate, "buildDefinition", "internalParameters", "ledgerHead")
        if isinstance(head, dict):
            lines.append(f"ledger head: seq {head.get('seq')} {head.get('hash')}")
        return lines


def _at(value: Any, *keys: str) -> Any:
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def verify_statement_envelope(value: object, public_keys: Sequence[Ed25519PublicKey]) -> VerifiedStatement:
    """The in-toto statement of the envelope ``value`` once a signature verifies against one of
    ``public_keys`` (in the order of the DSSE protocol: signatures, then type, then payload).

    A malformed envelope is :class:`InvalidInputError`; no signature that verifies, a payload
    type other than in-toto's, or a payload that is not an in-toto Statement v1 is
    :class:`IntegrityError`, each naming the field at fault.
    """
    from cryptography.exceptions import InvalidSignature

    if not public_keys:
        raise InvalidInputError("give at least one public key to verify against", field="public_key")
    envelope = parse_envelope(value)
    signed = envelope.signed_bytes
    keyids: list[str] = []
    for key in public_keys:
        for signature in envelope.signatures:
            try:
                key.verify(signature.sig, signed)
            except InvalidSignature:
                continue
            keyids.append(public_key_id(key))
            break
    if not keyids:
        raise IntegrityError(
            "no signature verifies against the given public key(s): the envelope was altered, or signed by another key",
            field="envelope.signatures",
        )
    if envelope.payload_type != IN_TOTO_PAYLOAD_TYPE:
        raise IntegrityError(
            f"is {envelope.payload_type!r}, not {IN_TOTO_PAYLOAD_TYPE!r}", field="envelope.payloadType"
        )
    try:
        statement = loads_json(envelope.payload)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise IntegrityError(f"is not a JSON document ({exc})", field="envelope.payload") from exc
    if not isinstance(statement, dict) or statement.get("_type") != STATEMENT_TYPE:
        raise IntegrityError(f"is not an in-toto statement ({STATEMENT_TYPE})", field="envelope.payload")
    return VerifiedStatement(statement, keyids)


def verify_envelope(data: bytes, public_keys_pem: Sequence[bytes]) -> VerifiedStatement:
    """:func:`verify_statement_envelope` of an envelope file's bytes against public keys (PEM, or
    OpenSSH lines) read by the checkpoints' rules; unreadable input names ``envelope`` or ``public_key``."""
    from reviewtrail.ledger import load_public_key

    keys = [load_public_key(pem) for pem in public_keys_pem]
    try:
        value = loads_json(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InvalidInputError(f"is not a JSON document ({exc})", field="envelope") from exc
    return verify_statement_envelope(value, keys)
