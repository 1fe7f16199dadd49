"""``reviewtrail serve``: the read-only inspector on loopback. The web package (and its
framework) is imported only when the command runs."""

from __future__ import annotations

import os
import sys
from pathlib import Path
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
    workers: Annotated[
        int, typer.Option("--workers", help="Server processes sharing the socket, each with its own store connection.")
    ] = 1,
    new_capability: Annotated[
        Path | None,
        typer.Option(
            "--new-capability",
            help="Write a new review capability key file (mode 0600, never replacing one) and exit; give it to "
            "this server and the proxy as REVIEWTRAIL_REVIEW_CAPABILITY_FILE.",
            metavar="FILE",
        ),
    ] = None,
) -> None:
    """Serve the inspector: read-only pages over the store (campaigns, the Review page one
    blinded card at a time, an item's reviewed history; campaign coverage with its disposition
    chart, artifacts, artifact provenance with each execution log's cwd and environment, the
    diff of two versions, the Reviewer Specialist card, reviewer-call traces, store health) and
    their JSON under /api/, with OpenAPI at /openapi.json. It listens on loopback only: any
    other address is refused (exit 2, field host). Every route answers GET and HEAD only,
    unless REVIEWTRAIL_REVIEW_CAPABILITY_FILE names a review capability key file readable by
    its owner only (else exit 5): then POST
    /api/review/decisions records a review decision signed with that key (RFC 9421), as the
    proxy ('reviewtrail proxy') sends it, and nothing else. Runs until Ctrl-C.

    Example: reviewtrail serve --port 8765
    """
    from reviewtrail.config import load_settings
    from reviewtrail.web import loopback_host

    if new_capability is not None:
        from reviewtrail.web import new_capability as write_capability

        capability = write_capability(new_capability)
        if as_json:
            print_json({"capabilityFile": str(new_capability), "keyId": capability.key_id})
        else:
            print(f"review capability {capability.key_id} written to {new_capability} (mode 0600)")
        return
    loopback_host(host)  # refused before anything is loaded or opened
    from reviewtrail.web import serve as run

    def announce(listening: Listening) -> None:
        if as_json:
            print_json(listening.to_json())
        else:
            mode = "read-only" if listening.writes is None else f"review decisions signed by {listening.writes}"
            print(f"inspector ({mode}) at {listening.url} over {listening.store}; Ctrl-C stops it")
        sys.stdout.flush()

    from reviewtrail.web import CAPABILITY_FILE_ENV, NONCE_FILE_ENV, server_limits

    given = {name: os.environ.get(name, "") for name in (CAPABILITY_FILE_ENV, NONCE_FILE_ENV)}  # "": not given
    run(
        load_settings(),
        host,
        port,
        announce=announce,
        workers=workers,
        capability_file=Path(given[CAPABILITY_FILE_ENV]) if given[CAPABILITY_FILE_ENV] else None,
        nonce_file=Path(given[NONCE_FILE_ENV]) if given[NONCE_FILE_ENV] else None,
        limits=server_limits(os.environ),
    )
