"""The inspector's static files: answered from memory on the event loop, so a style sheet or the
review script never waits behind page renders for a worker thread; the same bytes, content
types and security headers as the files on disk, HEAD without a body, 304 for a matching ETag."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reviewtrail.store import Store
from reviewtrail.web import create_app
from reviewtrail.web._app import RENDER_THREADS
from reviewtrail.web._reads import Reads
from support.human_review import new_store
from support.web import planted_campaign

STATIC = Path(__file__).parents[1] / "src" / "reviewtrail" / "web" / "static"
BASE = "http://127.0.0.1"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    store = new_store(tmp_path_factory.mktemp("static"))
    planted_campaign(store, n=1)
    yield store
    store.close()


def test_a_static_file_is_answered_while_every_page_thread_is_held(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twice as many page requests as there are render threads, every one held in its read."""
    release = threading.Event()
    entered: list[int] = []
    card = Reads.card

    def held_card(self: Reads, campaign_id: str, version: int, position: int) -> Any:
        entered.append(position)
        release.wait(60)  # held until the static file has been answered (or the test gave up)
        return card(self, campaign_id, version, position)

    monkeypatch.setattr(Reads, "card", held_card)
    app = create_app(store)

    async def every_thread_held() -> None:
        while len(entered) < RENDER_THREADS:
            await asyncio.sleep(0.01)

    async def scenario() -> tuple[httpx.Response, int, list[httpx.Response]]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url=BASE) as client:
            pages = [asyncio.create_task(client.get("/review/camp/1")) for _ in range(2 * RENDER_THREADS)]
            try:
                await asyncio.wait_for(every_thread_held(), timeout=30)
                static = await asyncio.wait_for(client.get("/static/inspector.css"), timeout=30)
                busy = len(entered)
                assert not any(page.done() for page in pages)
            finally:
                release.set()
            return static, busy, await asyncio.gather(*pages)

    static, busy, pages = asyncio.run(scenario())
    assert busy == RENDER_THREADS  # the pages held every thread they could when the style sheet was answered
    assert static.status_code == 200 and static.content == (STATIC / "inspector.css").read_bytes()
    assert [page.status_code for page in pages] == [200] * len(pages)
    assert len(entered) == len(pages)


@pytest.mark.parametrize(("name", "kind"), [("inspector.css", "text/css"), ("review.js", "text/javascript")])
def test_a_static_file_is_the_file_with_its_type_headers_and_etag(store: Store, name: str, kind: str) -> None:
    app = create_app(store)

    async def fetch() -> tuple[httpx.Response, httpx.Response, httpx.Response, httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url=BASE) as client:
            full = await client.get(f"/static/{name}")
            head = await client.head(f"/static/{name}")
            same = await client.get(f"/static/{name}", headers={"if-none-match": full.headers["etag"]})
            other = await client.get(f"/static/{name}", headers={"if-none-match": '"0", W/"1"'})
            return full, head, same, other

    full, head, same, other = asyncio.run(fetch())
    body = (STATIC / name).read_bytes()
    assert full.status_code == 200 and full.content == body
    assert full.headers["content-type"] == f"{kind}; charset=utf-8"
    assert full.headers["content-length"] == str(len(body))
    assert full.headers["x-content-type-options"] == "nosniff" and full.headers["cache-control"] == "no-store"
    assert "script-src 'self'" in full.headers["content-security-policy"]
    assert head.status_code == 200 and head.content == b"" and head.headers["content-length"] == str(len(body))
    assert head.headers["etag"] == full.headers["etag"]
    assert same.status_code == 304 and same.content == b"" and same.headers["etag"] == full.headers["etag"]
    assert other.status_code == 200 and other.content == body


def test_a_file_not_among_the_static_files_is_not_found(store: Store) -> None:
    app = create_app(store)

    async def fetch(path: str) -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url=BASE) as client:
            return await client.get(path)

    for path in ("/static/nothing.css", "/static/../_app.py", "/static/", "/static"):
        response = asyncio.run(fetch(path))
        assert response.status_code == 404, path
        assert response.headers["x-content-type-options"] == "nosniff"
