"""A verified download in one pass: an object fetched as ranged parts on a few threads, hashed and
written to a local file in order, and accepted only when its bytes hash to its address.

:meth:`reviewtrail.cas.S3Cas.open_verified` uses it for objects larger than one part (smaller
ones come in one GET). At most ``window`` parts are in flight and in memory at once.
"""

from __future__ import annotations

import collections
import hashlib
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
    naming ``name`` when a part is short or long or the whole does not hash to ``hexdigest``."""
    digest = hashlib.sha256()
    starts = iter(range(0, size, part))
    pending: collections.deque[tuple[int, Future[bytes]]] = collections.deque()
    with ThreadPoolExecutor(max_workers=window, thread_name_prefix="cas-get") as pool:

        def more() -> None:
            start = next(starts, None)
            if start is not None:
                pending.append((start, pool.submit(get_range, start, min(size, start + part) - 1)))

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
                out.write(data)
                if on_bytes is not None:
                    on_bytes(len(data))
                more()
        except BaseException:
            for _, future in pending:
                future.cancel()
            raise
    if digest.hexdigest() != hexdigest:
        raise CorruptObjectError(f"object {name} does not hash to its address")
