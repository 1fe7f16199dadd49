"""Where ``reviewtrail mcp --transport http`` may listen: loopback only, like the inspector
(README, "The Review page in a browser").

The address is checked before the SDK is loaded, the store opened or a socket bound: only an IP
literal in the loopback range (``127.0.0.0/8``, ``::1``) or the name ``localhost`` (bound as
``127.0.0.1``, never looked up) is accepted; anything else is exit 2, field ``host``.
"""

from __future__ import annotations

from dataclasses import dataclass

from reviewtrail import _listen
from reviewtrail._listen import http_url

__all__ = ["MCP_PATH", "Listening", "loopback_address"]

MCP_PATH = "/mcp"  # the streamable HTTP endpoint


def loopback_address(host: str) -> str:
    """The loopback IP literal to bind for ``host``; :class:`InvalidInputError` (exit 2, field
    ``host``) for any other address, naming it."""
    return _listen.loopback_host(host, server="the MCP server", instead="use 127.0.0.1, ::1 or localhost")


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
        return http_url(self.host, self.port, MCP_PATH)

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
