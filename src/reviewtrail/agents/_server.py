"""The MCP server over one open store: its tools and resources, built with the SDK's ``MCPServer``.

:func:`build_server` takes the open store, the settings read at the command line and the
server's :class:`~reviewtrail.agents.ServerOptions`; the caller owns the store and closes the
returned :class:`Built` (its kernels) when the server stops.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, InputRequiredResult, RequestParams
from pydantic import ValidationError

from reviewtrail.agents._options import ServerOptions
from reviewtrail.agents._outcome import invalid_arguments
from reviewtrail.agents._read_tools import register_read_tools
from reviewtrail.agents._record_tools import register_record_tools
from reviewtrail.agents._resources import register_resources
from reviewtrail.agents._review_tools import register_review_tools
from reviewtrail.agents._stdio import REFUSED_METHOD, BoundedLines, claimed_stdin
from reviewtrail.agents._toolbox import Toolbox
from reviewtrail.config import Settings

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context

    from reviewtrail.store import Store

__all__ = ["SERVER_NAME", "TOOL_NAMES", "WRITE_TOOLS", "Built", "ReviewtrailServer", "build_server"]

SERVER_NAME = "reviewtrail"
# Every tool, in the order they are listed; those that write (``record_claims`` unless
# ``dry_run``, ``verify`` only with ``repair``) need --allow-writes, ``run_code`` --allow-run too.
TOOL_NAMES = (
    "declare_artifact",
    "review_checkpoint",
    "run_code",
    "save_trace",
    "record_claims",
    "link_evidence",
    "review_summary",
    "review_queue",
    "review_decide",
    "provenance",
    "verify",
)
WRITE_TOOLS = frozenset(
    {
        "declare_artifact",
        "review_checkpoint",
        "run_code",
        "save_trace",
        "record_claims",
        "link_evidence",
        "review_decide",
    }
)


class ReviewtrailServer(MCPServer[Any]):
    """``MCPServer`` whose refused arguments are reported as every other input error: a tool error
    naming the argument, exit code 2 (:func:`~._outcome.invalid_arguments`); whose stdio input is
    bounded, with a message it cannot parse answered by an error (:mod:`._stdio`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lowlevel_server.add_request_handler(REFUSED_METHOD, RefusedParams, _refused)

    async def run_stdio_async(self) -> None:
        from mcp.server.stdio import stdio_server

        with claimed_stdin() as wire:
            async with stdio_server(stdin=BoundedLines(wire)) as (read_stream, write_stream):  # type: ignore[arg-type]
                lowlevel = self._lowlevel_server
                await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc, UnexpectedToolError) or not isinstance(exc.__cause__, ValidationError):
                raise
            return invalid_arguments(exc.__cause__)


class RefusedParams(RequestParams):
    """What a refused stdin line is replaced by (:func:`~._stdio.checked_line`)."""

    code: int
    reason: str


async def _refused(ctx: Any, params: RefusedParams) -> None:
    raise MCPError(code=params.code, message=params.reason)


@dataclass(frozen=True)
class Built:
    """A server and what it holds (its kernels), closed when the server stops."""

    server: ReviewtrailServer
    toolbox: Toolbox

    def close(self) -> None:
        self.toolbox.close()


def _instructions(options: ServerOptions) -> str:
    mode = "read-only (started without --allow-writes: the write tools are refused)"
    if options.allow_writes:
        mode = "writes allowed" + (", sandboxed runs allowed" if options.allow_run else " (run_code needs --allow-run)")
    return (
        "reviewtrail keeps the chain of custody for judgments about AI work: an append-only, hash-chained ledger "
        "over a content-addressed store. Save every reviewer call with save_trace; run code with run_code and "
        "declare the files it wrote with declare_artifact; record a reply's claims with record_claims and link "
        "them to evidence with link_evidence; review an artifact with review_checkpoint and read review_summary "
        "into your next prompt; trace a version with provenance; check the store with verify. Human review: "
        f"review_queue (blinded cards) and review_decide. This server: {mode}. Errors carry the message, the "
        "field and the exit code of the matching reviewtrail command."
    )


def build_server(store: Store, settings: Settings, options: ServerOptions) -> Built:
    """The server over ``store`` (opened by the caller, read-only unless writes are allowed)."""
    from reviewtrail._version import __version__

    server = ReviewtrailServer(
        SERVER_NAME,
        title="reviewtrail",
        instructions=_instructions(options),
        version=__version__,
        log_level="WARNING",
    )
    box = Toolbox(store, settings, options)
    register_record_tools(server, box)
    register_review_tools(server, box)
    register_read_tools(server, box)
    register_resources(server, box)
    return Built(server, box)
