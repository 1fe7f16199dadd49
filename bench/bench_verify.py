"""Verify: what the whole custody check costs against the checks it had before.

verify_store
    ``Store.verify()`` of a SQLite store holding 20,000 records (5,000 with --quick), half of
    them execution runs (so the provenance query tables are full) and half generic records
    with a CAS reference, and 400 objects of 64 KiB (25 MiB; 100 with --quick). Ours: the full
    check (snapshot, identity, layout files and triggers, objects, chain and references, every
    query table recomputed and compared). Baseline, in the same run: what verify did before —
    re-hash every object and walk the chain (``check_object`` for each object plus
    ``chain_problems`` over ``ledger.read()``). Reported in records/s and MB/s; the ratio is
    the share of time the old checks would take. Median of 5 (3 with --quick). Report only.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

from _util import Config, Result, measure, rate, work_dir
from reviewtrail.app import init_store, open_store
from reviewtrail.config import Settings
from reviewtrail.ledger import NewRecord, chain_problems, new_record
from reviewtrail.ledger._envelope import format_time, new_id
from reviewtrail.provenance import ExecutionRun, create_session
from reviewtrail.store import Store


def _fill(store: Store, records: int, objects: int) -> int:
    session = create_session(store).session_id
    refs = [store.cas.put(os.urandom(64 * 1024)).to_json() for _ in range(objects)]
    code = store.cas.put(b"print('x')", pool="agent-state", media_type="text/plain").to_json()
    now = format_time(datetime.now(UTC))
    made = 0
    while made < records:
        batch: list[NewRecord] = []
        for i in range(min(1000, records - made)):
            if i % 2:
                batch.append(
                    NewRecord(type="bench.result@1", actor="b", privacy="private", payload={"f": refs[i % objects]})
                )
                continue
            run_id = new_id()
            run = ExecutionRun(
                run_id=run_id, session_id=session, tool_name="bench", language="python", code=code, stdout=code,
                stderr=code, stdout_truncated=False, stderr_truncated=False, exit_code=0, started_at=now,
                ended_at=now, environment_revision_id="env-bench", kernel_mode="one-shot", kernel_id=None,
                permission_epoch_id="pe-bench", network_policy="none", network_access_revision=None,
                created_files=[], modified_files=[], status="succeeded", working_directory="/workspace",
                env_snapshot=None, timeout_seconds=60.0,
            )  # fmt: skip
            batch.append(new_record(run, actor="bench", privacy="private", id=run_id))
        store.append(batch)
        made += len(batch)
    return sum(64 * 1024 for _ in range(objects)) + 10


def bench_verify(cfg: Config) -> Result:
    records, objects = cfg.size(20_000, 5_000), cfg.size(400, 100)
    reps = cfg.rep_count(5, 3)
    with work_dir("verify-") as work:
        root = work / "store"
        settings = Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}")
        with init_store(settings) as store:
            size = _fill(store, records, objects)
        store = open_store(settings)
        head = store.ledger.head()
        assert head is not None
        count = head.seq

        def ours(_: int) -> float:
            import time

            t0 = time.perf_counter()
            report = store.verify()
            elapsed = time.perf_counter() - t0
            if not report.ok:
                raise AssertionError(report.problems[:3])
            return elapsed

        def baseline(_: int) -> float:
            import time

            t0 = time.perf_counter()
            bad = [c for loc, n in store.cas.iter_objects() if (c := store.cas.check_object(loc, n)).problem]
            bad_links = list(chain_problems(store.ledger.read()))
            elapsed = time.perf_counter() - t0
            if bad or bad_links:
                raise AssertionError("baseline found problems")
            return elapsed

        timings = measure(reps, ours, baseline)
        rows = sum(len(store.ledger.stored_rows(t)) for t in store.ledger.tables)
        store.close()
    o, b = timings.ours_median, timings.baseline_median
    mib = size / (1024 * 1024)
    return Result(
        "verify_store",
        "REPORT",
        ours=f"{rate(count, o, 'rec/s')}, {mib / o:.1f} MiB/s",
        baseline=f"{rate(count, b, 'rec/s')}, {mib / b:.1f} MiB/s (objects + chain only)",
        ratio=b / o,
        target="report",
        notes=[
            f"{count} records, {objects} objects ({mib:.1f} MiB), {rows} query-table rows recomputed; median of {reps}",
            timings.spread(),
        ],
    )
