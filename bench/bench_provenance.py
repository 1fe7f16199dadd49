"""Provenance: sandbox overhead and lineage query time.

sandbox_run
    Wall time of ``run_code`` for ``true`` (bash) in a session — bubblewrap start, workspace
    snapshots before and after, CAS puts and the ExecutionRun append — against a plain
    ``subprocess.run(["true"])``. Median of 15 (5 with --quick). Reported, no fixed target.

sandbox_cgroup_overhead
    ``run_sandboxed`` of ``true`` (bash) with the run's control groups (memory and pids, made,
    joined and removed per run) against the same run without them (no control group can be made:
    the in-sandbox mechanisms only), and ``bwrap`` alone running ``true`` with the same mounts,
    interleaved in one run; median of 30 (10 with --quick). Figure: the time the groups add.
    Target: <= 25 ms added.

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
from reviewtrail.ledger.records._envelope import format_time
from reviewtrail.ledger.records._fields import new_id
from reviewtrail.provenance.artifacts import declare_artifact, lineage
from reviewtrail.provenance.records import ExecutionRun
from reviewtrail.provenance.runs import create_session, run_code


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


def bench_cgroup_overhead(cfg: Config) -> Result:
    from reviewtrail.provenance.sandbox import _cgroup
    from reviewtrail.provenance.sandbox._bwrap import require_bwrap, sandbox_options
    from reviewtrail.provenance.sandbox._limits import ResourceLimits
    from reviewtrail.provenance.sandbox._plan import SandboxRequest
    from reviewtrail.provenance.sandbox._sandbox import run_sandboxed

    if _cgroup.cgroup_support() is not None:
        return Result("sandbox_cgroup_overhead", "SKIP", notes=[f"no control group here: {_cgroup.cgroup_support()}"])
    reps = cfg.rep_count(30, 10)
    bwrap = require_bwrap()
    with work_dir("cgroup-") as work:
        no_groups = work / "no-cgroup-fs"
        no_groups.mkdir()

        def run(limits: ResourceLimits) -> float:
            t0 = time.perf_counter()
            out = run_sandboxed(
                SandboxRequest(code="true", lang="bash", workspace=work, env={}, timeout=30, limits=limits)
            )
            seconds = time.perf_counter() - t0
            if out.status != "succeeded":
                raise AssertionError(f"sandboxed true did not succeed: {out.error}")
            return seconds

        def without() -> float:
            real = _cgroup._ROOT
            _cgroup._ROOT = no_groups  # where no group can be made
            try:
                return run(ResourceLimits(weak=True))
            finally:
                _cgroup._ROOT = real

        argv = [bwrap, *sandbox_options(work, "/workspace", {}), "/bin/true"]

        def bare() -> float:
            t0 = time.perf_counter()
            subprocess.run(argv, check=True)
            return time.perf_counter() - t0

        grouped: list[float] = []
        plain: list[float] = []
        alone: list[float] = []
        for i in range(reps):
            steps = [(lambda: run(ResourceLimits()), grouped), (without, plain), (bare, alone)]
            for step, out in steps[i % 3 :] + steps[: i % 3]:
                out.append(step())
    g, w, b = (statistics.median(x) * 1000 for x in (grouped, plain, alone))
    added = g - w
    return Result(
        "sandbox_cgroup_overhead",
        verdict(added <= 25),
        ours=f"{g:.1f} ms with groups, {w:.1f} ms without: +{added:.1f} ms",
        baseline=f"{b:.1f} ms (bwrap alone, true)",
        ratio=w / g,
        target="<= 25 ms added",
        notes=[f"median of {reps} each, interleaved; ratio = without / with"],
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
