"""Human review benchmarks on a large store: 100,000 review items in 1,000,000 ledger records
(5,000 items in 50,000 records with --quick), built once per backend by bench/_hr_store.py
(untimed) and shared by the benchmarks of that backend.

review_queue_sqlite / review_queue_postgres
    ``review_queue(store, campaign, 1, limit=20)``: the first page of 20 blinded cards, open items
    first, each card resolved (both candidate digests re-checked). Half the items (those recorded
    first, as a reviewer working in order leaves them) are decided: a queue that stepped over
    decided items would pay for all 50,000 of them. Each repetition opens the
    store afresh (untimed), so nothing is cached; median of the repetitions. Target <= 50 ms.
    Baseline: the same 20 item rows read with one raw SQL query (no checks, no resolution).

review_decide_sqlite / review_decide_postgres
    ``decide(...)`` of a ``prefer`` on 200 open items, one call each (re-check, refusal checks,
    idempotency lookup, append). Figure: the 95th percentile. Target p95 <= 10 ms on SQLite and
    <= 5 ms on PostgreSQL. Baseline:
    appending one small record (a campaign-settings record) with ``store.append``, p95.

review_export_sqlite and review_export_memory: bench_review_export.py (a campaign of real shape).
"""

from __future__ import annotations

import atexit
import math
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _hr_store import CAMPAIGN, build_review_store
from _util import BENCH_DIR, WORK_ROOT, Config, Result, verdict
from reviewtrail._struct import parse
from reviewtrail.app import init_store, open_store
from reviewtrail.config import Settings
from reviewtrail.human_review.campaigns import campaign_settings
from reviewtrail.human_review.records import CampaignSettings, ReviewItem, new_campaign_record
from reviewtrail.human_review.session import decide, review_queue

PAGE = 20
DECISIONS = 200
DECIDE_SQLITE_MS = 10.0
DECIDE_POSTGRES_MS = 5.0


@dataclass
class Built:
    settings: Settings
    items: list[ReviewItem]
    records: int
    raw_items_sql: Callable[[], list[Any]]
    note: str


_BUILT: dict[str, Built] = {}
_CLEANUP: list[Callable[[], None]] = []


@atexit.register
def _cleanup() -> None:
    for step in reversed(_CLEANUP):
        step()
    _CLEANUP.clear()


def _sizes(cfg: Config) -> tuple[int, int]:
    return cfg.size(100_000, 5_000), cfg.size(1_000_000, 50_000)


def _fill(settings: Settings, cfg: Config) -> tuple[list[ReviewItem], int, float]:
    items_wanted, records_wanted = _sizes(cfg)
    init_store(settings).close()
    start = time.perf_counter()
    with open_store(settings) as store:
        # Training enabled before any decision: a decision recorded while it was disabled (a
        # canary decision) is never exported, however the settings change later.
        campaign_settings(store, CAMPAIGN[0], CAMPAIGN[1], training=True)
        items = build_review_store(store, items=items_wanted, records=records_wanted)
        head = store.ledger.head()
        count = head.seq if head is not None else 0
    return items, count, time.perf_counter() - start


def _sqlite(cfg: Config) -> Built:
    if "sqlite" not in _BUILT:
        WORK_ROOT.mkdir(exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix="review-", dir=WORK_ROOT))
        _CLEANUP.append(lambda: shutil.rmtree(root, ignore_errors=True))
        db = root / "ledger.sqlite"
        settings = Settings(store=root / "store", database_url=f"sqlite:///{db}")
        items, count, seconds = _fill(settings, cfg)

        def raw() -> list[Any]:
            with sqlite3.connect(db) as conn:
                return conn.execute(
                    "SELECT * FROM rt_p_hr_items WHERE campaign_id = ? AND campaign_version = ? ORDER BY seq LIMIT ?",
                    (*CAMPAIGN, PAGE),
                ).fetchall()

        _BUILT["sqlite"] = Built(settings, items, count, raw, f"built in {seconds:.0f} s")
    return _BUILT["sqlite"]


def _postgres(cfg: Config) -> Built | str:
    if "postgres" not in _BUILT:
        sys.path.insert(0, str(BENCH_DIR.parent / "tests"))
        from bench_ledger import _postgres_server

        server, reason = _postgres_server()
        if server is None:
            return reason or "PostgreSQL is not available"
        _CLEANUP.append(server.stop)
        WORK_ROOT.mkdir(exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix="review-pg-", dir=WORK_ROOT))
        _CLEANUP.append(lambda: shutil.rmtree(root, ignore_errors=True))
        url = server.new_database()
        settings = Settings(store=root / "store", database_url=url)
        items, count, seconds = _fill(settings, cfg)

        def raw() -> list[Any]:
            import psycopg

            with psycopg.connect(url) as conn:
                query = "SELECT * FROM rt_p_hr_items WHERE campaign_id = %s AND campaign_version = %s"
                return conn.execute(f"{query} ORDER BY seq LIMIT %s", (*CAMPAIGN, PAGE)).fetchall()

        _BUILT["postgres"] = Built(settings, items, count, raw, f"built in {seconds:.0f} s")
    return _BUILT["postgres"]


def _p95(xs: list[float]) -> float:
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


def _queue(name: str, built: Built, reps: int) -> Result:
    ours: list[float] = []
    base: list[float] = []
    for i in range(reps):
        for side in (0, 1) if i % 2 == 0 else (1, 0):
            if side == 0:
                with open_store(built.settings) as store:
                    t0 = time.perf_counter()
                    cards = review_queue(store, CAMPAIGN[0], CAMPAIGN[1], limit=PAGE)
                    ours.append(time.perf_counter() - t0)
                if len(cards) != PAGE or any(card.decided for card in cards):
                    raise AssertionError(f"the first page should be {PAGE} open cards")
            else:
                t0 = time.perf_counter()
                rows = built.raw_items_sql()
                base.append(time.perf_counter() - t0)
                if len(rows) != PAGE:
                    raise AssertionError("the raw query found too few items")
    o, b = statistics.median(ours) * 1000, statistics.median(base) * 1000
    return Result(
        name,
        verdict(o <= 50.0),
        ours=f"{o:.1f} ms",
        baseline=f"{b:.2f} ms (raw SQL page)",
        ratio=b / o,
        target="<= 50 ms",
        notes=[
            f"{len(built.items):,} items, {built.records:,} records ({built.note}); first page of {PAGE} open "
            f"cards, {len(built.items) // 2:,} decided items recorded before them; fresh store per rep; "
            f"median of {reps}",
        ],
    )


def _decide(name: str, built: Built, count: int, target_ms: float) -> Result:
    open_items = built.items[len(built.items) // 2 :][-count:]
    ours: list[float] = []
    base: list[float] = []
    with open_store(built.settings) as store:
        for n, item in enumerate(open_items):
            payload = {"disposition": "prefer", "preferred": "A", "strength": "slight", "useForTraining": True}
            t0 = time.perf_counter()
            result = decide(store, item.item_id, payload, submission_id=f"bench-decide-{name}-{n}", reviewer="rev-1")
            ours.append(time.perf_counter() - t0)
            if not result.active:
                raise AssertionError("the new decision should be active")
            settings = parse(
                CampaignSettings,
                {"campaignId": f"bench-base-{n}", "version": 1, "trainingEnabled": bool(n % 2)},
                field="payload",
            )
            t0 = time.perf_counter()
            store.append([new_campaign_record(settings)])
            base.append(time.perf_counter() - t0)
    o, b = _p95(ours) * 1000, _p95(base) * 1000
    return Result(
        name,
        verdict(o <= target_ms),
        ours=f"p95 {o:.2f} ms (median {statistics.median(ours) * 1000:.2f})",
        baseline=f"p95 {b:.2f} ms (append one record)",
        ratio=b / o,
        target=f"p95 <= {target_ms:g} ms",
        notes=[f"{len(open_items)} decisions on open items of {len(built.items):,} in {built.records:,} records"],
    )


def bench_queue_sqlite(cfg: Config) -> Result:
    return _queue("review_queue_sqlite", _sqlite(cfg), cfg.rep_count(15, 5))


def bench_queue_postgres(cfg: Config) -> Result:
    built = _postgres(cfg)
    if isinstance(built, str):
        return Result("review_queue_postgres", "SKIP", target="<= 50 ms", notes=[f"skipped: {built}"])
    return _queue("review_queue_postgres", built, cfg.rep_count(15, 5))


def bench_decide_sqlite(cfg: Config) -> Result:
    return _decide("review_decide_sqlite", _sqlite(cfg), cfg.size(DECISIONS, 50), DECIDE_SQLITE_MS)


def bench_decide_postgres(cfg: Config) -> Result:
    built = _postgres(cfg)
    if isinstance(built, str):
        return Result(
            "review_decide_postgres", "SKIP", target=f"p95 <= {DECIDE_POSTGRES_MS:g} ms", notes=[f"skipped: {built}"]
        )
    return _decide("review_decide_postgres", built, cfg.size(DECISIONS, 50), DECIDE_POSTGRES_MS)
