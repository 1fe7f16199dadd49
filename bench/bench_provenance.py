"""Provenance: sandbox overhead and lineage query time.

sandbox_run
    Wall time of ``run_code`` for ``true`` (bash) in a session — bubblewrap start, workspace
    snapshots before and after, CAS puts and the ExecutionRun append — against a plain
    ``subprocess.run(["true"])``. Median of 15 (5 with --quick). Reported, no fixed target.

lineage_query
    ``lineage()`` of an artifact version whose history spans a chain of 3 runs, in a store
    holding 10,000 recorded execution runs (2,000 with --quick; appended directly in batches
    of 1,000 with shared CAS objects, since only the ledger's size matters here). Median of
    30 queries; baseline: one ``ledger.get`` by id. Target: median <= 50 ms.
"""

from __future__ import annotations

import statistics
import subprocess
import time
from datetime import UTC, datetime

from _util import Config, Result, verdict, work_dir
from reviewtrail.app import init_store
from reviewtrail.config import Settings
from reviewtrail.ledger import new_record
from reviewtrail.ledger._envelope import format_time, new_id
from reviewtrail.provenance import ExecutionRun, create_session, declare_artifact, lineage, run_code


def _store(path):  # type: ignore[no-untyped-def]
    return init_store(Settings(store=path, database_url=f"sqlite:///{path / 'ledger.sqlite'}"))


def bench_sandbox(cfg: Config) -> Result:
    reps = cfg.rep_count(15, 5)
    with work_dir("sandbox-") as work:
        store = _store(work / "store")
        session = create_session(store)
        ours: list[float] = []
        base: list[float] = []
        for _ in range(reps):
            t0 = time.perf_counter()
            out = run_code(store, session_id=session.session_id, code="true", lang="bash")
            ours.append(time.perf_counter() - t0)
            if out.run.status != "succeeded":
                raise AssertionError(f"sandboxed true did not succeed: {out.run.error}")
            t0 = time.perf_counter()
            subprocess.run(["true"], check=True)
            base.append(time.perf_counter() - t0)
        store.close()
    o, b = statistics.median(ours) * 1000, statistics.median(base) * 1000
    return Result(
        "sandbox_run",
        "REPORT",
        ours=f"{o:.1f} ms",
        baseline=f"{b:.1f} ms (subprocess true)",
        ratio=b / o,
        target="report",
        notes=[f"median of {reps}; includes bwrap start, snapshots, 3 CAS puts and the ledger append"],
    )


def bench_lineage(cfg: Config) -> Result:
    total = cfg.size(10_000, 2_000)
    with work_dir("lineage-") as work:
        store = _store(work / "store")
        session = create_session(store)
        sid = session.session_id
        code = store.cas.put(b"print('x')", pool="agent-state", media_type="text/plain").to_json()
        empty = store.cas.put(b"", pool="agent-state", media_type="text/plain").to_json()
        now = format_time(datetime.now(UTC))
        made = 0
        while made < total - 3:
            batch = []
            for _ in range(min(1000, total - 3 - made)):
                run_id = new_id()
                run = ExecutionRun(
                    run_id=run_id, session_id=sid, tool_name="bench", language="python", code=code, stdout=empty,
                    stderr=empty, stdout_truncated=False, stderr_truncated=False, exit_code=0, started_at=now,
                    ended_at=now, environment_revision_id="env-bench", kernel_mode="one-shot", kernel_id=None,
                    permission_epoch_id="pe-bench", network_policy="none", network_access_revision=None,
                    created_files=[], modified_files=[], status="succeeded", working_directory="/workspace",
                    env_snapshot=None, timeout_seconds=60.0,
                )  # fmt: skip
                batch.append(new_record(run, actor="bench", privacy="private", id=run_id))
            store.append(batch)
            made += len(batch)
        for step in ("open('r.txt','w').write('1')", "open('r.txt','a').write('2')", "open('r.txt','a').write('3')"):
            run_code(store, session_id=sid, code=step, lang="python")
        declare_artifact(store, session_id=sid, name="r.txt", path="r.txt")
        head = store.ledger.head()
        assert head is not None
        graph = lineage(store, "r.txt")
        runs = sum(1 for n in graph.nodes.values() if n.kind == "execution_run")
        if runs != 3:
            raise AssertionError(f"lineage reached {runs} runs, expected 3")
        ours: list[float] = []
        base: list[float] = []
        for _ in range(30):
            t0 = time.perf_counter()
            lineage(store, "r.txt")
            ours.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            store.ledger.get(head.id)
            base.append(time.perf_counter() - t0)
        store.close()
    o, b = statistics.median(ours) * 1000, statistics.median(base) * 1000
    return Result(
        "lineage_query",
        verdict(o <= 50.0),
        ours=f"{o:.2f} ms",
        baseline=f"{b:.3f} ms (ledger.get)",
        ratio=b / o,
        target="<= 50 ms",
        notes=[f"{head.seq:,} records, {total:,} execution runs; lineage of 3 runs, median of 30"],
    )
