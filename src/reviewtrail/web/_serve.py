"""``reviewtrail serve``: the inspector under uvicorn, on a loopback address only.

The address is checked before the store is opened or a socket bound (exit 2, field ``host``),
and so is the review capability (exit 5 naming the file). Without a capability the store is
opened read-only, so the process could not append even if a route tried; with one, it is opened
for writing and the one write route is on (:mod:`~reviewtrail.web._write`). The socket is bound
here (port 0: a free port the system chooses) and handed to uvicorn, so the address announced is
the one listened on.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reviewtrail._listen import http_url
from reviewtrail.config import Settings
from reviewtrail.errors import InvalidInputError
from reviewtrail.web._bind import bind_loopback, loopback_host

if TYPE_CHECKING:
    from reviewtrail.web._capability import Capability
    from reviewtrail.web._limits import Limits

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
        return http_url(self.host, self.port)

    def to_json(self) -> dict[str, object]:
        return {
            "url": self.url,
            "host": self.host,
            "port": self.port,
            "readOnly": self.writes is None,
            "capabilityKeyId": self.writes,
            "store": self.store,
        }


def serve(
    settings: Settings,
    host: str,
    port: int,
    *,
    announce: Callable[[Listening], None],
    workers: int = 1,
    capability_file: Path | None = None,
    nonce_file: Path | None = None,
    limits: Limits | None = None,
) -> None:
    """Serve the inspector over the store of ``settings`` on ``host``:``port`` until interrupted
    (SIGINT or SIGTERM). ``announce`` is called once the socket listens. With ``workers`` > 1
    that many processes share the socket, each with its own connection to the store (and to the
    nonce book, which they share through its file). With ``capability_file`` (the review
    capability, :func:`~._capability.load_capability`) the one write route is on, its nonces kept
    in ``nonce_file`` (default ``review-nonces.sqlite`` in the store's folder). ``limits`` bound
    the connections each process holds and how long (default: the defaults of :mod:`~._limits`;
    the command line reads them from the environment)."""
    from reviewtrail.app import open_store
    from reviewtrail.web._capability import load_capability
    from reviewtrail.web._limits_server import server_limits

    if isinstance(workers, bool) or not 1 <= workers <= 64:
        raise InvalidInputError(f"must be from 1 to 64, got {workers}", field="workers")
    address = loopback_host(host)
    held = limits or server_limits({})  # the defaults; the command line passes the environment's
    capability = load_capability(capability_file) if capability_file is not None else None
    nonces_at = nonce_file or settings.store / "review-nonces.sqlite"
    with open_store(settings, read_only=capability is None):
        pass  # refused here, before anything listens: a missing store, an unreachable database
    sock = bind_loopback(address, port)
    try:
        key_id = capability.key_id if capability is not None else None
        announce(Listening(address, sock.getsockname()[1], str(settings.store), key_id))
        if workers == 1:
            _run(settings, address, sock, capability, nonces_at, held)
        else:
            _run_workers(workers, lambda: _run(settings, address, sock, capability, nonces_at, held))
    finally:
        sock.close()


def _run(
    settings: Settings,
    address: str,
    sock: socket.socket,
    capability: Capability | None,
    nonces_at: Path,
    limits: Limits,
) -> None:
    """One server process: the store opened (read-only without a capability), the app, uvicorn
    on ``sock`` under ``limits`` until SIGINT or SIGTERM."""
    from reviewtrail.app import open_store
    from reviewtrail.web._app import create_app
    from reviewtrail.web._limits_server import run_limited
    from reviewtrail.web._nonces import NonceBook
    from reviewtrail.web._reads import Reads
    from reviewtrail.web._store_pool import StorePool
    from reviewtrail.web._write import DecisionWrites

    with open_store(settings, read_only=capability is None) as store:
        writes = None
        nonces = None
        readers = StorePool(lambda: open_store(settings, read_only=True))  # reads never write
        if capability is not None:
            nonces = NonceBook(nonces_at)
            held = (capability, nonces)

            def writes(reads: Reads) -> DecisionWrites:
                made.append(DecisionWrites(store, held[0], held[1]))
                return made[-1]

        made: list[DecisionWrites] = []
        try:
            run_limited(create_app(store, host=address, writes=writes, readers=readers), limits, sock)
        finally:
            readers.close()
            for authority in made:
                authority.close()  # its leases released by expiry, their connection closed
            if nonces is not None:
                nonces.close()


def _run_workers(workers: int, run: Callable[[], None]) -> None:
    """``run`` in ``workers`` forked processes; SIGINT and SIGTERM are passed on to them, and this
    returns once every one has stopped."""
    children: list[int] = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            code = 0
            try:
                run()
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        children.append(pid)

    def pass_on(signum: int, _frame: object) -> None:
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signum)

    signal.signal(signal.SIGTERM, pass_on)
    signal.signal(signal.SIGINT, pass_on)
    for child in children:
        while True:
            try:
                os.waitpid(child, 0)
                break
            except InterruptedError:
                continue
