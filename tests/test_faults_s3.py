"""Fault campaigns on the S3 CAS: SeaweedFS killed mid-upload and restarted, and a bucket that
answers 500 and 503 for a while.

**Killed** (a SeaweedFS of this module's own): per trial a new store (SQLite ledger in its folder,
objects under a new prefix of one bucket) and two writer processes: ``big`` mostly sends objects
of 1 to 9 MiB as multipart uploads (5 MiB parts above 1 MiB), ``small`` single puts and
``put_many`` batches on threads; both append records pointing at the objects they were
acknowledged. While a multipart upload is in flight, ``weed mini`` gets SIGKILL, stays down for a
moment and is started again on the same ports and data folder; the writers carry on by themselves.
Then: no half object is visible (every key under ``blobs/sha256/`` holds bytes that hash to its
name), every acknowledged put reads back intact, every failure was exit 5, every acknowledged
append is there, ``reviewtrail verify`` passes, and ``cas clean-ingest --older-than 0`` aborts the
multipart uploads whose abort could not reach the server (counted as ``uploads-left``).

**500/503** (the session's SeaweedFS behind :class:`~support.s3_faults.FaultyProxy`): per trial the
bucket answers every request with 500 InternalError, 503 SlowDown or 503 ServiceUnavailable (in
turn) for a random while, and meanwhile ``reviewtrail cas put``, ``cas cat`` and ``ledger append``
(each its own process, its own client and retries) and, in this process, a multipart upload, a
``put_many`` and a read run through it. Each either succeeds (after retries) or fails with exit 5
naming the setting, no traceback; after the bad period no half object is visible, every
acknowledged write reads back, and ``reviewtrail verify`` passes.

Each campaign prints ``faults: … trials=… faults=… verify-problems=… acked-lost=…``.
``RT_FAULT_TRIALS`` sets the number of trials of each (defaults 5 and 4), ``RT_FAULT_SEED`` the seed.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from conftest import started_seaweed
from reviewtrail.errors import EXIT_BACKEND, ReviewtrailError
from support.faults import Writer, base_env, cli, in_flight, print_figures
from support.s3_faults import FaultyProxy
from support.seaweed import SeaweedServer

pytestmark = pytest.mark.slow

SEED = int(os.environ.get("RT_FAULT_SEED", "20261202"))
KILL_TRIALS = int(os.environ.get("RT_FAULT_TRIALS", "5"))
BAD_TRIALS = int(os.environ.get("RT_FAULT_TRIALS", "4"))
MIB = 1 << 20
# The bad answers of a bucket in trouble, given in turn.
BAD_ANSWERS = [(500, "InternalError"), (503, "SlowDown"), (503, "ServiceUnavailable")]

# One op a step: a multipart upload (big), a put or a put_many (small), or an append of records
# pointing at objects this writer was acknowledged. It says the addresses or ids it sends.
S3_WRITER = r"""
import hashlib
from pathlib import Path

from reviewtrail.app import open_store
from reviewtrail.config import load_settings
from reviewtrail.ledger import NewRecord

MIB = 1 << 20
scratch = Path(stop).parent / f"{name}-files"
scratch.mkdir(exist_ok=True)
store = None
acked = []


def digest(data):
    return hashlib.sha256(data).hexdigest()


def step(n):
    global store
    if store is None:
        store = open_store(load_settings())
        store.cas.multipart_threshold = MIB  # above 1 MiB: a multipart upload, in 5 MiB parts
        store.cas.part_size = 5 * MIB
    pool = rng.choice(["data", "agent-state"])
    r = rng.random()
    if acked and r < 0.25:
        refs = rng.sample(acked, min(len(acked), rng.randrange(1, 6)))
        records = [
            NewRecord.make(type="fault.s3@1", actor=name, privacy="private", payload={"n": n, "blob": ref.to_json()})
            for ref in refs
        ]
        say("begin", n=n, op="append", ids=[r.id for r in records])
        envs = store.append(records)
        say("ack", n=n, recs=[[e.seq, e.id, e.hash] for e in envs])
        return
    if name == "big" and r < 0.9:
        data = rng.randbytes(rng.randrange(MIB + 1, 9 * MIB))
        path = scratch / f"{n}.bin"
        path.write_bytes(data)
        say("begin", n=n, op="multipart", digests=[digest(data)])
        refs = [store.cas.put_file(path, pool=pool)]
        path.unlink()
    elif r < 0.6:
        blobs = [rng.randbytes(rng.randrange(0, 256 * 1024)) for _ in range(rng.randrange(2, 12))]
        say("begin", n=n, op="put_many", digests=[digest(b) for b in blobs])
        refs = store.cas.put_many(blobs, pool=pool)
    else:
        data = rng.randbytes(rng.randrange(1, 768 * 1024))
        say("begin", n=n, op="put", digests=[digest(data)])
        refs = [store.cas.put(data, pool=pool)]
    say("ack", n=n, refs=[ref.to_json() for ref in refs])
    acked.extend(refs)


loop(step)
"""


def _s3cas(server: SeaweedServer, bucket: str, prefix: str, endpoint: str | None = None, **options: Any) -> Any:
    from reviewtrail.cas import S3Cas
    from reviewtrail.config import S3Settings

    settings = S3Settings(server.access_key, server.secret_key, None, endpoint or server.endpoint, "us-east-1")
    return S3Cas(bucket, prefix, s3=settings, **options)


def _half_objects(server: SeaweedServer, bucket: str, prefix: str) -> tuple[int, list[str]]:
    """(how many objects are visible under ``prefix``, the keys whose bytes do not hash to their name)."""
    client = server.client()
    count, bad = 0, []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"{prefix}versioning/"):
        for entry in page.get("Contents", []):
            key = str(entry["Key"])
            folder, _, name = key.rpartition("/")
            if not folder.endswith("blobs/sha256"):
                continue
            count += 1
            body = client.get_object(Bucket=bucket, Key=key)["Body"].read()
            if hashlib.sha256(body).hexdigest() != name:
                bad.append(f"{key}: {len(body)} bytes that hash to {hashlib.sha256(body).hexdigest()}")
    return count, bad


def _records(env: dict[str, str], cwd: Path) -> dict[str, tuple[int, str]]:
    done = cli(env, "ledger", "tail", "-n", "100000000", "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    return {r["id"]: (r["seq"], r["hash"]) for r in json.loads(done.stdout)}


def _verify(env: dict[str, str], cwd: Path) -> list[str]:
    done = cli(env, "verify", "--json", "--no-progress", cwd=cwd)
    if done.returncode == 0:
        return []
    try:
        return list(json.loads(done.stdout)["problems"]) or [done.stdout[-1000:]]
    except (ValueError, KeyError):
        return [f"verify exit {done.returncode}: {done.stdout[-1000:]} {done.stderr[-1000:]}"]


# --- SeaweedFS killed mid-upload ----------------------------------------------------------------


@pytest.fixture(scope="module")
def crash_weed() -> Iterator[SeaweedServer]:
    """A SeaweedFS of this module's own: it is killed and restarted, so no other test shares it."""
    yield from started_seaweed()


def test_seaweedfs_killed_mid_upload_and_restarted(
    crash_weed: SeaweedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(SEED)
    bucket = crash_weed.new_bucket()
    figures = dict.fromkeys(
        [
            "objects",
            "multipart_in_flight",
            "puts_in_flight",
            "acked",
            "acked_lost",
            "half_objects",
            "uploads_left",
            "verify_problems",
        ],
        0,
    )
    failures: list[str] = []
    for trial in range(KILL_TRIALS):
        work = tmp_path / f"trial-{trial}"
        work.mkdir()
        prefix = f"t{trial}/"
        env = base_env(
            **crash_weed.env(), REVIEWTRAIL_STORE=str(work / "store"), REVIEWTRAIL_CAS_URL=f"s3://{bucket}/{prefix}"
        )
        done = cli(env, "init", cwd=work)
        assert done.returncode == 0, done.stderr
        writers = [Writer.start(S3_WRITER, name, rng.randrange(1 << 30), env, work) for name in ("big", "small")]
        big = writers[0]
        try:
            started = time.monotonic()
            for w in writers:
                assert w.wait_for("ack", started), f"trial {trial}: {w.name} acknowledged nothing: {w.seen()[-3:]}"
            # Kill while a multipart upload is being sent.
            deadline = time.monotonic() + 60
            mark = time.monotonic()
            while not any(e.get("op") == "multipart" and e["t"] >= mark for e in big.seen("begin")):
                assert time.monotonic() < deadline, f"trial {trial}: no multipart upload began"
                time.sleep(0.005)
            time.sleep(rng.uniform(0, 0.4))
            fault_at = time.monotonic()
            crash_weed.kill()
            figures["multipart_in_flight"] += in_flight(big, fault_at)
            figures["puts_in_flight"] += in_flight(writers[1], fault_at)
            time.sleep(rng.uniform(0, 1.0))
            crash_weed.restart()
            restarted = time.monotonic()
            for w in writers:  # each carries on by itself once the server is back
                if not w.wait_for("ack", restarted):
                    failures.append(f"trial {trial}: {w.name} acknowledged nothing after the restart: {w.seen()[-3:]}")
        finally:
            stderrs = [w.stop() for w in writers]

        cas = _s3cas(crash_weed, bucket, prefix)
        with ThreadPoolExecutor(1) as pool:  # verify (its own process) and the direct look at every key, at once
            verifying = pool.submit(_verify, env, work)
            count, bad = _half_objects(crash_weed, bucket, prefix)
            problems = verifying.result()
        figures["objects"] += count
        figures["half_objects"] += len(bad)
        failures += [f"trial {trial}: half object visible: {b}" for b in bad]
        figures["uploads_left"] += len(cas.unfinished_uploads())  # an abort that could not reach the server
        stored = _records(env, work)
        for w, err in zip(writers, stderrs, strict=True):
            if err.strip():
                failures.append(f"trial {trial}: {w.name} wrote to stderr: {err[-1000:]}")
            for begin, outcome in w.outcomes().values():
                if outcome is None:
                    continue
                if outcome["kind"] == "unclean" or (outcome["kind"] == "error" and outcome["code"] != EXIT_BACKEND):
                    failures.append(f"trial {trial}: {w.name}: not a clean exit-5 error: {outcome}")
                if outcome["kind"] != "ack":
                    if begin is not None and begin.get("op") == "append":
                        there = [i for i in begin["ids"] if i in stored]
                        if there and len(there) != len(begin["ids"]):
                            failures.append(f"trial {trial}: {w.name}: a failed append is there in part: {begin}")
                    continue
                for ref in outcome.get("refs", []):
                    figures["acked"] += 1
                    if not cas.verify(_ref(ref)):
                        figures["acked_lost"] += 1
                        failures.append(f"trial {trial}: {w.name}: acknowledged {ref['digest']} is missing or damaged")
                for seq, rid, h in outcome.get("recs", []):
                    figures["acked"] += 1
                    if stored.get(rid) != (seq, h):
                        figures["acked_lost"] += 1
                        failures.append(f"trial {trial}: {w.name}: acknowledged record {rid} (seq {seq}) is not there")
        figures["verify_problems"] += len(problems)
        failures += [f"trial {trial}: verify: {p}" for p in problems]
        failures += _clean_uploads(env, work, cas, f"trial {trial}")

    print_figures(capsys, "seaweedfs-kill", trials=KILL_TRIALS, faults=KILL_TRIALS, **figures)
    assert not failures, "\n".join(failures[:20])
    assert figures["multipart_in_flight"] > 0, "no kill landed while a multipart upload was being sent"
    assert figures["acked"] > 0


def _clean_uploads(env: dict[str, str], cwd: Path, cas: Any, label: str) -> list[str]:
    """``cas clean-ingest --older-than 0`` aborts the unfinished uploads; what is wrong, if anything."""
    done = cli(env, "cas", "clean-ingest", "--older-than", "0", "--json", cwd=cwd)
    if done.returncode != 0:
        return [f"{label}: clean-ingest exit {done.returncode}: {done.stderr[-800:]}"]
    left = cas.unfinished_uploads()
    return [f"{label}: unfinished uploads left after clean-ingest: {left}"] if left else []


def _ref(doc: dict[str, Any]) -> Any:
    from reviewtrail.cas import CasRef

    return CasRef.model_validate(doc)


# --- a bucket that answers 500 and 503 for a while ----------------------------------------------


def _cli_proc(env: dict[str, str], cwd: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "reviewtrail", *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_bucket_answering_500_and_503_for_a_while(
    seaweed: SeaweedServer, s3_bucket: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(SEED + 1)
    prefix = "flaky/"
    direct = _s3cas(seaweed, s3_bucket, prefix, require_layout=False)
    failures: list[str] = []
    outcomes: dict[str, int] = {"ok": 0, "exit5": 0}
    acked_refs: list[tuple[Any, bytes]] = []  # (ref, its bytes)
    texts: list[tuple[Any, bytes]] = []  # the acknowledged objects that are text, for cas cat
    acked_ids: list[str] = []
    with FaultyProxy(seaweed.endpoint, failures=0) as proxy:
        env = base_env(
            **{**seaweed.env(), "AWS_ENDPOINT_URL": proxy.endpoint},
            REVIEWTRAIL_STORE=str(tmp_path / "store"),
            REVIEWTRAIL_CAS_URL=f"s3://{s3_bucket}/{prefix}",
        )
        done = cli(env, "init", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        seed_text = os.urandom(3000).hex()
        (tmp_path / "seed.txt").write_text(seed_text)
        done = cli(env, "cas", "put", "seed.txt", "--json", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        acked_refs.append((_ref(json.loads(done.stdout)), seed_text.encode()))
        texts.append(acked_refs[0])
        refused_before = proxy.refused

        lock = threading.Lock()

        def outcome(what: str, error: BaseException | None = None) -> None:
            clean = isinstance(error, ReviewtrailError) and error.exit_code == EXIT_BACKEND
            with lock:
                if error is None or clean:
                    outcomes["ok" if error is None else "exit5"] += 1
                else:
                    failures.append(f"{what}: not a clean exit-5 error: {error!r}")

        def in_process(trial: int) -> None:
            """A multipart upload, a put_many on threads and a read, through the proxy, in this process."""

            def cas() -> Any:  # opened in the bad period too (opening reads the layout)
                return _s3cas(
                    seaweed,
                    s3_bucket,
                    prefix,
                    proxy.endpoint,
                    multipart_threshold=MIB,
                    part_size=5 * MIB,
                    concurrency=4,
                )

            big = rng.randbytes(rng.randrange(5 * MIB + 1, 11 * MIB))
            src = tmp_path / f"big-{trial}.bin"
            src.write_bytes(big)
            small = [rng.randbytes(rng.randrange(0, 100_000)) for _ in range(8)]
            steps: list[tuple[str, Callable[[], Any]]] = [
                ("multipart", lambda: [(cas().put_file(src), big)]),
                ("put_many", lambda: list(zip(cas().put_many(small), small, strict=True))),
                ("read", lambda: [(acked_refs[0][0], cas().read(acked_refs[0][0]))]),
            ]

            def run(item: tuple[str, Callable[[], Any]]) -> None:
                what, call = item
                try:
                    got = call()
                except Exception as exc:
                    outcome(f"trial {trial} {what}", exc)
                    return
                outcome(what)
                for ref, data in got:
                    if what == "read":
                        if data != acked_refs[0][1]:
                            failures.append(f"trial {trial}: read gave other bytes")
                    else:
                        acked_refs.append((ref, data))

            with ThreadPoolExecutor(len(steps)) as pool:
                list(pool.map(run, steps))

        for trial in range(BAD_TRIALS):
            answers = rng.sample(BAD_ANSWERS, len(BAD_ANSWERS))
            begin_in = rng.uniform(0, 0.6)  # the bad period begins now or while the requests are under way
            begin = threading.Timer(begin_in, proxy.fail_next, args=(10**9, answers))
            end = threading.Timer(begin_in + rng.uniform(0.3, 4.5), proxy.fail_next, args=(0, answers))
            begin.start()
            end.start()
            text = os.urandom(rng.randrange(1, 60_000)).hex()
            (tmp_path / f"put-{trial}.txt").write_text(text)
            known, known_bytes = rng.choice(texts)
            payload = json.dumps({"blob": known.object_ref().to_json(), "trial": trial})
            procs = {
                "cas put": _cli_proc(env, tmp_path, "cas", "put", f"put-{trial}.txt", "--json"),
                "cas cat": _cli_proc(env, tmp_path, "cas", "cat", known.digest),
                "ledger append": _cli_proc(
                    env,
                    tmp_path,
                    *("ledger", "append", "--type", "fault.flaky@1", "--actor", "cli", "--privacy", "private"),
                    *("--payload", payload, "--json"),
                ),
            }
            in_process(trial)
            for what, proc in procs.items():
                out, err = proc.communicate(timeout=300)
                if proc.returncode == 0:
                    outcomes["ok"] += 1
                    if what == "cas put":
                        acked_refs.append((_ref(json.loads(out)), text.encode()))
                        texts.append(acked_refs[-1])
                    elif what == "ledger append":
                        acked_ids.append(json.loads(out)["id"])
                    elif what == "cas cat" and out.encode() != known_bytes:
                        failures.append(f"trial {trial}: cas cat gave other bytes")
                elif proc.returncode == EXIT_BACKEND and "error:" in err and "Traceback" not in err:
                    outcomes["exit5"] += 1
                    if "REVIEWTRAIL_CAS_URL" not in err and "AWS_ENDPOINT_URL" not in err:
                        failures.append(f"trial {trial}: {what} exit 5 without naming the setting: {err[-600:]}")
                else:
                    failures.append(f"trial {trial}: {what} exit {proc.returncode}: {err[-1000:]}")
            begin.join()
            end.join()
        refused = proxy.refused - refused_before

        count, bad = _half_objects(seaweed, s3_bucket, prefix)
        failures += [f"half object visible: {b}" for b in bad]
        uploads_left = len(direct.unfinished_uploads())
        lost = [ref for ref, data in acked_refs if direct.read(ref) != data]
        failures += [f"acknowledged {ref.digest} is missing or damaged" for ref in lost]
        stored = _records(env, tmp_path)
        missing = [rid for rid in acked_ids if rid not in stored]
        failures += [f"acknowledged record {rid} is not there" for rid in missing]
        problems = _verify(env, tmp_path)
        failures += [f"verify: {p}" for p in problems]
        failures += _clean_uploads(env, tmp_path, direct, "after the bad periods")

    print_figures(
        capsys,
        "s3-500-503",
        trials=BAD_TRIALS,
        faults=BAD_TRIALS,
        refused_requests=refused,
        ok_after_retries=outcomes["ok"],
        exit5=outcomes["exit5"],
        objects=count,
        half_objects=len(bad),
        uploads_left=uploads_left,
        verify_problems=len(problems),
        acked=len(acked_refs) + len(acked_ids),
        acked_lost=len(lost) + len(missing),
    )
    assert not failures, "\n".join(failures[:20])
    assert refused > 0 and outcomes["ok"] > 0 and outcomes["exit5"] > 0, (refused, outcomes)
