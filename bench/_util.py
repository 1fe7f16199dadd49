"""Shared benchmark helpers: configuration, work folders, interleaved median timing, result lines.

Every benchmark times reviewtrail and a baseline in the same run. The repetitions
are interleaved (ours, baseline, baseline, ours, ...) so slow drift of the machine
hits both sides alike; each side does its setup untimed, then flushes dirty pages
with sync(2) (also untimed) right before its timed part; the report uses the median
of the repetitions. Ratios are baseline time / our time, so > 1 means we are faster.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

BENCH_DIR = Path(__file__).resolve().parent
WORK_ROOT = BENCH_DIR / ".work"

# One repetition of one side: untimed setup, then the seconds of its timed part.
Rep = Callable[[int], float]


@dataclass(frozen=True)
class Config:
    quick: bool = False
    reps: int | None = None  # --reps overrides every benchmark's default

    def size(self, full: int, quick: int) -> int:
        return quick if self.quick else full

    def rep_count(self, full: int, quick: int) -> int:
        return self.reps if self.reps is not None else self.size(full, quick)


@dataclass
class Result:
    name: str
    status: str  # PASS, MISS, REPORT, SKIP or ERROR
    ours: str = "-"
    baseline: str = "-"
    ratio: float | None = None
    target: str = "-"
    notes: list[str] = field(default_factory=list)

    @property
    def ratio_text(self) -> str:
        return "-" if self.ratio is None else f"{self.ratio:.2f}x"

    def line(self) -> str:
        return (
            f"{self.name}: ours {self.ours} | baseline {self.baseline} | ratio {self.ratio_text} "
            f"| target {self.target} | {self.status}"
        )


@dataclass(frozen=True)
class Timings:
    ours: list[float]
    baseline: list[float]

    @property
    def ours_median(self) -> float:
        return statistics.median(self.ours)

    @property
    def baseline_median(self) -> float:
        return statistics.median(self.baseline)

    @property
    def ratio(self) -> float:
        """Baseline time / our time: our throughput relative to the baseline's."""
        return self.baseline_median / self.ours_median

    def spread(self) -> str:
        def show(xs: list[float]) -> str:
            return " ".join(f"{x:.3f}" for x in xs)

        return f"per-rep seconds: ours [{show(self.ours)}]  baseline [{show(self.baseline)}]"


def clock(run: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    value = run()
    return time.perf_counter() - start, value


def timed(run: Callable[[], T], settle: Callable[[], None] = os.sync) -> tuple[float, T]:
    """Flush dirty pages (untimed), then time ``run``; return (seconds, its value)."""
    settle()
    return clock(run)


def measure(reps: int, ours: Rep, baseline: Rep) -> Timings:
    """Run both sides ``reps`` times, alternating which one goes first."""
    mine: list[float] = []
    theirs: list[float] = []
    for i in range(reps):
        order = [(ours, mine), (baseline, theirs)]
        if i % 2:
            order.reverse()
        for rep, out in order:
            out.append(rep(i))
    return Timings(mine, theirs)


def rate(count: float, seconds: float, unit: str) -> str:
    """``12,345 rec/s (1.234 s)``; MiB/s keeps one decimal."""
    value = count / seconds
    shown = f"{value:,.1f}" if unit == "MiB/s" else f"{value:,.0f}"
    return f"{shown} {unit} ({seconds:.3f} s)"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


@contextmanager
def work_dir(prefix: str) -> Iterator[Path]:
    """A fresh folder under bench/.work/, removed afterwards (and .work/ too when empty)."""
    WORK_ROOT.mkdir(exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=WORK_ROOT))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        with suppress(OSError):
            WORK_ROOT.rmdir()


def remove(path: Path) -> None:
    """Remove a file or folder tree if present."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        with suppress(FileNotFoundError):
            path.unlink()
