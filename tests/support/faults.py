"""What the fault campaigns (tests/test_faults_*.py) share: writer processes that say what was
acknowledged, the command line as a process, and the one line of figures each campaign prints.

A writer is a real ``python -c`` process running :data:`WRITER_PRELUDE` and then its own code,
which defines ``step(n)`` (one operation) and calls ``loop(step)``. It prints one JSON object a
line: ``{"kind": ..., "t": time.monotonic(), ...}``; a ``step`` says ``begin`` before the call it
makes and ``ack`` after the call returned (acknowledged); the loop says ``error`` (a reviewtrail
error, with its exit code) or ``unclean`` (any other exception: the library let a raw error
through) when a step raised, and goes on until the stop file exists (it waits while a pause
file beside it exists). ``time.monotonic()`` is the
machine's clock, the same in every process, so the test can tell what was in flight at a fault.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

__all__ = ["WRITER_PRELUDE", "Writer", "base_env", "cli", "in_flight", "print_figures"]

WRITER_PRELUDE = r"""
import json, os, random, sys, time
from reviewtrail.errors import ReviewtrailError

name, seed, stop = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(seed)


def say(kind, **doc):
    sys.stdout.write(json.dumps({"kind": kind, "t": time.monotonic(), **doc}) + "\n")
    sys.stdout.flush()


def loop(step):
    n = 0
    while not os.path.exists(stop):
        if os.path.exists(stop + ".pause"):
            time.sleep(0.01)
            continue
        n += 1
        try:
            step(n)
        except ReviewtrailError as exc:
            say("error", n=n, code=exc.exit_code, error=str(exc)[:800])
            time.sleep(0.05)
        except Exception as exc:
            say("unclean", n=n, error=repr(exc)[:800])
            time.sleep(0.05)
    say("stopped")
"""


@dataclass
class Writer:
    """One writer process and everything it said."""

    name: str
    proc: subprocess.Popen[str]
    stop_file: Path
    stderr_path: Path
    events: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _reader: threading.Thread | None = None

    @classmethod
    def start(cls, code: str, name: str, seed: int, env: dict[str, str], work: Path) -> Writer:
        stop_file = work / f"{name}.stop"
        stderr_path = work / f"{name}.stderr"
        with open(stderr_path, "w") as err:
            proc = subprocess.Popen(
                [sys.executable, "-c", WRITER_PRELUDE + code, name, str(seed), str(stop_file)],
                env=env,
                cwd=work,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
            )
        writer = cls(name, proc, stop_file, stderr_path)
        writer._reader = threading.Thread(target=writer._read, daemon=True)
        writer._reader.start()
        return writer

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.endswith("\n"):
                event = json.loads(line)
                with self._lock:
                    self.events.append(event)

    def seen(self, kind: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [e for e in self.events if kind is None or e["kind"] == kind]

    def wait_for(self, kind: str, after: float, timeout: float = 60.0) -> bool:
        """Wait until the writer says ``kind`` at or after monotonic time ``after``; False when it
        did not within ``timeout`` seconds (or exited)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            if any(e["t"] >= after for e in self.seen(kind)):
                return True
            time.sleep(0.01)
        return any(e["t"] >= after for e in self.seen(kind))

    def pause(self) -> None:
        """Ask the writer to wait before its next step (the one it is in finishes)."""
        self.stop_file.with_name(self.stop_file.name + ".pause").touch()

    def resume(self) -> None:
        self.stop_file.with_name(self.stop_file.name + ".pause").unlink(missing_ok=True)

    def stop(self, timeout: float = 180.0) -> str:
        """Ask the writer to stop after its current step; wait for it; return its stderr."""
        self.stop_file.touch()
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self._reader is not None:
            self._reader.join(timeout=30)
        return self.stderr_path.read_text(errors="replace")

    def outcomes(self) -> dict[int, tuple[dict[str, Any] | None, dict[str, Any] | None]]:
        """Each step's ``begin`` event and its outcome (``ack``, ``error`` or ``unclean``), by step number."""
        steps: dict[int, tuple[dict[str, Any] | None, dict[str, Any] | None]] = {}
        for event in self.seen():
            if "n" not in event:
                continue
            begin, outcome = steps.get(event["n"], (None, None))
            if event["kind"] == "begin":
                begin = event
            elif event["kind"] in ("ack", "error", "unclean"):
                outcome = event
            steps[event["n"]] = (begin, outcome)
        return steps


def in_flight(writer: Writer, fault_at: float) -> int:
    """How many of the writer's steps had begun before ``fault_at`` and had no outcome yet then."""
    return sum(
        1
        for begin, outcome in writer.outcomes().values()
        if begin is not None and begin["t"] < fault_at and (outcome is None or outcome["t"] > fault_at)
    )


def cli(
    env: dict[str, str], *args: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``reviewtrail ARGS`` as its own process."""
    return subprocess.run(
        [sys.executable, "-m", "reviewtrail", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def base_env(**values: str) -> dict[str, str]:
    """This process's environment without any reviewtrail or AWS setting, then ``values``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWTRAIL_", "AWS_"))}
    env["REVIEWTRAIL_REVIEWER_ID"] = "rev-test"
    return {**env, **values}


def print_figures(capsys: pytest.CaptureFixture[str], campaign: str, **figures: object) -> str:
    """Print ``faults: CAMPAIGN k=v ...`` where the CI log shows it, and return the line."""
    line = f"faults: {campaign} " + " ".join(f"{k.replace('_', '-')}={v}" for k, v in figures.items())
    with capsys.disabled():
        print(f"\n{line}")
    return line
