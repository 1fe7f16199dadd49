"""DSSE (Dead Simple Signing Envelope, v1): the pre-authentication encoding and the JSON envelope. Pure.

A signature covers ``PAE(type, body)``, never the body alone, so a signature made for one
payload type cannot be passed off for another::

    PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body

``LEN`` is the ASCII decimal byte length (no leading zeros) and ``type`` is UTF-8. The JSON
envelope is ``{"payloadType", "payload": base64(body), "signatures": [{"keyid", "sig":
base64(signature)}]}``; readers accept standard and URL-safe base64, as the protocol requires.
Specification: https://github.com/secure-systems-lab/dsse (protocol.md, envelope.md).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reviewtrail.errors import InvalidInputError

__all__ = ["IN_TOTO_PAYLOAD_TYPE", "DsseEnvelope", "DsseSignature", "envelope_json", "pae", "parse_envelope"]

IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"
_FIELDS = ("payloadType", "payload", "signatures")
_B64 = re.compile(r"[A-Za-z0-9+/_-]*={0,2}")


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding of ``payload`` of ``payload_type``: the bytes signed."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


@dataclass(frozen=True)
class DsseSignature:
    """One signature of an envelope: the signer's key id (a hint, never trusted) and the raw signature."""

    keyid: str
    sig: bytes

    def to_json(self) -> dict[str, str]:
        return {"keyid": self.keyid, "sig": base64.b64encode(self.sig).decode("ascii")}


@dataclass(frozen=True)
class DsseEnvelope:
    """A payload, its type and its signatures, as an envelope carries them."""

    payload_type: str
    payload: bytes
    signatures: tuple[DsseSignature, ...]

    @property
    def signed_bytes(self) -> bytes:
        """What each signature covers: :func:`pae` of the payload type and payload."""
        return pae(self.payload_type, self.payload)


def envelope_json(payload_type: str, payload: bytes, signatures: Sequence[DsseSignature]) -> dict[str, Any]:
    """The JSON envelope (standard base64, padded) of ``payload`` with ``signatures``."""
    return {
        "payloadType": payload_type,
        "payload": base64.b64encode(payload).decode("ascii"),
        "signatures": [s.to_json() for s in signatures],
    }


def parse_envelope(value: object) -> DsseEnvelope:
    """Read a JSON envelope (a parsed object); :class:`InvalidInputError` names the field at fault.

    Nothing is verified here: a well-formed envelope with a wrong signature reads the same.
    """
    if not isinstance(value, dict):
        raise InvalidInputError("must be a JSON object {payloadType, payload, signatures}", field="envelope")
    for name in _FIELDS:
        if name not in value:
            raise InvalidInputError("is missing", field=f"envelope.{name}")
    payload_type = value["payloadType"]
    if not isinstance(payload_type, str):
        raise InvalidInputError("must be a string", field="envelope.payloadType")
    payload = _b64(value["payload"], "envelope.payload")
    raw = value["signatures"]
    if not isinstance(raw, list) or not raw:
        raise InvalidInputError("must be a non-empty list of {keyid, sig}", field="envelope.signatures")
    signatures = []
    for i, item in enumerate(raw):
        where = f"envelope.signatures[{i}]"
        if not isinstance(item, dict) or "sig" not in item:
            raise InvalidInputError("must be an object {keyid, sig}", field=where)
        keyid = item.get("keyid", "")
        if not isinstance(keyid, str):
            raise InvalidInputError("must be a string", field=f"{where}.keyid")
        signatures.append(DsseSignature(keyid, _b64(item["sig"], f"{where}.sig")))
    return DsseEnvelope(payload_type, payload, tuple(signatures))


def _b64(value: object, field: str) -> bytes:
    """Standard or URL-safe base64, padded or not."""
    if not isinstance(value, str) or _B64.fullmatch(value) is None:
        raise InvalidInputError("must be base64 text", field=field)
    text = value.rstrip("=").replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidInputError("must be base64 text", field=field) from exc
