"""The inspector under hostile connections: a reviewer's latency alone and while a crowd holds
idle and slowloris connections.

web_hostile_connections
    ``reviewtrail serve`` (bench_web's server: ``--workers 2``, default limits) over a small store
    (one campaign of 20 items, bench/_hr_store.py). The reviewer is one client on a keep-alive
    connection from 127.0.0.2, sending ``GET /review/bench-campaign/1`` one after another for 15 s
    a phase (3 s with --quick; longer than the header timeout); the figure is its p95 while
    another process holds 2,000 idle connections and 2,000 slowloris connections (a partial
    request head, then one byte every 2 s), each group spread over 20 client addresses
    (127.0.1.x and 127.0.2.x: 100 each, under the per-client cap), every connection the server
    closes opened again. Baseline, in the same run: the reviewer's p95 alone. The phases alternate
    (alone, hostile, alone, ...). Target: p95 under attack <= 2x p95 alone. The note gives the
    connections held when the reviewer started, and how many the server closed or refused (503).
"""

from __future__ import annotations

import contextlib
import http.client
import multiprocessing
import os
import selectors
import socket
import time
from multiprocessing.connection import Connection
from pathlib import Path

from _hr_store import CAMPAIGN, build_review_store
from _util import Config, Result, verdict, work_dir
from bench_human_review import _p95
from bench_web import Server
from reviewtrail.app import init_store, open_store
from reviewtrail.config import Settings

TARGET = 2.0
REVIEWER = "127.0.0.2"
SLOW_HEAD = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
DRIP = 2.0


def _connect(port: int, source: str, slow: bool) -> socket.socket | None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((source, 0))
        sock.settimeout(10)
        sock.connect(("127.0.0.1", port))
        if slow:
            sock.sendall(SLOW_HEAD)
        sock.setblocking(False)
    except OSError:
        sock.close()
        return None
    return sock


def _crowd(port: int, per_group: int, ready: Connection, stop: Connection) -> None:
    """Hold ``per_group`` idle and ``per_group`` slow connections (20 addresses each), reopening
    each one the server closes, until ``stop`` has a message; then send the counts."""
    selector = selectors.DefaultSelector()
    counts = {"closed": 0, "refused": 0}
    slots = [(f"127.0.{1 + slow}.{1 + i % 20}", bool(slow)) for slow in (0, 1) for i in range(per_group)]

    def open_slot(slot: tuple[str, bool]) -> None:
        sock = _connect(port, *slot)
        if sock is not None:
            selector.register(sock, selectors.EVENT_READ, (slot, [time.monotonic()]))

    for slot in slots:
        open_slot(slot)
    ready.send(len(selector.get_map()))
    while not stop.poll():
        for key, _ in selector.select(timeout=0.2):
            slot, _sent = key.data
            try:
                data = key.fileobj.recv(4096)  # type: ignore[union-attr]
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            counts["refused"] += data.startswith(b"HTTP/1.1 503")
            if not data or data.startswith(b"HTTP/1.1 503"):
                counts["closed"] += 1
                selector.unregister(key.fileobj)
                key.fileobj.close()  # type: ignore[union-attr]
                open_slot(slot)
        now = time.monotonic()
        for key in list(selector.get_map().values()):
            (_, slow), sent = key.data
            if slow and now - sent[0] >= DRIP:
                with contextlib.suppress(OSError):
                    key.fileobj.send(b"a")  # type: ignore[union-attr]
                sent[0] = now
    ready.send(counts)
    for key in list(selector.get_map().values()):
        key.fileobj.close()  # type: ignore[union-attr]


def _reviewer(port: int, path: str, seconds: float) -> list[float]:
    """GETs of ``path`` one after another on one keep-alive connection for ``seconds``."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60, source_address=(REVIEWER, 0))
    out: list[float] = []
    end = time.perf_counter() + seconds
    try:
        while time.perf_counter() < end:
            t0 = time.perf_counter()
            conn.request("GET", path)
            response = conn.getresponse()
            body = response.read()
            out.append(time.perf_counter() - t0)
            if response.status != 200 or b"Candidate A" not in body:
                raise AssertionError(f"GET {path}: {response.status}: {body[:300]!r}")
    finally:
        conn.close()
    return out


def _store(root: Path) -> Settings:
    settings = Settings(store=root / "store", database_url=f"sqlite:///{root / 'ledger.sqlite'}")
    init_store(settings).close()
    with open_store(settings) as store:
        build_review_store(store, items=20, records=0)
    return settings


def bench_hostile_connections(cfg: Config) -> Result:
    # A phase outlasts the header timeout (10 s), so the server closes the crowd and it comes back.
    rounds, seconds, per_group = cfg.rep_count(3, 1), cfg.size(15.0, 3.0), cfg.size(2000, 300)
    path = f"/review/{CAMPAIGN[0]}/{CAMPAIGN[1]}"
    alone: list[float] = []
    hostile: list[float] = []
    held: list[int] = []
    totals = {"closed": 0, "refused": 0}
    with work_dir("web-hostile") as root:
        server = Server(_store(root))
        try:
            _reviewer(server.port, path, 0.5)  # warm-up, untimed
            for _ in range(rounds):
                alone += _reviewer(server.port, path, seconds)
                ready, ready_child = multiprocessing.Pipe()
                stop_child, stop = multiprocessing.Pipe()
                crowd = multiprocessing.get_context("fork").Process(
                    target=_crowd, args=(server.port, per_group, ready_child, stop_child)
                )
                crowd.start()
                held.append(ready.recv())
                time.sleep(1.0)  # the server accepts what the kernel already connected
                hostile += _reviewer(server.port, path, seconds)
                stop.send(True)
                for name, value in ready.recv().items():
                    totals[name] += value
                crowd.join(60)
        finally:
            server.stop()
    ours, base = _p95(hostile) * 1000, _p95(alone) * 1000
    return Result(
        "web_hostile_connections",
        verdict(ours <= TARGET * base),
        ours=f"p95 {ours:.1f} ms under attack",
        baseline=f"p95 {base:.1f} ms alone",
        ratio=base / ours,
        target=f"p95 under attack <= {TARGET:g}x alone (ratio >= {1 / TARGET:.2f})",
        notes=[
            f"GET {path} from {REVIEWER}, {rounds} rounds of {seconds:g} s per phase ({len(alone):,} requests "
            f"alone, {len(hostile):,} under attack); under attack / alone = {ours / base:.2f}x",
            f"crowd: {per_group:,} idle + {per_group:,} slowloris connections over 40 addresses, held at start "
            f"{min(held):,}-{max(held):,}; closed by the server {totals['closed']:,} (of which 503 "
            f"{totals['refused']:,}), each reopened",
            f"load average before the run {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs",
        ],
    )
