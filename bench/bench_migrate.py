"""Migrate: a SQLite + files store copied to PostgreSQL + files, against copying the same rows
with PostgreSQL ``COPY`` and the same bytes with a plain file copy.

The store: 100,000 records (10,000 with --quick) of about 200 bytes of payload each, appended in
batches of 1,000, one in every 1,000 referencing one of 64 objects of 4 MiB (256 MiB; 8 objects,
32 MiB with --quick) in the data pool. Built once.

migrate_postgres_files
    ``reviewtrail.migrate.migrate`` into a new PostgreSQL database and a new folder, end to end:
    the records (read a page at a time from SQLite, each record's hashes checked, written with
    ``copy_sealed`` in runs of 10,000 with their query rows, all in one transaction), the objects
    (each read through the verified read and published with fsync, copied beside the records),
    and the final check (the head, the records compared by digests of every field, every
    referenced object read back and re-hashed from the target). The phases are timed apart from
    the progress callback: records/s for the records, MiB/s for the objects.

    Baseline, in the same run: the rows read from the SQLite file with one cursor and written
    with ``COPY rt_records_copy FROM STDIN`` into a table with the same columns, primary key and
    unique id (one transaction), then every object file copied with ``shutil.copyfile`` and
    ``fsync``: the raw-copy floor. Ratio = floor time / our time, end to end; figures are medians
    of 3 (1 with --quick), interleaved. Target: ratio >= 0.5 (migrate also checks what the floor
    only moves: every record's hashes, the target read back and compared, every referenced object
    re-hashed).

migrate_s3_objects
    The same store's objects moved to S3 (a SeaweedFS on loopback, ``--cas-to s3://bucket/prefix``,
    the ledger staying where it is): the objects phase (each object read through the verified read
    and published with ``S3Cas``: hashed, sent create-only) in MiB/s, against boto3
    ``upload_file`` of every object file one after another, to the same server. Ratio = boto3
    time / our objects phase; the end-to-end time (with the final check, which reads every
    referenced object back from S3 and re-hashes it) is in the notes. Median of 3 (1 with --quick).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import statistics
import time
from pathlib import Path
from typing import Any

from _util import Config, Result, measure, rate, timed, verdict, work_dir
from bench_ledger import _postgres_server
from bench_s3 import _server as _seaweed_server

_BATCH = 1000
_OBJECT = 4 * 1024 * 1024
_COLUMNS = "seq, id, type, time, actor, privacy, subject, supersedes, payload, payload_hash, prev_hash, hash"


def _build(root: Path, records: int, objects: int) -> Any:
    from reviewtrail.app import init_store
    from reviewtrail.config import Settings
    from reviewtrail.ledger import NewRecord

    settings = Settings(store=root / "store", database_url=f"sqlite:///{root / 'store' / 'ledger.sqlite'}")
    with init_store(settings) as store:
        refs = [store.cas.put(os.urandom(_OBJECT)).to_json() for _ in range(objects)]
        every = max(1, records // objects)
        for start in range(0, records, _BATCH):
            batch = []
            for n in range(start, min(start + _BATCH, records)):
                payload: dict[str, Any] = {"n": n, "score": n % 97, "note": "x" * 160, "subjectRef": f"case-{n % 5000}"}
                if n % every == 0 and n // every < objects:
                    payload["file"] = refs[n // every]
                batch.append(
                    NewRecord(
                        type="bench.result@1", actor="bench", privacy="private", subject=f"s{n % 100}", payload=payload
                    )
                )
            store.append(batch)
    return settings


def bench_migrate(cfg: Config) -> Result:
    records = cfg.size(100_000, 10_000)
    objects = cfg.size(64, 8)
    reps = cfg.rep_count(3, 1)
    server, reason = _postgres_server()
    if server is None:
        return Result("migrate_postgres_files", "SKIP", target="report", notes=[f"skipped: {reason}"])
    try:
        with work_dir("migrate-") as work:
            settings = _build(work, records, objects)
            return _measure(server, settings, work, records, objects, reps)
    finally:
        server.stop()


def _measure(server: Any, settings: Any, work: Path, records: int, objects: int, reps: int) -> Result:
    import psycopg

    from reviewtrail import migrate as migrate_module
    from reviewtrail.app import catalog
    from reviewtrail.migrate import MigrateOptions, migrate

    nbytes = objects * _OBJECT
    blobs = sorted((settings.store / "versioning" / "data" / "blobs" / "sha256").iterdir())
    phases: list[tuple[float, float, float]] = []
    plain: list[tuple[float, float]] = []  # the baseline's rows, then its files

    with psycopg.connect(server.url, autocommit=True) as admin:

        def settle() -> None:
            admin.execute("CHECKPOINT")
            os.sync()

        def ours(i: int) -> float:
            target = work / f"objects-{i}"
            shutil.rmtree(target, ignore_errors=True)
            options = MigrateOptions(database_url=server.new_database(), cas_url=f"file://{target}")
            marks: dict[str, float] = {}

            def tick(phase: str, advance: int, total: int) -> None:
                marks[phase] = time.perf_counter()

            start = [0.0]
            checks = migrate_module._check_target

            def check(*args: Any) -> None:  # the final check begins: the records are committed
                marks["check"] = time.perf_counter()
                checks(*args)

            def run() -> Any:
                start[0] = time.perf_counter()
                migrate_module._check_target = check
                try:
                    return migrate(settings, catalog(), options, progress=tick)
                finally:
                    migrate_module._check_target = checks

            seconds, report = timed(run, settle)
            if not report.ok or report.records_copied != records + 1 or report.bytes_copied != nbytes:
                raise RuntimeError(f"migrate did not copy the store: {report.to_json()}")
            phases.append((marks["check"] - start[0], marks["bytes"] - start[0], start[0] + seconds - marks["check"]))
            shutil.rmtree(target, ignore_errors=True)
            return seconds

        def baseline(i: int) -> float:
            target = work / f"plain-{i}"
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir()
            with psycopg.connect(server.new_database()) as conn:
                conn.execute(
                    "CREATE TABLE rt_records_copy (seq BIGINT PRIMARY KEY, id TEXT NOT NULL UNIQUE, "
                    "type TEXT NOT NULL, time TEXT NOT NULL, actor TEXT NOT NULL, privacy TEXT NOT NULL, "
                    "subject TEXT, supersedes TEXT, payload BYTEA NOT NULL, payload_hash TEXT NOT NULL, "
                    "prev_hash TEXT NOT NULL, hash TEXT NOT NULL)"
                )
                conn.commit()

                def run() -> None:
                    began = time.perf_counter()
                    source = sqlite3.connect(f"file:{settings.store / 'ledger.sqlite'}?mode=ro", uri=True)
                    with conn.cursor() as cur, cur.copy(f"COPY rt_records_copy ({_COLUMNS}) FROM STDIN") as copy:
                        for row in source.execute(f"SELECT {_COLUMNS} FROM rt_records ORDER BY seq"):
                            copy.write_row(row)
                    conn.commit()
                    source.close()
                    rows_done = time.perf_counter()
                    for blob in blobs:
                        dest = target / blob.name
                        shutil.copyfile(blob, dest)
                        fd = os.open(dest, os.O_RDONLY)
                        os.fsync(fd)
                        os.close(fd)
                    fd = os.open(target, os.O_RDONLY)
                    os.fsync(fd)
                    os.close(fd)
                    plain.append((rows_done - began, time.perf_counter() - rows_done))

                seconds, _ = timed(run, settle)
            shutil.rmtree(target, ignore_errors=True)
            return seconds

        t = measure(reps, ours, baseline)
    rec_s, obj_s, check_s = (statistics.median(p[k] for p in phases) for k in range(3))
    copy_s, files_s = (statistics.median(p[k] for p in plain) for k in range(2))
    mib = nbytes / (1024 * 1024)
    total = records + 1  # and the store's identity record
    return Result(
        "migrate_postgres_files",
        verdict(t.ratio >= 0.5),
        ours=f"{total / t.ours_median:,.0f} rec/s, {mib / t.ours_median:,.1f} MiB/s ({t.ours_median:.2f} s)",
        baseline=f"{total / t.baseline_median:,.0f} rec/s, {mib / t.baseline_median:,.1f} MiB/s "
        f"({t.baseline_median:.2f} s)",
        ratio=t.ratio,
        target=">= 0.50x",
        notes=[
            f"{total:,} records, {objects} objects of 4 MiB ({mib:.0f} MiB); end to end, rates over the whole run",
            f"migrate phases (median, from its start): records committed at {rec_s:.2f} s ({total / rec_s:,.0f} "
            f"rec/s), objects (copied beside them) at {obj_s:.2f} s ({mib / obj_s:,.1f} MiB/s); then the final check "
            f"{check_s:.2f} s (head, records compared by digests, every referenced object re-hashed)",
            "baseline (the raw-copy floor): SQLite rows -> COPY FROM STDIN into a plain table (PK seq, unique id), "
            "one transaction; then copyfile + fsync of every object",
            f"baseline parts (median): COPY {copy_s:.2f} s ({total / copy_s:,.0f} rec/s), files {files_s:.2f} s "
            f"({mib / files_s:,.1f} MiB/s)",
            t.spread(),
        ],
    )


def bench_migrate_s3(cfg: Config) -> Result:
    records = cfg.size(10_000, 2_000)
    objects = cfg.size(64, 8)
    reps = cfg.rep_count(3, 1)
    server, reason = _seaweed_server()
    if server is None:
        return Result("migrate_s3_objects", "SKIP", target="report", notes=[f"skipped: {reason}"])
    try:
        with work_dir("migrate-s3-") as work:
            settings = _build(work, records, objects)
            return _measure_s3(server, settings, objects, reps)
    finally:
        server.stop()


def _measure_s3(server: Any, settings: Any, objects: int, reps: int) -> Result:
    from reviewtrail.app import catalog
    from reviewtrail.config import S3Settings
    from reviewtrail.migrate import MigrateOptions, migrate

    nbytes = objects * _OBJECT
    blobs = sorted((settings.store / "versioning" / "data" / "blobs" / "sha256").iterdir())
    bucket = server.new_bucket()
    client = server.client()
    client.upload_file(str(blobs[0]), bucket, "warm-up")  # the client and its first connection
    s3 = S3Settings(server.access_key, server.secret_key, None, server.endpoint, "us-east-1")
    with_s3 = settings.replace(s3=s3)
    whole: list[float] = []

    def ours(i: int) -> float:
        options = MigrateOptions(cas_url=f"s3://{bucket}/migrate-{i}")
        marks: dict[str, float] = {}

        def tick(phase: str, advance: int, total: int) -> None:
            marks.setdefault(f"first-{phase}", time.perf_counter())
            marks[phase] = time.perf_counter()

        seconds, report = timed(lambda: migrate(with_s3, catalog(), options, progress=tick))
        if not report.ok or report.objects_copied != objects or report.bytes_copied != nbytes:
            raise RuntimeError(f"migrate did not copy the objects: {report.to_json()}")
        whole.append(seconds)
        return marks["bytes"] - marks["first-bytes"]

    def baseline(i: int) -> float:
        def run() -> None:
            for blob in blobs:
                client.upload_file(str(blob), bucket, f"plain-{i}/{blob.name}")

        seconds, _ = timed(run)
        return seconds

    t = measure(reps, ours, baseline)
    mib = nbytes / (1024 * 1024)
    return Result(
        "migrate_s3_objects",
        "REPORT",
        ours=rate(mib, t.ours_median, "MiB/s"),
        baseline=rate(mib, t.baseline_median, "MiB/s"),
        ratio=t.ratio,
        target="report",
        notes=[
            f"{objects} objects of 4 MiB ({mib:.0f} MiB) from the store's folder to a SeaweedFS on loopback; "
            "ours: the objects phase of migrate (verified read, hash, create-only put)",
            "migrate end to end (median, with the final check reading every referenced object back from S3): "
            f"{statistics.median(whole):.2f} s",
            "baseline: boto3 upload_file of each object file in turn (default TransferConfig), same server",
            t.spread(),
        ],
    )
