"""Reading a sandbox's pipes: each on a daemon thread, bounded, never blocking the writer."""

from __future__ import annotations

import os
import threading

__all__ = ["Drain"]


class Drain:
    """Reads one pipe on a daemon thread until EOF, keeping at most ``limit`` bytes per capture.

    A capture ends at EOF or, when it has a sentinel, where the sentinel appears in the
    stream (the sentinel is not kept, nor is anything after it). Bytes arriving while no
    capture is open are dropped.
    """

    def __init__(self, fd: int, name: str, limit: int | None = None) -> None:
        self._fd = fd
        self._cond = threading.Condition()
        self._eof = False
        self._open = False
        self._buf = bytearray()
        self._limit = 0
        self._truncated = False
        self._sentinel = b""
        self._tail = b""
        if limit is not None:
            self.begin(limit)
        threading.Thread(target=self._run, name=name, daemon=True).start()

    def begin(self, limit: int, sentinel: bytes = b"", *, keep: bool = False) -> None:
        """Open a new capture; ``keep`` carries over what the previous one kept."""
        with self._cond:
            if not keep:
                self._buf, self._truncated = bytearray(), False
            self._limit, self._sentinel, self._tail, self._open = limit, sentinel, b"", not self._eof

    def wait(self, timeout: float) -> bool:
        """Whether the current capture ended (sentinel seen or EOF) within ``timeout`` seconds."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._open, timeout)

    def take(self) -> tuple[bytes, bool]:
        with self._cond:
            return bytes(self._buf), self._truncated

    def _keep(self, data: bytes) -> None:
        room = self._limit - len(self._buf)
        self._buf += data[: max(room, 0)]
        self._truncated |= len(data) > room

    def _feed(self, chunk: bytes) -> None:
        if not self._open:
            return
        if not self._sentinel:
            self._keep(chunk)
            return
        data = self._tail + chunk
        at = data.find(self._sentinel)
        if at >= 0:
            self._keep(data[:at])
            self._tail, self._open = b"", False
            self._cond.notify_all()
            return
        cut = max(0, len(data) - len(self._sentinel) + 1)
        self._keep(data[:cut])
        self._tail = data[cut:]

    def _run(self) -> None:
        try:
            while chunk := os.read(self._fd, 1 << 16):
                with self._cond:
                    self._feed(chunk)
        finally:
            os.close(self._fd)
            with self._cond:
                if self._open:
                    self._keep(self._tail)
                self._eof, self._open = True, False
                self._cond.notify_all()
