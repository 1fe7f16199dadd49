"""The Review page's floor for bench_web.py: the same work as ``GET /review/CAMPAIGN/VERSION`` of
``reviewtrail serve``, served the plainest way the same server allows.

``python _page_floor.py STORE DATABASE_URL WORKERS`` binds 127.0.0.1 on a port the system
chooses, prints ``{"host": ..., "port": ...}`` and serves with uvicorn (httptools, as the inspector)
in WORKERS forked processes sharing the socket. Each process opens the store read-only once and
answers every request with the page of card 1: the card read through the indexes and checked
against its records (:func:`reviewtrail.human_review.session.queue_position`, as the inspector's reads
call it) and the inspector's own ``review.html`` template rendered with the same context. What it
leaves out is what the inspector adds around that work: FastAPI's routing and parameters, the
Host and method guard, the security headers, the render threads (the work runs on the event loop),
the connection limits and the log filter.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import uvicorn

from reviewtrail.app import open_store
from reviewtrail.config import Settings
from reviewtrail.human_review.records import RESPONSE_MAX_CHARS
from reviewtrail.human_review.session import queue_position
from reviewtrail.web._app import _templates
from reviewtrail.web._bind import bind_loopback
from reviewtrail.web._keys import DECISION_KEYS, NAVIGATION_KEYS
from reviewtrail.web._reads import CardView


def _app(settings: Settings, campaign: str, version: int) -> Any:
    store = open_store(settings, read_only=True)
    template = _templates().get_template("review.html")

    def page() -> bytes:
        found = queue_position(store, campaign, version, 1)
        view = CardView(campaign, version, 1, found.card, found.more)
        html = template.render(
            view=view,
            decision_keys=DECISION_KEYS,
            navigation_keys=NAVIGATION_KEYS,
            response_max=RESPONSE_MAX_CHARS,
            writes_on=False,
        )
        return html.encode()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = page()
        headers = [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


def main() -> None:
    store, url, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
    campaign, version = sys.argv[4], int(sys.argv[5])
    settings = Settings(store=Path(store), database_url=url)
    sock = bind_loopback("127.0.0.1", 0)
    print(json.dumps({"host": "127.0.0.1", "port": sock.getsockname()[1]}), flush=True)
    children = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:  # the child serves until SIGTERM
            config = uvicorn.Config(
                _app(settings, campaign, version),
                http="httptools",
                log_level="warning",
                access_log=False,
                lifespan="off",
            )
            uvicorn.Server(config).run(sockets=[sock])
            os._exit(0)
        children.append(pid)

    def stop(signum: int, _frame: object) -> None:
        for child in children:
            os.kill(child, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    for child in children:
        os.waitpid(child, 0)


if __name__ == "__main__":
    main()
