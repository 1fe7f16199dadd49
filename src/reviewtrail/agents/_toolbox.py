"""What every tool call goes through: the writes policy, one call at a time on the server's one
store, and reviewtrail errors turned into tool errors (:mod:`._outcome`).

A write tool called on a server started without ``--allow-writes`` (``run_code`` without
``--allow-run``) is refused before anything is read or written: a tool error, exit 5, field
``allow-writes`` (or ``allow-run``), naming the option that allows it. Calls are served one at a
time (the SDK runs each on a worker thread): a store's connection and its snapshots belong to one
caller at a time. A call waits at most ``call_wait`` seconds (default 30) for the one before it;
then it is refused (exit 5, field ``store``) with nothing read or written, so one heavy call never
holds the others beyond that.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reviewtrail.agents._kernels import KernelPool
from reviewtrail.agents._options import ServerOptions
from reviewtrail.agents._outcome import error_result
from reviewtrail.agents._paths import PathRule
from reviewtrail.agents._signature import strict_parameters
from reviewtrail.config import Settings
from reviewtrail.errors import BackendUnavailableError, ConfigError, ReviewtrailError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from reviewtrail.store import Store

__all__ = ["ServerBusyError", "Toolbox", "WritesNotAllowedError", "refuse_unknown_arguments", "server_paths"]

# Whether a call writes: always, never, or as its arguments say (``verify`` with ``repair``).
Writes = bool | Callable[[dict[str, Any]], bool]


class WritesNotAllowedError(ConfigError):
    """A write tool called on a server that was not started to allow it."""


class ServerBusyError(BackendUnavailableError):
    """A call that waited its limit (``ServerOptions.call_wait``) for another call to finish."""


@dataclass
class Toolbox:
    """The server's store, settings and options, and how a tool is called."""

    store: Store
    settings: Settings
    options: ServerOptions
    lock: threading.Lock = field(default_factory=threading.Lock)
    kernels: KernelPool = field(init=False)
    paths: PathRule = field(init=False)

    def __post_init__(self) -> None:
        self.kernels = KernelPool(self.store)
        self.paths = server_paths(self.settings, self.options)

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
            with self.held(name):
                return fn(**arguments)
        except ReviewtrailError as exc:
            return error_result(exc)

    @contextlib.contextmanager
    def held(self, name: str) -> Iterator[None]:
        """The store, alone, for ``name`` (a tool or a resource): waited for at most
        ``call_wait`` seconds, then refused (exit 5, field ``store``) with nothing done."""
        if not self.lock.acquire(timeout=self.options.call_wait):
            raise ServerBusyError(
                f"another call has held the store for {self.options.call_wait:g} s; {name} was not started "
                "(nothing was read or written): call it again",
                field="store",
            )
        try:
            yield
        finally:
            self.lock.release()

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

            signature = inspect.signature(fn, eval_str=True)
            call.__signature__ = signature.replace(  # type: ignore[attr-defined]
                parameters=strict_parameters(signature.parameters.values())
            )

            annotations = ToolAnnotations(
                read_only_hint=writes is False,
                destructive_hint=False,  # the store is append-only: nothing is ever replaced or deleted
                idempotent_hint=idempotent,
                open_world_hint=runs,
            )
            server.add_tool(call, name=name, description=(fn.__doc__ or "").strip(), annotations=annotations)
            refuse_unknown_arguments(server, name)
            return fn

        return register

    def close(self) -> None:
        self.kernels.close()


def refuse_unknown_arguments(server: MCPServer[Any], name: str) -> None:
    """Make tool ``name`` refuse an argument its input schema does not name (as the command line
    refuses an unknown option): its argument model forbids extra fields, and its published schema
    says so (``additionalProperties: false``)."""
    from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
    from pydantic import ConfigDict

    tool = server._tool_manager.get_tool(name)  # the SDK builds the argument model; only its config changes here
    assert tool is not None
    base = tool.fn_metadata.arg_model
    config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    strict: type[ArgModelBase] = type(base.__name__, (base,), {"model_config": config})
    tool.fn_metadata.arg_model = strict
    tool.parameters = strict.model_json_schema(by_alias=True)


def server_paths(settings: Settings, options: ServerOptions) -> PathRule:
    """The path rule of a server (:mod:`._paths`): its project folder and ``--allow-path`` folders
    as roots; the store's folder, ledger file, CAS folder and signing key, and the secret files and
    folders the command line adds (the user's configuration folder, the capability file and the
    nonce book, read from the environment at the edge), as secrets."""
    from pathlib import Path

    from reviewtrail.config import sqlite_path
    from reviewtrail.tracing.files import project_root

    project = project_root(options.project_dir)
    cas = settings.cas_url
    secrets = [
        settings.store,
        sqlite_path(settings.database_url),
        Path(cas[len("file://") :]) if cas is not None and cas.startswith("file://") else None,
        settings.signing_key,
        *options.secret_paths,
    ]
    return PathRule.build([project, *options.allowed_paths], secrets)
