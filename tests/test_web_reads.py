"""The inspector's reads run side by side (``reviewtrail serve`` as a real process): a read that
is held up, in the files it reads or in the database, never holds up another read; and card K
is the K-th card of the whole queue, on SQLite and on PostgreSQL."""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reviewtrail.human_review.session import QUEUE_MAX, decide, review_queue
from reviewtrail.store import Store
from support.human_review import campaign_with_items, new_store
from support.web import running_inspector

# Long enough for any read of these small stores on a loaded machine; a read held behind another
# one waits until that one ends, which here is never before the test lets it.
_PATIENCE = 30.0


class _Held:
    """A GET run in a thread, its response (or error) kept."""

    def __init__(self, url: str) -> None:
        self.response: httpx.Response | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._get, args=(url,), daemon=True)
        self._thread.start()

    def _get(self, url: str) -> None:
        try:
            self.response = httpx.get(url, timeout=120)
        except BaseException as exc:  # reported by the test
            self.error = exc

    def join(self) -> httpx.Response:
        self._thread.join(120)
        assert self.error is None and self.response is not None, self.error
        return self.response


def _until(condition: Any, what: str) -> None:
    """Wait (polling) until ``condition()`` is true; fail naming ``what`` after a minute."""
    for _ in range(1200):
        if condition():
            return
        time.sleep(0.05)
    pytest.fail(f"never happened: {what}")


def _writer_once_read(fifo: Path) -> int | None:
    """A write end of the FIFO once a process has it open for reading (its open then returns, and
    its read waits for data while this end is open), else None."""
    try:
        return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # no reader yet
            return None
        raise


def test_a_read_held_up_in_its_files_does_not_hold_up_other_reads(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        campaign_with_items(store, 2)
    run = tmp_path / ".aris" / "traces" / "review" / "2026-04-15_run01"
    run.mkdir(parents=True)
    fifo = run / "run.meta.json"
    os.mkfifo(fifo)  # a trace read opens it, then waits for data that comes only when the test says
    with running_inspector(tmp_path) as inspector:
        held = _Held(f"{inspector.url}api/traces")
        writer: list[int] = []

        def opened() -> bool:
            fd = _writer_once_read(fifo)
            writer.extend([] if fd is None else [fd])
            return fd is not None

        try:
            _until(opened, "the trace read opening its file")
            for path in ("api/health", "api/review/camp/1/cards/2", "api/campaigns"):
                assert httpx.get(inspector.url + path, timeout=_PATIENCE).status_code == 200, path
            assert held.response is None and held.error is None  # still held up meanwhile
        finally:
            (run / "meta.tmp").write_text("{}", encoding="utf-8")
            (run / "meta.tmp").replace(fifo)  # later reads find a plain file
            for fd in writer:
                os.close(fd)  # end of file for the held read
        assert held.join().status_code == 200


@pytest.mark.postgres
def test_a_read_waiting_on_the_database_does_not_hold_up_other_reads(tmp_path: Path, pg_url: str) -> None:
    import psycopg

    with new_store(tmp_path, pg_url) as store:
        campaign_with_items(store, 2)
    with (
        running_inspector(tmp_path, env={"REVIEWTRAIL_DATABASE_URL": pg_url}) as inspector,
        psycopg.connect(pg_url, autocommit=False) as locker,
    ):
        locker.execute("LOCK TABLE rt_p_hr_open IN ACCESS EXCLUSIVE MODE")  # held until the rollback
        try:
            held = _Held(f"{inspector.url}api/review/camp/1/cards/1")  # counts the open items: waits

            def waiting() -> bool:
                with psycopg.connect(pg_url, autocommit=True) as look:
                    row = look.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> %s",
                        (locker.info.backend_pid,),
                    ).fetchone()
                    return bool(row and row[0])

            _until(waiting, "the card read waiting on the locked table")
            for path in ("api/health", "api/artifacts"):
                assert httpx.get(inspector.url + path, timeout=_PATIENCE).status_code == 200, path
            assert held.response is None and held.error is None
        finally:
            locker.rollback()
        assert held.join().status_code == 200


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, Store, dict[str, str]]]:
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else None
    with new_store(tmp_path, url) as store:
        yield tmp_path, store, ({"REVIEWTRAIL_DATABASE_URL": url} if url else {})


def test_every_card_of_the_inspector_is_that_card_of_the_whole_queue(
    backend: tuple[Path, Store, dict[str, str]],
) -> None:
    root, store, env = backend
    items = campaign_with_items(store, 7)
    for n, item in enumerate(items[1::2]):  # decided out of order: the queue puts them after the open ones
        decide(store, item.item_id, {"disposition": "tie"}, submission_id=f"s-{n}", reviewer="rev-1")
    queue = [card.to_json() for card in review_queue(store, "camp", 1, limit=QUEUE_MAX)]
    assert [card["decided"] for card in queue] == [False] * 4 + [True] * 3
    with running_inspector(root, env=env) as inspector:
        for k, card in enumerate(queue, start=1):
            got = httpx.get(f"{inspector.url}api/review/camp/1/cards/{k}", timeout=_PATIENCE).json()
            assert got == {"position": k, "more": k < len(queue), "card": card}
        past = httpx.get(f"{inspector.url}api/review/camp/1/cards/{len(queue) + 1}", timeout=_PATIENCE)
        assert past.status_code == 404 and past.json()["error"]["field"] == "card"


def test_the_pool_lends_each_read_a_read_only_store_of_its_own(tmp_path: Path) -> None:
    from reviewtrail.app import open_store
    from reviewtrail.config import Settings
    from reviewtrail.errors import ReadOnlyStoreError
    from reviewtrail.web._store_pool import StorePool
    from support.human_review import add_prompt

    new_store(tmp_path).close()
    settings = Settings(store=tmp_path / "store", database_url=f"sqlite:///{tmp_path / 'ledger.sqlite'}")
    opened: list[Store] = []

    def reader() -> Store:
        opened.append(open_store(settings, read_only=True))
        return opened[-1]

    pool = StorePool(reader, size=2)
    with pool.store() as first, pool.store() as second:
        assert first is not second and first.ledger is not second.ledger  # two connections at once
        with pytest.raises(ReadOnlyStoreError):
            add_prompt(first)
    with pool.store() as again:
        assert again in (first, second) and len(opened) == 2  # given back, lent again
    waited = threading.Event()

    def third() -> None:
        with pool.store():
            waited.set()

    with pool.store(), pool.store():  # both lent: a third read waits for one
        thread = threading.Thread(target=third, daemon=True)
        thread.start()
        thread.join(0.5)
        assert not waited.is_set()
    thread.join(_PATIENCE)
    assert waited.is_set() and len(opened) == 2
    pool.close()
    with pytest.raises(Exception, match="closed"):
        first.ledger.head()


def test_a_campaign_version_no_ledger_could_hold_is_refused_naming_the_version(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        campaign_with_items(store, 1)
    with running_inspector(tmp_path) as inspector:
        for version in (2**63, -(2**63) - 1, 10**30):
            for path in (f"api/review/camp/{version}/cards/1", f"api/review/camp/{version}/progress"):
                refused = httpx.get(inspector.url + path, timeout=_PATIENCE)
                assert refused.status_code == 400, path
                assert refused.json()["error"]["field"] == "version"
        assert httpx.get(inspector.url + f"review/camp/{2**63}", timeout=_PATIENCE).status_code == 400
