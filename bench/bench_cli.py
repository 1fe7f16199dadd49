"""CLI start-up: ``reviewtrail --help`` as a fresh process.

cli_help
    Wall time of ``reviewtrail --help`` (the installed console script) against a bare
    ``python -c pass`` with the same interpreter, median of 15 runs each (5 with
    --quick), alternating. PASS/MISS is on the absolute target: well under 300 ms.
    The ratio (baseline / ours) shows what the command adds to interpreter start-up.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from _util import Config, Result, clock, measure, verdict

TARGET_S = 0.300


def bench_help(cfg: Config) -> Result:
    reps = cfg.rep_count(15, 5)
    exe = Path(sys.executable).parent / "reviewtrail"
    if not exe.exists():
        raise AssertionError(f"console script not installed at {exe}")

    def ours(_: int) -> float:
        seconds, proc = clock(lambda: subprocess.run([str(exe), "--help"], capture_output=True, text=True, check=True))
        if "Usage" not in proc.stdout:
            raise AssertionError("reviewtrail --help printed no usage")
        return seconds

    def baseline(_: int) -> float:
        seconds, _proc = clock(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True))
        return seconds

    t = measure(reps, ours, baseline)
    return Result(
        "cli_help",
        verdict(t.ours_median < TARGET_S),
        ours=f"{t.ours_median * 1000:.0f} ms",
        baseline=f"{t.baseline_median * 1000:.0f} ms (python -c pass)",
        ratio=t.ratio,
        target="< 300 ms",
        notes=[f"median of {reps}", t.spread()],
    )
