"""The review capability: one HMAC-SHA256 key that signs, per request, the only write the
inspector accepts (docs/human-review.md, "Writes: the review capability").

The key lives in a file named by ``REVIEWTRAIL_REVIEW_CAPABILITY_FILE``, readable by its owner
only, given to exactly two processes: the public proxy, which signs, and the loopback inspector,
which verifies. The file holds one line: at least 32 random bytes in URL-safe base64 (``reviewtrail
serve --new-capability FILE`` writes one). Its key id is derived from the key, so the two sides
agree on it without configuring it, and a mismatched configuration is a signature by another key.

A signed request is an RFC 9421 HTTP Message Signature:

- algorithm ``hmac-sha256``, label ``review``;
- covered components ``@method``, ``@path``, ``content-type`` and ``content-digest`` (RFC 9530,
  ``sha-256``);
- parameters ``created``, ``nonce`` and ``keyid`` (``alg`` may be given and must then say
  ``hmac-sha256``; nothing else).

The inspector checks, before it reads the body: the method and path (exactly ``POST
/api/review/decisions``), the signature, freshness (``created`` at most :data:`FRESHNESS_SECONDS`
in the past or in the future), and the nonce, claimed once in a durable book (:mod:`._nonces`).
Only then does it read the body (at most :data:`MAX_BODY_BYTES`) and check its digest.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import hmac
import os
import re
import secrets
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from http_message_signatures import HTTPMessageSigner, HTTPMessageVerifier, HTTPSignatureKeyResolver, algorithms
from http_message_signatures.exceptions import HTTPMessageSignaturesException

from reviewtrail.errors import ConfigError, InvalidInputError

__all__ = [
    "ALGORITHM",
    "CAPABILITY_FILE_ENV",
    "CONTENT_TYPE",
    "COVERED_COMPONENTS",
    "DECISION_METHOD",
    "DECISION_ROUTE",
    "FRESHNESS_SECONDS",
    "MAX_BODY_BYTES",
    "Capability",
    "SignatureRefusedError",
    "SignedRequest",
    "check_content_digest",
    "load_capability",
    "new_capability",
    "sign_decision",
    "verify_decision_signature",
]

CAPABILITY_FILE_ENV = "REVIEWTRAIL_REVIEW_CAPABILITY_FILE"
DECISION_ROUTE = "/api/review/decisions"
DECISION_METHOD = "POST"
CONTENT_TYPE = "application/json"
COVERED_COMPONENTS = ("@method", "@path", "content-type", "content-digest")
ALGORITHM = "hmac-sha256"
LABEL = "review"
FRESHNESS_SECONDS = 60
MAX_BODY_BYTES = 64 * 1024
MIN_KEY_BYTES = 32
_KEY_ID_CONTEXT = b"reviewtrail review capability v1\x00"
_NONCE = re.compile(r"[A-Za-z0-9_-]{16,128}")


class SignatureRefusedError(InvalidInputError):
    """A request to the write route is not signed by the configured capability, is not fresh,
    replays a nonce, or its body is not the one signed (HTTP 401; nothing is read or appended)."""


@dataclass(frozen=True)
class Capability:
    """The capability key and its derived key id. The key never appears in a repr."""

    key_id: str
    key: bytes = field(repr=False)

    @classmethod
    def from_key(cls, key: bytes) -> Capability:
        if len(key) < MIN_KEY_BYTES:
            raise InvalidInputError(f"the key has {len(key)} bytes; at least {MIN_KEY_BYTES} are needed", field="key")
        digest = hashlib.sha256(_KEY_ID_CONTEXT + key).hexdigest()
        return cls(key_id=f"review-{digest[:16]}", key=key)


def new_capability(path: Path) -> Capability:
    """Write a new capability file at ``path`` (created, never replaced; mode 0600) and return
    it. An existing file is refused (exit 6, field ``capability``)."""
    from reviewtrail.errors import ConflictError

    key = secrets.token_bytes(MIN_KEY_BYTES)
    text = base64.urlsafe_b64encode(key).decode().rstrip("=") + "\n"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise ConflictError(f"{path} exists; a capability file is never replaced", field="capability") from None
    try:
        os.write(fd, text.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    return Capability.from_key(key)


def load_capability(path: Path) -> Capability:
    """The capability in ``path``. Refused with exit 5 (field ``REVIEWTRAIL_REVIEW_CAPABILITY_FILE``,
    naming the file): a missing or unreadable file, one that group or others may read or write
    (its mode is named), one that is not a regular file, or one whose content is not one line of
    URL-safe base64 holding at least 32 bytes."""
    where = CAPABILITY_FILE_ENV
    try:
        info = path.stat()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the capability file ({exc.strerror})", field=where) from None
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{path}: the capability file is not a regular file", field=where)
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise ConfigError(
            f"{path}: mode {mode:04o} lets others read or change the capability; it must be readable by "
            f"its owner only (chmod 600 {path})",
            field=where,
        )
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the capability file ({exc})", field=where) from None
    try:
        if not text or "\n" in text or not re.fullmatch(r"[A-Za-z0-9_-]+={0,2}", text):
            raise ValueError("not URL-safe base64")
        key = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, binascii.Error):
        raise ConfigError(f"{path}: the capability file must hold one line of URL-safe base64", field=where) from None
    if len(key) < MIN_KEY_BYTES:
        raise ConfigError(f"{path}: the key has {len(key)} bytes; at least {MIN_KEY_BYTES} are needed", field=where)
    return Capability.from_key(key)


class _Message:
    """The parts of a request RFC 9421 signs here: method, absolute URL, headers."""

    def __init__(self, method: str, url: str, headers: dict[str, str]) -> None:
        self.method = method
        self.url = url
        self.headers = headers


class _Keys(HTTPSignatureKeyResolver):
    def __init__(self, capability: Capability) -> None:
        self._capability = capability

    def resolve_private_key(self, key_id: str) -> bytes:
        return self.resolve_public_key(key_id)

    def resolve_public_key(self, key_id: str) -> bytes:
        if not hmac.compare_digest(key_id.encode(), self._capability.key_id.encode()):
            raise SignatureRefusedError("signed by a key this inspector does not hold", field="keyid")
        return self._capability.key


def sign_decision(
    capability: Capability, url: str, body: bytes, *, created: int | None = None, nonce: str | None = None
) -> dict[str, str]:
    """The headers that sign ``POST url`` with ``body`` (JSON) under ``capability``:
    ``Content-Type``, ``Content-Digest``, ``Signature-Input`` and ``Signature``. ``created``
    defaults to now, ``nonce`` to 32 random bytes (URL-safe base64)."""
    headers = {"Content-Type": CONTENT_TYPE}
    message = _Message(DECISION_METHOD, url, headers)
    when = datetime.datetime.fromtimestamp(
        created if created is not None else int(datetime.datetime.now(datetime.UTC).timestamp()), datetime.UTC
    )
    signer = HTTPMessageSigner(signature_algorithm=algorithms.HMAC_SHA256, key_resolver=_Keys(capability))
    signer.sign(
        message,
        key_id=capability.key_id,
        nonce=nonce if nonce is not None else secrets.token_urlsafe(32),
        created=when,
        covered_component_ids=COVERED_COMPONENTS,
        label=LABEL,
        body=body,  # adds Content-Digest (RFC 9530, sha-256)
    )
    return dict(headers)


@dataclass(frozen=True)
class SignedRequest:
    """What a verified signature vouches for: its key id, nonce, creation time and the
    ``Content-Digest`` it covers (checked against the body by :func:`check_content_digest`)."""

    key_id: str
    nonce: str
    created: int
    content_digest: str


def verify_decision_signature(
    capability: Capability, method: str, url: str, headers: Iterable[tuple[str, str]], *, now: float | None = None
) -> SignedRequest:
    """Check the signature of a request to the write route from its method, absolute URL and
    headers alone (the body is not read). Refused with :class:`SignatureRefusedError` naming the
    problem: another method or path, a missing or malformed signature, one not covering every
    component of :data:`COVERED_COMPONENTS`, another algorithm, another key, an extra parameter,
    no nonce or a malformed one, a ``created`` outside the freshness window, or a signature that
    does not match."""
    from urllib.parse import urlsplit

    if method != DECISION_METHOD or urlsplit(url).path != DECISION_ROUTE:
        raise SignatureRefusedError(f"only {DECISION_METHOD} {DECISION_ROUTE} is signed", field="@path")
    header_map: dict[str, str] = {}
    for name, value in headers:
        key = name.lower()
        header_map[key] = f"{header_map[key]}, {value}" if key in header_map else value
    if header_map.get("content-type", "").split(";")[0].strip().lower() != CONTENT_TYPE:
        raise SignatureRefusedError(f"must be {CONTENT_TYPE}", field="content-type")
    verifier = HTTPMessageVerifier(signature_algorithm=algorithms.HMAC_SHA256, key_resolver=_Keys(capability))
    verifier.max_clock_skew = datetime.timedelta(days=1)  # the window is checked below, exactly
    try:
        results = verifier.verify(
            _Message(method, url, header_map),
            max_age=None,
            require_components=COVERED_COMPONENTS,
        )
    except (HTTPMessageSignaturesException, ValueError) as exc:
        if isinstance(exc.__cause__, SignatureRefusedError):
            raise exc.__cause__ from None
        raise SignatureRefusedError(f"the request's signature does not verify: {exc}", field="signature") from None
    if len(results) != 1:
        raise SignatureRefusedError("exactly one signature is accepted", field="signature")
    params: dict[str, Any] = dict(results[0].parameters)
    nonce, created = params.get("nonce"), params.get("created")
    if not isinstance(nonce, str) or not _NONCE.fullmatch(nonce):
        raise SignatureRefusedError("must be 16 to 128 URL-safe base64 characters", field="nonce")
    if not isinstance(created, int):
        raise SignatureRefusedError("missing", field="created")
    clock = now if now is not None else datetime.datetime.now(datetime.UTC).timestamp()
    if abs(clock - created) > FRESHNESS_SECONDS:
        when = "in the future" if created > clock else "ago"
        raise SignatureRefusedError(
            f"the signature was created {abs(clock - created):.0f} s {when}; the window is {FRESHNESS_SECONDS} s "
            "either way",
            field="created",
        )
    return SignedRequest(capability.key_id, nonce, created, header_map["content-digest"])


def check_content_digest(signed: SignedRequest, body: bytes) -> None:
    """Refuse ``body`` unless the signed ``Content-Digest`` holds its SHA-256 (field
    ``content-digest``)."""
    import http_sf

    def duplicate(name: str, context: str) -> None:
        raise ValueError(f"{name!r} given twice")

    try:
        members = http_sf.parse(signed.content_digest.encode("ascii"), tltype="dictionary", on_duplicate_key=duplicate)
    except (ValueError, TypeError, UnicodeEncodeError) as exc:
        raise SignatureRefusedError(f"malformed: {exc}", field="content-digest") from None
    member = members.get("sha-256") if isinstance(members, dict) else None
    if not isinstance(member, tuple) or not isinstance(member[0], bytes):
        raise SignatureRefusedError("must carry a sha-256 digest", field="content-digest")
    if not hmac.compare_digest(member[0], hashlib.sha256(body).digest()):
        raise SignatureRefusedError("the body is not the one signed", field="content-digest")
