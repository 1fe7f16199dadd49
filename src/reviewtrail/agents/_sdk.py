"""The official MCP Python SDK (``mcp`` 2.x), an optional dependency: ``pip install 'reviewtrail[mcp]'``.

Only ``reviewtrail mcp`` loads it. Without it (or with an older 1.x, which has no
``mcp.server.mcpserver``), the command stops before anything is opened, exit 5 naming ``mcp``.
"""

from __future__ import annotations

from reviewtrail.errors import ConfigError

__all__ = ["INSTALL_HINT", "require_mcp"]

INSTALL_HINT = "pip install 'reviewtrail[mcp]'"


def require_mcp() -> None:
    """Import the SDK's server; :class:`ConfigError` (exit 5, field ``mcp``) when it is missing."""
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            f"the MCP server needs the official MCP Python SDK, mcp 2.x ({exc}); install it with {INSTALL_HINT}",
            field="mcp",
        ) from exc
