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
- parameters ``created``, ``nonce``, ``keyid`` and ``alg`` (``hmac-sha256``).

Exactly that: one signature, labelled ``review``, covering those four components (each once, none
with a parameter of its own) with those four parameters. Anything more or less (``expires``,
``tag``, another label, a second signature, another component) is refused before the signature
is checked, naming what is wrong.

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
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from http_message_signatures import HTTPMessageSigner, HTTPMessageVerifier, HTTPSignatureKeyResolver, algorithms
from http_message_signatures.exceptions import HTTPMessageSignaturesException

from reviewtrail.errors import ConfigError, InvalidInputError
from reviewtrail.web._private_file import check_folders, read_private_file

__all__ = [
    "CAPABILITY_FILE_ENV",
    "CONTENT_TYPE",
    "COVERED_COMPONENTS",
    "DECISION_METHOD",
    "DECISION_ROUTE",
    "FRESHNESS_SECONDS",
    "LABEL",
    "MAX_BODY_BYTES",
    "PARAMETERS",
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
LABEL = "review"
PARAMETERS = ("created", "nonce", "keyid", "alg")
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
    it. An existing file is refused (exit 6, field ``capability``), and so is a folder another
    user may change (exit 5, as :func:`load_capability` would refuse the file there)."""
    from reviewtrail.errors import ConflictError

    check_folders(path, field="capability", what="the capability file")
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


def load_capability(path: Path, *, owner: int | None = None) -> Capability:
    """The capability in ``path``, read as OpenSSH reads a private key (:mod:`._private_file`).
    Refused with exit 5 (field ``REVIEWTRAIL_REVIEW_CAPABILITY_FILE``, naming the file and what
    is wrong): a missing or unreadable file, a symbolic link, one that is not a regular file, one
    owned by another user than ``owner`` (default: the server's effective uid), one that group or
    others may read or write (its mode is named), one in a folder another user may change, or one
    whose content is not one line of URL-safe base64 holding at least 32 bytes."""
    where = CAPABILITY_FILE_ENV
    raw = read_private_file(path, field=where, what="the capability file", owner=owner)
    try:
        text = raw.decode("ascii").strip()
    except UnicodeDecodeError as exc:
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
    return signed_headers(  # the body adds Content-Digest (RFC 9530, sha-256)
        capability, DECISION_METHOD, url, headers, LABEL, COVERED_COMPONENTS, created=created, nonce=nonce, body=body
    )


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
    problem: another method or path, a missing or malformed signature, more than one, another
    label, covered components other than exactly :data:`COVERED_COMPONENTS`, parameters other
    than exactly :data:`PARAMETERS`, another algorithm, another key, a malformed nonce, a
    ``created`` outside the freshness window, or a signature that does not match."""
    from urllib.parse import urlsplit

    if method != DECISION_METHOD or urlsplit(url).path != DECISION_ROUTE:
        raise SignatureRefusedError(f"only {DECISION_METHOD} {DECISION_ROUTE} is signed", field="@path")
    header_map = header_fields(headers)
    if header_map.get("content-type", "").split(";")[0].strip().lower() != CONTENT_TYPE:
        raise SignatureRefusedError(f"must be {CONTENT_TYPE}", field="content-type")
    nonce, created = verified(capability, method, url, header_map, LABEL, COVERED_COMPONENTS, now=now)
    return SignedRequest(capability.key_id, nonce, created, header_map["content-digest"])


def header_fields(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Request headers by lower-case name, repeated fields joined as one."""
    header_map: dict[str, str] = {}
    for name, value in headers:
        key = name.lower()
        header_map[key] = f"{header_map[key]}, {value}" if key in header_map else value
    return header_map


def signed_headers(
    capability: Capability,
    method: str,
    url: str,
    headers: dict[str, str],
    label: str,
    components: tuple[str, ...],
    *,
    created: int | None = None,
    nonce: str | None = None,
    body: bytes | None = None,
) -> dict[str, str]:
    """``headers`` with the signature of ``method url`` over ``components`` added, labelled
    ``label``, with the parameters :data:`PARAMETERS` (``created`` defaults to now, ``nonce`` to
    32 random bytes)."""
    message = _Message(method, url, headers)
    when = datetime.datetime.fromtimestamp(
        created if created is not None else int(datetime.datetime.now(datetime.UTC).timestamp()), datetime.UTC
    )
    signer = HTTPMessageSigner(signature_algorithm=algorithms.HMAC_SHA256, key_resolver=_Keys(capability))
    signer.sign(
        message,
        key_id=capability.key_id,
        nonce=nonce if nonce is not None else secrets.token_urlsafe(32),
        created=when,
        covered_component_ids=components,
        label=label,
        body=body,
    )
    return dict(headers)


def verified(
    capability: Capability,
    method: str,
    url: str,
    header_map: dict[str, str],
    label: str,
    components: tuple[str, ...],
    *,
    now: float | None = None,
) -> tuple[str, int]:
    """The nonce and creation time of the one signature labelled ``label`` over exactly
    ``components`` with exactly :data:`PARAMETERS`, once it verifies under ``capability`` and is
    fresh; :class:`SignatureRefusedError` naming the problem otherwise."""
    _check_shape(header_map, label, components)
    verifier = HTTPMessageVerifier(signature_algorithm=algorithms.HMAC_SHA256, key_resolver=_Keys(capability))
    verifier.max_clock_skew = datetime.timedelta(days=1)  # the window is checked below, exactly
    try:
        results = verifier.verify(
            _Message(method, url, header_map),
            max_age=None,
            require_components=components,
        )
    except (HTTPMessageSignaturesException, ValueError) as exc:
        if isinstance(exc.__cause__, SignatureRefusedError):
            raise exc.__cause__ from None
        raise SignatureRefusedError(f"the request's signature does not verify: {exc}", field="signature") from None
    # One signature with the four parameters (the shape checked above), a string nonce and an
    # integer created (the library checks their types).
    [result] = results
    params: dict[str, Any] = dict(result.parameters)
    nonce, created = params["nonce"], params["created"]
    if not _NONCE.fullmatch(nonce):
        raise SignatureRefusedError("must be 16 to 128 URL-safe base64 characters", field="nonce")
    clock = now if now is not None else datetime.datetime.now(datetime.UTC).timestamp()
    if abs(clock - created) > FRESHNESS_SECONDS:
        when = "in the future" if created > clock else "ago"
        raise SignatureRefusedError(
            f"the signature was created {abs(clock - created):.0f} s {when}; the window is {FRESHNESS_SECONDS} s "
            "either way",
            field="created",
        )
    return nonce, created


def _refuse_repeats(name: str, context: str) -> None:
    raise ValueError(f"{name!r} given twice")


def _check_shape(header_map: dict[str, str], label: str, components: tuple[str, ...]) -> None:
    """Refuse a ``Signature-Input`` that is not exactly the documented one: one signature
    labelled ``label``, covering ``components`` and carrying :data:`PARAMETERS`, nothing more or
    less."""
    import http_sf

    text = header_map.get("signature-input")
    if text is None:
        raise SignatureRefusedError("missing: the request is not signed", field="signature")
    try:
        parsed: Any = http_sf.parse(text.encode("ascii"), tltype="dictionary", on_duplicate_key=_refuse_repeats)
    except (ValueError, TypeError, UnicodeEncodeError) as exc:
        raise SignatureRefusedError(f"malformed: {exc}", field="signature-input") from None
    members: dict[str, Any] = parsed if isinstance(parsed, dict) else {}
    labels = list(members)
    if len(labels) != 1:
        raise SignatureRefusedError(
            f"exactly one signature is accepted, labelled {label!r}; this request has {len(labels)}"
            + (f" ({', '.join(repr(given) for given in labels)})" if labels else ""),
            field="signature",
        )
    if labels != [label]:
        raise SignatureRefusedError(f"labelled {labels[0]!r}; the signature is labelled {label!r}", field="signature")
    inner, params = members[label]
    if not isinstance(inner, list) or not all(isinstance(value, str) and not ps for value, ps in inner):
        raise SignatureRefusedError(
            "the covered components must be a list of plain component names", field="signature-input"
        )
    covered = [value for value, _ in inner]
    extra = [name for name in covered if name not in components]
    if extra or len(covered) != len(set(covered)):
        named = ", ".join(repr(name) for name in extra) or "a component twice"
        raise SignatureRefusedError(
            f"covers {named}; it covers {', '.join(components)} and nothing else", field="signature"
        )
    for name in components:
        if name not in covered:
            raise SignatureRefusedError(f"{name} is not covered; it must be", field="signature")
    for name in params:
        if name not in PARAMETERS:
            raise SignatureRefusedError(
                f"not a parameter of this signature, which carries {', '.join(PARAMETERS)} and nothing else",
                field=name,
            )
    for name in PARAMETERS:
        if name not in params:
            raise SignatureRefusedError(f"missing; the signature carries {', '.join(PARAMETERS)}", field=name)


def check_content_digest(signed: SignedRequest, body: bytes) -> None:
    """Refuse ``body`` unless the signed ``Content-Digest`` holds its SHA-256 (field
    ``content-digest``)."""
    import http_sf

    try:
        members = http_sf.parse(
            signed.content_digest.encode("ascii"), tltype="dictionary", on_duplicate_key=_refuse_repeats
        )
    except (ValueError, TypeError, UnicodeEncodeError) as exc:
        raise SignatureRefusedError(f"malformed: {exc}", field="content-digest") from None
    member = members.get("sha-256") if isinstance(members, dict) else None
    if not isinstance(member, tuple) or not isinstance(member[0], bytes):
        raise SignatureRefusedError("must carry a sha-256 digest", field="content-digest")
    if not hmac.compare_digest(member[0], hashlib.sha256(body).digest()):
        raise SignatureRefusedError("the body is not the one signed", field="content-digest")
