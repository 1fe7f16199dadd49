"""Claims extraction: linear time and bounded memory.

claims_extract
    ``record_reply_claims(..., dry_run=True)``, the library call ``reviewtrail claims extract
    FILE --dry-run`` makes, of a 1 MB and a 10 MB assistant reply (100 KB and 1 MB with --quick),
    each in a fresh child process that reads the file as the CLI does (``read_input_text``) and
    opens an empty SQLite store. The reply is Markdown of a realistic shape, built from a seeded
    random generator: headings, paragraphs of English sentences with ``[TYPE:ID]`` citations and
    ``[evN]`` chips (some sentences citing nothing), an em dash and curly quotes (so the text is
    not Latin-1), a Chinese sentence, bulleted lists, tables whose cells cite, and code fences
    holding citation-like text. Measured in the child: the wall time from reading the file to the
    returned claims (and the CPU time, shown beside it: on a busy machine the wall time's ratio
    also measures the load), and the peak RSS (its own ``VmHWM``: ``ru_maxrss`` would count the
    parent's pages copied at the fork). Median of 3 (1 with --quick), interleaved with the floor.

    Floor, measured in the same run and the same way: a child process that reads the same file
    as UTF-8 and splits it into lines (``str.splitlines``), nothing imported.

    Targets: the time at 10 MB is at most 12x the time at 1 MB (linear time), and the peak RSS at
    10 MB is at most 64 MiB + 10x the input's bytes (bounded memory). The ratio column is the
    floor's time / ours at 10 MB. Run alone: ``python bench/run.py --only claims_extract``.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

from _util import Config, Result, verdict, work_dir
from reviewtrail.app import init_store
from reviewtrail.config import Settings

MIB = 1 << 20

#: The extraction as the CLI runs it (argument: the reply file); prints claims, wall and CPU seconds, VmHWM (KiB).
EXTRACT = """
import sys, time
t0 = time.perf_counter()
from reviewtrail.app import open_store
from reviewtrail.evidence import record_reply_claims
from reviewtrail.inputs import read_input_text
imported = time.perf_counter() - t0
t0, c0 = time.perf_counter(), time.process_time()
text = read_input_text(sys.argv[1], "reply", field="file")
with open_store() as store:
    claims = len(record_reply_claims(store, text, dry_run=True).claims)
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
hwm = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(claims, seconds, cpu, hwm)
"""

#: The floor: the same file read as UTF-8 and split into lines; prints lines, wall and CPU seconds, VmHWM (KiB).
READ_AND_SPLIT = """
import sys, time
t0, c0 = time.perf_counter(), time.process_time()
with open(sys.argv[1], "rb") as f:
    lines = f.read().decode("utf-8").splitlines()
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
hwm = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(len(lines), seconds, cpu, hwm)
"""

_TEXT = (
    "the model reached accuracy after three epochs on held-out data while baseline results varied across "
    "runs and seeds; e.g. Dr. Smith et al. reported a similar value in Fig. 2 of the U.S. survey, approx. "
    "within the interval we expected — a “robust” result"
)
_WORDS = _TEXT.split()


def _sentence(r: random.Random, i: int) -> str:
    words = " ".join(r.choice(_WORDS) for _ in range(r.randrange(6, 22)))
    cite = r.choice(
        [
            "",
            "",
            f" [run:r-{i}]",
            f" [ev{r.randrange(1, 9)}]",
            f" [doi:10.1000/x{i}]",
            f" [artifact:report.md@{i % 7 + 1}]",
        ]
    )
    return f"{words[0].upper()}{words[1:]} {r.random() * 100:.1f}%{cite}{r.choice(['.', '.', '!', '?'])}"


def _block(r: random.Random, i: int) -> str:
    kind = r.randrange(10)
    if kind == 0:
        return f"## Section {i}\n\n"
    if kind == 1:
        return "```python\nprint('not [run:x] a claim.')  # [ev1]\nvalue = data[ev2]\n```\n\n"
    if kind == 2:
        rows = "".join(f"| acc-{j} | {r.random():.3f} | [run:r-{i}-{j}] |\n" for j in range(4))
        return "| metric | value | source |\n|---|---:|---|\n" + rows + "\n"
    if kind == 3:
        return "".join(f"- {_sentence(r, i * 10 + j)}\n" for j in range(r.randrange(2, 6))) + "\n"
    if kind == 4:
        return f"结果显示准确率为 {r.random() * 100:.1f}% [ev:e{i}]。这一句没有引用。\n\n"
    return " ".join(_sentence(r, i * 10 + j) for j in range(r.randrange(2, 7))) + "\n\n"


def build_reply(size: int, seed: int = 29) -> bytes:
    """About ``size`` bytes (UTF-8) of a realistic assistant reply (module doc)."""
    r = random.Random(seed)
    parts: list[bytes] = []
    total = i = 0
    while total < size:
        part = _block(r, i).encode()
        parts.append(part)
        total += len(part)
        i += 1
    return b"".join(parts)[:size].rsplit(b"\n", 1)[0] + b"\n"


Run = tuple[int, float, float, int]  # count, wall seconds, CPU seconds, peak RSS in KiB


def _child(script: str, path: Path, root: Path) -> Run:
    """What ``script`` run on ``path`` in a fresh interpreter printed."""
    env = {**os.environ, "REVIEWTRAIL_STORE": str(root), "REVIEWTRAIL_DATABASE_URL": _database_url(root)}
    proc = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True, env=env, cwd=root
    )
    count, seconds, cpu, rss = proc.stdout.split()
    return int(count), float(seconds), float(cpu), int(rss)


def _database_url(root: Path) -> str:
    return f"sqlite:///{root / 'ledger.sqlite'}"


def bench_extract(cfg: Config) -> Result:
    small, large = cfg.size(1_000_000, 100_000), cfg.size(10_000_000, 1_000_000)
    reps = cfg.rep_count(3, 1)
    with work_dir("claims-") as work:
        root = work / "store"
        init_store(Settings(store=root, database_url=_database_url(root))).close()
        files = {}
        for size in (small, large):
            files[size] = work / f"reply-{size}.md"
            files[size].write_bytes(build_reply(size))
        ours: dict[int, list[Run]] = {small: [], large: []}
        floor: dict[int, list[Run]] = {small: [], large: []}
        for i in range(reps):
            for size in (small, large):
                order = [(EXTRACT, ours), (READ_AND_SPLIT, floor)]
                for script, out in order if i % 2 == 0 else reversed(order):
                    out[size].append(_child(script, files[size], root))

    def seconds(runs: list[Run], column: int = 1) -> float:
        return statistics.median(run[column] for run in runs)

    def peak_mib(runs: list[Run]) -> float:
        return max(run[3] for run in runs) / 1024

    time_ratio = seconds(ours[large]) / seconds(ours[small])
    rss_limit = (64 * MIB + 10 * large) / MIB
    ok = time_ratio <= 12 and peak_mib(ours[large]) <= rss_limit
    mb = large / 1e6
    return Result(
        "claims_extract",
        verdict(ok),
        ours=f"{seconds(ours[large]):.2f} s, peak RSS {peak_mib(ours[large]):.1f} MiB at {mb:g} MB",
        baseline=f"{seconds(floor[large]):.3f} s, peak RSS {peak_mib(floor[large]):.1f} MiB (read + splitlines)",
        ratio=seconds(floor[large]) / seconds(ours[large]),
        target=f"time {mb:g} MB / {small / 1e6:g} MB <= 12x; RSS <= 64 MiB + 10x input",
        notes=[
            f"time {mb:g} MB / {small / 1e6:g} MB: {time_ratio:.2f}x (target <= 12x; CPU time "
            f"{seconds(ours[large], 2):.2f} s / {seconds(ours[small], 2):.2f} s = "
            f"{seconds(ours[large], 2) / seconds(ours[small], 2):.2f}x); "
            f"at {small / 1e6:g} MB {seconds(ours[small]):.2f} s, peak RSS {peak_mib(ours[small]):.1f} MiB",
            f"peak RSS at {mb:g} MB: {peak_mib(ours[large]):.1f} MiB, limit 64 MiB + 10 x {mb:g} MB = "
            f"{rss_limit:.1f} MiB",
            f"floor (the same file read as UTF-8 and split into lines, in a fresh interpreter): "
            f"{small / 1e6:g} MB {seconds(floor[small]):.3f} s / {peak_mib(floor[small]):.1f} MiB, "
            f"{mb:g} MB {seconds(floor[large]):.3f} s / {peak_mib(floor[large]):.1f} MiB; "
            f"{floor[large][0][0]:,} lines",
            f"{ours[small][0][0]:,} and {ours[large][0][0]:,} claims; median of {reps} per size, "
            "each a fresh process timed from reading the file to the returned claims",
        ],
    )


if __name__ == "__main__":
    quick = "--quick" in sys.argv[1:]
    result = bench_extract(Config(quick=quick))
    print(result.line())
    for note in result.notes:
        print(f"   {note}")
