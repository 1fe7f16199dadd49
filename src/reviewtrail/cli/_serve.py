"""``reviewtrail serve``: the read-only inspector on loopback. The web package (and its
framework) is imported only when the command runs."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json

if TYPE_CHECKING:
    from reviewtrail.web import Listening

__all__ = ["serve"]

DEFAULT_PORT = 8765


@handle_errors
def serve(
    port: Annotated[
        int, typer.Option("--port", help="TCP port (0: a free port, announced once listening).")
    ] = DEFAULT_PORT,
    host: Annotated[
        str,
        typer.Option(
            "--host", help="Loopback address to listen on (127.0.0.1, ::1 or localhost); any other is refused."
        ),
    ] = "127.0.0.1",
    as_json: Annotated[bool, typer.Option("--json", help=JSON_HELP + " (the address, once listening)")] = False,
) -> None:
    """Serve the inspector: read-only pages over the store (campaigns, the Review page one
    blinded card at a time, an item's reviewed history) and their JSON, with OpenAPI at
    /openapi.json. It listens on loopback only: any other address is refused (exit 2, field
    host). Every route answers GET and HEAD only; review decisions are recorded with 'review
    session' or 'review decide'. Runs until Ctrl-C.

    Example: reviewtrail serve --port 8765
    """
    from reviewtrail.config import load_settings
    from reviewtrail.web import loopback_host

    loopback_host(host)  # refused before anything is loaded or opened
    from reviewtrail.web import serve as run

    def announce(listening: Listening) -> None:
        if as_json:
            print_json(listening.to_json())
        else:
            print(f"inspector (read-only) at {listening.url} over {listening.store}; Ctrl-C stops it")
        sys.stdout.flush()

    run(load_settings(), host, port, announce=announce)
