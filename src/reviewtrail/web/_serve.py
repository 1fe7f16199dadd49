"""``reviewtrail serve``: the inspector under uvicorn, on a loopback address only.

The address is checked before the store is opened or a socket bound (exit 2, field ``host``),
and so is the review capability (exit 5 naming the file). Without a capability the store is
opened read-only, so the process could not append even if a route tried; with one, it is opened
for writing and the one write route is on (:mod:`~reviewtrail.web._write`). The socket is bound
here (port 0: a free port the system chooses) and handed to uvicorn, so the address announced is
the one listened on.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from reviewtrail.config import Settings
from reviewtrail.web._bind import bind_loopback, loopback_host

__all__ = ["Listening", "serve"]


@dataclass(frozen=True)
class Listening:
    """Where the inspector listens, announced once it is bound."""

    host: str
    port: int
    store: str
    writes: str | None = None  # the capability's key id when the write route is on

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def to_json(self) -> dict[str, object]:
        return {
            "url": self.url,
            "host": self.host,
            "port": self.port,
            "readOnly": self.writes is None,
            "capabilityKeyId": self.writes,
            "store": self.store,
        }


def serve(settings: Settings, host: str, port: int, *, announce: Callable[[Listening], None]) -> None:
    """Serve the inspector over the store of ``settings`` on ``host``:``port`` until interrupted
    (SIGINT or SIGTERM). ``announce`` is called once the socket listens."""
    import uvicorn

    from reviewtrail.app import open_store
    from reviewtrail.web._app import create_app
    from reviewtrail.web._capability import capability_from_environment
    from reviewtrail.web._nonces import NONCE_FILE_ENV, NonceBook
    from reviewtrail.web._reads import Reads
    from reviewtrail.web._write import DecisionWrites

    address = loopback_host(host)
    capability = capability_from_environment(os.environ)
    with open_store(settings, read_only=capability is None) as store:
        nonces = None
        if capability is not None:
            nonces = NonceBook(Path(os.environ.get(NONCE_FILE_ENV) or settings.store / "review-nonces.sqlite"))
        sock = bind_loopback(address, port)
        try:

            def writes(reads: Reads) -> DecisionWrites:
                assert capability is not None and nonces is not None
                return DecisionWrites(store, capability, nonces, reads.lock)

            app = create_app(store, host=address, writes=writes if capability is not None else None)
            config = uvicorn.Config(
                app, log_level="warning", access_log=False, server_header=False, lifespan="off", workers=1
            )
            key_id = capability.key_id if capability is not None else None
            announce(Listening(address, sock.getsockname()[1], str(settings.store), key_id))
            uvicorn.Server(config).run(sockets=[sock])
        finally:
            sock.close()
            if nonces is not None:
                nonces.close()
