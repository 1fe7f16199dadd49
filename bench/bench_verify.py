"""Verify: its speed against the hash-and-chain floor, and its memory as the ledger grows.

The store: a SQLite store whose records are half execution runs (so the provenance query tables
are full) and half generic records with a CAS reference, and 100 objects of 64 KiB, appended in
batches of 1,000. It is built once per run and grown: 100,000 records, then 1,000,000 (5,000 and
50,000 with --quick).

verify_memory
    Peak RSS of ``reviewtrail verify --json`` as a child process (its own ``VmHWM``: ``ru_maxrss``
    would count the parent's pages copied at fork) at 100,000 records and at 1,000,000: the ratio
    large/small (target <= 1.5x: memory does not grow with records or query rows). The
    hash-and-chain floor's peak RSS at the large size is shown beside it. (With an idle CPU, verify
    forks a second process for the later half of the records; it is of constant size too, and not
    counted here.)

verify_store
    ``verify_store(store)`` of the large store (every object re-hashed, every record checked, every
    query table recomputed and compared) in records/s, against the hash-and-chain floor measured in
    the same run: one cursor over ``rt_records`` in seq order and, per row, SHA-256 of the payload
    and of the other fields joined, and its prevHash compared with the hash before it (in plain
    Python). Ratio = floor time / verify time; target >= 0.5x. Median of 2 (3 with --quick),
    interleaved. A note gives the same floor with every payload parsed too (C json, once): what any
    check that reads a payload's CAS references and query rows must spend at least, and verify's
    ratio against it.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from _util import WORK_ROOT, Config, Result, measure, rate, verdict
from reviewtrail.app import init_store, open_store
from reviewtrail.config import Settings
from reviewtrail.ledger import NewRecord, new_record
from reviewtrail.ledger.records._envelope import format_time
from reviewtrail.ledger.records._fields import new_id
from reviewtrail.provenance.records import ExecutionRun
from reviewtrail.provenance.runs import create_session
from reviewtrail.store import Store
from reviewtrail.verify import spare_core, verify_store

_OBJECTS = 100

#: What the floor does, printed beside its figure.
FLOOR = (
    "hash-and-chain floor: read every stored record in seq order (one cursor), SHA-256 its stored "
    "payload bytes and its header fields, and check that its prevHash is the hash of the record before"
)

#: The hash-and-chain floor as a script (argument: the ledger file), in plain Python; prints rows,
#: seconds and peak RSS (KiB).
READ_AND_HASH = """
import hashlib, sqlite3, sys, time
conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
t0 = time.perf_counter()
n = broken = 0
prev = "0" * 64
for row in conn.execute("SELECT seq, id, type, time, actor, privacy, subject, supersedes, payload, payload_hash, "
                        "prev_hash, hash FROM rt_records ORDER BY seq"):
    hashlib.sha256(row[8]).hexdigest()
    hashlib.sha256("|".join(str(v) for v in (*row[:8], *row[9:])).encode()).hexdigest()
    if row[10] != prev:
        broken += 1
    prev = row[11]
    n += 1
assert not broken
hwm = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(n, time.perf_counter() - t0, hwm)
"""

#: The floor with each payload also parsed (C ``json``): the least any check that reads what a
#: payload says (its CAS references, the query rows it gives) must spend.
READ_HASH_PARSE = READ_AND_HASH.replace("    n += 1\n", "    json.loads(row[8])\n    n += 1\n").replace(
    "import hashlib,", "import json, hashlib,"
)

_VERIFY = """
import sys
from reviewtrail.cli import main
sys.argv = ["reviewtrail", "verify", "--json", "--no-progress"]
try:
    main()
except SystemExit:
    pass
hwm = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print("RSS", hwm, file=sys.stderr)
"""


@dataclass
class _Built:
    root: Path
    records: int = 0

    @property
    def settings(self) -> Settings:
        return Settings(store=self.root, database_url=f"sqlite:///{self.root / 'ledger.sqlite'}")


_BUILT: _Built | None = None


def _store(records: int) -> _Built:
    """The run's store, grown to ``records`` records (it only grows)."""
    global _BUILT
    if _BUILT is None:
        WORK_ROOT.mkdir(exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix="verify-", dir=WORK_ROOT))
        atexit.register(shutil.rmtree, folder, True)
        _BUILT = _Built(folder / "store")
        with init_store(_BUILT.settings) as store:
            _BUILT.records = 1  # the identity record
    if _BUILT.records < records:
        with open_store(_BUILT.settings) as store:
            _fill(store, records - _BUILT.records)
        _BUILT.records = records
    return _BUILT


def _fill(store: Store, records: int) -> None:
    session = create_session(store).session_id
    refs = [store.cas.put(os.urandom(64 * 1024)).to_json() for _ in range(_OBJECTS)]
    code = store.cas.put(b"print('x')", pool="agent-state", media_type="text/plain").to_json()
    now = format_time(datetime.now(UTC))
    made = 0
    while made < records:
        batch: list[NewRecord] = []
        for i in range(min(1000, records - made)):
            if i % 2:
                batch.append(
                    NewRecord(type="bench.result@1", actor="b", privacy="private", payload={"f": refs[i % _OBJECTS]})
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
        store.ledger.append(batch)  # every reference is to an object put above
        made += len(batch)


def _child_verify_rss(built: _Built) -> tuple[float, int]:
    """(seconds, peak RSS in KiB) of ``reviewtrail verify --json`` as a child process."""
    env = {**os.environ, "REVIEWTRAIL_STORE": str(built.root), "REVIEWTRAIL_DATABASE_URL": built.settings.database_url}
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _VERIFY], capture_output=True, text=True, env=env, cwd=built.root, check=False
    )
    elapsed = time.perf_counter() - t0
    doc = json.loads(proc.stdout)
    if not doc["ok"]:
        raise AssertionError(doc["problems"][:3])
    rss = next(int(line.split()[1]) for line in proc.stderr.splitlines() if line.startswith("RSS "))
    return elapsed, rss


def _floor(built: _Built, script: str = READ_AND_HASH) -> tuple[int, float, int]:
    """(rows, seconds, peak RSS in KiB) of the hash-and-chain floor (or ``script``), as a child process."""
    proc = subprocess.run(
        [sys.executable, "-c", script, str(built.root / "ledger.sqlite")],
        capture_output=True,
        text=True,
        check=True,
    )
    rows, seconds, rss = proc.stdout.split()
    return int(rows), float(seconds), int(rss)


def bench_verify_memory(cfg: Config) -> Result:
    small, large = cfg.size(100_000, 5_000), cfg.size(1_000_000, 50_000)
    t0 = time.perf_counter()
    built = _store(small)
    _, rss_small = _child_verify_rss(built)
    built = _store(large)
    build_s = time.perf_counter() - t0
    seconds, rss_large = _child_verify_rss(built)
    _, _, floor_rss = _floor(built)
    ratio = rss_large / rss_small
    return Result(
        "verify_memory",
        verdict(ratio <= 1.5),
        ours=f"peak RSS {rss_large / 1024:.1f} MiB at {large:,} records ({seconds:.1f} s as a process)",
        baseline=f"peak RSS {rss_small / 1024:.1f} MiB at {small:,} records",
        ratio=ratio,
        target="<= 1.50x (RSS large / small)",
        notes=[
            f"hash-and-chain floor at {large:,} records: peak RSS {floor_rss / 1024:.1f} MiB ({FLOOR})",
            f"store built with batch appends of 1,000 in {build_s:.0f} s; ratio here is large/small, lower is better",
        ],
    )


def bench_verify(cfg: Config) -> Result:
    records = cfg.size(1_000_000, 50_000)
    reps = cfg.rep_count(2, 3)
    built = _store(records)
    store = open_store(built.settings)
    count = store.ledger.head_seq()
    rows = 0

    split: list[bool] = []

    def ours(_: int) -> float:
        nonlocal rows
        os.sync()
        split.append(spare_core())  # what verify will decide: a second process for the later half, or not
        t0 = time.perf_counter()
        report = verify_store(store)
        elapsed = time.perf_counter() - t0
        if not report.ok:
            raise AssertionError(report.problems[:3])
        rows = report.rows_checked
        return elapsed

    def floor(_: int) -> float:
        os.sync()
        read, seconds, _ = _floor(built)
        assert read == count
        return seconds

    timings = measure(reps, ours, floor)
    store.close()
    o, b = timings.ours_median, timings.baseline_median
    _, parse_s, _ = _floor(built, READ_HASH_PARSE)
    return Result(
        "verify_store",
        verdict(b / o >= 0.5),
        ours=rate(count, o, "rec/s"),
        baseline=f"{rate(count, b, 'rec/s')} (hash-and-chain floor)",
        ratio=b / o,
        target=">= 0.50x",
        notes=[
            FLOOR,
            f"{count:,} records, {_OBJECTS} objects of 64 KiB, {rows:,} query-table rows compared; median of {reps}",
            f"second process for the later half (only with an idle CPU): {sum(split)} of {len(split)} repetitions",
            f"the floor with every payload parsed too (C json, once): {rate(count, parse_s, 'rec/s')}, "
            f"{parse_s / b:.1f}x the hash-and-chain floor's time; verify is {parse_s / o:.2f}x that floor",
            timings.spread(),
        ],
    )
