"""The public proxy's rules, as plain functions of plain values (docs/human-review.md, "The public
proxy"): no sockets, files or clocks here.

- :func:`csrf_token` / :func:`csrf_matches`: a session's CSRF token is the HMAC of its session id
  under the proxy's session secret, compared in constant time; a token of another session, or
  any token for a session without write state, never matches.
- :func:`actor_id`: the pseudonymous reviewer id a login is recorded as (``oidc-`` and the first
  16 hex digits of an HMAC of issuer and subject); never the subject or an e-mail address.
- :func:`allowlisted`: whether a login's subject, or its verified e-mail address, is on the
  allowlist.
- :func:`decision_body`: the one write the browser may ask for, a bounded JSON object of exactly
  the decision schema's fields (anything else refused), and the body the proxy forwards with its
  ``reviewer`` added.
- :func:`forwarded_request_headers` / :func:`forwarded_response_headers`: what crosses the proxy
  (an allowlist one way; hop-by-hop headers and cookies never).
- :func:`local_path`: where a login may return to (a path on the proxy, never another site).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable

from reviewtrail.errors import InvalidInputError
from reviewtrail.web._capability import MAX_BODY_BYTES
from reviewtrail.web._decision import RepeatedKeyError, SignedDecision, parse_submission

__all__ = [
    "BODY_LIMIT",
    "RefusedBody",
    "actor_id",
    "allowlisted",
    "csrf_matches",
    "csrf_token",
    "decision_body",
    "forwarded_request_headers",
    "forwarded_response_headers",
    "local_path",
    "normalize_allow_entry",
]

BODY_LIMIT = MAX_BODY_BYTES  # bytes of a decision body; a larger one is refused (413) unforwarded
_ACTOR_HEX = 16

# Request headers a forwarded GET or HEAD may carry to the inspector: content negotiation and
# conditional requests. Everything else (Cookie, Authorization, Forwarded, X-*, ...) stays here.
_REQUEST_ALLOW = frozenset({"accept", "accept-language", "if-none-match", "if-modified-since", "range", "if-range"})
# Response headers never passed back: hop-by-hop (RFC 9110 7.6.1), cookies, and lengths and
# encodings the proxy sets itself for the body it sends.
_RESPONSE_DROP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "set-cookie",
        "set-cookie2",
        "content-length",
        "content-encoding",
        "server",
        "date",
    }
)


def _hmac(secret: bytes, purpose: str, *parts: str) -> str:
    message = "\x00".join((purpose, *parts)).encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def csrf_token(secret: bytes, session_id: str) -> str:
    """The CSRF token of session ``session_id``: HMAC-SHA256 of the id under ``secret``, in hex."""
    return _hmac(secret, "reviewtrail-proxy-csrf", session_id)


def csrf_matches(secret: bytes, session_id: str, given: str | None) -> bool:
    """Whether ``given`` is the CSRF token of ``session_id``, compared in constant time."""
    if not given or not session_id:
        return False
    return hmac.compare_digest(given.encode(), csrf_token(secret, session_id).encode())


def actor_id(secret: bytes, issuer: str, subject: str) -> str:
    """The pseudonymous reviewer id of the login ``subject`` at ``issuer``: stable for one
    proxy secret, unlinkable to the subject without it."""
    return "oidc-" + _hmac(secret, "reviewtrail-proxy-actor", issuer, subject)[:_ACTOR_HEX]


def normalize_allow_entry(entry: str) -> str:
    """An allowlist entry as compared: e-mail addresses case-insensitively, subjects as given."""
    text = entry.strip()
    return text.lower() if "@" in text else text


def allowlisted(allow: Iterable[str], subject: str, email: str | None, email_verified: bool) -> bool:
    """Whether a login is on the allowlist: by its subject, or by its e-mail address when the
    provider says the address is verified."""
    entries = {normalize_allow_entry(e) for e in allow if e.strip()}
    if subject and subject in entries:
        return True
    return bool(email and email_verified and normalize_allow_entry(email) in entries)


def local_path(target: str | None) -> str:
    """``target`` if it is a path on this site (``/...``, not ``//host`` nor with a backslash or
    control character), else ``/``."""
    if not target or not target.startswith("/") or target.startswith("//"):
        return "/"
    if "\\" in target or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in target):
        return "/"
    return target


class RefusedBody(ValueError):
    """A decision body the proxy will not forward: its HTTP status, the field at fault and why."""

    def __init__(self, status: int, message: str, field: str = "body") -> None:
        super().__init__(message)
        self.status = status
        self.field = field


def decision_body(raw: bytes, reviewer: str, *, limit: int = BODY_LIMIT) -> bytes:
    """The body to forward for the browser's ``raw`` body: the decision schema's fields as given
    (:class:`~reviewtrail.web._decision.DecisionSubmission`: unknown fields refused) and
    ``reviewer``, as compact JSON. :class:`RefusedBody` with 413 past ``limit`` bytes, 400 for a
    key given twice in one object (at any depth), 422 for anything else that is not a decision,
    naming the first field at fault."""
    if len(raw) > limit:
        raise RefusedBody(413, f"a decision body is at most {limit} bytes")
    try:
        submission = parse_submission(raw)
        fields = submission.model_dump(mode="json", by_alias=True, exclude_unset=True, exclude_none=True)
        signed = SignedDecision.model_validate({**fields, "reviewer": reviewer}, by_alias=True)
    except RepeatedKeyError as exc:
        raise RefusedBody(400, str(exc), exc.field or "body") from None
    except InvalidInputError as exc:
        raise RefusedBody(422, str(exc), exc.field or "body") from None
    return signed.model_dump_json(by_alias=True, exclude_unset=True, exclude_none=True).encode()


def forwarded_request_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The headers of a browser's GET or HEAD that go on to the inspector: an allowlist
    (content negotiation, conditional requests), so cookies, credentials, tokens and proxy
    headers never do."""
    return {name.lower(): value for name, value in headers if name.lower() in _REQUEST_ALLOW}


def forwarded_response_headers(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The inspector's response headers the browser gets: all but hop-by-hop ones (and those the
    ``Connection`` header names), cookies, and the length and encoding the proxy sets itself."""
    pairs = [(name.lower(), value) for name, value in headers]
    named = {token.strip().lower() for name, value in pairs if name == "connection" for token in value.split(",")}
    return [(name, value) for name, value in pairs if name not in _RESPONSE_DROP and name not in named]
