"""A verified download in one pass: an object fetched as ranged parts on a few threads, hashed and
written to a local file in order, and accepted only when its bytes hash to its address.

:meth:`reviewtrail.cas.S3Cas.open_verified` uses it for objects larger than one part (smaller
ones come in one GET). At most ``window`` parts are in flight and in memory at once.
"""

from __future__ import annotations

import collections
import hashlib
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO

from reviewtrail.cas._protocol import ByteCallback
from reviewtrail.errors import CorruptObjectError

__all__ = ["GET_PART", "GET_WINDOW", "download_in_parts"]

#: The size of one ranged GET of a verified download.
GET_PART = 8 << 20
#: How many ranged GETs of one download are in flight (and held in memory) at once.
GET_WINDOW = 8


def download_in_parts(
    get_range: Callable[[int, int], bytes],
    size: int,
    hexdigest: str,
    name: str,
    out: IO[bytes],
    *,
    part: int = GET_PART,
    window: int = GET_WINDOW,
    on_bytes: ByteCallback | None = None,
) -> None:
    """Write bytes ``[0, size)`` to ``out`` as ``get_range(first, last)`` gives them (``last``
    inclusive, as HTTP ranges are), hashing them in order; raise :class:`CorruptObjectError`
    naming ``name`` when a part is short or long or the whole does not hash to ``hexdigest``.
    When ``out`` is a file of the operating system, the thread that fetched a part writes it at
    its place (``pwrite``), so hashing in order is all that is left to do one part at a time."""
    digest = hashlib.sha256()
    starts = iter(range(0, size, part))
    pending: collections.deque[tuple[int, Future[bytes]]] = collections.deque()
    at = _file_position(out)

    def fetch(start: int) -> bytes:
        data = get_range(start, min(size, start + part) - 1)
        if at is not None and len(data) == min(size, start + part) - start:
            _pwrite_all(at[0], data, at[1] + start)
        return data

    with ThreadPoolExecutor(max_workers=window, thread_name_prefix="cas-get") as pool:

        def more() -> None:
            start = next(starts, None)
            if start is not None:
                pending.append((start, pool.submit(fetch, start)))

        try:
            for _ in range(window):
                more()
            while pending:
                start, future = pending.popleft()
                data = future.result()
                expected = min(size, start + part) - start
                if len(data) != expected:
                    raise CorruptObjectError(
                        f"object {name} gave {len(data)} bytes at offset {start}, expected {expected}"
                    )
                digest.update(data)
                if at is None:
                    out.write(data)
                if on_bytes is not None:
                    on_bytes(len(data))
                more()
        except BaseException:
            for _, future in pending:
                future.cancel()
            raise
    if at is not None:
        out.seek(at[1] + size)
    if digest.hexdigest() != hexdigest:
        raise CorruptObjectError(f"object {name} does not hash to its address")


def _file_position(out: IO[bytes]) -> tuple[int, int] | None:
    """``(descriptor, offset)`` of a seekable file of the operating system (its buffer flushed),
    or None for any other stream."""
    try:
        fd = out.fileno()
        out.flush()
        return fd, out.tell()
    except (AttributeError, OSError, ValueError):
        return None


def _pwrite_all(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view, offset = view[written:], offset + written
