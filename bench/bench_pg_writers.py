"""Several writer processes appending to one PostgreSQL ledger at once.

``ledger_postgres_writers``: 4 processes (spawned, each with its own connection) append N/4
records each, in batches of 1,000, to one fresh ledger; the figure is the total records per
second from the moment all are released until the last batch commits, the chain checked
gap-free afterwards (untimed). The baseline is 4 processes inserting the same payload bytes
with raw psycopg ``executemany`` into a plain table (seq from disjoint ranges, no chain, no
lock), one transaction per batch. Target: >= 20,000 records/s in total.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from typing import Any

from _util import Config, Result, measure, rate, verdict
from bench_ledger import BATCH, _payload, _postgres_server, _record
from reviewtrail.ledger import open_ledger

WRITERS = 4
TARGET = 20_000


def _ours_worker(url: str, first: int, count: int, ready: Any, go: Any, done: Any) -> None:
    led = open_ledger(url)
    ready.put(first)
    go.wait()
    for start in range(first, first + count, BATCH):
        led.append([_record(i) for i in range(start, min(start + BATCH, first + count))])
    led.close()
    done.put(time.perf_counter())


def _raw_worker(url: str, first: int, count: int, ready: Any, go: Any, done: Any) -> None:
    import psycopg

    with psycopg.connect(url) as conn:
        ready.put(first)
        go.wait()
        for start in range(first, first + count, BATCH):
            rows = [(i + 1, _payload(i)) for i in range(start, min(start + BATCH, first + count))]
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO raw (seq, payload) VALUES (%s, %s)", rows)
            conn.commit()
    done.put(time.perf_counter())


def _run_writers(target: Any, url: str, count: int) -> float:
    """Start the writers, release them together, return seconds until the last one finishes."""
    ctx = mp.get_context("spawn")
    ready, go, done = ctx.Queue(), ctx.Event(), ctx.Queue()
    share = count // WRITERS
    procs = [ctx.Process(target=target, args=(url, w * share, share, ready, go, done)) for w in range(WRITERS)]
    for p in procs:
        p.start()
    for _ in procs:  # every writer has imported and connected (untimed)
        ready.get(timeout=120)
    start = time.perf_counter()
    go.set()
    ends = [done.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        if p.exitcode != 0:
            raise RuntimeError(f"a writer process exited with {p.exitcode}")
    return max(ends) - start


def bench_writers(cfg: Config) -> Result:
    count = cfg.size(200_000, 20_000)
    reps = cfg.rep_count(3, 1)
    server, reason = _postgres_server()
    if server is None:
        return Result("ledger_postgres_writers", "SKIP", target="report", notes=[f"skipped: {reason}"])
    try:
        import psycopg

        def ours(i: int) -> float:
            url = server.new_database()
            open_ledger(url).close()  # the schema, untimed
            seconds = _run_writers(_ours_worker, url, count)
            led = open_ledger(url)
            problems = list(led.verify())
            head = led.head_seq()
            led.close()
            if head != count or problems:
                raise AssertionError(f"the chain has {head} records (expected {count}); problems: {problems[:3]}")
            return seconds

        def baseline(i: int) -> float:
            url = server.new_database()
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("CREATE TABLE raw (seq BIGINT PRIMARY KEY, payload BYTEA NOT NULL)")
            return _run_writers(_raw_worker, url, count)

        t = measure(reps, ours, baseline)
    finally:
        server.stop()
    total = count / t.ours_median
    return Result(
        "ledger_postgres_writers",
        verdict(total >= TARGET),
        ours=rate(count, t.ours_median, "rec/s"),
        baseline=rate(count, t.baseline_median, "rec/s"),
        ratio=t.ratio,
        target=f">= {TARGET:,} rec/s in total",
        notes=[
            f"{WRITERS} writer processes on one ledger, {count // WRITERS:,} records each in batches of {BATCH:,}; "
            "the chain is checked gap-free afterwards",
            f"baseline: {WRITERS} processes of raw psycopg executemany into a plain (seq, payload) table",
            f"median of {reps}",
            t.spread(),
        ],
    )
