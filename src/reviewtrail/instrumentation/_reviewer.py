"""Reviewer calls: SDK calls made inside ``with reviewer_call(skill=..., purpose=...)`` are also saved
as reviewer traces (the ``.aris/traces`` protocol), when the block ends.

The trace's identity fields follow the protocol: the requested reviewer model is the ``model`` the
request asked for, the reported one only the ``model`` the API's response carried (source
``backend-reported``), never the request's; a response that carried none leaves it null. The
verdict and the completion and positivity flags are the caller's, set on the handle inside the
block once the answer has been judged; they apply to the block's last call. A block that raises
saves its last call with status ``error`` and no flag set (as :func:`reviewtrail.tracing.custody.trace_review`).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Iterable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from reviewtrail.canonical import canonical_json
from reviewtrail.errors import ReviewtrailError
from reviewtrail.instrumentation._active import ACTIVE, CallSink

if TYPE_CHECKING:
    from reviewtrail.instrumentation._calls import Call
    from reviewtrail.tracing.custody import TraceResult
    from reviewtrail.tracing.files import ReviewCall

__all__ = ["ReviewerCall", "reviewer_call"]


class ReviewerCall:
    """Marks the SDK calls of a block as reviewer calls (``with`` or ``async with``), as ``reviewer_call``::

        with reviewtrail.reviewer_call(skill="research-review", purpose="round-1", executor_model="gpt-5") as review:
            answer = client.messages.create(model="claude-sonnet-4-5", max_tokens=2048, messages=[...])
            review.verdict, review.review_completed = "ready", True

    Every call an instrumented client makes in the block is recorded as always (prompt manifest and
    usage, when the call returns) and, when the block ends, saved as one reviewer call of the trace
    run of ``skill`` (``.aris/traces/<skill>/<date>_runNN/NNN-<purpose>.*``) and recorded in the
    store. ``executor`` and ``executor_model`` say who asked for the review (caller-declared);
    ``trace_mode`` (full, meta, off) and ``run_id`` as for ``reviewtrail trace save``, the
    ``ARIS_TRACE_*`` settings otherwise. Names are checked here, before any call. On the handle, set
    ``verdict`` and the flags once the answer is judged; after the block, ``traces`` holds where each
    call was saved.
    """

    def __init__(
        self,
        skill: str,
        purpose: str,
        *,
        executor: str | None = None,
        executor_model: str | None = None,
        thread_id: str | None = None,
        effort: str | None = None,
        files_referenced: Iterable[str] = (),
        trace_mode: str | None = None,
        run_id: str | None = None,
    ) -> None:
        from reviewtrail.tracing.files import ReviewCall, check_name

        check_name(skill, "skill")
        check_name(purpose, "purpose")
        self.skill, self.purpose = skill, purpose
        self._facts = ReviewCall(
            skill=skill,
            purpose=purpose,
            executor=executor,
            executor_model=executor_model,
            thread_id=thread_id,
            effort=effort,
            files_referenced=list(files_referenced),
        )
        self._facts.validate()  # the caller's facts, checked before any call is made
        self.trace_mode, self.run_id = trace_mode, run_id
        self.verdict: str | None = None
        self.review_completed = False
        self.review_scope_complete = False
        self.review_positive = False
        self.calls: list[Call] = []
        self.traces: list[TraceResult] = []
        self._token: contextvars.Token[CallSink | None] | None = None

    def add(self, call: Any) -> None:
        self.calls.append(call)

    def __enter__(self) -> ReviewerCall:
        self._token = ACTIVE.set(self)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._leave()
        try:
            self._save(exc)
        except ReviewtrailError as problem:
            self._raise_or_note(exc, problem)

    async def __aenter__(self) -> ReviewerCall:
        return self.__enter__()

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._leave()
        try:
            await asyncio.to_thread(self._save, exc)
        except ReviewtrailError as problem:
            self._raise_or_note(exc, problem)

    def _leave(self) -> None:
        if self._token is not None:
            ACTIVE.reset(self._token)
            self._token = None

    @staticmethod
    def _raise_or_note(exc: BaseException | None, problem: ReviewtrailError) -> None:
        if exc is None:
            raise problem
        exc.add_note(f"reviewtrail: the reviewer trace was not saved: {problem}")  # the block's own error goes on

    def _save(self, exc: BaseException | None) -> None:
        for number, call in enumerate(self.calls, start=1):
            review = self._review_call(call, last=number == len(self.calls), exc=exc)
            self.traces.append(call.endpoint.recorder.save_trace(review, mode=self.trace_mode, run_id=self.run_id))

    def _review_call(self, call: Call, *, last: bool, exc: BaseException | None) -> ReviewCall:
        import msgspec

        answer, request = call.answer, call.request
        status, error = "ok", None
        if call.error is not None:
            status, error = "error", {"type": call.error.type, "message": call.error.message}
        elif not call.ended:
            status = "incomplete"  # a stream still open when the block ended: what arrived so far
        elif call.outcome == "incomplete":
            status = "incomplete"
        if answer is None and call.events is not None:
            answer = call.events.answer()
        review = msgspec.structs.replace(
            self._facts,
            prompt=canonical_json(request.prompt_document(), field="prompt").decode("utf-8"),
            response=(answer.text if answer is not None else "").encode("utf-8"),
            backend=call.endpoint.backend,
            tool=request.tool,
            requested_reviewer_model=request.requested_model,
            reported_reviewer_model=answer.model if answer is not None else None,
            model=request.requested_model,
            status=status,
            error=error,
            input_tokens=answer.tokens.input_tokens if answer is not None else None,
            output_tokens=answer.tokens.output_tokens if answer is not None else None,
            started_at=call.started_at.astimezone(),
            ended_at=call.ended_at.astimezone() if call.ended_at is not None else None,
            duration_ms=call.duration_ms,
            files_referenced=list(self._facts.files_referenced),
            prompt_manifest_id=call.recorded.prompt_manifest.envelope.id if call.recorded is not None else None,
        )
        if last and exc is not None:
            review.status, review.error = "error", {"type": type(exc).__name__, "message": str(exc)}
        elif last and status == "ok":
            review.verdict = self.verdict
            review.review_completed = self.review_completed
            review.review_scope_complete = self.review_scope_complete
            review.review_positive = self.review_positive
        return review


reviewer_call = ReviewerCall
