"""The S3 CAS's bytes on their way out: hashed, spooled, sent as parts, sent on threads.

:func:`send_parts` sends a large object as the parts of one multipart upload: the parts are read
in order by the calling thread (which hashes them) and sent by a pool of threads, with at most
``window`` parts in memory at once. The caller compares the hash of what was sent with the
address it created the upload for before completing it, so a file that changed between hashing
and sending is never published under the old address. :func:`hash_file` and
:func:`spool_stream` make the one reading pass of ``put_file`` and ``put_stream``;
:func:`run_all` sends the objects of ``put_many`` on a pool of threads.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import IO

from reviewtrail.cas._protocol import CHUNK, ByteCallback

__all__ = ["SentParts", "hash_file", "read_exact", "run_all", "send_parts", "spool_stream"]

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
    size: int,
    on_bytes: ByteCallback | None = None,
) -> SentParts:
    """Read ``source`` in parts of ``part_size`` bytes and send each with ``send``, ``window`` at
    once: a new part is read as soon as any part in flight is done (not only the oldest, so one
    slow part does not hold the others' slots). The reading stops at end of file or one byte past
    the ``size`` the object was hashed at, so a source that grows (or became an endless device)
    is sent no further than that; the caller sees the size differ.

    ``on_bytes`` is told each part's size once the server has it. The first failure stops the
    reading, cancels the parts not yet started, waits for those being sent and is raised; the
    caller aborts the upload.
    """
    h = hashlib.sha256()
    etags: dict[int, str] = {}
    limit, size = size + 1, 0
    inflight: dict[cf.Future[str], tuple[int, int]] = {}
    pool = cf.ThreadPoolExecutor(max_workers=max(1, window), thread_name_prefix="rt-s3-part")

    def settle(done: Iterable[cf.Future[str]]) -> None:
        for future in done:
            number, length = inflight.pop(future)
            etags[number] = future.result()
            if on_bytes is not None:
                on_bytes(length)

    try:
        number = 0
        while True:
            want = min(part_size, limit - size)
            data = read_exact(source, want)
            if not data and number > 0:
                break
            number += 1
            h.update(data)
            size += len(data)
            inflight[pool.submit(send, number, data)] = (number, len(data))
            if len(inflight) >= window:
                settle(cf.wait(inflight, return_when=cf.FIRST_COMPLETED).done)
            if len(data) < part_size:
                break
        while inflight:
            settle(cf.wait(inflight, return_when=cf.FIRST_COMPLETED).done)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    parts: list[dict[str, object]] = [{"PartNumber": n, "ETag": etags[n]} for n in sorted(etags)]
    return SentParts(parts, h.hexdigest(), size)


def hash_file(fh: IO[bytes], *, keep: int) -> tuple[str, int, bytes | None]:
    """Hash an open file to its end: ``(hex, size, its bytes)``, the bytes only when ``size <= keep``."""
    h = hashlib.sha256()
    size = 0
    kept: list[bytes] | None = []
    while chunk := fh.read(CHUNK):
        h.update(chunk)
        size += len(chunk)
        if kept is not None:
            kept.append(chunk)
            if size > keep:
                kept = None
    return h.hexdigest(), size, None if kept is None else b"".join(kept)


def spool_stream(stream: IO[bytes], *, keep: int, spool_dir: str | None) -> tuple[str, int, bytes | str]:
    """Read ``stream`` once, hashing: ``(hex, size, its bytes)`` when ``size <= keep``, else the
    bytes are in a new temporary file in ``spool_dir`` and its path comes third (the caller
    removes it). Memory holds at most ``keep`` bytes and a chunk; a failure removes the file."""
    h = hashlib.sha256()
    size = 0
    kept: list[bytes] = []
    spool: IO[bytes] | None = None
    path = ""
    try:
        while chunk := stream.read(CHUNK):
            h.update(chunk)
            size += len(chunk)
            if spool is not None:
                spool.write(chunk)
                continue
            kept.append(chunk)
            if size > keep:
                import tempfile

                fd, path = tempfile.mkstemp(dir=spool_dir, prefix="reviewtrail-s3-put-")
                spool = os.fdopen(fd, "wb")
                spool.writelines(kept)
                kept = []
        if spool is None:
            return h.hexdigest(), size, b"".join(kept)
        spool.close()
    except BaseException:
        if spool is not None:
            spool.close()
            os.unlink(path)
        raise
    return h.hexdigest(), size, path


def run_all(tasks: list[Callable[[], None]], concurrency: int) -> None:
    """Run ``tasks`` on up to ``concurrency`` threads; the first failure (in task order) is raised
    once the tasks already running have ended, and the others are not started."""
    if len(tasks) <= 1 or concurrency == 1:
        for task in tasks:
            task()
        return
    pool = cf.ThreadPoolExecutor(max_workers=min(concurrency, len(tasks)), thread_name_prefix="rt-s3-put")
    try:
        futures = [pool.submit(task) for task in tasks]
        cf.wait(futures, return_when=cf.FIRST_EXCEPTION)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    for future in futures:
        if not future.cancelled() and future.exception() is not None:
            future.result()
