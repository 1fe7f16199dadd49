"""Leases on review cards: sessions working on one campaign at once are served disjoint cards,
on SQLite and PostgreSQL. A lease is working state, not custody: it is never a ledger record, and
verify neither sees nor minds it; an expired lease frees the card; a decision ends it."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewtrail.app import init_store, open_store
from reviewtrail.config import Settings
from reviewtrail.human_review.session import LEASE_SECONDS, Leases, SessionQueue, decide
from reviewtrail.store import Store
from reviewtrail.verify import verify_store
from support.human_review import add_item, add_prompt, add_run

ITEM = re.compile(rb"item ([0-9a-f-]{36}) \xc2\xb7 camp v1")
REVIEWER = "rev-1"


def _settings(root: Path, database_url: str | None) -> Settings:
    return Settings(store=root / "store", database_url=database_url or f"sqlite:///{root / 'ledger.sqlite'}")


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Settings]:
    """The settings of a new store on each backend."""
    url = None
    if request.param == "postgres":
        url = request.getfixturevalue("pg_url")
    settings = _settings(tmp_path, url)
    init_store(settings).close()
    yield settings


def _items(store: Store, n: int) -> list[str]:
    ids = []
    for k in range(n):
        prompt = add_prompt(store, family=("billing", "shipping", "returns")[k % 3])
        ids.append(
            add_item(store, prompt, add_run(store, prompt, "agent-a"), add_run(store, prompt, "agent-b")).item_id
        )
    return ids


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_one_session_holds_a_card_until_it_releases_it_or_the_lease_expires(backend: Settings) -> None:
    clock = Clock()
    with open_store(backend) as store:
        head = store.ledger.head_seq()
        with Leases(store, clock=clock) as a, Leases(store, clock=clock) as b:
            assert a.active and b.active and a.holder != b.holder
            assert a.take("item-1") and not b.take("item-1")
            assert a.take("item-1")  # its own lease: taken again
            assert b.held_by_others(["item-1", "item-2"]) == {"item-1"}
            a.release("item-1")
            assert b.take("item-1") and not a.take("item-1")
            # Renewed once half the lease has passed, so it outlives its first term.
            clock.now += LEASE_SECONDS * 0.6
            b.renew("item-1")
            clock.now += LEASE_SECONDS * 0.6
            assert not a.take("item-1")
            clock.now += LEASE_SECONDS  # not renewed: expired, the card is free
            assert a.take("item-1")
        # Leaving a session releases its leases.
        with Leases(store, clock=clock) as c:
            assert c.take("item-1")
        assert store.ledger.head_seq() == head  # no record of any of it
        report = verify_store(store)
        assert report.ok, report.problems


def test_two_session_queues_are_served_disjoint_cards_and_a_decision_ends_the_lease(backend: Settings) -> None:
    with open_store(backend) as store:
        ids = _items(store, 5)
        with Leases(store) as la, Leases(store) as lb:
            qa = SessionQueue(store, "camp", leases=la)
            qb = SessionQueue(store, "camp", leases=lb)
            a1, b1 = qa.next_card(), qb.next_card()
            assert a1 is not None and b1 is not None and a1.item_id != b1.item_id
            decide(store, a1.item_id, {"disposition": "tie"}, reviewer=REVIEWER)  # not through the session
            a2 = qa.next_card({a1.item_id})
            assert a2 is not None and a2.item_id not in (a1.item_id, b1.item_id)
            seen_b = {b1.item_id}
            while (card := qb.next_card(seen_b)) is not None:
                assert card.item_id not in (a1.item_id, a2.item_id)
                seen_b.add(card.item_id)
            assert seen_b == set(ids) - {a1.item_id, a2.item_id}
            assert qb.held_elsewhere() == 1  # a2, still held by the other session


def test_an_expired_lease_frees_the_card_for_another_session(backend: Settings) -> None:
    with open_store(backend) as store:
        [only] = _items(store, 1)
        with Leases(store, seconds=-1) as lapsed, Leases(store) as other:
            first = SessionQueue(store, "camp", leases=lapsed).next_card()
            assert first is not None and first.item_id == only
            second = SessionQueue(store, "camp", leases=other).next_card()
            assert second is not None and second.item_id == only


def test_a_read_only_store_takes_no_leases(tmp_path: Path) -> None:
    settings = _settings(tmp_path, None)
    init_store(settings).close()
    with open_store(settings, read_only=True) as store:
        leases = Leases(store)
        assert not leases.active and leases.take("x") and leases.take("x")
    assert not (settings.store / "review-leases.sqlite").exists()


# ---------------------------------------------------------------- two sessions, two processes


class Reader:
    """A session process's output, read as it comes (bounded waits)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self.proc, self.fd, self.seen = proc, proc.stdout.fileno(), bytearray()
        self.at = 0  # where the current screen starts

    def until(self, *wanted: bytes, limit: float = 60.0) -> bytes:
        deadline = time.monotonic() + limit
        while True:
            found = [w for w in wanted if w in self.seen[self.at :]]
            if found:
                return found[0]
            left = deadline - time.monotonic()
            assert left > 0, f"none of {wanted!r} appeared; got {bytes(self.seen[self.at :])[-2000:]!r}"
            if select.select([self.fd], [], [], left)[0]:
                chunk = os.read(self.fd, 65536)
                assert chunk, f"the session ended before {wanted!r}: {bytes(self.seen[-2000:])!r}"
                self.seen += chunk

    def rest(self) -> bytes:
        """Everything the process wrote, up to its end."""
        while chunk := os.read(self.fd, 65536):
            self.seen += chunk
        return bytes(self.seen)

    def card(self) -> str | None:
        """The item of the card now shown (None: the session has no card left)."""
        got = self.until(b"q quit", b"no more open review items")
        screen = bytes(self.seen[self.at :])
        self.at = len(self.seen)
        if got != b"q quit":
            return None
        [item] = ITEM.findall(screen)
        return item.decode()


def _session(settings: Settings, cwd: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVIEWTRAIL_")}
    env |= {"REVIEWTRAIL_STORE": str(settings.store), "REVIEWTRAIL_DATABASE_URL": settings.database_url}
    env |= {"COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "reviewtrail", "review", "session", "camp", "--reviewer", REVIEWER, "--reveal", "never"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=cwd,
    )


@pytest.mark.slow
def test_two_session_processes_started_at_once_are_served_disjoint_cards_until_the_queue_runs_out(
    backend: Settings, tmp_path: Path
) -> None:
    with open_store(backend) as store:
        ids = set(_items(store, 6))
    procs = [_session(backend, tmp_path) for _ in range(2)]
    readers = [Reader(p) for p in procs]
    served: list[list[str]] = [[], []]
    try:
        current = [r.card() for r in readers]
        while any(c is not None for c in current):
            held = [c for c in current if c is not None]
            assert len(held) == len(set(held)), f"both sessions were served {held}"
            for n, reader in enumerate(readers):
                if current[n] is None:
                    continue
                served[n].append(current[n])  # type: ignore[arg-type]
                assert procs[n].stdin is not None
                procs[n].stdin.write(b"t\n")
                procs[n].stdin.flush()
                current[n] = reader.card()
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.close()
            assert proc.wait(timeout=60) == 0
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert not set(served[0]) & set(served[1])
    assert set(served[0]) | set(served[1]) == ids
    assert served[0] and served[1]  # both worked
    with open_store(backend) as store:
        decided = [row["item_id"] for row in store.ledger.rows("hr_decisions")]
        assert sorted(decided) == sorted(ids)  # one decision per item, none replaced
        assert verify_store(store).ok


def test_a_card_decided_elsewhere_after_it_was_served_is_refused_and_passed_over(
    tmp_path: Path,
) -> None:
    settings = _settings(tmp_path, None)
    init_store(settings).close()
    with open_store(settings) as store:
        ids = _items(store, 2)
    proc = _session(settings, tmp_path)
    reader = Reader(proc)
    try:
        first = reader.card()
        assert first in ids
        with open_store(settings) as store:  # another reviewer, not through a session
            decide(store, first, {"disposition": "underdetermined"}, reviewer="rev-2")
        assert proc.stdin is not None
        proc.stdin.write(b"t\n")
        proc.stdin.flush()
        reader.until(b"refused: supersedes:")
        assert b"s passes over it" in reader.seen
        proc.stdin.write(b"s\n")
        proc.stdin.flush()
        second = reader.card()
        assert second is not None and second != first
        proc.stdin.write(b"t\n")
        proc.stdin.flush()
        assert reader.card() is None
        proc.stdin.close()
        out = reader.rest()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert b"session: 1 decision(s) recorded (tie 1)" in out and b"passed over" not in out
    with open_store(settings) as store:
        rows = store.ledger.rows("hr_decisions", item_id=first)
        assert [r["disposition"] for r in rows] == ["underdetermined"]  # not overwritten


def test_sessions_starting_at_once_all_get_their_leases(backend: Settings) -> None:
    """Eight sessions opening their leases at the same moment on a store that has none yet: on
    PostgreSQL they race to create the table, and every one must still start."""
    import threading

    barrier = threading.Barrier(8)
    failures: list[BaseException] = []

    def start() -> None:
        try:
            with open_store(backend) as store:
                barrier.wait()
                with Leases(store) as leases:
                    assert leases.active
        except BaseException as exc:  # reported below, with the thread's error
            failures.append(exc)

    threads = [threading.Thread(target=start) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
