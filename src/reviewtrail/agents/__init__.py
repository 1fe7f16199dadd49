"""The MCP server for agents (``reviewtrail mcp``), built with the official MCP Python SDK 2.x.

Agents (Claude Code, Codex, Cursor, a plain Python client) reach reviewtrail's library through
tools that make the same calls as the commands, with the same checks and errors, and through
read-only resources. The SDK is an optional dependency (``pip install 'reviewtrail[mcp]'``),
loaded only by the modules that serve: importing this package, or :func:`require_mcp`, does
not import it.

Public API::

    from reviewtrail.agents import ServerOptions, require_mcp, serve_stdio, serve_http
    from reviewtrail.agents import build_server  # the server over an open store (tests: mcp.Client(server))
"""

import importlib
import typing

if typing.TYPE_CHECKING:
    from reviewtrail.agents._bind import MCP_PATH, Listening, loopback_address
    from reviewtrail.agents._options import ServerOptions
    from reviewtrail.agents._outcome import EXIT_META
    from reviewtrail.agents._sdk import INSTALL_HINT, require_mcp
    from reviewtrail.agents._serve import serve_http, serve_stdio
    from reviewtrail.agents._server import (
        SERVER_NAME,
        TOOL_NAMES,
        WRITE_TOOLS,
        Built,
        ReviewtrailServer,
        build_server,
    )
    from reviewtrail.agents._toolbox import WritesNotAllowedError

# Each name is loaded on first use from the module that defines it: the options, the address
# check and the SDK check load no part of the SDK, so a missing SDK is reported as such.
_LAZY = {
    "EXIT_META": "_outcome",
    "INSTALL_HINT": "_sdk",
    "MCP_PATH": "_bind",
    "SERVER_NAME": "_server",
    "TOOL_NAMES": "_server",
    "WRITE_TOOLS": "_server",
    "Built": "_server",
    "Listening": "_bind",
    "ReviewtrailServer": "_server",
    "ServerOptions": "_options",
    "WritesNotAllowedError": "_toolbox",
    "build_server": "_server",
    "loopback_address": "_bind",
    "require_mcp": "_sdk",
    "serve_http": "_serve",
    "serve_stdio": "_serve",
}


def __getattr__(name: str) -> typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "EXIT_META",
    "INSTALL_HINT",
    "MCP_PATH",
    "SERVER_NAME",
    "TOOL_NAMES",
    "WRITE_TOOLS",
    "Built",
    "Listening",
    "ReviewtrailServer",
    "ServerOptions",
    "WritesNotAllowedError",
    "build_server",
    "loopback_address",
    "require_mcp",
    "serve_http",
    "serve_stdio",
]
