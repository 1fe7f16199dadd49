"""Many objects in one process: ``cas put A B C …`` and ``cas cat D1 D2 … --out-dir DIR``.

cas_put_batch
    ``reviewtrail cas put`` of 200 files of 4 KiB random bytes (40 with --quick) as one process
    (every file hashed while copied and published together, one durability barrier), into a fresh
    store each repetition. Baseline, in the same run: the same files stored the only way there was
    before, one ``reviewtrail cas put FILE`` process each, one after another, into another fresh
    store. The floor (in the notes): one plain Python process of the same interpreter hashing each
    file with hashlib while copying it, fsync of each copy, then of the folder. Median of 3 (1 with
    --quick). Ratio = N processes / one process; a report (the batch form is new).

cas_cat_batch
    ``reviewtrail cas cat D1 … DN --out-dir DIR`` of those 200 objects as one process (each
    downloaded once, hashed into a temporary file beside its destination, renamed once verified,
    8 at a time), against one ``reviewtrail cas cat D --out DIR/D`` process per object. The floor
    (in the notes): one plain Python process reading each object file, hashing it with hashlib and
    writing it to DIR (no fsync: ``cas cat`` does not sync either). Median of 3 (1 with --quick).

s3_put_batch
    ``S3Cas.put_files`` of 8 files of 32 MiB random bytes (4 of 16 MiB with --quick) to a SeaweedFS
    on loopback, under a fresh prefix each repetition: each file hashed, then sent from the file
    itself. Baseline, in the same run: the same call as it was before S3 had its own
    (``CasStore.put_files`` on the same store: every file past a few MiB copied into a local
    temporary file while hashed, then sent from that copy). The floor (in the notes): boto3's
    ``upload_file`` of each file in turn, default transfer settings, which checks nothing.
    Median of 3 (2 with --quick); SKIP without SeaweedFS or boto3.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _util import Config, Result, clock, measure, rate, timed, work_dir
from bench_s3 import MIB, _cas, _server, _write_random

_SIZE = 4096

#: The floor of ``cas put`` of many files, as a process: argv[2:] each hashed while copied into the
#: folder argv[1], each copy fsynced, then the folder.
_PUT_FLOOR = """
import hashlib, os, sys
for n, path in enumerate(sys.argv[2:]):
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as fin, open(os.path.join(sys.argv[1], str(n)), "wb", buffering=0) as fout:
        while chunk := fin.read(1 << 20):
            digest.update(chunk)
            fout.write(chunk)
        os.fsync(fout.fileno())
    print(digest.hexdigest())
fd = os.open(sys.argv[1], os.O_RDONLY)
os.fsync(fd)
os.close(fd)
"""

#: The floor of ``cas cat`` of many objects, as a process: each object file in argv[2:] read,
#: hashed and written into the folder argv[1].
_CAT_FLOOR = """
import hashlib, os, sys
for path in sys.argv[2:]:
    with open(path, "rb") as fin:
        data = fin.read()
    hashlib.sha256(data).hexdigest()
    with open(os.path.join(sys.argv[1], os.path.basename(path)), "wb") as fout:
        fout.write(data)
"""


def _run(args: list[str], env: dict[str, str]) -> str:
    proc = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"{args[:3]} exited {proc.returncode}: {proc.stderr[-500:]}")
    return proc.stdout


def _exe() -> str:
    return str(Path(sys.executable).parent / "reviewtrail")


def _store(work: Path, name: str) -> dict[str, str]:
    """A fresh store under ``work/name``: the environment of a reviewtrail process using it."""
    drop = ("REVIEWTRAIL_", "ARIS_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env["REVIEWTRAIL_STORE"] = str(work / name / "store")
    (work / name).mkdir()
    _run([_exe(), "init"], env)
    return env


def _files(work: Path, count: int) -> list[str]:
    folder = work / "files"
    folder.mkdir()
    paths = []
    for n in range(count):
        path = folder / f"f{n}.bin"
        path.write_bytes(os.urandom(_SIZE))
        paths.append(str(path))
    return paths


def _result(name: str, count: int, t_ours: float, t_base: float, floor: float, spread: str, what: list[str]) -> Result:
    return Result(
        name,
        "REPORT",
        ours=f"{count / t_ours:,.0f} files/s ({t_ours:.2f} s)",
        baseline=f"{count / t_base:,.0f} files/s ({t_base:.2f} s)",
        ratio=t_base / t_ours,
        target="report",
        notes=[
            *what,
            f"floor: {count / floor:,.0f} files/s ({floor:.2f} s), ours / floor time {t_ours / floor:.2f}x",
            spread,
        ],
    )


def bench_put_batch(cfg: Config) -> Result:
    count = cfg.size(200, 40)
    reps = cfg.rep_count(3, 1)
    floors: list[float] = []
    with work_dir("cas_put_batch-") as work:
        paths = _files(work, count)

        def ours(i: int) -> float:
            env = _store(work, f"ours-{i}")
            seconds, out = clock(lambda: _run([_exe(), "cas", "put", *paths], env))
            if len(out.splitlines()) != count:
                raise AssertionError("cas put printed a line per file")
            return seconds

        def baseline(i: int) -> float:
            env = _store(work, f"each-{i}")
            seconds, _ = clock(lambda: [_run([_exe(), "cas", "put", p], env) for p in paths])
            dest = work / f"floor-{i}"
            dest.mkdir()
            floors.append(clock(lambda: _run([sys.executable, "-c", _PUT_FLOOR, str(dest), *paths], env))[0])
            return seconds

        t = measure(reps, ours, baseline)
    floor = sorted(floors)[len(floors) // 2]
    return _result(
        "cas_put_batch",
        count,
        t.ours_median,
        t.baseline_median,
        floor,
        t.spread(),
        [
            f"{count} files of 4 KiB; ours: one 'cas put' process of them all; baseline: one 'cas put' process per "
            f"file; median of {reps}",
            "floor: one python process hashing each file while copying it, fsync of each copy, then of the folder",
        ],
    )


def bench_cat_batch(cfg: Config) -> Result:
    count = cfg.size(200, 40)
    reps = cfg.rep_count(3, 1)
    floors: list[float] = []
    with work_dir("cas_cat_batch-") as work:
        paths = _files(work, count)
        env = _store(work, "store")
        digests = [line.split()[0] for line in _run([_exe(), "cas", "put", *paths], env).splitlines()]
        blobs = work / "store" / "store" / "versioning" / "data" / "blobs" / "sha256"
        objects = [str(blobs / d.removeprefix("sha256:")) for d in digests]

        def folder(name: str) -> Path:
            path = work / name
            path.mkdir()
            return path

        def ours(i: int) -> float:
            out = folder(f"ours-{i}")
            seconds, _ = clock(lambda: _run([_exe(), "cas", "cat", *digests, "--out-dir", str(out)], env))
            _check(out, count)
            return seconds

        def baseline(i: int) -> float:
            out = folder(f"each-{i}")
            each: Callable[[str], str] = lambda d: _run(  # noqa: E731
                [_exe(), "cas", "cat", d, "--out", str(out / d.removeprefix("sha256:"))], env
            )
            seconds, _ = clock(lambda: [each(d) for d in digests])
            _check(out, count)
            floor_out = folder(f"floor-{i}")
            floors.append(clock(lambda: _run([sys.executable, "-c", _CAT_FLOOR, str(floor_out), *objects], env))[0])
            return seconds

        t = measure(reps, ours, baseline)
    floor = sorted(floors)[len(floors) // 2]
    return _result(
        "cas_cat_batch",
        count,
        t.ours_median,
        t.baseline_median,
        floor,
        t.spread(),
        [
            f"{count} objects of 4 KiB from the store's folder; ours: one 'cas cat --out-dir' process; baseline: one "
            f"'cas cat --out' process per object; median of {reps}",
            "floor: one python process reading each object file, hashing it and writing it to the folder (no fsync)",
        ],
    )


def _check(out: Path, count: int) -> None:
    if len(list(out.iterdir())) != count:
        raise AssertionError(f"cas cat wrote {len(list(out.iterdir()))} files, expected {count}")


def bench_s3_put_batch(cfg: Config) -> Result:
    from reviewtrail.cas import CasStore

    count, size = cfg.size(8, 4), cfg.size(32, 16) * MIB
    reps = cfg.rep_count(3, 2)
    server, reason = _server()
    if server is None:
        return Result("s3_put_batch", "SKIP", target="report", notes=[f"skipped: {reason}"])
    floors: list[float] = []
    try:
        with work_dir("s3_put_batch-") as work:
            paths = [work / f"f{n}.bin" for n in range(count)]
            for path in paths:
                _write_random(path, size)
            bucket = server.new_bucket()
            client = server.client()
            (work / "spool").mkdir()

            def put(batch: Callable[[Any], list[Any]]) -> float:
                cas = _cas(server, bucket, spool_dir=work / "spool")
                cas.put(b"warm-up")  # makes the client and its first connection: not what is measured
                seconds, refs = timed(lambda: batch(cas))
                if [ref.size for ref in refs] != [size] * count:
                    raise AssertionError(f"put_files stored {[ref.size for ref in refs]}")
                return seconds

            def ours(i: int) -> float:
                return put(lambda cas: cas.put_files(paths))

            def baseline(i: int) -> float:
                seconds = put(lambda cas: CasStore.put_files(cas, paths))
                prefix = f"floor-{i}"
                floors.append(
                    timed(lambda: [client.upload_file(str(p), bucket, f"{prefix}/{p.name}") for p in paths])[0]
                )
                return seconds

            t = measure(reps, ours, baseline)
    finally:
        server.stop()
    mib = count * size / MIB
    floor = sorted(floors)[len(floors) // 2]
    return Result(
        "s3_put_batch",
        "REPORT",
        ours=rate(mib, t.ours_median, "MiB/s"),
        baseline=rate(mib, t.baseline_median, "MiB/s"),
        ratio=t.ratio,
        target="report",
        notes=[
            f"{count} files of {size // MIB} MiB to a SeaweedFS on loopback; ours: S3Cas.put_files (hash, then send "
            "from each file); baseline: CasStore.put_files on the same store (each file copied to a local temporary "
            f"file while hashed, sent from the copy); median of {reps}",
            f"floor: boto3 upload_file of each file in turn (default TransferConfig; checks nothing): "
            f"{rate(mib, floor, 'MiB/s')}, ours / floor time {t.ours_median / floor:.2f}x",
            t.spread(),
        ],
    )
