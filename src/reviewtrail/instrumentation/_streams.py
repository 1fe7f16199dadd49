"""Streams watched in place: the caller keeps the very stream object the SDK returned.

The SDKs' streams (``openai.Stream``, ``anthropic.Stream`` and their async forms) hand out events
from their ``_iterator``; it is replaced by a generator that looks at each event as it passes and
tells the call how the stream ended:

- read to its end: the call is recorded before the caller's loop sees the end (an async stream's
  write runs in a worker thread), with the usage the stream reported;
- an error from the SDK (a dropped connection, an ``error`` event): recorded as failed with what
  arrived, and the error goes on unchanged;
- closed before its end (``close()``, leaving its ``with`` block, ``break`` then garbage
  collection of the generator): recorded as incomplete with what arrived;
- never read and dropped: recorded as incomplete when the stream is collected, or at exit.
"""

from __future__ import annotations

import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from reviewtrail.instrumentation._calls import Call

__all__ = ["watch_async_stream", "watch_stream"]


def _events(original: Iterator[Any], call: Call) -> Iterator[Any]:
    try:
        for event in original:
            call.see(event)
            yield event
    except GeneratorExit:
        call.abandon()
        close = getattr(original, "close", None)
        if callable(close):
            close()  # release the connection now, as the SDK's own generator does when closed
        raise
    except BaseException as exc:
        call.fail(exc)
        raise
    call.finish(None)


async def _async_events(original: AsyncIterator[Any], call: Call) -> AsyncIterator[Any]:
    try:
        async for event in original:
            call.see(event)
            yield event
    except GeneratorExit:
        call.abandon()
        aclose = getattr(original, "aclose", None)
        if callable(aclose):
            await aclose()
        raise
    except BaseException as exc:
        await call.fail_async(exc)
        raise
    await call.finish_async(None)


def watch_stream(stream: Any, call: Call) -> None:
    """Watch a synchronous SDK stream: its events, its end, its ``close``."""
    stream._iterator = _events(stream._iterator, call)
    original_close: Callable[[], None] = stream.close

    def close() -> None:
        call.abandon()
        original_close()

    stream.close = close
    weakref.finalize(stream, call.abandon)


def watch_async_stream(stream: Any, call: Call) -> None:
    """Watch an asynchronous SDK stream: its events, its end, its ``close``."""
    stream._iterator = _async_events(stream._iterator, call)
    original_close: Callable[[], Awaitable[None]] = stream.close

    async def close() -> None:
        call.abandon()
        await original_close()

    stream.close = close
    weakref.finalize(stream, call.abandon)
