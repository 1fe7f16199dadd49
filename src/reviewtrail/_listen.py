"""Where a server of the project may listen, and the listening socket itself: one rule for the
inspector (``reviewtrail serve``), the MCP server's HTTP transport and the proxy.

The address is checked before anything is opened or bound: for a loopback-only server, only an
IP literal in the loopback range (``127.0.0.0/8``, ``::1``) or the name ``localhost`` (bound as
``127.0.0.1``, never looked up) is accepted; anything else is exit 2, field ``host``, naming the
address and what to do instead. A port out of range is exit 2 and one that cannot be bound
exit 5, both field ``port``.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

from reviewtrail.errors import BackendUnavailableError, InvalidInputError

__all__ = ["bind_any", "bind_loopback", "check_port", "host_literal", "http_url", "loopback_host"]


def host_literal(host: str) -> str:
    """``host`` as a URL or a ``Host`` header writes it (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host else host


def http_url(host: str, port: int, path: str = "/") -> str:
    """``http://HOST:PORT/PATH`` for a listening address."""
    return f"http://{host_literal(host)}:{port}{path}"


def loopback_host(host: str, *, server: str, instead: str) -> str:
    """The loopback IP literal to bind for ``host``; :class:`InvalidInputError` (exit 2, field
    ``host``) for any other address, naming it, ``server`` (what listens) and ``instead`` (what to
    use)."""
    text = host.strip()
    if text.lower() == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(text.removeprefix("[").removesuffix("]"))
    except ValueError:
        address = None
    if address is None or not address.is_loopback:
        raise InvalidInputError(
            f"{server} listens on loopback only; {host!r} is not a loopback address ({instead})", field="host"
        )
    return str(address)


def bind_loopback(address: str, port: int) -> socket.socket:
    """A listening TCP socket on the loopback ``address`` (checked by :func:`loopback_host`) and
    ``port`` (0: a free port chosen by the system)."""
    check_port(port)
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    return _listen(family, (address, port), f"{address} port {port}")


def bind_any(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host`` (an IP literal or a name) and ``port`` (0: a free one).
    A name that does not resolve is exit 2 (field ``host``)."""
    check_port(port)
    try:
        family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except OSError as exc:
        raise InvalidInputError(f"cannot resolve {host!r}: {exc.strerror or exc}", field="host") from exc
    return _listen(family, address, f"{host} port {port}")


def check_port(port: int) -> None:
    if isinstance(port, bool) or not 0 <= port <= 65535:
        raise InvalidInputError(f"must be from 0 to 65535, got {port}", field="port")


def _listen(family: socket.AddressFamily, address: Any, shown: str) -> socket.socket:
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and a
    # kept-alive connection without it waits ~40 ms for each response after the first.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise BackendUnavailableError(f"cannot listen on {shown}: {exc.strerror or exc}", field="port") from exc
    return sock
