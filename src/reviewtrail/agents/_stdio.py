"""The stdio transport's input, bounded and answered: every request gets a response.

The SDK reads one JSON-RPC message per line of stdin and drops a line it cannot parse without a
word, so a request holding a lone surrogate (``"\\ud800"``: JSON, but not Unicode text) or
invalid UTF-8 was never answered, and a line had no size limit. Here each line is read at most
:data:`MESSAGE_MAX` bytes and checked before the SDK sees it. A line refused for its size, its
bytes or its JSON is replaced by a request of the same id to :data:`REFUSED_METHOD`, whose
handler (:func:`refused_handler`) answers with a JSON-RPC error naming the problem: invalid
params (-32602) for text that is not Unicode, parse error (-32700) otherwise. A refused line whose
id cannot be read is answered on stderr only (JSON-RPC gives it no id to answer).

Standard input is taken over as the SDK takes it: the server reads a private duplicate of fd 0,
and fd 0 points at the null device while serving, so child processes read EOF, never the wire.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Iterator
from typing import IO, Any

__all__ = ["MESSAGE_MAX", "REFUSED_METHOD", "BoundedLines", "checked_line", "claimed_stdin"]

#: The most bytes of one message (one line) on stdio. Over HTTP the SDK's own limit holds (4 MiB).
MESSAGE_MAX = 16 << 20
#: The method a refused request is answered through.
REFUSED_METHOD = "reviewtrail/refused"
PARSE_ERROR = -32700
INVALID_PARAMS = -32602
_CHUNK = 1 << 20


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def _refusal(request_id: object, code: int, reason: str) -> str:
    if request_id is None:
        sys.stderr.write(f"reviewtrail mcp: a message was refused and has no id to answer: {reason}\n")
        return ""
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": REFUSED_METHOD, "params": {"code": code, "reason": reason}}
    )


def _request_id(doc: object) -> object:
    found = doc.get("id") if isinstance(doc, dict) else None
    return found if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)) else None


# The id of a message that cannot be parsed, where it stands before the params (a JSON-RPC
# request's own members): enough to answer it. A number or a short string, as JSON-RPC allows.
_ID = re.compile(
    rb'^\s*\{(?:(?!"params"\s*:).){0,4096}?"id"\s*:\s*(-?\d{1,18}(?![\d.eE])|"(?:[^"\\]|\\.){0,256}")', re.S
)


def _scanned_id(raw: bytes) -> object:
    found = _ID.match(raw)
    if found is None:
        return None
    try:
        value = json.loads(found.group(1).decode("utf-8", "replace"))
    except ValueError:
        return None
    return value if isinstance(value, str | int) else None


def _parsed(raw: bytes) -> object:
    try:
        return json.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None


def checked_line(raw: bytes) -> str:
    """The line to hand the SDK for the stdin line ``raw``: itself when it parses as a JSON-RPC
    message, else a request to :data:`REFUSED_METHOD` with its id (read from the JSON, or found
    before its params when it does not parse), or ``""`` when it has none."""
    import mcp_types

    raw = raw.removeprefix(b"\xef\xbb\xbf")  # a byte order mark is not part of the message
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        request_id = _request_id(_parsed(raw)) or _scanned_id(raw)
        return _refusal(request_id, PARSE_ERROR, f"the message is not UTF-8 text (byte {exc.start})")
    if not text.strip():
        return ""
    try:
        mcp_types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        return text
    except ValueError:
        pass
    doc = _parsed(raw)
    if doc is None:
        return _refusal(_scanned_id(raw), PARSE_ERROR, "the message is not JSON (or is nested too deep)")
    request_id = _request_id(doc) or _scanned_id(raw)
    try:
        surrogate = _has_lone_surrogate(doc)
    except RecursionError:
        surrogate = False
    if surrogate:
        return _refusal(
            request_id, INVALID_PARAMS, "the message holds a lone surrogate (\\ud800-\\udfff): text that is not Unicode"
        )
    return _refusal(request_id, PARSE_ERROR, "the message is not a JSON-RPC request, notification or response")


class BoundedLines:
    """The checked lines of a binary stream (:func:`checked_line`), each at most ``most`` bytes;
    an async iterator, as the SDK's stdio transport reads its input."""

    def __init__(self, stream: IO[bytes], most: int = MESSAGE_MAX) -> None:
        self.stream = stream
        self.most = most

    def __aiter__(self) -> BoundedLines:
        return self

    async def __anext__(self) -> str:
        import anyio

        while True:
            line = await anyio.to_thread.run_sync(self._next, abandon_on_cancel=True)
            if line is None:
                raise StopAsyncIteration
            if line:
                return line

    def _next(self) -> str | None:
        raw = self.stream.readline(self.most + 1)
        if not raw:
            return None
        if len(raw) > self.most and not raw.endswith(b"\n"):
            while (rest := self.stream.readline(_CHUNK)) and not rest.endswith(b"\n"):
                pass  # the rest of the line is skipped unread
            return _refusal(_scanned_id(raw), PARSE_ERROR, f"the message is larger than {self.most:,} bytes")
        try:
            return checked_line(raw)
        except Exception as exc:  # a message never stops the server: it is refused, with its id if found
            return _refusal(_scanned_id(raw), PARSE_ERROR, f"the message could not be read ({type(exc).__name__})")


@contextlib.contextmanager
def claimed_stdin() -> Iterator[IO[bytes]]:
    """A private duplicate of fd 0 to read the wire from, with fd 0 on the null device meanwhile."""
    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        with os.fdopen(private, "rb", closefd=False) as wire:
            yield wire
    finally:
        os.dup2(private, 0)
        os.close(private)
