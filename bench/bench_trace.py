"""Reviewer-call tracing: what one saved trace costs.

trace_record
    Wall time of ``record_call`` (full mode: request, response and meta files, each
    fsynced, the run folder fsynced, one fsynced line appended to events.jsonl; no
    store) for a 4 KiB prompt and an 8 KiB response, median over 200 calls (50 with
    --quick). Baseline: writing the same three files and the event line with plain
    ``open``/``write``/``fsync`` and no allocation, locking or validation. Target:
    median <= 5 ms.

trace_save_cli
    Wall time of ``reviewtrail trace save`` with the protocol's flags as a fresh
    process, median of 15 (5 with --quick). Baseline: ``python -c pass``. Target:
    median <= 250 ms.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _util import Config, Result, clock, verdict, work_dir
from reviewtrail.tracing.custody import record_call
from reviewtrail.tracing.files import ReviewCall

PROMPT = "Review the method section. " * 160  # ~4 KiB
RESPONSE = ("Score: 6/10. The ablation is missing; however the main result holds.\n" * 120).encode()  # ~8 KiB


def _plain_write(folder: Path, i: int) -> None:
    for name, data in (
        (f"{i:03d}-r.request.json", PROMPT.encode()),
        (f"{i:03d}-r.response.md", RESPONSE),
        (f"{i:03d}-r.meta.json", b'{"status": "ok"}'),
    ):
        with open(folder / name, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    fd = os.open(folder / "events.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, b'{"event":"review_trace"}\n')
        os.fsync(fd)
    finally:
        os.close(fd)


def bench_record(cfg: Config) -> Result:
    n = cfg.size(200, 50)
    with work_dir("trace-") as work:
        project = work / "project"
        plain = work / "plain"
        project.mkdir()
        plain.mkdir()
        ours: list[float] = []
        base: list[float] = []
        env = {"ARIS_TRACE_RUN_IDLE_MINUTES": "60"}
        for i in range(n):
            call = ReviewCall(
                skill="bench",
                purpose="round",
                prompt=PROMPT,
                response=RESPONSE,
                executor="codex",
                executor_model="gpt-5",
                reported_reviewer_model="claude-opus-4",
                backend="claude",
                status="ok",
            )
            seconds, _ = clock(lambda c=call: record_call(c, project_dir=project, env=env))  # type: ignore[misc]
            ours.append(seconds)
            seconds, _ = clock(lambda i=i: _plain_write(plain, i))  # type: ignore[misc]
            base.append(seconds)
    ours_ms, base_ms = statistics.median(ours) * 1000, statistics.median(base) * 1000
    return Result(
        "trace_record",
        verdict(ours_ms <= 5.0),
        ours=f"{ours_ms:.2f} ms/call",
        baseline=f"{base_ms:.2f} ms (plain writes + fsync)",
        ratio=base_ms / ours_ms,
        target="<= 5 ms",
        notes=[f"median of {n} calls into one run (full mode, 4 KiB prompt, 8 KiB response, fsync on)"],
    )


def bench_cli(cfg: Config) -> Result:
    reps = cfg.rep_count(15, 5)
    exe = str(Path(sys.executable).parent / "reviewtrail")
    with work_dir("trace-cli-") as work:
        (work / "p.txt").write_text(PROMPT)
        (work / "r.md").write_bytes(RESPONSE)
        args = [
            exe, "trace", "save", "--skill", "bench", "--purpose", "round", "--backend", "grok",
            "--tool", "mcp__grok__grok", "--executor", "codex", "--executor-model", "gpt-5",
            "--requested-reviewer-model", "grok-4", "--reported-reviewer-model", "grok-4",
            "--prompt-file", str(work / "p.txt"), "--response-file", str(work / "r.md"), "--status", "ok",
            "--verdict", "ready", "--review-completed", "--project-dir", str(work),
        ]  # fmt: skip
        ours: list[float] = []
        base: list[float] = []
        for _ in range(reps):
            t0 = time.perf_counter()
            subprocess.run(args, check=True, capture_output=True)
            ours.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            base.append(time.perf_counter() - t0)
        saved = len(list((work / ".aris" / "traces" / "bench").glob("*/[0-9]*.meta.json")))
        if saved != reps:
            raise AssertionError(f"expected {reps} saved calls, found {saved}")
    ours_ms, base_ms = statistics.median(ours) * 1000, statistics.median(base) * 1000
    return Result(
        "trace_save_cli",
        verdict(ours_ms <= 250.0),
        ours=f"{ours_ms:.0f} ms",
        baseline=f"{base_ms:.0f} ms (python -c pass)",
        ratio=base_ms / ours_ms,
        target="<= 250 ms",
        notes=[f"median of {reps} fresh processes, fsync on, no store"],
    )
