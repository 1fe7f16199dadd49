"""Ledger benchmarks: appending records in batches of 1,000 on SQLite and PostgreSQL.

ledger_sqlite
    100,000 records (10,000 with --quick) appended with ``Ledger.append`` in batches of
    1,000 to a fresh SQLite ledger (opening it, i.e. creating the schema, is untimed).
    End to end: building the ``NewRecord`` objects is inside the timed region. Figure:
    records/s; PASS/MISS on the absolute target of 20,000 records/s. The ratio is
    against raw ``sqlite3``: ``executemany`` of (seq, payload) rows into a plain table,
    WAL with synchronous=FULL, one transaction per 1,000 rows, the same payload JSON
    bytes (encoded with ``json.dumps`` inside the timed region).

ledger_sqlite_prepared
    The same appends against raw ``executemany`` of the very rows the ledger stores (sealed
    beforehand, untimed) into the ledger's own ``rt_records`` table (same indexes and triggers,
    same PRAGMAs, one transaction per 1,000 rows): what the checks, encoding and sealing cost
    over the database's own work. Target: >= 0.5x.

ledger_postgres
    The same records appended to a PostgreSQL ledger in a throwaway server
    (tests/support/pgserver.py), against raw psycopg ``executemany`` into a plain
    (seq, payload) table in another database of the same server, one transaction per
    1,000 rows. Each side gets a fresh database; a CHECKPOINT and sync(2) precede every
    timed repetition. No fixed target: reported only. SKIP when PostgreSQL is missing.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _util import BENCH_DIR, Config, Result, Timings, measure, rate, remove, timed, verdict, work_dir
from reviewtrail.ledger import Ledger, NewRecord, open_ledger

BATCH = 1_000
TARGET_SQLITE = 20_000
_NOTE = "x" * 40


def _record(i: int) -> NewRecord:
    return NewRecord(type="bench.rec@1", actor="bench", privacy="private", payload={"i": i, "note": _NOTE})


def _payload(i: int) -> bytes:
    """The same bytes the ledger stores for ``_record(i)`` (canonical JSON)."""
    return json.dumps({"i": i, "note": _NOTE}, separators=(",", ":"), sort_keys=True).encode()


def _append_all(led: Ledger, count: int) -> None:
    for start in range(0, count, BATCH):
        led.append([_record(i) for i in range(start, min(start + BATCH, count))])


def _check(led: Ledger, count: int) -> None:
    head = led.head()
    if head is None or head.seq != count:
        raise AssertionError(f"ledger head is {head and head.seq}, expected {count}")
    if head.payload != _payload(count - 1):
        raise AssertionError("baseline payload bytes differ from the ledger's")


def _rows(start: int, count: int) -> list[tuple[int, bytes]]:
    return [(i + 1, _payload(i)) for i in range(start, min(start + BATCH, count))]


def _sqlite_raw(path: Path, count: int) -> Callable[[], None]:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE raw (seq INTEGER PRIMARY KEY, payload BLOB NOT NULL)")

    def run() -> None:
        for start in range(0, count, BATCH):
            conn.execute("BEGIN")
            conn.executemany("INSERT INTO raw (seq, payload) VALUES (?, ?)", _rows(start, count))
            conn.execute("COMMIT")
        conn.close()

    return run


def _ours_sqlite(work: Path, count: int) -> Callable[[int], float]:
    """Appending ``count`` records to a fresh SQLite ledger in batches, timed end to end."""

    def ours(i: int) -> float:
        folder = work / f"ours-{i}"
        folder.mkdir()
        led = open_ledger("sqlite:///" + str(folder / "ledger.sqlite"))
        seconds, _ = timed(lambda: _append_all(led, count))
        _check(led, count)
        led.close()
        remove(folder)
        return seconds

    return ours


def bench_sqlite(cfg: Config) -> Result:
    count = cfg.size(100_000, 10_000)
    reps = cfg.rep_count(3, 1)
    with work_dir("ledger_sqlite-") as work:
        ours = _ours_sqlite(work, count)

        def baseline(i: int) -> float:
            folder = work / f"raw-{i}"
            folder.mkdir()
            seconds, _ = timed(_sqlite_raw(folder / "raw.sqlite", count))
            remove(folder)
            return seconds

        t = measure(reps, ours, baseline)
    ours_rate = count / t.ours_median
    return Result(
        "ledger_sqlite",
        verdict(ours_rate >= TARGET_SQLITE),
        ours=rate(count, t.ours_median, "rec/s"),
        baseline=rate(count, t.baseline_median, "rec/s"),
        ratio=t.ratio,
        target=f">= {TARGET_SQLITE:,} rec/s",
        notes=[
            "baseline: raw sqlite3 executemany of (seq, payload) rows, WAL, synchronous=FULL, one txn per batch",
            f"PASS/MISS is on the absolute {TARGET_SQLITE:,} rec/s target; the ratio is informational",
            f"{count:,} records in batches of {BATCH:,}; timed region includes building the NewRecord objects "
            f"(end to end); median of {reps}",
            t.spread(),
        ],
    )


_COLUMNS = "seq, id, type, time, actor, privacy, subject, supersedes, payload, payload_hash, prev_hash, hash"
TARGET_PREPARED_RATIO = 0.5


def _prepared_rows(count: int) -> list[tuple[Any, ...]]:
    """The rows the ledger stores for ``count`` records, sealed beforehand (untimed)."""
    from reviewtrail.ledger import MemoryLedger

    mem = MemoryLedger()
    _append_all(mem, count)
    return [
        (e.seq, e.id, e.type, e.time, e.actor, e.privacy, e.subject, e.supersedes, e.payload, e.payload_hash,
         e.prev_hash, e.hash)
        for e in mem.read()
    ]  # fmt: skip


def bench_sqlite_prepared(cfg: Config) -> Result:
    count = cfg.size(100_000, 10_000)
    reps = cfg.rep_count(3, 1)
    rows = _prepared_rows(count)
    with work_dir("ledger_sqlite_prepared-") as work:
        ours = _ours_sqlite(work, count)

        def baseline(i: int) -> float:
            folder = work / f"raw-{i}"
            folder.mkdir()
            open_ledger("sqlite:///" + str(folder / "ledger.sqlite")).close()  # the same schema, untimed
            conn = sqlite3.connect(folder / "ledger.sqlite", isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")

            def run() -> None:
                insert = f"INSERT INTO rt_records ({_COLUMNS}) VALUES ({', '.join('?' * 12)})"
                for start in range(0, count, BATCH):
                    conn.execute("BEGIN IMMEDIATE")
                    conn.executemany(insert, rows[start : start + BATCH])
                    conn.execute("COMMIT")

            seconds, _ = timed(run)
            conn.close()
            remove(folder)
            return seconds

        t = measure(reps, ours, baseline)
    return Result(
        "ledger_sqlite_prepared",
        verdict(t.ratio >= TARGET_PREPARED_RATIO),
        ours=rate(count, t.ours_median, "rec/s"),
        baseline=rate(count, t.baseline_median, "rec/s"),
        ratio=t.ratio,
        target=f">= {TARGET_PREPARED_RATIO}x the prepared rows",
        notes=[
            "baseline: raw sqlite3 executemany of the same rows, sealed beforehand, into the ledger's own "
            "rt_records (same indexes and triggers), WAL, synchronous=FULL, one txn per batch",
            f"{count:,} records in batches of {BATCH:,}; ours builds, validates, encodes and seals them; "
            f"median of {reps}",
            t.spread(),
        ],
    )


def _postgres_server() -> tuple[Any, str | None]:
    """A started PgServer, or (None, reason) when PostgreSQL is not available here."""
    sys.path.insert(0, str(BENCH_DIR.parent / "tests"))
    from support.pgserver import PgServer, find_bindir

    if find_bindir() is None:
        return None, "PostgreSQL server binaries (initdb, pg_ctl) not found"
    try:
        server = PgServer()
    except RuntimeError as exc:
        return None, str(exc)
    try:
        server.start()
    except BaseException:
        server.stop()
        raise
    return server, None


def _measure_postgres(server: Any, count: int, reps: int) -> Timings:
    import psycopg

    with psycopg.connect(server.url, autocommit=True) as admin:

        def settle() -> None:
            admin.execute("CHECKPOINT")
            os.sync()

        def ours(i: int) -> float:
            led = open_ledger(server.new_database())
            seconds, _ = timed(lambda: _append_all(led, count), settle)
            _check(led, count)
            led.close()
            return seconds

        def baseline(i: int) -> float:
            with psycopg.connect(server.new_database()) as conn:
                conn.execute("CREATE TABLE raw (seq BIGINT PRIMARY KEY, payload BYTEA NOT NULL)")
                conn.commit()

                def run() -> None:
                    for start in range(0, count, BATCH):
                        with conn.cursor() as cur:
                            cur.executemany("INSERT INTO raw (seq, payload) VALUES (%s, %s)", _rows(start, count))
                        conn.commit()

                seconds, _ = timed(run, settle)
            return seconds

        return measure(reps, ours, baseline)


def bench_postgres(cfg: Config) -> Result:
    count = cfg.size(100_000, 10_000)
    reps = cfg.rep_count(3, 1)
    server, reason = _postgres_server()
    if server is None:
        return Result("ledger_postgres", "SKIP", target="report", notes=[f"skipped: {reason}"])
    try:
        t = _measure_postgres(server, count, reps)
    finally:
        server.stop()
    return Result(
        "ledger_postgres",
        "REPORT",
        ours=rate(count, t.ours_median, "rec/s"),
        baseline=rate(count, t.baseline_median, "rec/s"),
        ratio=t.ratio,
        target="report",
        notes=[
            "baseline: raw psycopg executemany of (seq, payload) rows into a plain table, one txn per batch",
            f"{count:,} records in batches of {BATCH:,}; timed region includes building the NewRecord objects "
            f"(end to end); median of {reps}",
            t.spread(),
        ],
    )
