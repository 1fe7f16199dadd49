"""RFC 9421 signatures for the write route made by hand, apart from the signing library: any
label, any covered components, any parameters, each signed correctly with the capability's key
(HMAC-SHA256 over the signature base), so what the inspector refuses is the signature's shape,
never its arithmetic. :data:`SHAPES` lists each way a signature can differ from the documented
one, with the field the refusal names and its message."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time

from reviewtrail.web._capability import COVERED_COMPONENTS, DECISION_ROUTE, Capability

__all__ = ["SHAPES", "hand_signed"]

_DATE = "Sun, 06 Dec 2026 00:00:00 GMT"


def _param(value: str | int) -> str:
    return str(value) if isinstance(value, int) else f'"{value}"'


def hand_signed(
    capability: Capability,
    body: bytes,
    *,
    labels: tuple[str, ...] = ("review",),
    covered: tuple[str, ...] = COVERED_COMPONENTS,
    drop: tuple[str, ...] = (),
    extra: dict[str, str | int] | None = None,
    created: int | None = None,
) -> dict[str, str]:
    """The headers of ``POST /api/review/decisions`` with ``body``, signed by ``capability``
    under each of ``labels``, covering ``covered``, with the parameters ``created``, ``nonce``,
    ``keyid`` and ``alg`` less ``drop`` and plus ``extra``."""
    digest = "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode() + ":"
    values = {
        "@method": "POST",
        "@path": DECISION_ROUTE,
        "content-type": "application/json",
        "content-digest": digest,
        "date": _DATE,
    }
    params: dict[str, str | int] = {
        "created": int(time.time()) if created is None else created,
        "keyid": capability.key_id,
        "nonce": secrets.token_urlsafe(24),
        "alg": "hmac-sha256",
    }
    params = {name: value for name, value in params.items() if name not in drop} | (extra or {})
    inner = "(" + " ".join(f'"{name}"' for name in covered) + ")"
    inner += "".join(f";{name}={_param(value)}" for name, value in params.items())
    base = "".join(f'"{name}": {values[name]}\n' for name in covered) + f'"@signature-params": {inner}'
    mac = base64.b64encode(hmac.new(capability.key, base.encode(), hashlib.sha256).digest()).decode()
    return {
        "Content-Type": "application/json",
        "Content-Digest": digest,
        "Date": _DATE,
        "Signature-Input": ", ".join(f"{label}={inner}" for label in labels),
        "Signature": ", ".join(f"{label}=:{mac}:" for label in labels),
    }


_NOT_ONE = "not a parameter of this signature, which carries created, nonce, keyid, alg and nothing else"
_MISSING = "missing; the signature carries created, nonce, keyid, alg"

# name: (keyword arguments of hand_signed, the field the refusal names, its message after the field)
SHAPES: dict[str, tuple[dict[str, object], str, str]] = {
    "extra parameter tag": ({"extra": {"tag": "reviewtrail"}}, "tag", _NOT_ONE),
    "expires an hour ago": ({"extra": {"expires": int(time.time()) - 3600}}, "expires", _NOT_ONE),
    "another label": ({"labels": ("pyhms",)}, "signature", "labelled 'pyhms'; the signature is labelled 'review'"),
    "two labels": (
        {"labels": ("review", "again")},
        "signature",
        "exactly one signature is accepted, labelled 'review'; this request has 2 ('review', 'again')",
    ),
    "no nonce": ({"drop": ("nonce",)}, "nonce", _MISSING),
    "no created": ({"drop": ("created",)}, "created", _MISSING),
    "no keyid": ({"drop": ("keyid",)}, "keyid", _MISSING),
    "no alg": ({"drop": ("alg",)}, "alg", _MISSING),
    "another component covered": (
        {"covered": (*COVERED_COMPONENTS, "date")},
        "signature",
        "covers 'date'; it covers @method, @path, content-type, content-digest and nothing else",
    ),
    "a component left out": (
        {"covered": tuple(name for name in COVERED_COMPONENTS if name != "content-type")},
        "signature",
        "content-type is not covered; it must be",
    ),
}
