"""The reviewer-call block the current code runs in (a context variable: each thread and each asyncio
task sees its own)."""

from __future__ import annotations

import contextvars
from typing import Any, Protocol

__all__ = ["ACTIVE", "CallSink", "active_reviewer_call"]


class CallSink(Protocol):
    """What a reviewer-call block offers the calls made in it."""

    def add(self, call: Any) -> None: ...


ACTIVE: contextvars.ContextVar[CallSink | None] = contextvars.ContextVar("reviewtrail_reviewer_call", default=None)


def active_reviewer_call() -> CallSink | None:
    """The reviewer call whose block the current code runs in, if any."""
    return ACTIVE.get()
