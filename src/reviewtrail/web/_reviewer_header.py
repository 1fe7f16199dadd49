"""Who is reading: the reviewer the proxy vouches for on a forwarded GET, signed with the review
capability (docs/human-review.md, "Several reviewers at once").

The Review page serves a signed-in reviewer the next card of their queue, leased to them; for
that the inspector must know who asks, from a request it cannot tell apart from any other on
loopback. So the proxy adds to each GET or HEAD it forwards for a session that may write the
``Reviewtrail-Reviewer`` header (the session's pseudonymous reviewer id) and signs it, as it signs
a decision (:mod:`._capability`): an RFC 9421 signature labelled ``reviewer``, ``hmac-sha256``
under the capability key, covering exactly ``@method``, ``@path``, ``@query`` and
``reviewtrail-reviewer``, with exactly ``created``, ``nonce``, ``keyid`` and ``alg``. The proxy
drops any header of that name a browser sends (its allowlist of forwarded headers).

The inspector reads it only where it draws a card, and only when a capability is configured
(without one it verifies nothing and takes no lease: read-only means read-only). There a request
without the header is anonymous (the campaign's card 1, unleased); a header that is not signed by
the capability, is stale, replays a nonce (claimed once in the write route's nonce book), names
another path or query, or is not a reviewer id is refused (401) before anything is read or
leased.
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewtrail.web._capability import (
    Capability,
    SignatureRefusedError,
    SignedRequest,
    header_fields,
    signed_headers,
    verified,
)
from reviewtrail.web._decision import valid_reviewer

__all__ = ["REVIEWER_COMPONENTS", "REVIEWER_HEADER", "REVIEWER_LABEL", "sign_reviewer", "signed_reviewer"]

REVIEWER_HEADER = "reviewtrail-reviewer"
REVIEWER_LABEL = "reviewer"
REVIEWER_COMPONENTS = ("@method", "@path", "@query", REVIEWER_HEADER)
_SIGNATURE_FIELDS = ("signature", "signature-input")


def sign_reviewer(
    capability: Capability,
    method: str,
    url: str,
    reviewer: str,
    *,
    created: int | None = None,
    nonce: str | None = None,
) -> dict[str, str]:
    """The headers that vouch for ``reviewer`` on ``method url`` (absolute, with its query):
    ``Reviewtrail-Reviewer``, ``Signature-Input`` and ``Signature``."""
    headers = {"Reviewtrail-Reviewer": reviewer}
    return signed_headers(
        capability, method, url, headers, REVIEWER_LABEL, REVIEWER_COMPONENTS, created=created, nonce=nonce
    )


def signed_reviewer(
    capability: Capability, method: str, url: str, headers: Iterable[tuple[str, str]], *, now: float | None = None
) -> tuple[str, SignedRequest] | None:
    """The reviewer ``headers`` vouch for on ``method url``, with the signature's nonce (to claim
    once), or None when they name no reviewer and carry no signature (an anonymous read).
    :class:`SignatureRefusedError` for anything else: a signature missing, by another key, stale,
    over other components or another request, or a value that is not a reviewer id."""
    fields = header_fields(headers)
    if REVIEWER_HEADER not in fields and not any(name in fields for name in _SIGNATURE_FIELDS):
        return None
    if REVIEWER_HEADER not in fields:
        raise SignatureRefusedError("a signature with no reviewer to vouch for", field=REVIEWER_HEADER)
    nonce, created = verified(capability, method, url, fields, REVIEWER_LABEL, REVIEWER_COMPONENTS, now=now)
    reviewer = fields[REVIEWER_HEADER]
    if not valid_reviewer(reviewer):
        raise SignatureRefusedError("not a reviewer id", field=REVIEWER_HEADER)
    return reviewer, SignedRequest(capability.key_id, nonce, created, "")
