"""Where ``reviewtrail mcp --transport http`` may listen: loopback only, like the inspector
(README, "The Review page in a browser").

The address is checked before the SDK is loaded, the store opened or a socket bound: only an IP
literal in the loopback range (``127.0.0.0/8``, ``::1``) or the name ``localhost`` (bound as
``127.0.0.1``, never looked up) is accepted; anything else is exit 2, field ``host``.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass

from reviewtrail.errors import BackendUnavailableError, InvalidInputError

__all__ = ["MCP_PATH", "Listening", "bind_loopback", "loopback_address"]

MCP_PATH = "/mcp"  # the streamable HTTP endpoint


def loopback_address(host: str) -> str:
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
            f"the MCP server listens on loopback only; {host!r} is not a loopback address "
            "(use 127.0.0.1, ::1 or localhost)",
            field="host",
        )
    return str(address)


def bind_loopback(address: str, port: int) -> socket.socket:
    """A listening TCP socket on the loopback ``address`` and ``port`` (0: a free one). A port out
    of range is exit 2, one in use exit 5, both field ``port``."""
    if isinstance(port, bool) or not 0 <= port <= 65535:
        raise InvalidInputError(f"must be from 0 to 65535, got {port}", field="port")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((address, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise BackendUnavailableError(
            f"cannot listen on {address} port {port}: {exc.strerror or exc}", field="port"
        ) from exc
    return sock


@dataclass(frozen=True)
class Listening:
    """Where an HTTP server listens, announced once its socket is bound."""

    host: str
    port: int
    store: str
    writes: bool
    runs: bool

    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}{MCP_PATH}"

    def to_json(self) -> dict[str, object]:
        return {
            "url": self.url,
            "transport": "http",
            "host": self.host,
            "port": self.port,
            "store": self.store,
            "allowWrites": self.writes,
            "allowRun": self.runs,
        }
