"""What every tool call goes through: the writes policy, one call at a time on the server's one
store, and reviewtrail errors turned into tool errors (:mod:`._outcome`).

A write tool called on a server started without ``--allow-writes`` (``run_code`` without
``--allow-run``) is refused before anything is read or written: a tool error, exit 5, field
``allow-writes`` (or ``allow-run``), naming the option that allows it. Calls are served one at a
time (the SDK runs each on a worker thread): a store's connection and its snapshots belong to one
caller at a time.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reviewtrail.agents._kernels import KernelPool
from reviewtrail.agents._options import ServerOptions
from reviewtrail.agents._outcome import error_result
from reviewtrail.config import Settings
from reviewtrail.errors import ConfigError, ReviewtrailError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from reviewtrail.store import Store

__all__ = ["Toolbox", "WritesNotAllowedError"]

# Whether a call writes: always, never, or as its arguments say (``verify`` with ``repair``).
Writes = bool | Callable[[dict[str, Any]], bool]


class WritesNotAllowedError(ConfigError):
    """A write tool called on a server that was not started to allow it."""


@dataclass
class Toolbox:
    """The server's store, settings and options, and how a tool is called."""

    store: Store
    settings: Settings
    options: ServerOptions
    lock: threading.Lock = field(default_factory=threading.Lock)
    kernels: KernelPool = field(init=False)

    def __post_init__(self) -> None:
        self.kernels = KernelPool(self.store)

    @property
    def project(self) -> str:
        return self.options.project

    def check_allowed(self, name: str, *, writes: bool, runs: bool) -> None:
        """Refuse (exit 5) a write, or a run, the server's options do not allow."""
        if writes and not self.options.allow_writes:
            raise WritesNotAllowedError(
                f"this call of {name} writes to the store, and this server was started read-only; start it with "
                "'reviewtrail mcp --allow-writes' to allow writes (nothing was written)",
                field="allow-writes",
            )
        if runs and not self.options.allow_run:
            raise WritesNotAllowedError(
                f"{name} runs code in the sandbox, and this server was started without --allow-run; start it "
                "with 'reviewtrail mcp --allow-writes --allow-run' to allow runs (nothing was run or written)",
                field="allow-run",
            )

    def call(self, name: str, fn: Callable[..., Any], arguments: dict[str, Any], *, writes: Writes, runs: bool) -> Any:
        """``fn(**arguments)``, if allowed, alone on the store; a reviewtrail error as a tool error."""
        try:
            self.check_allowed(name, writes=writes(arguments) if callable(writes) else writes, runs=runs)
            with self.lock:
                return fn(**arguments)
        except ReviewtrailError as exc:
            return error_result(exc)

    def tool(
        self, server: MCPServer[Any], *, writes: Writes = False, runs: bool = False, idempotent: bool = False
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register the decorated function as the tool of its name, called through :meth:`call`.
        Its docstring is the tool's description; its signature (or the ``__signature__`` given
        it) is the tool's input schema."""
        from mcp.types import ToolAnnotations

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            name = fn.__name__

            @functools.wraps(fn)
            def call(**arguments: Any) -> Any:
                return self.call(name, fn, arguments, writes=writes, runs=runs)

            annotations = ToolAnnotations(
                read_only_hint=writes is False,
                destructive_hint=False,  # the store is append-only: nothing is ever replaced or deleted
                idempotent_hint=idempotent,
                open_world_hint=runs,
            )
            server.add_tool(call, name=name, description=(fn.__doc__ or "").strip(), annotations=annotations)
            return fn

        return register

    def close(self) -> None:
        self.kernels.close()
