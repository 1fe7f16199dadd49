"""``review export`` benchmarks on a campaign of real shape (bench/_hr_store.py's
``build_campaign_store``: prompts and runs shared across items, most items decided once, about 2.4
ledger records per exported example), built once per size (untimed). Each side runs in a child
process of its own, the sides interleaved; medians of the repetitions.

review_export_sqlite
    ``export_campaign`` of the whole campaign (100,000 items; 5,000 with --quick). Figure:
    examples/s. Target >= 0.8x the sound floor. Floor (bench/_export_floor.py, same run): a plain
    script that reads straight from SQLite the records each example rests on (the items and their
    decisions by subject, the runs' records by subject, the prompts by id, each shared record
    once), hashes each record's payload and header and checks the next record's link to it,
    parses the payloads, recomputes each run's candidate digest once and checks the items' frozen
    digests and output event ids and the active decision against the item, and writes the three
    export files and the manifest (temp file, fsync, rename). The bench asserts its files are
    byte-identical to the export's.

review_export_memory
    Peak RSS (VmHWM) of a child process exporting 10,000 and 100,000 examples (1,000 and 10,000
    with --quick). Target: RSS at the larger size <= 1.5x RSS at the smaller (the export streams).
"""

from __future__ import annotations

import atexit
import filecmp
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _hr_store import CAMPAIGN, build_campaign_store
from _util import BENCH_DIR, WORK_ROOT, Config, Result, verdict
from reviewtrail.app import init_store, open_store
from reviewtrail.config import Settings
from reviewtrail.human_review.campaigns import campaign_settings

FLOOR_SHARE = 0.8
MEMORY_RATIO = 1.5
_FLOOR = BENCH_DIR / "_export_floor.py"
_OURS = """
import sys, time
from reviewtrail.app import open_store
from reviewtrail.config import Settings
from reviewtrail.human_review.export import export_campaign
from pathlib import Path
settings = Settings(store=Path(sys.argv[1]), database_url=f"sqlite:///{sys.argv[2]}")
with open_store(settings) as store:
    t0 = time.perf_counter()
    report = export_campaign(store, sys.argv[4], int(sys.argv[5]), sys.argv[3])
    seconds = time.perf_counter() - t0
hwm = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(report.exported, seconds, hwm)
"""
_STORES: dict[int, tuple[Path, int]] = {}


def _store(items: int) -> tuple[Path, int]:
    """A campaign store of ``items`` items (built once per run): its folder and record count."""
    if items not in _STORES:
        WORK_ROOT.mkdir(exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix="review-export-", dir=WORK_ROOT))
        atexit.register(shutil.rmtree, root, True)
        settings = Settings(store=root / "store", database_url=f"sqlite:///{root / 'ledger.sqlite'}")
        init_store(settings).close()
        with open_store(settings) as store:
            campaign_settings(store, CAMPAIGN[0], CAMPAIGN[1], training=True)
            build_campaign_store(store, items=items)
            head = store.ledger.head()
        _STORES[items] = (root, head.seq if head is not None else 0)
    return _STORES[items]


def _child(root: Path, out: Path, *, floor: bool) -> tuple[int, float, int]:
    """(examples, seconds, peak RSS in KiB) of one export into ``out`` in a child process."""
    db = str(root / "ledger.sqlite")
    args = [str(_FLOOR), db, str(out)] if floor else ["-c", _OURS, str(root / "store"), db, str(out)]
    words = subprocess.run(
        [sys.executable, *args, CAMPAIGN[0], str(CAMPAIGN[1])], capture_output=True, text=True, check=True
    ).stdout.split()
    return int(words[0]), float(words[1]), int(words[2])


def _same_files(ours: Path, floor: Path) -> None:
    names = sorted(p.name for p in ours.iterdir())
    if names != sorted(p.name for p in floor.iterdir()):
        raise AssertionError(f"the floor wrote other files: {names}")
    _, mismatch, errors = filecmp.cmpfiles(ours, floor, names, shallow=False)
    if mismatch or errors:
        raise AssertionError(f"the floor's files differ from the export's: {mismatch + errors}")


def bench_export_sqlite(cfg: Config) -> Result:
    items = cfg.size(100_000, 5_000)
    root, records = _store(items)
    reps = cfg.rep_count(3, 3)
    ours: list[float] = []
    base: list[float] = []
    exported = 0
    for i in range(reps):
        for floor in (False, True) if i % 2 == 0 else (True, False):
            out = root / f"out-{i}-{int(floor)}"
            n, seconds, _ = _child(root, out, floor=floor)
            (base if floor else ours).append(seconds)
            exported = exported or n
            if n != exported or n == 0:
                raise AssertionError(f"{n} examples written, {exported} expected")
        _same_files(root / f"out-{i}-0", root / f"out-{i}-1")
        for floor in (0, 1):
            shutil.rmtree(root / f"out-{i}-{floor}")
    o, b = statistics.median(ours), statistics.median(base)
    return Result(
        "review_export_sqlite",
        verdict(b / o >= FLOOR_SHARE),
        ours=f"{exported / o:,.0f} examples/s ({o:.2f} s)",
        baseline=f"{exported / b:,.0f} examples/s ({b:.2f} s, the sound floor)",
        ratio=b / o,
        target=f">= {FLOOR_SHARE}x the floor",
        notes=[
            f"{exported:,} examples from {items:,} items in {records:,} records "
            f"({records / exported:.2f} records per example); median of {reps}, interleaved, child processes",
            "floor: a plain script (bench/_export_floor.py) reads straight from SQLite the records each example "
            "rests on, hashes each record's payload and header and checks the next record's link to it, parses "
            "the payloads, recomputes each run's candidate digest once and checks the items' frozen ones, checks "
            "the links of item, runs and decision, and writes the three files and the manifest byte-identical to "
            "ours (asserted)",
        ],
    )


def bench_export_memory(cfg: Config) -> Result:
    small, large = cfg.size(10_000, 1_000), cfg.size(100_000, 10_000)
    rss: dict[int, int] = {}
    counts: dict[int, int] = {}
    for items in (small, large):
        root, _ = _store(items)
        counts[items], _, rss[items] = _child(root, root / "out-memory", floor=False)
        shutil.rmtree(root / "out-memory")
    ratio = rss[large] / rss[small]
    return Result(
        "review_export_memory",
        verdict(ratio <= MEMORY_RATIO),
        ours=f"{rss[large] / 1024:.0f} MiB at {counts[large]:,} examples",
        baseline=f"{rss[small] / 1024:.0f} MiB at {counts[small]:,} examples",
        ratio=ratio,
        target=f"<= {MEMORY_RATIO}x (large / small)",
        notes=[
            "peak RSS (VmHWM) of a child process running export_campaign on each size; ratio is large / small "
            "(here > 1 means more memory): a streaming export stays flat"
        ],
    )
