"""One SDK call from its start to its record: the request, when it started, and, once it ended, how."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from reviewtrail.instrumentation._active import CallSink, active_reviewer_call
from reviewtrail.instrumentation._answers import Accumulator, Answer, accumulator

if TYPE_CHECKING:
    from reviewtrail.instrumentation._recorder import Endpoint
    from reviewtrail.instrumentation._request import Request
    from reviewtrail.models import CallError, CallOutcome, ModelTurn, RecordedTurn

__all__ = ["Call", "call_error"]

_MESSAGE_LIMIT = 4000


def call_error(exc: BaseException) -> CallError:
    """The record of an exception: its type, message and the HTTP status it carries (if any)."""
    from reviewtrail.models import CallError

    status = getattr(exc, "status_code", None)
    valid = isinstance(status, int) and not isinstance(status, bool) and 100 <= status <= 599
    return CallError(
        type=type(exc).__name__[:200] or "Exception",
        message=str(exc)[:_MESSAGE_LIMIT],
        status=status if valid else None,
    )


class Call:
    """A call in flight. It is recorded once, by :meth:`finish` (or :meth:`finish_async`): the first
    end reported wins, later ones are ignored (a stream read to its end, then closed)."""

    def __init__(self, endpoint: Endpoint, request: Request) -> None:
        self.endpoint = endpoint
        self.request = request
        self.started_at = datetime.now(UTC)
        self._t0 = time.perf_counter()
        self.ended_at: datetime | None = None
        self.duration_ms: int | None = None
        self.answer: Answer | None = None
        self.outcome: CallOutcome | None = None
        self.error: CallError | None = None
        self.recorded: RecordedTurn | None = None
        self.events: Accumulator | None = accumulator(request.api) if request.stream else None
        self.reviewer: CallSink | None = active_reviewer_call()
        if self.reviewer is not None:
            self.reviewer.add(self)

    @property
    def ended(self) -> bool:
        return self.ended_at is not None

    def end(self, answer: Answer | None, outcome: CallOutcome | None = None, exc: BaseException | None = None) -> bool:
        """Note how the call ended (``False``: it had already ended)."""
        if self.ended_at is not None:
            return False
        self.duration_ms = round((time.perf_counter() - self._t0) * 1000)
        self.ended_at = datetime.now(UTC)
        self.answer = answer if answer is not None else (self.events.answer() if self.events is not None else Answer())
        self.outcome = outcome
        self.error = call_error(exc) if exc is not None else None
        return True

    def turn(self) -> ModelTurn:
        from reviewtrail.models import ModelTurn

        answer, request = self.answer or Answer(), self.request
        assert self.ended_at is not None and self.duration_ms is not None
        return ModelTurn(
            endpoint_host=self.endpoint.host,
            provider=self.endpoint.provider,
            requested_model=request.requested_model,
            reported_model=answer.model,
            messages=request.messages,
            system=request.system,
            response_text=answer.text,
            started_at=self.started_at,
            ended_at=self.ended_at,
            duration_ms=self.duration_ms,
            tokens=answer.tokens,
            settings=request.settings,
            response_id=answer.response_id,
            finish_reason=answer.finish_reason,
            outcome=self.outcome,
            error=self.error,
            tool_calls=answer.tool_calls,
        )

    def finish(
        self, answer: Answer | None, outcome: CallOutcome | None = None, exc: BaseException | None = None
    ) -> None:
        """End the call and record it (durable when this returns); nothing when it had ended."""
        if self.end(answer, outcome, exc):
            self.recorded = self.endpoint.recorder.record(self.turn())

    async def finish_async(
        self, answer: Answer | None, outcome: CallOutcome | None = None, exc: BaseException | None = None
    ) -> None:
        """:meth:`finish` with the write in a worker thread, so the event loop keeps running."""
        if self.end(answer, outcome, exc):
            self.recorded = await asyncio.to_thread(self.endpoint.recorder.record, self.turn())

    def fail(self, exc: BaseException) -> None:
        """Record the call as failed with ``exc``; a record that cannot be written is noted on ``exc``
        (which the caller re-raises as it was)."""
        from reviewtrail.errors import ReviewtrailError

        try:
            self.finish(None, "failed", exc)
        except ReviewtrailError as problem:
            exc.add_note(f"reviewtrail: this failed call was not recorded: {problem}")

    async def fail_async(self, exc: BaseException) -> None:
        from reviewtrail.errors import ReviewtrailError

        try:
            await self.finish_async(None, "failed", exc)
        except ReviewtrailError as problem:
            exc.add_note(f"reviewtrail: this failed call was not recorded: {problem}")

    def abandon(self) -> None:
        """The stream was closed or dropped before its end: record what arrived, as incomplete."""
        if not self.ended:
            self.endpoint.recorder.when_safe(lambda: self.finish(None, "incomplete"))

    def see(self, event: Any) -> None:
        if self.events is not None:
            self.events.add(event)
