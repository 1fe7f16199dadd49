"""Where the inspector may listen: loopback only (docs/human-review.md, "The inspector").

The address is checked before anything is opened or bound: only an IP literal in the loopback
range (``127.0.0.0/8``, ``::1``) or the name ``localhost`` (bound as ``127.0.0.1``, never looked
up) is accepted. Anything else is refused with exit 2, field ``host``, naming the address.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

from reviewtrail.errors import InvalidInputError

__all__ = ["bind_any", "bind_loopback", "host_literal", "http_url", "loopback_host"]


def host_literal(host: str) -> str:
    """``host`` as a URL or a ``Host`` header writes it (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host else host


def http_url(host: str, port: int) -> str:
    """``http://HOST:PORT/`` for a listening address."""
    return f"http://{host_literal(host)}:{port}/"


def loopback_host(host: str) -> str:
    """The loopback IP literal to bind for ``host``; :class:`InvalidInputError` (exit 2, field
    ``host``) for any other address, naming it."""
    text = host.strip()
    if text.lower() == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(text.removeprefix("[").removesuffix("]"))
    except ValueError:
        address = None
    if address is None or not address.is_loopback:
        raise InvalidInputError(
            f"the inspector listens on loopback only; {host!r} is not a loopback address "
            "(use 127.0.0.1, ::1 or localhost; put 'reviewtrail proxy' in front of it for other machines)",
            field="host",
        )
    return str(address)


def bind_loopback(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host`` (checked by :func:`loopback_host`) and ``port`` (0: a
    free port chosen by the system). A port out of range is exit 2, field ``port``; a port in
    use is exit 5, field ``port``."""
    address = loopback_host(host)
    _check_port(port)
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    return _listen(family, (address, port), f"{address} port {port}")


def bind_any(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host`` (an IP literal or a name) and ``port`` (0: a free one),
    for the proxy. A port out of range or a name that does not resolve is exit 2 (field ``port``,
    ``host``); an address that cannot be bound is exit 5."""
    _check_port(port)
    try:
        family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except OSError as exc:
        raise InvalidInputError(f"cannot resolve {host!r}: {exc.strerror or exc}", field="host") from exc
    return _listen(family, address, f"{host} port {port}")


def _check_port(port: int) -> None:
    if isinstance(port, bool) or not 0 <= port <= 65535:
        raise InvalidInputError(f"must be from 0 to 65535, got {port}", field="port")


def _listen(family: socket.AddressFamily, address: Any, shown: str) -> socket.socket:
    from reviewtrail.errors import BackendUnavailableError

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
