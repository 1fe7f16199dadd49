"""``reviewtrail proxy``: the public proxy under uvicorn (docs/human-review.md, "The public proxy").

The settings are checked, and the review capability loaded, before a socket is bound; the
socket is bound here (port 0: a free port the system chooses) and handed to uvicorn, so the
address announced is the one listened on. Unlike the inspector, the proxy may listen on any
address: it is the face other machines reach, usually behind a TLS terminator.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reviewtrail._listen import bind_any, http_url
from reviewtrail.web._proxy_settings import ProxySettings

if TYPE_CHECKING:
    from reviewtrail.web._limits import Limits

__all__ = ["ProxyListening", "serve_proxy"]


@dataclass(frozen=True)
class ProxyListening:
    """Where the proxy listens, announced once it is bound."""

    host: str
    port: int
    public_url: str
    inspector: str
    oidc: bool
    basic: bool
    write: bool

    @property
    def url(self) -> str:
        return http_url(self.host, self.port)

    def to_json(self) -> dict[str, object]:
        return {
            "url": self.url,
            "host": self.host,
            "port": self.port,
            "publicUrl": self.public_url,
            "inspector": self.inspector,
            "oidc": self.oidc,
            "basic": self.basic,
            "readOnly": not self.write,
        }


def serve_proxy(
    settings: ProxySettings,
    host: str,
    port: int,
    *,
    announce: Callable[[ProxyListening], None],
    limits: Limits | None = None,
) -> None:
    """Serve the proxy for ``settings`` on ``host``:``port`` until interrupted (SIGINT or
    SIGTERM). ``announce`` is called once the socket listens. ``limits`` bound the connections
    it holds and how long (default: the defaults of :mod:`~._limits`; the command line reads
    them from the environment)."""
    from reviewtrail.web._capability import load_capability, sign_decision
    from reviewtrail.web._limits_server import run_limited, server_limits
    from reviewtrail.web._proxy import create_proxy_app
    from reviewtrail.web._reviewer_header import sign_reviewer

    held = limits or server_limits({})  # the defaults; the command line passes the environment's

    capability = load_capability(settings.capability_file) if settings.capability_file is not None else None
    sign = functools.partial(sign_decision, capability) if capability is not None else None
    sign_reader = functools.partial(sign_reviewer, capability) if capability is not None else None
    sock = bind_any(host, port)
    try:
        bound_host, bound_port = sock.getsockname()[:2]
        listening = ProxyListening(
            bound_host,
            bound_port,
            "",
            settings.inspector,
            settings.oidc is not None,
            bool(settings.basic_users),
            sign is not None,
        )
        public_url = settings.public_url or listening.url.rstrip("/")
        listening = dataclasses.replace(listening, public_url=public_url)
        app = create_proxy_app(settings, public_url=public_url, sign=sign, sign_reader=sign_reader)
        announce(listening)
        run_limited(app, held, sock)
    finally:
        sock.close()
