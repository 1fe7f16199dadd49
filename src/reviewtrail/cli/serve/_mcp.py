"""``reviewtrail mcp``: the MCP server for agents. The SDK (an optional dependency) and the
agents package are imported only when the command runs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json

if TYPE_CHECKING:
    from reviewtrail.agents import Listening, ServerOptions

__all__ = ["mcp"]

DEFAULT_PORT = 8767
TRANSPORTS = ("stdio", "http")


@handle_errors
def mcp(
    transport: Annotated[
        str,
        typer.Option(
            "--transport",
            help="stdio (the agent starts this command and talks over its stdin and stdout) or http "
            "(streamable HTTP at http://HOST:PORT/mcp).",
        ),
    ] = "stdio",
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="With http: loopback address to listen on (127.0.0.1, ::1 or localhost); any other is refused.",
        ),
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", help="With http: TCP port (0: a free port, announced).")
    ] = DEFAULT_PORT,
    allow_writes: Annotated[
        bool,
        typer.Option(
            "--allow-writes",
            help="Let the write tools append records (declare_artifact, save_trace, record_claims, link_evidence, "
            "review_checkpoint, review_decide, verify with repair). Without it they are refused and the store is "
            "opened read-only.",
        ),
    ] = False,
    allow_run: Annotated[
        bool,
        typer.Option("--allow-run", help="Let run_code run code in the sandbox (needs --allow-writes too)."),
    ] = False,
    allow_path: Annotated[
        list[Path] | None,
        typer.Option(
            "--allow-path",
            help="A folder besides the project folder that tools may read files from or write traces into "
            "(repeatable). Paths never resolve onto the store, a key or the server's configuration.",
        ),
    ] = None,
    serve_private: Annotated[
        bool,
        typer.Option(
            "--serve-private",
            help="Serve prompts and responses whose privacy join is private or sensitive (off: withheld, counted).",
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help=JSON_HELP + " (with http: the address, once listening)")
    ] = False,
) -> None:
    """Serve reviewtrail to agents over MCP (Model Context Protocol): tools that make the same
    library calls as the commands, with the same checks, errors and exit codes (declare_artifact,
    run_code with optional persistent kernels, review_checkpoint, save_trace, record_claims,
    link_evidence, provenance, review_summary, review_queue, review_decide, verify), and read-only
    resources (artifacts and versions, traces, the review queue). One store: the configured one,
    opened once. Writes are refused unless --allow-writes; run_code also needs --allow-run.
    Needs the mcp package: pip install 'reviewtrail[mcp]' (else exit 5). Over http it listens on
    loopback only: any other address is refused (exit 2, field host). Runs until the client
    closes stdin (stdio) or Ctrl-C (http). A path a tool is given must resolve inside the project
    folder (the git top level here) or an --allow-path folder, never onto the store or a key.
    Prompts and responses that are not public-source are withheld unless --serve-private. See
    docs/agents/.

    Example: claude mcp add reviewtrail -- reviewtrail mcp --allow-writes
    """
    from reviewtrail.errors import InvalidInputError

    if transport not in TRANSPORTS:
        raise InvalidInputError(f"{transport!r} is not stdio or http", field="transport")
    if allow_run and not allow_writes:
        raise InvalidInputError("--allow-run needs --allow-writes: every run is recorded", field="allow-run")
    from reviewtrail.agents import loopback_address, require_mcp

    if transport == "http":
        loopback_address(host)  # refused before anything is loaded or opened
    require_mcp()
    options = _options(allow_writes, allow_run, tuple(allow_path or ()), serve_private)
    _serve(transport, host, port, options, as_json)


def _options(allow_writes: bool, allow_run: bool, allowed: tuple[Path, ...], serve_private: bool) -> ServerOptions:
    """The server's options; its secrets besides the store's: the user's configuration folder, and
    the review capability file and nonce book that ``reviewtrail serve`` is configured with."""
    import os

    from reviewtrail.agents import ServerOptions
    from reviewtrail.config import reviewer_id_setting, user_config_file
    from reviewtrail.errors import InvalidInputError
    from reviewtrail.web import CAPABILITY_FILE_ENV, NONCE_FILE_ENV

    for folder in allowed:
        if not folder.is_dir():
            raise InvalidInputError(f"{folder} is not a folder", field="allow-path")

    config = user_config_file(os.environ)
    files = (os.environ.get(CAPABILITY_FILE_ENV), os.environ.get(NONCE_FILE_ENV))
    secrets = (*(Path(v) for v in files if v), *((config.parent,) if config is not None else ()))
    return ServerOptions(
        allow_writes=allow_writes,
        allow_run=allow_run,
        default_reviewer=lambda: reviewer_id_setting()[0],  # read when a decision names no reviewer, as decide does
        allowed_paths=allowed,
        secret_paths=secrets,
        serve_private=serve_private,
    )


def _serve(transport: str, host: str, port: int, options: ServerOptions, as_json: bool) -> None:
    import dataclasses

    from reviewtrail.agents import serve_http, serve_stdio
    from reviewtrail.config import load_settings

    settings = load_settings()
    options = dataclasses.replace(options, project=settings.project or "default")
    allow_writes, allow_run = options.allow_writes, options.allow_run
    mode = "writes and runs allowed" if allow_run else "writes allowed" if allow_writes else "read-only"
    if transport == "stdio":

        def on_stdio(store: str) -> None:  # stdout carries the protocol
            sys.stderr.write(f"reviewtrail MCP server ({mode}) on stdio over {store}\n")

        serve_stdio(settings, options, announce=on_stdio)
        return

    def on_http(listening: Listening) -> None:
        if as_json:
            print_json(listening.to_json())
        else:
            print(f"reviewtrail MCP server ({mode}) at {listening.url} over {listening.store}; Ctrl-C stops it")
        sys.stdout.flush()

    serve_http(settings, options, host, port, announce=on_http)
