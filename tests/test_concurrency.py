"""Concurrency: many processes on one CAS, many writers on one ledger, readers following seq.

* 8 processes publishing the same bytes at the same moment all get the same ref,
  none fails, and exactly one intact, read-only object results (``put``,
  ``put_many``, ``put_file`` and a mix of the three).
* 4 processes appending 20 batches of 50 to one ledger (SQLite, PostgreSQL):
  seqs are gap-free, every record is there once, batches are contiguous, each
  writer's records keep its order, and the chain verifies.
* PostgreSQL: a reader that follows ``seq`` never sees ``n + 1`` before ``n``,
  even when a writer's transaction stays open after its INSERT (a "late
  commit"); a second writer waits for the first to commit.

Processes are real ``python -c`` children started together at a barrier (they
print ``ready`` and wait for a "go" file).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reviewtrail.cas import CasRef, FilesystemCas
from reviewtrail.errors import NotFoundError
from reviewtrail.ledger import Envelope, NewRecord, open_ledger

pytestmark = pytest.mark.slow

BIG = 4 * 1024 * 1024

# Waits at the barrier: prints "ready", then polls for the go file.
BARRIER = r"""
import os, sys, time


def barrier(go):
    os.write(1, b"ready\n")
    deadline = time.monotonic() + 120
    while not os.path.exists(go):
        if time.monotonic() > deadline:
            sys.exit("barrier: no go file")
        time.sleep(0.0005)
"""

PUT_CHILD = (
    BARRIER
    + r"""
import json, random
from pathlib import Path

from reviewtrail.cas import FilesystemCas

store, mode, pool, go, scratch = sys.argv[1:6]
big = random.Random(1234).randbytes(4 * 1024 * 1024)
batch = [big, b"small one", big, random.Random(99).randbytes(1024 * 1024), b""]
cas = FilesystemCas(store)
if mode == "put_file":
    src = Path(scratch)
    src.write_bytes(big)
barrier(go)
if mode == "put":
    refs = [cas.put(big, pool=pool)]
elif mode == "put_many":
    refs = cas.put_many(batch, pool=pool)
elif mode == "put_many_one":
    refs = cas.put_many([big], pool=pool)
else:
    refs = [cas.put_file(src, pool=pool)]
print(json.dumps([r.to_json() for r in refs]), flush=True)
"""
)

APPEND_CHILD = (
    BARRIER
    + r"""
import json

from reviewtrail.ledger import NewRecord, open_ledger

url, writer, batches, size, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
led = open_ledger(url)
barrier(go)
for b in range(batches):
    records = [
        NewRecord(type="conc.rec@1", actor=f"writer-{writer}", privacy="private",
                  payload={"w": writer, "b": b, "i": i}, id=f"w{writer}-b{b}-i{i}")
        for i in range(size)
    ]
    envs = led.append(records)
    print(json.dumps([[e.seq, e.id] for e in envs]), flush=True)
    # Give the other writers a chance at the lock: SQLite's busy handler backs off, so a writer
    # that just committed would otherwise often win every round and the writers would not overlap.
    time.sleep(0.003)
led.close()
"""
)


def run_at_barrier(argvs: list[list[str]], go: Path, timeout: float = 180) -> list[str]:
    """Start one child per argv, wait until all are ready, release them together; return their stdout."""
    procs = [
        subprocess.Popen([sys.executable, "-c", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for argv in argvs
    ]
    try:
        for p in procs:
            assert p.stdout is not None
            line = p.stdout.readline()
            if line != b"ready\n":
                _, err = p.communicate(timeout=timeout)
                pytest.fail(f"child did not reach the barrier (rc {p.poll()}): {line!r}\n{err.decode()}")
        go.touch()
        outs = []
        for p in procs:
            out, err = p.communicate(timeout=timeout)
            assert p.returncode == 0, f"child failed (rc {p.returncode}):\n{err.decode()}"
            assert err == b"", err.decode()
            outs.append(out.decode())
        return outs
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


# --- same content from 8 processes at once -------------------------------------------------


def blob_entries(store: Path, pool: str) -> list[os.DirEntry[str]]:
    return list(os.scandir(store / "versioning" / pool / "blobs" / "sha256"))


@pytest.mark.parametrize(
    ("mode", "pool"),
    [("put", "data"), ("put_many", "data"), ("put_file", "data"), ("mixed", "agent-state")],
)
def test_eight_processes_put_the_same_content(tmp_path: Path, mode: str, pool: str) -> None:
    store = tmp_path / "store"
    FilesystemCas(store, create=True)
    go = tmp_path / "go"
    modes = ["put", "put_many_one", "put_file"]
    argvs = [
        [PUT_CHILD, str(store), modes[i % 3] if mode == "mixed" else mode, pool, str(go), str(tmp_path / f"src-{i}")]
        for i in range(8)
    ]
    outs = run_at_barrier(argvs, go)

    big = random.Random(1234).randbytes(BIG)
    contents = [big]
    if mode == "put_many":
        contents = [big, b"small one", big, random.Random(99).randbytes(1024 * 1024), b""]
    expected = [
        CasRef(pool=pool, digest=f"sha256:{hashlib.sha256(c).hexdigest()}", size=len(c))  # type: ignore[arg-type]
        for c in contents
    ]
    for out in outs:
        got = [CasRef.model_validate(r) for r in json.loads(out)]
        assert got == expected

    cas = FilesystemCas(store)
    distinct = {r.hash: c for r, c in zip(expected, contents, strict=True)}
    entries = blob_entries(store, pool)
    assert sorted(e.name for e in entries) == sorted(distinct)
    for other in ("data", "agent-state"):
        if other != pool:
            assert blob_entries(store, other) == []
    for e in entries:
        assert e.stat().st_mode & 0o222 == 0, f"{e.name} is writable"
        assert stat.S_ISREG(e.stat().st_mode)
    assert [name for _, name in cas.iter_objects()] == sorted(distinct)
    for location, name in cas.iter_objects():
        assert cas.check_object(location, name).problem is None
    for ref, content in zip(expected, contents, strict=True):
        assert cas.verify(ref)
        assert cas.read(ref) == content
    # Every put finished cleanly, so no temporary file is left behind.
    for p in ("data", "agent-state"):
        assert os.listdir(store / "versioning" / p / "ingest") == []


# --- many writers, one ledger ------------------------------------------------------------------

WRITERS = 4
BATCHES = 20
BATCH_SIZE = 50


def check_concurrent_appends(url: str, outs: list[str]) -> None:
    total = WRITERS * BATCHES * BATCH_SIZE
    led = open_ledger(url)
    try:
        envs = list(led.read())
        assert [e.seq for e in envs] == list(range(1, total + 1))
        head = led.head()
        assert head is not None
        assert head.seq == total
        ids = [e.id for e in envs]
        expected_ids = {f"w{w}-b{b}-i{i}" for w in range(WRITERS) for b in range(BATCHES) for i in range(BATCH_SIZE)}
        assert len(ids) == len(set(ids)) == total
        assert set(ids) == expected_ids
        assert list(led.verify()) == []

        by_id = {e.id: e for e in envs}
        for w, out in enumerate(outs):
            reported = [json.loads(line) for line in out.splitlines()]
            assert len(reported) == BATCHES
            for b, batch in enumerate(reported):
                # What append returned is what was stored.
                assert [rid for _, rid in batch] == [f"w{w}-b{b}-i{i}" for i in range(BATCH_SIZE)]
                for seq, rid in batch:
                    assert by_id[rid].seq == seq
                # A batch is atomic: consecutive seqs.
                seqs = [seq for seq, _ in batch]
                assert seqs == list(range(seqs[0], seqs[0] + BATCH_SIZE))
            # Each writer's records appear in its own order.
            own = [e for e in envs if e.actor == f"writer-{w}"]
            assert [e.id for e in own] == [f"w{w}-b{b}-i{i}" for b in range(BATCHES) for i in range(BATCH_SIZE)]
            assert all(e.payload_value["w"] == str(w) for e in own)

        # The writers really ran at the same time: their batches interleave.
        writer_order = [e.actor for e in envs[::BATCH_SIZE]]
        switches = sum(1 for a, b in itertools.pairwise(writer_order) if a != b)
        assert switches > WRITERS - 1, f"writers ran one after another: {writer_order}"
    finally:
        led.close()


def run_appenders(url: str, go: Path) -> list[str]:
    argvs = [[APPEND_CHILD, url, str(w), str(BATCHES), str(BATCH_SIZE), str(go)] for w in range(WRITERS)]
    return run_at_barrier(argvs, go)


@pytest.mark.parametrize("fresh", [False, True], ids=["initialized", "fresh-file"])
def test_concurrent_appends_sqlite(tmp_path: Path, fresh: bool) -> None:
    url = f"sqlite:///{(tmp_path / 'ledger.sqlite').absolute()}"
    if not fresh:
        open_ledger(url).close()
    outs = run_appenders(url, tmp_path / "go")
    check_concurrent_appends(url, outs)


@pytest.mark.postgres
@pytest.mark.parametrize("fresh", [False, True], ids=["initialized", "fresh-database"])
def test_concurrent_appends_postgres(pg_url: str, tmp_path: Path, fresh: bool) -> None:
    if not fresh:
        open_ledger(pg_url).close()
    outs = run_appenders(pg_url, tmp_path / "go")
    check_concurrent_appends(pg_url, outs)


# --- PostgreSQL: a reader following seq never misses a late commit ------------------------------


def records(prefix: str, n: int) -> list[NewRecord]:
    actor = prefix.split("-", maxsplit=1)[0]
    return [
        NewRecord(type="late.rec@1", actor=actor, privacy="private", payload={"i": i}, id=f"{prefix}-{i}")
        for i in range(n)
    ]


@pytest.mark.postgres
def test_postgres_reader_never_sees_a_late_commit_out_of_order(pg_url: str) -> None:
    from reviewtrail.ledger import BUILTIN_PROJECTIONS, Ledger
    from reviewtrail.ledger.backends._postgres import PostgresRecorder

    hold = 0.3
    rounds = 6

    class LateCommitRecorder(PostgresRecorder):
        """Keeps its append transaction open for ``hold`` seconds after the INSERT."""

        def __init__(self, url: str, on_held: Callable[[], None]) -> None:
            self.armed = False
            self.on_held = on_held
            self.inserted = threading.Event()
            self.hold_end = 0.0
            super().__init__(url, BUILTIN_PROJECTIONS)

        def _write_rows(self, cur: Any, rows: list[tuple[str, dict[str, Any]]]) -> None:
            super()._write_rows(cur, rows)
            if not self.armed:
                return
            self.inserted.set()
            until = time.monotonic() + hold
            while time.monotonic() < until:
                self.on_held()
                time.sleep(0.02)
            self.hold_end = time.monotonic()  # the transaction is still open here

    open_ledger(pg_url).close()  # schema first
    probe = open_ledger(pg_url)
    led_b = open_ledger(pg_url)
    led_c = open_ledger(pg_url)
    led_r = open_ledger(pg_url)
    current_a: list[str] = []
    probe_hits: list[str] = []
    probe_checks = [0]

    def probe_a_invisible() -> None:
        """While A's transaction is open, another connection must not see any of A's rows."""
        for rid in (current_a[0], current_a[-1]):
            probe_checks[0] += 1
            try:
                probe.get(rid)
            except NotFoundError:
                continue
            probe_hits.append(rid)

    late = LateCommitRecorder(pg_url, probe_a_invisible)
    led_a = Ledger(late)

    stop_reader = threading.Event()
    stop_writer = threading.Event()
    errors: list[str] = []
    seen: list[int] = []
    seen_at: dict[str, float] = {}
    polls: list[float] = []

    def reader() -> None:
        last = 0
        try:
            while True:
                stopping = stop_reader.is_set()
                envs = list(led_r.read(start=last + 1))
                now = time.monotonic()
                polls.append(now)
                if envs:
                    seqs = [e.seq for e in envs]
                    if seqs != list(range(last + 1, last + 1 + len(seqs))):
                        errors.append(f"reader after seq {last} got {seqs[:5]}...{seqs[-5:]}")
                        return
                    for e in envs:
                        seen.append(e.seq)
                        seen_at[e.id] = now
                    last = seqs[-1]
                if stopping:
                    return
        except Exception as exc:
            errors.append(f"reader: {exc!r}")

    c_envs: list[Envelope] = []

    def background_writer() -> None:
        k = 0
        try:
            while not stop_writer.is_set():
                c_envs.extend(led_c.append(records(f"c-{k}", 3)))
                k += 1
                time.sleep(0.01)
        except Exception as exc:
            errors.append(f"writer C: {exc!r}")

    threads = [threading.Thread(target=background_writer), threading.Thread(target=reader)]
    for t in threads:
        t.start()
    try:
        for r in range(rounds):
            batch_a = records(f"a-{r}", 40)
            batch_b = records(f"b-{r}", 40)
            current_a[:] = [rec.id for rec in batch_a]
            result: dict[str, Any] = {}
            late.inserted.clear()
            late.armed = True

            def write_a(batch: list[NewRecord] = batch_a, result: dict[str, Any] = result) -> None:
                try:
                    result["a"] = led_a.append(batch)
                except Exception as exc:
                    errors.append(f"writer A: {exc!r}")

            def write_b(batch: list[NewRecord] = batch_b, result: dict[str, Any] = result) -> None:
                try:
                    if not late.inserted.wait(10):
                        errors.append("writer A never inserted")
                        return
                    result["b_start"] = time.monotonic()
                    result["b"] = led_b.append(batch)
                    result["b_done"] = time.monotonic()
                except Exception as exc:
                    errors.append(f"writer B: {exc!r}")

            ta, tb = threading.Thread(target=write_a), threading.Thread(target=write_b)
            ta.start()
            tb.start()
            ta.join(30)
            tb.join(30)
            late.armed = False
            assert not errors, errors
            a_envs: list[Envelope] = result["a"]
            b_envs: list[Envelope] = result["b"]
            a_seqs = [e.seq for e in a_envs]
            b_seqs = [e.seq for e in b_envs]
            assert a_seqs == list(range(a_seqs[0], a_seqs[0] + len(a_seqs)))
            assert b_seqs == list(range(b_seqs[0], b_seqs[0] + len(b_seqs)))
            # B tried to append while A's transaction was open, and got through only after A committed.
            assert result["b_start"] < late.hold_end
            assert result["b_done"] > late.hold_end
            assert b_seqs[0] > a_seqs[-1]
            # Nobody saw A's rows while its transaction was open.
            assert probe_hits == []
            assert any(late.hold_end - hold <= t <= late.hold_end for t in polls), "reader was not polling"
            deadline = time.monotonic() + 10
            while not all(rec.id in seen_at for rec in batch_a) and time.monotonic() < deadline:
                time.sleep(0.01)
            for rec in batch_a:
                assert rec.id in seen_at, f"reader never saw {rec.id}"
                assert seen_at[rec.id] > late.hold_end, f"reader saw {rec.id} before A committed"
    finally:
        # Writers first, so that the reader's last pass sees everything.
        stop_writer.set()
        threads[0].join(30)
        stop_reader.set()
        threads[1].join(30)

    assert not errors, errors
    assert probe_checks[0] > rounds
    full = list(probe.read())
    assert seen == [e.seq for e in full] == list(range(1, len(full) + 1))
    assert len(full) == rounds * 80 + len(c_envs)
    assert list(probe.verify()) == []
    for led in (led_a, led_b, led_c, led_r, probe):
        led.close()
