"""Hostile connections in tests: a crowd of real sockets from one loopback address (Linux routes
all of 127.0.0.0/8 to this machine, so each address is a different client to the server), held
idle or sending a request head a byte at a time, and what the server did with each."""

from __future__ import annotations

import contextlib
import selectors
import socket
import time
from dataclasses import dataclass, field

__all__ = ["Crowd", "Held"]

SLOW_HEAD = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


@dataclass
class Held:
    sock: socket.socket
    slow: bool
    received: bytes = b""
    closed: bool = False  # by the server: end of stream or reset
    sent_at: float = 0.0

    @property
    def refused_busy(self) -> bool:
        return self.received.startswith(b"HTTP/1.1 503") and b"\r\nretry-after: " in self.received.lower()


@dataclass
class Crowd:
    """Connections to ``port`` on 127.0.0.1 from ``source``; slow ones send a byte every ``drip`` s."""

    port: int
    source: str
    drip: float = 0.3
    held: list[Held] = field(default_factory=list)

    def open(self, count: int, *, slow: bool) -> None:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((self.source, 0))
            sock.settimeout(30)
            sock.connect(("127.0.0.1", self.port))
            sock.setblocking(False)
            one = Held(sock, slow)
            if slow:
                self._send(one, SLOW_HEAD)
            self.held.append(one)

    def _send(self, one: Held, data: bytes) -> None:
        with contextlib.suppress(OSError):  # the server's end is closing: the next read tells
            one.sock.send(data)
        one.sent_at = time.monotonic()

    def hold(self, deadline: float) -> bool:
        """Read, and drip bytes on the slow ones, until the server has closed every connection
        (True) or ``deadline`` seconds have passed (False)."""
        selector = selectors.DefaultSelector()
        for one in self.held:
            if not one.closed:
                selector.register(one.sock, selectors.EVENT_READ, one)
        end = time.monotonic() + deadline
        try:
            while time.monotonic() < end:
                if all(one.closed for one in self.held):
                    return True
                for key, _ in selector.select(timeout=0.1):
                    one = key.data
                    try:
                        data = one.sock.recv(65536)
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError:
                        data = b""
                    one.received += data
                    if not data:
                        one.closed = True
                        selector.unregister(one.sock)
                now = time.monotonic()
                for one in self.held:
                    if one.slow and not one.closed and now - one.sent_at >= self.drip:
                        self._send(one, b"a")
            return all(one.closed for one in self.held)
        finally:
            selector.close()

    def close(self) -> None:
        for one in self.held:
            one.sock.close()
