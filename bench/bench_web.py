"""The inspector under load: ``reviewtrail serve`` as a real process on 127.0.0.1, 32 clients at once.

web_review_page / web_queue_api
    The store of bench/_hr_store.py: 100,000 items in 1,000,000 records, half of them decided (the
    items recorded first), SQLite; 5,000 items in 50,000 records with --quick. Building the full
    store takes minutes, and the inspector opens it read-only, so it is built once and kept under
    bench/.work/cache/ (named by the sizes and a digest of reviewtrail's version and the builder's
    source, so a change to either builds it afresh; the note says whether it was reused).
    32 clients, each on its own keep-alive connection, send requests one after another with no
    pause (closed loop) for a fixed number per client; the figure is the 95th percentile of the
    request latency (request written to body read in full) over every request of the kind:
    - web_review_page: the Review page of the campaign, ``/review/bench-campaign/1`` (card 1: the
      first open item, past the 50,000 decided ones), drawn from the library's queue;
    - web_queue_api: the same card as JSON, ``/api/review/bench-campaign/1/cards/1``.
    Baseline, in the same run against the same server: the static style sheet
    ``/static/inspector.css`` under the same load (the floor of this server answering anything:
    the file is answered from memory on the event loop, with no thread and no read).
    Targets: web_review_page, the page's p95 at most 1.25 times the static file's, both with 32
    clients, in one run (the figure is page p95 / static p95); web_queue_api, p95 <= 50 ms (the
    page's p95 against 50 ms is a note). The three kinds take turns in rounds (rotating which goes
    first). Every response must be 200 with the expected content, or the benchmark fails.
    Throughput (requests/s) is printed too.
    A fourth kind of round, also in the same run: 8 clients fetch the static file while 32 load the
    page (static files and pages at once, as a browser asks for them); its p95 says whether a
    static file waits behind page renders, against the static file's p95 with 32 clients alone.
    And the page's floor, in rounds of its own after the inspector's: bench/_page_floor.py serves
    the same page (the same card read through the indexes and checked against its records, the
    same template and context) under uvicorn with httptools in as many worker processes, with no
    framework, guard, connection limits or threads, the work done on the event loop; 32 clients as
    for the page. The note gives page p95 / floor p95: what the inspector adds around the work.
    A static file answers without reading the store, so it bounds what any page could reach; the
    floor says what this page, doing its work, could reach.

The clients are a plain HTTP/1.1 client on asyncio streams in this process (one event loop), so
the client's own cost per request is small next to the server's; the server runs with
``--workers 2``, one process per core of these machines. The clients share the two cores with the
server.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _hr_store
from _hr_store import CAMPAIGN
from _util import WORK_ROOT, Config, Result, verdict
from bench_human_review import _fill, _p95
from reviewtrail import app
from reviewtrail._version import __version__
from reviewtrail.config import Settings

TARGET_MS = 50.0
TARGET_PAGE_OVER_STATIC = 1.25  # web_review_page: page p95 / static p95, 32 clients each, one run
BESIDE = 8  # static clients beside the page's clients in the mixed rounds
WORKERS = 2  # reviewtrail serve --workers
CLIENTS = 32
CACHE = WORK_ROOT / "cache"
PATHS = {
    "static": "/static/inspector.css",
    "page": f"/review/{CAMPAIGN[0]}/{CAMPAIGN[1]}",
    "api": f"/api/review/{CAMPAIGN[0]}/{CAMPAIGN[1]}/cards/1",
}
EXPECTED = {"static": b"font", "page": b"Candidate A", "api": b'"position":1'}


@dataclass
class Cached:
    settings: Settings
    items: int
    records: int
    note: str


@dataclass
class Measured:
    latencies: dict[str, list[float]] = field(default_factory=lambda: {kind: [] for kind in PATHS})
    alone: dict[str, list[float]] = field(default_factory=lambda: {kind: [] for kind in PATHS})
    beside_pages: list[float] = field(default_factory=list)  # static, while CLIENTS load the page
    floor: list[float] = field(default_factory=list)  # the page's floor (_page_floor.py), CLIENTS at once
    floor_seconds: float = 0.0
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PATHS, 0.0))
    store: Cached | None = None
    rounds: int = 0
    per_client: int = 0
    load: float = 0.0

    def p95_ms(self, kind: str) -> float:
        return _p95(self.latencies[kind]) * 1000

    def rate(self, kind: str) -> float:
        return len(self.latencies[kind]) / self.seconds[kind]


_MEASURED: dict[bool, Measured] = {}


def _store(cfg: Config) -> Cached:
    """The benchmark's store, built once per sizes, reviewtrail version and builder source."""
    items, records = cfg.size(100_000, 5_000), cfg.size(1_000_000, 50_000)
    # Query tables of another version would be refused by a read-only open: they are part of the key.
    tables = repr([(p.name, p.version) for p in app.build_catalog().projections])
    source = inspect.getsource(_hr_store) + inspect.getsource(_fill) + __version__ + tables
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    prefix = f"web-store-{items}-{records}-"
    root = CACHE / f"{prefix}{digest}"
    settings = Settings(store=root / "store", database_url=f"sqlite:///{root / 'ledger.sqlite'}")
    done = root / "complete.json"
    if done.is_file():
        facts = json.loads(done.read_text())
        note = f"reused from {root.relative_to(WORK_ROOT.parent)}, built in {facts['seconds']:.0f} s"
        return Cached(settings, facts["items"], facts["records"], note)
    CACHE.mkdir(parents=True, exist_ok=True)
    for stale in CACHE.glob(f"{prefix}*"):  # an earlier version's store, or a build cut short
        shutil.rmtree(stale, ignore_errors=True)
    root.mkdir()
    made, count, seconds = _fill(settings, cfg)
    done.write_text(json.dumps({"items": len(made), "records": count, "seconds": seconds}))
    return Cached(settings, len(made), count, f"built in {seconds:.0f} s, kept in {root.relative_to(WORK_ROOT.parent)}")


class Server:
    """``reviewtrail serve --port 0 --json`` over ``settings`` (or ``command``, a server that
    announces itself the same way), stopped (SIGTERM) by :meth:`stop`."""

    def __init__(self, settings: Settings, command: list[str] | None = None) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("REVIEWTRAIL_")}
        env |= {"REVIEWTRAIL_STORE": str(settings.store), "REVIEWTRAIL_DATABASE_URL": settings.database_url}
        command = command or [
            sys.executable, "-m", "reviewtrail", "serve", "--port", "0", "--json", "--workers", str(WORKERS),
        ]  # fmt: skip
        self.proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        text = ""
        while True:  # the JSON announcement, printed once the socket listens, ends with a line "}"
            line = self.proc.stdout.readline() if self.proc.stdout else ""
            if not line:
                raise RuntimeError(f"{' '.join(command[:4])} exited ({self.proc.wait()})")
            text += line
            if line.startswith("}") or (line.startswith("{") and line.rstrip().endswith("}")):
                break
        announced = json.loads(text)
        self.host, self.port = announced["host"], announced["port"]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


async def _client(host: str, port: int, path: str, count: int, expected: bytes, out: list[float]) -> None:
    """``count`` GETs of ``path`` one after another on one keep-alive connection."""
    reader, writer = await asyncio.open_connection(host, port)
    request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: */*\r\n\r\n".encode()
    try:
        for _ in range(count):
            t0 = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            length = next(int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:"))
            body = await reader.readexactly(length)
            out.append(time.perf_counter() - t0)
            if not lines[0].startswith("HTTP/1.1 200") or expected not in body:
                raise AssertionError(f"GET {path}: {lines[0]}: {body[:300]!r}")
    finally:
        writer.close()
        await writer.wait_closed()


async def _round(host: str, port: int, kind: str, per_client: int, measured: Measured, clients: int = CLIENTS) -> None:
    if clients == 1:  # one client alone: the server's time per request, without waiting behind others
        await _client(host, port, PATHS[kind], per_client, EXPECTED[kind], measured.alone[kind])
        return
    out: list[float] = []
    start = time.perf_counter()
    await asyncio.gather(*(_client(host, port, PATHS[kind], per_client, EXPECTED[kind], out) for _ in range(clients)))
    measured.seconds[kind] += time.perf_counter() - start
    measured.latencies[kind] += out


async def _mixed(host: str, port: int, per_client: int, measured: Measured) -> None:
    """``BESIDE`` clients fetch the static file while ``CLIENTS`` load the page."""
    pages: list[float] = []
    await asyncio.gather(
        *(_client(host, port, PATHS["page"], per_client, EXPECTED["page"], pages) for _ in range(CLIENTS)),
        *(
            _client(host, port, PATHS["static"], per_client, EXPECTED["static"], measured.beside_pages)
            for _ in range(BESIDE)
        ),
    )


def _floor(measured: Measured) -> None:
    """The page's floor (bench/_page_floor.py: the same card read and template, no framework,
    guard or threads), under the same load as the page, in rounds of its own."""
    assert measured.store is not None
    settings = measured.store.settings
    floor = Path(__file__).with_name("_page_floor.py")
    args = [str(settings.store), settings.database_url, str(WORKERS), CAMPAIGN[0], str(CAMPAIGN[1])]
    server = Server(settings, [sys.executable, str(floor), *args])
    try:
        asyncio.run(_client(server.host, server.port, PATHS["page"], 2, EXPECTED["page"], []))  # warm-up
        for _ in range(measured.rounds):
            out: list[float] = []
            start = time.perf_counter()
            clients = (
                _client(server.host, server.port, PATHS["page"], measured.per_client, EXPECTED["page"], out)
                for _ in range(CLIENTS)
            )
            asyncio.run(_gather(clients))
            measured.floor_seconds += time.perf_counter() - start
            measured.floor += out
    finally:
        server.stop()


async def _gather(clients: Any) -> None:
    await asyncio.gather(*clients)


def _measure(cfg: Config) -> Measured:
    if cfg.quick not in _MEASURED:
        measured = Measured(store=_store(cfg))
        measured.rounds = cfg.rep_count(5, 2)
        measured.per_client = cfg.size(20, 5)
        measured.load = os.getloadavg()[0]
        server = Server(measured.store.settings)
        try:
            kinds = list(PATHS)
            for kind in kinds:  # warm-up, untimed: imports, the first reads of the store
                asyncio.run(_round(server.host, server.port, kind, 2, Measured()))
            for i in range(measured.rounds):
                for kind in kinds[i % 3 :] + kinds[: i % 3]:
                    asyncio.run(_round(server.host, server.port, kind, measured.per_client, measured))
                    asyncio.run(_round(server.host, server.port, kind, measured.per_client, measured, clients=1))
                asyncio.run(_mixed(server.host, server.port, measured.per_client, measured))
        finally:
            server.stop()
        _floor(measured)
        _MEASURED[cfg.quick] = measured
    return _MEASURED[cfg.quick]


def _result(name: str, kind: str, cfg: Config) -> Result:
    m = _measure(cfg)
    assert m.store is not None
    ours, base = m.p95_ms(kind), m.p95_ms("static")
    return Result(
        name,
        verdict(ours <= TARGET_MS),
        ours=f"p95 {ours:.1f} ms ({m.rate(kind):,.0f} req/s)",
        baseline=f"p95 {base:.1f} ms ({m.rate('static'):,.0f} req/s, {PATHS['static']})",
        ratio=base / ours,
        target=f"p95 <= {TARGET_MS:g} ms",
        notes=_notes(kind, m),
    )


def _notes(kind: str, m: Measured) -> list[str]:
    assert m.store is not None
    return [
        f"GET {PATHS[kind]}: {CLIENTS} clients, closed loop, {len(m.latencies[kind]):,} requests "
        f"({m.rounds} rounds of {m.per_client} per client), median {_median_ms(m.latencies[kind]):.1f} ms, "
        f"max {max(m.latencies[kind]) * 1000:.1f} ms",
        f"one client alone, same rounds: median {_median_ms(m.alone[kind]):.1f} ms "
        f"(static file {_median_ms(m.alone['static']):.1f} ms); load average before the run "
        f"{m.load:.2f} on {os.cpu_count()} CPUs",
        f"{m.store.items:,} items, {m.store.records:,} records, half decided, SQLite ({m.store.note})",
    ]


def _median_ms(xs: list[float]) -> float:
    ordered = sorted(xs)
    return ordered[len(ordered) // 2] * 1000


def bench_review_page(cfg: Config) -> Result:
    """Page p95 / static p95, 32 clients each, one run; the page's floor in the notes."""
    m = _measure(cfg)
    page, static = m.p95_ms("page"), m.p95_ms("static")
    beside = _p95(m.beside_pages) * 1000
    floor = _p95(m.floor) * 1000
    return Result(
        "web_review_page",
        verdict(page <= TARGET_PAGE_OVER_STATIC * static),
        ours=f"p95 {page:.1f} ms = {page / static:.2f}x static ({m.rate('page'):,.0f} req/s)",
        baseline=f"p95 {static:.1f} ms ({m.rate('static'):,.0f} req/s, {PATHS['static']})",
        ratio=static / page,
        target=f"page p95 <= {TARGET_PAGE_OVER_STATIC:g}x static p95",
        notes=[
            f"page p95 {page:.1f} ms against {TARGET_MS:g} ms: {verdict(page <= TARGET_MS)}",
            f"the page's floor (bench/_page_floor.py: the same card read and template under uvicorn with no "
            f"framework, guard or threads), same load in rounds of its own: p95 {floor:.1f} ms "
            f"({len(m.floor) / m.floor_seconds:,.0f} req/s); page p95 = {page / floor:.2f}x the floor",
            f"static file beside the page: {BESIDE} clients fetching {PATHS['static']} while {CLIENTS} load the "
            f"page, p95 {beside:.1f} ms ({len(m.beside_pages):,} requests) against {static:.1f} ms with "
            f"{CLIENTS} clients alone",
            *_notes("page", m),
        ],
    )


def bench_queue_api(cfg: Config) -> Result:
    return _result("web_queue_api", "api", cfg)
