"""The inspector's one write route, ``POST /api/review/decisions``: on only when a review
capability is configured (docs/human-review.md, "Writes: the review capability").

In this order, and nothing is appended unless every step passes:

1. the signature over the method, path, content type and body digest, by the configured key
   (:func:`~._capability.verify_decision_signature`: 401);
2. its freshness (``created`` within 60 s either way: 401);
3. its nonce, claimed once in the durable nonce book (a replay: 401);
4. only then the body: at most 64 KiB (413), hashed against the signed digest (401);
5. the fixed decision schema (:class:`~._decision.SignedDecision`: 400, naming the field);
6. :func:`~reviewtrail.human_review.session.decide`, as ``review decide`` calls it, for the reviewer the
   proxy signed and on an item of the campaign version named (its refusals: 400, 404, 409); the
   answer adds whether the item's active decision is export-eligible or evaluation-only
   (``use``, as ``review session`` says it).

A retry with the same submission id records nothing new and answers 200 with the first result;
a new decision answers 201. The answer reveals who produced candidates A and B through the reveal
gate, as ``review decide`` does once the decision is recorded (a producer whose response an open
item still shows is withheld, saying when it is shown), and names the skip it superseded, if any.
The reviewer's lease on the item (:meth:`DecisionWrites.draw`) ends with their decision.

The same authority draws a signed-in reviewer's next card (:meth:`DecisionWrites.draw`): the
reviewer the proxy vouches for (:mod:`._reviewer_header`, its nonce claimed in the same book) is
leased the first card of their queue no one else holds (:func:`~reviewtrail.human_review.session.draw_card`).
Leases are kept beside the store (never in the ledger), on this route's writable store.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from reviewtrail.errors import InvalidInputError, ReviewtrailError
from reviewtrail.web._capability import (
    MAX_BODY_BYTES,
    Capability,
    SignatureRefusedError,
    check_content_digest,
    verify_decision_signature,
)
from reviewtrail.web._decision import SignedDecision, parse_signed_decision
from reviewtrail.web._guard import bounded_body
from reviewtrail.web._nonces import NonceBook

if TYPE_CHECKING:
    from starlette.requests import Request

    from reviewtrail.human_review.session import DecisionResult, DecisionUse, Leases, OwnCounts, QueueCard
    from reviewtrail.store import Store

__all__ = ["DecisionWrites", "TooLargeError"]


class TooLargeError(InvalidInputError):
    """A body longer than the write route reads (HTTP 413)."""


class DecisionWrites:
    """The write route's checks and its one call, over ``store`` (opened for writing, and used by
    this route alone: the inspector's reads have read-only stores of their own). Writes are made
    one at a time, under this route's lock."""

    def __init__(self, store: Store, capability: Capability, nonces: NonceBook, leases: Leases | None = None) -> None:
        self._store = store
        self._capability = capability
        self._nonces = nonces
        self._leases = leases
        self._lock = threading.Lock()

    async def handle(self, request: Request) -> JSONResponse:
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw]
        signed = verify_decision_signature(self._capability, request.method, str(request.url), headers)
        await run_in_threadpool(self._nonces.claim, signed)
        body = await bounded_body(request, MAX_BODY_BYTES)
        if body is None:
            raise TooLargeError(f"at most {MAX_BODY_BYTES} bytes are read", field="body")
        check_content_digest(signed, body)
        submission = parse_signed_decision(body)
        result, use = await run_in_threadpool(self._decide, submission)
        answer = result.to_json() | {"use": {"use": use.use, "reason": use.reason}}
        return JSONResponse(answer, status_code=200 if result.resubmitted else 201)

    def _decide(self, submission: SignedDecision) -> tuple[DecisionResult, DecisionUse]:
        from reviewtrail.human_review.rules import DecisionInput
        from reviewtrail.human_review.session import DecisionUse, decide, decision_use

        with self._lock:
            result = decide(
                self._store,
                submission.item_id,
                DecisionInput.of(dict(submission)),
                submission_id=submission.submission_id,
                reviewer=submission.reviewer,
                campaign=(submission.campaign_id, submission.campaign_version),
            )
            from reviewtrail.human_review.session import reviewer_holder

            self._book().release(submission.item_id, holder=reviewer_holder(submission.reviewer))
            if result.compared_with is not None:
                return result, DecisionUse(
                    "evaluation-only", "a second judgment, recorded for agreement: never exported"
                )
            return result, decision_use(self._store, submission.item_id)

    def reviewer(self, request: Request) -> str | None:
        """The reviewer the proxy vouches for on this GET (its nonce claimed once), or None for
        an anonymous read (no header, or a HEAD); :class:`SignatureRefusedError` (401) for a
        header that is not the capability's fresh signature of this very request."""
        from reviewtrail.web._reviewer_header import signed_reviewer

        if request.method != "GET":
            return None
        query = request.scope.get("query_string", b"").decode("latin-1")
        raw_path = request.scope.get("raw_path") or request.url.path.encode()
        url = "http://inspector" + raw_path.decode("latin-1") + (f"?{query}" if query else "")
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw]
        found = signed_reviewer(self._capability, request.method, url, headers)
        if found is None:
            return None
        reviewer, signed = found
        self._nonces.claim(signed)
        return reviewer

    def draw(self, campaign_id: str, version: int, reviewer: str) -> tuple[QueueCard | None, OwnCounts]:
        """``reviewer``'s next card of the campaign version, leased to them (None: none left to
        them), and their own counts."""
        from reviewtrail.human_review.session import draw_card, own_counts

        with self._lock:
            card = draw_card(self._store, campaign_id, version, reviewer, self._book())
            return card, own_counts(self._store.ledger, (campaign_id, version), reviewer)

    def own(self, campaign_id: str, version: int, reviewer: str) -> OwnCounts:
        """``reviewer``'s own counts on the campaign version."""
        from reviewtrail.human_review.campaigns import require_campaign
        from reviewtrail.human_review.session import own_counts

        with self._lock:
            require_campaign(self._store.ledger, campaign_id, version)
            return own_counts(self._store.ledger, (campaign_id, version), reviewer)

    def _book(self) -> Leases:
        """The leases, opened on first use (beside the store: never the ledger)."""
        if self._leases is None:
            from reviewtrail.human_review.session import Leases

            self._leases = Leases(self._store)
        return self._leases

    def close(self) -> None:
        if self._leases is not None:
            self._leases.close()


def refusal_status(exc: ReviewtrailError) -> int | None:
    """The HTTP status of a refusal particular to the write route, else None."""
    if isinstance(exc, SignatureRefusedError):
        return 401
    if isinstance(exc, TooLargeError):
        return 413
    return None
