"""Driving reviewtrail's MCP server with the SDK's own client (``mcp.Client``): in process over an
open store, as a real ``reviewtrail mcp`` subprocess over stdio, and over streamable HTTP.

Every call goes through the protocol: the client lists the tools, sends the arguments as JSON and
reads the result (structured content, text, ``isError``) as an agent would.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

from reviewtrail.agents import EXIT_META, ServerOptions, build_server
from reviewtrail.app import init_store, open_store
from reviewtrail.config import ReviewerSettings, Settings
from reviewtrail.store import Store

T = TypeVar("T")

CLI = [sys.executable, "-m", "reviewtrail"]


def run(fn: Callable[[], Awaitable[T]]) -> T:
    """``fn()`` on an event loop (the SDK is async; the tests are not)."""
    return anyio.run(fn)


def settings_for(root: Path, *, reviewer: str | None = None) -> Settings:
    """The settings of the store under ``root`` (SQLite inside it), as load_settings gives them."""
    store = root / "store"
    return Settings(
        store=store,
        database_url=f"sqlite:///{store / 'ledger.sqlite'}",
        reviewer=ReviewerSettings(tier=reviewer),
    )


def new_store(root: Path, *, reviewer: str | None = None) -> tuple[Store, Settings]:
    settings = settings_for(root, reviewer=reviewer)
    init_store(settings).close()
    return open_store(settings), settings


def env_for(root: Path, **more: str) -> dict[str, str]:
    """The environment of a ``reviewtrail`` process working on the store under ``root``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWTRAIL_", "ARIS_"))}
    env.update(
        REVIEWTRAIL_STORE=str(root / "store"),
        REVIEWTRAIL_DATABASE_URL=f"sqlite:///{root / 'store' / 'ledger.sqlite'}",
        REVIEWTRAIL_REVIEWER_ID="rev-test",
    )
    env.update(more)
    return env


def error_of(result: CallToolResult) -> dict[str, Any]:
    """The error document of a tool error (``{"type", "field", "message", "exitCode"}``),
    checked against the exit code the result carries in ``_meta``."""
    assert result.is_error, result
    assert result.structured_content is not None, result
    error = result.structured_content["error"]
    assert (result.meta or {}).get(EXIT_META) == error["exitCode"]
    return dict(error)


def ok(result: CallToolResult) -> dict[str, Any]:
    """The structured content of a successful call."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return dict(result.structured_content)


@dataclass
class InProcess:
    """A server over ``store`` in this process, rebuilt per call with the options asked for."""

    store: Store
    settings: Settings
    default_reviewer: str | None = "rev-test"
    calls: list[str] = field(default_factory=list)
    more: dict[str, Any] = field(default_factory=dict)  # more server options (allowed_paths, serve_private...)

    def options(self, writes: bool, runs: bool) -> ServerOptions:
        who = self.default_reviewer
        return ServerOptions(
            allow_writes=writes,
            allow_run=runs,
            default_reviewer=lambda: who,
            project_dir=self.settings.store.parent,  # the test's folder: the store lies inside it, as by default
            **self.more,
        )

    def session(self, fn: Callable[[Client], Awaitable[T]], *, writes: bool = True, runs: bool = True) -> T:
        built = build_server(self.store, self.settings, self.options(writes, runs))

        async def main() -> T:
            async with Client(built.server) as client:
                return await fn(client)

        try:
            return run(main)
        finally:
            built.close()

    def call(self, name: str, arguments: dict[str, Any], *, writes: bool = True, runs: bool = True) -> CallToolResult:
        self.calls.append(name)

        async def one(client: Client) -> CallToolResult:
            return await client.call_tool(name, arguments)

        return self.session(one, writes=writes, runs=runs)

    def resource(self, uri: str) -> Any:
        async def read(client: Client) -> Any:
            found = await client.read_resource(uri)
            return json.loads(found.contents[0].text)  # type: ignore[union-attr]

        return self.session(read, writes=False, runs=False)


def stdio_server(root: Path, *args: str, **env: str) -> Any:
    """A real ``reviewtrail mcp ARGS`` over the store under ``root``, started by the client (its
    stderr to the null device: the SDK's default, the ``sys.stderr`` of when it was imported,
    may be closed by then under a test runner that swaps the streams)."""
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", *args], env=env_for(root, **env), cwd=root)
    return stdio_client(params, errlog=open(os.devnull, "w"))  # the transport owns it until exit


def start_http(root: Path, *args: str) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    """A real ``reviewtrail mcp --transport http --port 0 --json ARGS``; the process and what it
    announced once listening."""
    proc = subprocess.Popen(
        [*CLI, "mcp", "--transport", "http", "--port", "0", "--json", *args],
        cwd=root,
        env=env_for(root),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    text = ""
    while True:
        line = proc.stdout.readline()
        if not line:
            proc.wait(30)
            raise AssertionError(f"the server stopped before listening: {proc.stderr.read() if proc.stderr else ''}")
        text += line
        try:
            return proc, json.loads(text)
        except ValueError:
            continue


def stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(30)


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?")
_TOKEN = re.compile(r"\b[0-9a-f]{32}\b")


def shape(value: Any, *, drop: tuple[str, ...] = ()) -> Any:
    """``value`` with its ids (UUIDs, 32-hex tokens) and times replaced by placeholders and the
    keys ``drop`` removed at any depth: what two recordings of the same input share."""
    if isinstance(value, dict):
        return {k: shape(v, drop=drop) for k, v in value.items() if k not in drop}
    if isinstance(value, list | tuple):
        return [shape(v, drop=drop) for v in value]
    if isinstance(value, str):
        return _TOKEN.sub("<token>", _TIME.sub("<time>", _UUID.sub("<id>", value)))
    return value


def appended(store: Store, after: int) -> list[tuple[str, str, str, Any]]:
    """(type, actor, privacy, payload) of every record after seq ``after``, in order."""
    return [(env.type, env.actor, env.privacy, env.payload_value) for env in store.ledger.read(start=after + 1)]


def head_seq(store: Store) -> int:
    head = store.ledger.head()
    return head.seq if head is not None else 0
