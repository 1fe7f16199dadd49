"""Reads side by side: a deep card costs what card 1 costs, and readers looping deep cards do not
hold up a reviewer. ``reviewtrail serve`` (one worker, the default) and ``reviewtrail proxy`` as
real processes on 127.0.0.1, over a SQLite store of one 1,000-item campaign whose first 500 items
are decided (bench/_hr_store.py; 8,500 records, built afresh in a few seconds).

web_deep_card
    One client on one keep-alive connection asks the inspector for the Review page of card 999
    (``/review/bench-campaign/1?card=999``, a decided item past the 500 open ones) and of card 1,
    in turns (rounds alternate which goes first). Target: card 999 p95 <= 1.5x card 1 p95, both
    measured in the same run. (Before card K was found through the indexes, card 999 built the
    999 cards before it: 2.3 s against 85 ms for card 1 on such a campaign.)

web_hostile_readers
    Through the proxy, as on a deployment: a reviewer (Basic user ``reviewer``) asks for card 1 at
    a human's quick pace (one request every 250 ms, within the default read limit of 5 a second),
    alone, then while 8 clients of another Basic user (``reader``) loop ``?card=999`` with no
    pause (each answered 200 until the reader's bucket is spent, then 429). Rounds alternate
    alone and loaded. Target: the reviewer's p95 while loaded <= 2x its p95 alone. The notes give
    the same measure at the inspector itself (no proxy, no read limit), one round of each.

The clients are asyncio streams in this process; they share the machine's cores with the servers.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from _hr_store import CAMPAIGN
from _util import Config, Result, verdict, work_dir
from bench_human_review import _p95
from reviewtrail.config import Settings

ITEMS = 1_000
RECORDS = 8 * ITEMS + ITEMS // 2  # 8 records an item, then a decision for each of the first 500 items
DEEP = 999
READERS = 8
PACE = 0.25  # seconds between the reviewer's requests
DEEP_TARGET = 1.5
HOSTILE_TARGET = 2.0
PASSWORD = "bench reviewer password"


def _page(card: int) -> str:
    return f"/review/{CAMPAIGN[0]}/{CAMPAIGN[1]}?card={card}"


def _store(root: Path) -> Settings:
    from _hr_store import build_review_store
    from reviewtrail.app import init_store, open_store
    from reviewtrail.human_review.campaigns import campaign_settings

    settings = Settings(store=root / "store", database_url=f"sqlite:///{root / 'ledger.sqlite'}")
    init_store(settings).close()
    with open_store(settings) as store:
        campaign_settings(store, CAMPAIGN[0], CAMPAIGN[1], training=True)
        build_review_store(store, items=ITEMS, records=RECORDS)
    return settings


@contextmanager
def _announced(command: list[str], env: dict[str, str]) -> Iterator[tuple[str, int]]:
    """``command`` (a reviewtrail server printing its JSON announcement), its (host, port); stopped on exit."""
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        text = ""
        while not text.endswith("}\n"):
            line = proc.stdout.readline() if proc.stdout else ""
            if not line:
                raise RuntimeError(f"{' '.join(command[2:4])} exited ({proc.wait()})")
            text += line
        announced = json.loads(text)
        yield announced["host"], announced["port"]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _env(settings: Settings, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVIEWTRAIL_")}
    return env | {"REVIEWTRAIL_STORE": str(settings.store), "REVIEWTRAIL_DATABASE_URL": settings.database_url} | extra


def _serve(settings: Settings) -> AbstractContextManager[tuple[str, int]]:
    return _announced([sys.executable, "-m", "reviewtrail", "serve", "--port", "0", "--json"], _env(settings))


def _proxy(settings: Settings, inspector: tuple[str, int], root: Path) -> AbstractContextManager[tuple[str, int]]:
    from argon2 import PasswordHasher

    hashed = PasswordHasher().hash(PASSWORD)
    users = root / "basic-users"
    users.write_text(f"reviewer:{hashed}\nreader:{hashed}\n")
    secret = root / "session-secret"
    secret.write_bytes(os.urandom(48).hex().encode())
    secret.chmod(0o600)
    env = _env(
        settings,
        REVIEWTRAIL_PROXY_BASIC_USERS_FILE=str(users),
        REVIEWTRAIL_PROXY_SESSION_SECRET_FILE=str(secret),
    )
    command = [sys.executable, "-m", "reviewtrail", "proxy", "--port", "0", "--json"]
    return _announced([*command, "--inspector", f"http://{inspector[0]}:{inspector[1]}"], env)


class _Connection:
    """One keep-alive HTTP/1.1 connection: GET and time a path, the status and body read in full."""

    def __init__(self, address: tuple[str, int], user: str | None = None) -> None:
        self.address = address
        auth = ""
        if user is not None:
            import base64

            auth = f"Authorization: Basic {base64.b64encode(f'{user}:{PASSWORD}'.encode()).decode()}\r\n"
        self.headers = f"Host: {address[0]}:{address[1]}\r\nAccept: text/html\r\n{auth}"

    async def __aenter__(self) -> _Connection:
        self.reader, self.writer = await asyncio.open_connection(*self.address)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.writer.close()
        await self.writer.wait_closed()

    async def get(self, path: str, statuses: tuple[int, ...] = (200,)) -> tuple[float, int]:
        t0 = time.perf_counter()
        self.writer.write(f"GET {path} HTTP/1.1\r\n{self.headers}\r\n".encode())
        head = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        length = next(int(h.split(":", 1)[1]) for h in head if h.lower().startswith("content-length:"))
        body = await self.reader.readexactly(length)
        elapsed = time.perf_counter() - t0
        status = int(head[0].split()[1])
        if status not in statuses or (status == 200 and b"Candidate A" not in body):
            raise AssertionError(f"GET {path}: {head[0]}: {body[:300]!r}")
        return elapsed, status


async def _cards(address: tuple[str, int], rounds: int, per_round: int) -> dict[int, list[float]]:
    times: dict[int, list[float]] = {1: [], DEEP: []}
    async with _Connection(address) as conn:
        for card in (1, DEEP):  # warm-up, untimed
            await conn.get(_page(card))
        for r in range(rounds):
            for card in (1, DEEP) if r % 2 == 0 else (DEEP, 1):
                for _ in range(per_round):
                    times[card].append((await conn.get(_page(card)))[0])
    return times


async def _reviewer(address: tuple[str, int], count: int, out: list[float], proxied: bool) -> None:
    async with _Connection(address, "reviewer" if proxied else None) as conn:
        for _ in range(count):
            start = time.perf_counter()
            out.append((await conn.get(_page(1)))[0])
            await asyncio.sleep(max(0.0, PACE - (time.perf_counter() - start)))


async def _reader(address: tuple[str, int], stop: asyncio.Event, counts: dict[int, int], proxied: bool) -> None:
    async with _Connection(address, "reader" if proxied else None) as conn:
        while not stop.is_set():
            _, status = await conn.get(_page(DEEP), statuses=(200, 429))
            counts[status] = counts.get(status, 0) + 1
            await asyncio.sleep(0)  # no pause beyond yielding to the other clients


async def _hostile_round(
    address: tuple[str, int], count: int, loaded: bool, out: list[float], proxied: bool = True
) -> int:
    stop = asyncio.Event()
    counts = {200: 0}
    readers = [asyncio.create_task(_reader(address, stop, counts, proxied)) for _ in range(READERS if loaded else 0)]
    if loaded:
        await asyncio.sleep(1.0)  # the readers at full speed before the reviewer starts
    await _reviewer(address, count, out, proxied)
    stop.set()
    await asyncio.gather(*readers)
    return counts[200]


def bench_deep_card(cfg: Config) -> Result:
    rounds, per_round = cfg.rep_count(6, 3), cfg.size(25, 20)
    with work_dir("web-reads-") as root:
        settings = _store(root)
        with _serve(settings) as inspector:
            times = asyncio.run(_cards(inspector, rounds, per_round))
    deep, first = _p95(times[DEEP]) * 1000, _p95(times[1]) * 1000
    return Result(
        "web_deep_card",
        verdict(deep <= DEEP_TARGET * first),
        ours=f"card {DEEP} p95 {deep:.1f} ms",
        baseline=f"card 1 p95 {first:.1f} ms",
        ratio=first / deep,
        target=f"card {DEEP} p95 <= {DEEP_TARGET:g}x card 1 (ratio >= {1 / DEEP_TARGET:.2f})",
        notes=[
            f"card {DEEP} / card 1 p95 = {deep / first:.2f}; {len(times[1])} requests of each, one client, "
            f"{rounds} rounds of {per_round}, the Review page (HTML) from `reviewtrail serve` (1 worker)",
            f"{ITEMS:,} items of one campaign, the first {ITEMS // 2} decided ({RECORDS:,} records), SQLite; "
            f"load average before the run {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs",
        ],
    )


def bench_hostile_readers(cfg: Config) -> Result:
    rounds, count = cfg.rep_count(4, 2), cfg.size(40, 16)
    alone: list[float] = []
    loaded: list[float] = []
    direct: dict[bool, list[float]] = {False: [], True: []}
    served = 0
    with work_dir("web-reads-") as root:
        settings = _store(root)
        with _serve(settings) as inspector, _proxy(settings, inspector, root) as proxy:
            asyncio.run(_hostile_round(proxy, 4, False, []))  # warm-up, untimed
            for r in range(rounds):
                for is_loaded in (False, True) if r % 2 == 0 else (True, False):
                    served += asyncio.run(_hostile_round(proxy, count, is_loaded, loaded if is_loaded else alone))
            for is_loaded in (False, True):  # for the notes: the same at the inspector itself, no read limit
                asyncio.run(_hostile_round(inspector, count, is_loaded, direct[is_loaded], proxied=False))
    busy, calm = _p95(loaded) * 1000, _p95(alone) * 1000
    unlimited = _p95(direct[True]) / _p95(direct[False])
    return Result(
        "web_hostile_readers",
        verdict(busy <= HOSTILE_TARGET * calm),
        ours=f"p95 {busy:.1f} ms with {READERS} readers",
        baseline=f"p95 {calm:.1f} ms alone",
        ratio=calm / busy,
        target=f"loaded p95 <= {HOSTILE_TARGET:g}x alone (ratio >= {1 / HOSTILE_TARGET:.2f})",
        notes=[
            f"loaded / alone p95 = {busy / calm:.2f}; the reviewer's card 1 through the proxy, one request every "
            f"{PACE * 1000:.0f} ms, {len(alone)} requests alone and {len(loaded)} loaded, {rounds} rounds of each",
            f"{READERS} clients of one Basic user looped card {DEEP} with no pause: {served} answered 200 "
            "(the rest 429, by the proxy's read limit at its defaults, 5 a second, 30 at once)",
            f"at the inspector itself, no proxy and no read limit, one round: the reviewer's p95 "
            f"{_p95(direct[True]) * 1000:.1f} ms loaded vs {_p95(direct[False]) * 1000:.1f} ms alone "
            f"({unlimited:.2f}x; the readers share the server's one process and its CPU)",
            f"{ITEMS:,} items, the first {ITEMS // 2} decided, SQLite; `reviewtrail serve` (1 worker); load average "
            f"before the run {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs",
        ],
    )
