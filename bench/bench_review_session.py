"""The review session's redraw on a large store, measured through a pseudo-terminal.

review_session_redraw_sqlite
    ``reviewtrail review session`` on the campaign of bench/_hr_store.py (100,000 items in
    1,000,000 records, half of them decided; 5,000 in 50,000 with --quick), SQLite, run as a
    process on a pseudo-terminal of 200x60 with leases kept. Figure: the median time from the key
    that dismisses a reveal to the next card drawn in full (its key legend received), over the
    repetitions: the session's redraw — lease taken, the card read from its records and checked
    (both candidate digests), the campaign's counts, the screen cleared and the card drawn. Each
    card is decided with ``t`` before the next (the time from that key to the reveal, which
    records the decision and asks whether it will be exported, is printed too, and so is the
    start-up to the first card, which reads the session's plan). Target <= 50 ms.
    Baseline, on a second pseudo-terminal in the same run, keys alternating with ours: a plain
    Python process that, per key, reads the next open item's row, its prompt record and its two
    output records with raw SQL (no checks, no resolution) and draws them, cleared, as text of
    about the same size: the floor of serving a card from this database to a terminal.

The session records one ``tie`` per repetition on open items at the front of the queue; it runs
after the other human review benchmarks, which use the items at the back.
"""

from __future__ import annotations

import fcntl
import os
import select
import statistics
import struct
import subprocess
import sys
import termios
import time

from _util import Config, Result, verdict
from bench_human_review import _sqlite

TARGET_MS = 50.0
LEGEND_END = "? help · q quit".encode()  # the end of a card (a reveal's last line differs)
REVEALED = b"q quits)"  # the end of a reveal

# The baseline: per key, the next open item's records by raw SQL, drawn as plain text.
BASELINE = r"""
import json, os, sqlite3, sys, termios, tty
db, campaign, version = sys.argv[1], sys.argv[2], int(sys.argv[3])
conn = sqlite3.connect(db)
fd = sys.stdin.fileno()
saved = termios.tcgetattr(fd)
tty.setcbreak(fd)
after = ""
out = sys.stdout
def payload(record_id):
    row = conn.execute("SELECT payload FROM rt_records WHERE id = ?", (record_id,)).fetchone()
    return json.loads(row[0])
try:
    while True:
        row = conn.execute(
            "SELECT item_id, queue_key FROM rt_p_hr_open WHERE campaign_id = ? AND campaign_version = ? "
            "AND queue_key > ? ORDER BY queue_key LIMIT 1", (campaign, version, after)).fetchone()
        if row is None:
            break
        after = row[1]
        item = conn.execute("SELECT record_id, prompt_event_id FROM rt_p_hr_items WHERE item_id = ?",
                            (row[0],)).fetchone()
        it, prompt = payload(item[0]), payload(item[1])
        lines = ["\x1b[H\x1b[2J\x1b[3J", "card - item " + row[0], prompt["prompt"], prompt.get("evidence") or ""]
        for c in it["candidates"]:
            lines.append("-" * 198)
            lines.append(payload(c["outputEventId"])["response"])
            lines.append("-" * 198)
        lines.append("a/b prefer · t tie · ... · z undo · ? help · q quit")
        out.write("\n".join(lines) + "\n")
        out.flush()
        if os.read(fd, 16) in (b"", b"q"):
            break
finally:
    termios.tcsetattr(fd, termios.TCSADRAIN, saved)
"""


class Terminal:
    """A process on a pseudo-terminal of its own, read as it writes."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 60, 200, 0, 0))
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
        os.close(slave)
        self.seen = bytearray()

    def wait_for(self, wanted: bytes, start: int, limit: float = 300.0) -> float:
        """Read until ``wanted`` appears after offset ``start``; the time it did."""
        deadline = time.monotonic() + limit
        while self.seen.find(wanted, start) < 0:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{wanted!r} never appeared; got {bytes(self.seen[-1500:])!r}")
            if select.select([self.master], [], [], left)[0]:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"the process ended before {wanted!r}: {bytes(self.seen[-1500:])!r}")
                self.seen += chunk
        return time.perf_counter()

    def press(self, key: bytes, wanted: bytes) -> float:
        """Send ``key``; seconds until ``wanted`` is received."""
        start = len(self.seen)
        t0 = time.perf_counter()
        os.write(self.master, key)
        return self.wait_for(wanted, start) - t0

    def close(self) -> None:
        if self.proc.poll() is None:
            os.write(self.master, b"q")
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        os.close(self.master)


def bench_session_sqlite(cfg: Config) -> Result:
    built = _sqlite(cfg)
    from _hr_store import CAMPAIGN

    reps = cfg.rep_count(40, 10)
    db = built.settings.database_url.removeprefix("sqlite:///")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVIEWTRAIL_")}
    env |= {"REVIEWTRAIL_STORE": str(built.settings.store), "REVIEWTRAIL_DATABASE_URL": built.settings.database_url}
    env |= {"TERM": "xterm", "NO_COLOR": "1"}
    t0 = time.perf_counter()
    ours = Terminal(
        [sys.executable, "-m", "reviewtrail", "review", "session", CAMPAIGN[0], "--version", str(CAMPAIGN[1]),
         "--reviewer", "bench-reviewer"],
        env,
    )  # fmt: skip
    base = Terminal([sys.executable, "-c", BASELINE, db, CAMPAIGN[0], str(CAMPAIGN[1])], env)
    redraw: list[float] = []
    decided: list[float] = []
    floor: list[float] = []
    try:
        started = ours.wait_for(LEGEND_END, 0) - t0
        base.wait_for(LEGEND_END, 0)
        for i in range(reps):
            sides = ("ours", "base") if i % 2 == 0 else ("base", "ours")
            for side in sides:
                if side == "ours":
                    decided.append(ours.press(b"t", REVEALED))
                    redraw.append(ours.press(b" ", LEGEND_END))
                else:
                    floor.append(base.press(b" ", LEGEND_END))
    finally:
        ours.close()
        base.close()
    o, b = statistics.median(redraw) * 1000, statistics.median(floor) * 1000
    d = statistics.median(decided) * 1000
    return Result(
        "review_session_redraw_sqlite",
        verdict(o <= TARGET_MS),
        ours=f"{o:.1f} ms (max {max(redraw) * 1000:.1f})",
        baseline=f"{b:.1f} ms (raw SQL card to the terminal)",
        ratio=b / o,
        target=f"<= {TARGET_MS:g} ms",
        notes=[
            f"{len(built.items):,} items, {built.records:,} records ({built.note}); key to next card through a "
            f"pseudo-terminal, median of {reps}",
            f"same run: decision key to its reveal (decide + what it is good for) median {d:.1f} ms; start-up to the "
            f"first card (reading the session's plan) {started:.2f} s",
        ],
    )
