"""Sending a large object's bytes as the parts of one multipart upload, hashing what is sent.

The parts are read in order by the calling thread (which hashes them) and sent by a pool of
threads, with at most ``window`` parts in memory at once. The caller compares the hash of what
was sent with the address it created the upload for before completing it, so a file that
changed between hashing and sending is never published under the old address.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from reviewtrail.cas._protocol import ByteCallback

__all__ = ["SentParts", "read_exact", "send_parts"]

# Sends one part (its number, its bytes) and returns the ETag the server gave it.
SendPart = Callable[[int, bytes], str]


@dataclass(frozen=True)
class SentParts:
    """What was sent: the parts for ``complete_multipart_upload``, the hash and size of their bytes."""

    parts: list[dict[str, object]]
    hexdigest: str
    size: int


def read_exact(source: IO[bytes], n: int) -> bytes:
    """Up to ``n`` bytes; fewer only at end of file (a raw file may return short reads)."""
    chunks: list[bytes] = []
    left = n
    while left > 0:
        chunk = source.read(left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def send_parts(
    source: IO[bytes],
    send: SendPart,
    *,
    part_size: int,
    window: int,
    on_bytes: ByteCallback | None = None,
) -> SentParts:
    """Read ``source`` to its end in parts of ``part_size`` bytes and send each with ``send``.

    ``on_bytes`` is told each part's size once the server has it (in part order). The first
    failure stops the reading, cancels the parts not yet started, waits for those being sent and
    is raised; the caller aborts the upload.
    """
    h = hashlib.sha256()
    parts: list[dict[str, object]] = []
    size = 0
    pending: deque[tuple[int, int, cf.Future[str]]] = deque()
    pool = cf.ThreadPoolExecutor(max_workers=max(1, window), thread_name_prefix="rt-s3-part")

    def settle_oldest() -> None:
        number, length, future = pending.popleft()
        parts.append({"PartNumber": number, "ETag": future.result()})
        if on_bytes is not None:
            on_bytes(length)

    try:
        number = 0
        while True:
            data = read_exact(source, part_size)
            if not data and number > 0:
                break
            number += 1
            h.update(data)
            size += len(data)
            pending.append((number, len(data), pool.submit(send, number, data)))
            while len(pending) >= window or (pending and pending[0][2].done()):
                settle_oldest()
            if len(data) < part_size:
                break
        while pending:
            settle_oldest()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return SentParts(parts, h.hexdigest(), size)
