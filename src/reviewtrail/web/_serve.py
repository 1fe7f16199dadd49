"""``reviewtrail serve``: the inspector under uvicorn, on a loopback address only.

The address is checked before the store is opened or a socket bound (exit 2, field ``host``);
the store is opened read-only, so the process could not append even if a route tried; the
socket is bound here (port 0: a free port the system chooses) and handed to uvicorn, so the
address announced is the one listened on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from reviewtrail.config import Settings
from reviewtrail.web._bind import bind_loopback, loopback_host

__all__ = ["Listening", "serve"]


@dataclass(frozen=True)
class Listening:
    """Where the inspector listens, announced once it is bound."""

    host: str
    port: int
    store: str

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def to_json(self) -> dict[str, object]:
        return {"url": self.url, "host": self.host, "port": self.port, "readOnly": True, "store": self.store}


def serve(settings: Settings, host: str, port: int, *, announce: Callable[[Listening], None]) -> None:
    """Serve the inspector over the store of ``settings`` on ``host``:``port`` until interrupted
    (SIGINT or SIGTERM). ``announce`` is called once the socket listens."""
    import uvicorn

    from reviewtrail.app import open_store
    from reviewtrail.web._app import create_app

    address = loopback_host(host)
    with open_store(settings, read_only=True) as store:
        sock = bind_loopback(address, port)
        try:
            app = create_app(store, host=address)
            config = uvicorn.Config(
                app, log_level="warning", access_log=False, server_header=False, lifespan="off", workers=1
            )
            announce(Listening(address, sock.getsockname()[1], str(settings.store)))
            uvicorn.Server(config).run(sockets=[sock])
        finally:
            sock.close()
