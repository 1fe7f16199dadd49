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

import typing

from reviewtrail import _face

# Each name is loaded on first use from the module that defines it: the options, the address
# check and the SDK check load no part of the SDK, so a missing SDK is reported as such.
if typing.TYPE_CHECKING:
    from reviewtrail.agents._bind import MCP_PATH as MCP_PATH
    from reviewtrail.agents._bind import Listening as Listening
    from reviewtrail.agents._bind import loopback_address as loopback_address
    from reviewtrail.agents._options import ServerOptions as ServerOptions
    from reviewtrail.agents._outcome import EXIT_META as EXIT_META
    from reviewtrail.agents._sdk import INSTALL_HINT as INSTALL_HINT
    from reviewtrail.agents._sdk import require_mcp as require_mcp
    from reviewtrail.agents._serve import serve_http as serve_http
    from reviewtrail.agents._serve import serve_stdio as serve_stdio
    from reviewtrail.agents._server import SERVER_NAME as SERVER_NAME
    from reviewtrail.agents._server import TOOL_NAMES as TOOL_NAMES
    from reviewtrail.agents._server import WRITE_TOOLS as WRITE_TOOLS
    from reviewtrail.agents._server import Built as Built
    from reviewtrail.agents._server import ReviewtrailServer as ReviewtrailServer
    from reviewtrail.agents._server import build_server as build_server
    from reviewtrail.agents._toolbox import WritesNotAllowedError as WritesNotAllowedError
else:
    __getattr__, __dir__ = _face.lazy(__name__)
