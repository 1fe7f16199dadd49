"""Running the server: over stdio (the agent starts ``reviewtrail mcp`` and talks over its stdin
and stdout) or streamable HTTP on a loopback address.

The store is opened once, before anything is served (a missing store, an unreachable database:
the command fails then), read-only unless writes are allowed, and closed when the server stops,
with any kernel the server started. Over HTTP the socket is bound here (port 0: a free port) and
handed to uvicorn, so the address announced is the one listened on; the SDK's DNS-rebinding
protection accepts only the loopback names as ``Host`` and ``Origin``.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import TYPE_CHECKING

from reviewtrail._listen import bind_loopback
from reviewtrail.agents._bind import MCP_PATH, Listening, loopback_address
from reviewtrail.agents._options import ServerOptions
from reviewtrail.agents._start import serving
from reviewtrail.config import Settings

if TYPE_CHECKING:
    from reviewtrail.agents._server import Built

__all__ = ["serve_http", "serve_stdio"]


def serve_stdio(settings: Settings, options: ServerOptions, *, announce: Callable[[str], None]) -> None:
    """Serve over stdin and stdout until the client closes them. ``announce`` is told where (the
    store) once the store is open; it must not write to stdout, which carries the protocol."""
    with serving(settings, options) as built:
        announce(str(settings.store))
        built.server.run("stdio")


def serve_http(
    settings: Settings,
    options: ServerOptions,
    host: str,
    port: int,
    *,
    announce: Callable[[Listening], None],
) -> None:
    """Serve streamable HTTP at ``http://HOST:PORT/mcp`` until SIGINT or SIGTERM; ``host`` must be
    a loopback address (exit 2, field ``host``), checked before the store is opened."""
    address = loopback_address(host)
    with serving(settings, options) as built:
        sock = bind_loopback(address, port)
        try:
            announce(
                Listening(address, sock.getsockname()[1], str(settings.store), options.allow_writes, options.allow_run)
            )
            _run_http(built, address, sock)
        finally:
            sock.close()


def _run_http(built: Built, address: str, sock: socket.socket) -> None:
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    shown = f"[{address}]" if ":" in address else address
    hosts = sorted({f"{shown}:*", "127.0.0.1:*", "localhost:*", "[::1]:*"})
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{h}" for h in hosts],
    )
    app = built.server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=security, host=address)
    config = uvicorn.Config(app, log_level="warning", access_log=False, server_header=False, lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
