"""``reviewtrail proxy``: the public proxy in front of the inspector. The web package (and its
framework) is imported only when the command runs."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json

if TYPE_CHECKING:
    from reviewtrail.web import ProxyListening

__all__ = ["proxy"]

DEFAULT_PORT = 8766


@handle_errors
def proxy(
    inspector: Annotated[
        str, typer.Option("--inspector", help="The inspector's URL (reviewtrail serve), e.g. http://127.0.0.1:8765.")
    ],
    port: Annotated[
        int, typer.Option("--port", help="TCP port (0: a free port, announced once listening).")
    ] = DEFAULT_PORT,
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on (0.0.0.0 or :: for every interface).")
    ] = "127.0.0.1",
    as_json: Annotated[bool, typer.Option("--json", help=JSON_HELP + " (the address, once listening)")] = False,
) -> None:
    """Serve the public proxy in front of the inspector: OIDC login (authorization code with
    PKCE; REVIEWTRAIL_PROXY_OIDC_ISSUER, REVIEWTRAIL_PROXY_OIDC_CLIENT_ID, ..._CLIENT_SECRET or
    ..._CLIENT_SECRET_FILE), read-only HTTP Basic users (REVIEWTRAIL_PROXY_BASIC_USERS_FILE,
    argon2 hashes), sessions kept server-side that end at logout, when idle or when old
    (REVIEWTRAIL_PROXY_SESSION_SECRET_FILE, required; REVIEWTRAIL_PROXY_PUBLIC_URL,
    ..._SESSION_IDLE, ..._SESSION_MAX_AGE, ..._SESSION_FILE). GET and HEAD are forwarded without cookies or credentials.
    Only a login on REVIEWTRAIL_PROXY_ALLOW (subjects or e-mails) may record review decisions,
    with its CSRF token: POST /api/review/decisions, signed with the review capability
    (REVIEWTRAIL_REVIEW_CAPABILITY_FILE, the inspector's; without it the proxy is read-only).
    A missing setting is exit 5 and a malformed one exit 2, naming the variable. Runs until
    Ctrl-C.

    Example: reviewtrail proxy --inspector http://127.0.0.1:8765 --port 8766
    """
    from reviewtrail.web import proxy_settings

    settings = proxy_settings(inspector, os.environ)  # checked before anything is bound
    from reviewtrail.web import serve_proxy, server_limits

    limits = server_limits(os.environ)

    def announce(listening: ProxyListening) -> None:
        if as_json:
            print_json(listening.to_json())
        else:
            mode = "read-only" if not listening.write else "decisions signed with the review capability"
            print(f"proxy ({mode}) at {listening.url} for {listening.inspector}; Ctrl-C stops it")
        sys.stdout.flush()

    serve_proxy(settings, host, port, announce=announce, limits=limits)
