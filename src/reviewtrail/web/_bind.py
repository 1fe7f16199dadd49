"""Where the inspector may listen: loopback only (docs/human-review.md, "The inspector"); the
proxy anywhere. The rule and the sockets are :mod:`reviewtrail._listen`'s."""

from __future__ import annotations

import socket

from reviewtrail import _listen

__all__ = ["bind_loopback", "loopback_host"]


def loopback_host(host: str) -> str:
    """The loopback IP literal to bind for ``host``; exit 2, field ``host``, for any other address."""
    return _listen.loopback_host(
        host,
        server="the inspector",
        instead="use 127.0.0.1, ::1 or localhost; put 'reviewtrail proxy' in front of it for other machines",
    )


def bind_loopback(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host`` (checked by :func:`loopback_host`) and ``port`` (0: a
    free port chosen by the system). A port out of range is exit 2, one in use exit 5."""
    return _listen.bind_loopback(loopback_host(host), port)
