"""CAS benchmarks: ``put_file`` of one large file, ``put_many`` of many small objects.

cas_put_file
    ``FilesystemCas.put_file`` of a file of random bytes (256 MiB; 32 MiB with --quick)
    into a fresh store each repetition (store creation untimed), against the floor that does
    the same work in one pass: read the file in 1 MiB chunks, hash each chunk with hashlib
    and write it to DEST, then fsync DEST and its directory (fresh DEST each repetition; no
    ``sync`` of the whole filesystem, which would flush other processes' writes too). The
    source is read once beforehand so both sides find it in the page cache (dropping the
    cache cannot be controlled here). Figure: MiB/s of the file. The floor's digest is checked
    against ours. Target: ratio >= 0.9.

cas_put_many
    Reading 10,000 files of 4 KiB random bytes (1,000 with --quick) into memory and
    storing them with one ``put_many`` call into a fresh store, against
    ``git -c core.fsync=loose-object -c core.fsyncMethod=batch hash-object -w --stdin-paths``
    on the same files in a fresh ``git init -q`` repository (user/system git config
    ignored). Writing the input files is not timed; reading them is timed on both sides
    (git reads them itself). Figure: objects/s. Target: ratio >= 1.0.
    Note: git applies batch fsync only inside an ODB transaction, which some versions'
    hash-object (e.g. 2.39) never opens, so there it fsyncs every object.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from _util import Config, Result, measure, rate, remove, timed, verdict, work_dir
from reviewtrail.cas import FilesystemCas

MIB = 1 << 20
_GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
_CHUNK = MIB
_FLOOR = "one pass: read 1 MiB chunks, hashlib.sha256 update and write each; fsync the file, then its directory"


def _write_random(path: Path, size: int) -> None:
    with open(path, "wb") as fh:
        left = size
        while left:
            n = min(left, 16 * MIB)
            fh.write(os.urandom(n))
            left -= n


def _hash_copy_fsync(src: Path, dest: Path) -> str:
    """The floor of ``put_file``: one pass hashing while copying, then the file and its
    directory made durable."""
    digest = hashlib.sha256()
    with open(src, "rb", buffering=0) as fin, open(dest, "wb", buffering=0) as fout:
        while chunk := fin.read(_CHUNK):
            digest.update(chunk)
            fout.write(chunk)
        os.fsync(fout.fileno())
    fd = os.open(dest.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return digest.hexdigest()


def _warm(path: Path) -> None:
    with open(path, "rb", buffering=0) as fh:
        while fh.read(8 * MIB):
            pass


def bench_put_file(cfg: Config) -> Result:
    size = cfg.size(256, 32) * MIB
    reps = cfg.rep_count(3, 2)
    with work_dir("cas_put_file-") as work:
        src = work / "source.bin"
        _write_random(src, size)
        _warm(src)
        digests: set[str] = set()

        def ours(i: int) -> float:
            store = work / f"store-{i}"
            cas = FilesystemCas(store, create=True)
            seconds, ref = timed(lambda: cas.put_file(src))
            if ref.size != size:
                raise AssertionError(f"put_file stored {ref.size} bytes, expected {size}")
            digests.add(ref.hash)
            remove(store)
            return seconds

        def baseline(i: int) -> float:
            dest_dir = work / f"dest-{i}"
            dest_dir.mkdir()
            seconds, digest = timed(lambda: _hash_copy_fsync(src, dest_dir / "dest.bin"))
            digests.add(digest)
            remove(dest_dir)
            return seconds

        t = measure(reps, ours, baseline)
        if len(digests) != 1:
            raise AssertionError(f"put_file and the floor disagree: {sorted(digests)}")
    mib = size / MIB
    return Result(
        "cas_put_file",
        verdict(t.ratio >= 0.9),
        ours=rate(mib, t.ours_median, "MiB/s"),
        baseline=rate(mib, t.baseline_median, "MiB/s"),
        ratio=t.ratio,
        target=">= 0.90x",
        notes=[
            f"baseline: {_FLOOR}",
            f"{mib:.0f} MiB random file, page-cache warm, fresh store/DEST per rep, median of {reps}",
            t.spread(),
        ],
    )


def bench_put_many(cfg: Config) -> Result:
    count = cfg.size(10_000, 1_000)
    reps = cfg.rep_count(3, 2)
    with work_dir("cas_put_many-") as work:
        src = work / "objects"
        src.mkdir()
        paths = [str(src / f"{i:05d}") for i in range(count)]
        for p in paths:
            Path(p).write_bytes(os.urandom(4096))
        stdin = "".join(p + "\n" for p in paths)

        def read_and_put(cas: FilesystemCas) -> int:
            items = []
            for p in paths:
                with open(p, "rb") as fh:
                    items.append(fh.read())
            return len(cas.put_many(items))

        def ours(i: int) -> float:
            store = work / f"store-{i}"
            cas = FilesystemCas(store, create=True)
            seconds, stored = timed(lambda: read_and_put(cas))
            if stored != count:
                raise AssertionError(f"put_many returned {stored} refs, expected {count}")
            remove(store)
            return seconds

        def baseline(i: int) -> float:
            repo = work / f"git-{i}"
            subprocess.run(["git", "init", "-q", str(repo)], check=True, env=_GIT_ENV)
            cmd = ["git", "-C", str(repo), "-c", "core.fsync=loose-object", "-c", "core.fsyncMethod=batch"]
            cmd += ["hash-object", "-w", "--stdin-paths"]
            seconds, proc = timed(
                lambda: subprocess.run(cmd, input=stdin, check=True, capture_output=True, text=True, env=_GIT_ENV)
            )
            if len(proc.stdout.split()) != count:
                raise AssertionError("git hash-object did not print one id per object")
            remove(repo)
            return seconds

        t = measure(reps, ours, baseline)
    version = subprocess.run(["git", "--version"], check=True, capture_output=True, text=True).stdout.strip()
    return Result(
        "cas_put_many",
        verdict(t.ratio >= 1.0),
        ours=rate(count, t.ours_median, "obj/s"),
        baseline=rate(count, t.baseline_median, "obj/s"),
        ratio=t.ratio,
        target=">= 1.00x",
        notes=[
            "baseline: git -c core.fsync=loose-object -c core.fsyncMethod=batch hash-object -w --stdin-paths",
            f"({version}: batch fsync applies only inside an ODB transaction; hash-object may fsync every object)",
            f"{count:,} x 4 KiB files; both sides read the files inside the timed region; median of {reps}",
            t.spread(),
        ],
    )
