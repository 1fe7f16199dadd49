"""Crash safety: SIGKILL writers at random points, many times, then check the store.

Child processes (real ``python -c`` processes, not forks) loop forever doing a
random mix of CAS puts (up to ~2 MiB), ``put_many`` batches, ``put_file`` and
ledger / store appends (some referencing CAS objects). Each is killed with
SIGKILL after a random delay; sometimes two or three run at once so that
crashes mix with lock contention. Afterwards:

* every object listed by the CAS re-hashes to its address and is read-only;
* nothing under ``blobs/`` is a temporary file (every name is 64 hex digits);
* the ledger chain verifies, seqs are gap-free and ``verify_store(store)`` is ok;
* everything a child reported as done (acknowledged) is still there;
* a fresh process can still append (no lock left behind by a dead writer).

Leftover temporary files in ``ingest/`` are allowed: they are never objects.

``RT_CRASH_ITERATIONS`` sets the number of kills (default 40).
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from reviewtrail.app import init_store, open_store
from reviewtrail.cas import CasRef, FilesystemCas
from reviewtrail.config import Settings
from reviewtrail.ledger import open_ledger
from reviewtrail.verify import verify_store

pytestmark = pytest.mark.slow

ITERATIONS = int(os.environ.get("RT_CRASH_ITERATIONS", "40"))
MAX_DELAY_S = 0.3
HEX64 = re.compile(r"[0-9a-f]{64}")
POOLS = ("data", "agent-state")

# The child writes one line per event to stdout (unbuffered, via os.write):
#   start | ready | begin <n> <op> | end <n> <op>
#   ref <json CasRef>               (after the put returned: acknowledged)
#   recs <json [[seq, id, hash]...]> (after the append returned: acknowledged)
CHILD_CODE = r"""
import json, os, random, sys
from pathlib import Path

from reviewtrail.app import init_store, open_store
from reviewtrail.config import Settings
from reviewtrail.ledger import NewRecord

store_dir = Path(sys.argv[1])
rng = random.Random(int(sys.argv[2]))
scratch = Path(sys.argv[3])
scratch.mkdir(parents=True, exist_ok=True)


def say(*lines):
    os.write(1, "".join(line + "\n" for line in lines).encode())


say("start")
settings = Settings(store=store_dir, database_url=f"sqlite:///{store_dir / 'ledger.sqlite'}")
store = init_store(settings) if rng.random() < 0.5 else open_store(settings)
cas, ledger = store.cas, store.ledger
say("ready")

# Content every child stores now and then: concurrent publishes of one address.
SHARED = [bytes([i]) * (1000 * (i + 1) ** 3) for i in range(8)]


def blob():
    r = rng.random()
    if r < 0.15:
        return rng.choice(SHARED)
    if r < 0.55:
        return rng.randbytes(rng.randrange(0, 4096))
    if r < 0.85:
        return rng.randbytes(rng.randrange(4096, 256 * 1024))
    return rng.randbytes(rng.randrange(256 * 1024, 2 * 1024 * 1024 + 1))


def acked_refs(refs):
    say(*("ref " + json.dumps(r.to_json()) for r in refs))
    mine.extend(refs)


def acked_recs(envs):
    say("recs " + json.dumps([[e.seq, e.id, e.hash] for e in envs]))
    ids.extend(e.id for e in envs)


def records(n, with_refs):
    out = []
    for i in range(n):
        payload = {"child": sys.argv[2], "i": i, "note": "x" * rng.randrange(0, 300)}
        if with_refs and mine:
            ref = rng.choice(mine)
            payload["blob"] = ref.to_json() if rng.random() < 0.7 else ref.object_ref().to_json()
        supersedes = rng.choice(ids) if ids and rng.random() < 0.05 else None
        out.append(
            NewRecord(type=rng.choice(["t.crash@1", "t.crash@2", "t.other@1"]), actor="crash-child",
                      privacy=rng.choice(["private", "sensitive", "public-source"]), payload=payload,
                      subject=rng.choice([None, "s1", "s2"]), supersedes=supersedes)
        )
    return out


mine, ids = [], []
n = 0
while True:
    n += 1
    op = rng.choice(["put", "put", "put_many", "put_file", "store_append", "store_append", "ledger_append"])
    pool = rng.choice(["data", "agent-state"])
    if op == "put":
        data = blob()
        say(f"begin {n} {op}")
        refs = [cas.put(data, pool=pool)]
        acked_refs(refs)
    elif op == "put_many":
        batch = [blob() for _ in range(rng.randrange(1, 9))]
        say(f"begin {n} {op}")
        refs = cas.put_many(batch, pool=pool)
        acked_refs(refs)
    elif op == "put_file":
        src = scratch / f"src-{n}"
        src.write_bytes(blob())
        say(f"begin {n} {op}")
        refs = [cas.put_file(src, pool=pool)]
        acked_refs(refs)
        src.unlink()
    elif op == "store_append":
        batch = records(rng.randrange(1, 51), with_refs=True)
        say(f"begin {n} {op}")
        acked_recs(store.append(batch))
    else:
        batch = records(rng.randrange(1, 51), with_refs=False)
        say(f"begin {n} {op}")
        acked_recs(ledger.append(batch))
    say(f"end {n} {op}")
"""

FRESH_APPEND_CODE = r"""
import json, sys
from pathlib import Path

from reviewtrail.app import open_store
from reviewtrail.config import Settings
from reviewtrail.ledger import NewRecord

store_dir = Path(sys.argv[1])
settings = Settings(store=store_dir, database_url=f"sqlite:///{store_dir / 'ledger.sqlite'}")
with open_store(settings) as store:
    ref = store.cas.put(b"after the crashes", pool="data")
    envs = store.append(
        [NewRecord(type="t.after@1", actor="fresh", privacy="private", payload={"blob": ref.to_json(), "i": i})
         for i in range(10)]
    )
    print(json.dumps([e.seq for e in envs]))
"""


@dataclass
class Child:
    """One child process, its output, and when it was killed."""

    proc: subprocess.Popen[bytes]
    stderr_path: Path
    spawned: float
    anchor: str  # "ready": the kill delay counts from the ready line; "spawn": from process start
    delay: float
    lines: list[str] = field(default_factory=list)
    partial: bytes = b""
    ready: threading.Event = field(default_factory=threading.Event)
    exited_by_itself: bool = False
    reader: threading.Thread | None = None

    def read_output(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            if not raw.endswith(b"\n"):  # torn final write: not a complete event
                self.partial = raw
                break
            line = raw.decode().rstrip("\n")
            self.lines.append(line)
            if line == "ready":
                self.ready.set()


def spawn(store_dir: Path, seed: int, scratch: Path, anchor: str, delay: float) -> Child:
    stderr_path = scratch.with_suffix(".stderr")
    with open(stderr_path, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD_CODE, str(store_dir), str(seed), str(scratch)],
            stdout=subprocess.PIPE,
            stderr=err,
        )
    child = Child(proc, stderr_path, time.monotonic(), anchor, delay)
    child.reader = threading.Thread(target=child.read_output, daemon=True)
    child.reader.start()
    return child


def drive(child: Child) -> None:
    """Wait for the anchor, then the random delay, then SIGKILL."""
    if child.anchor == "ready":
        # Wait for the ready line, but notice a child that dies on its own meanwhile.
        deadline = time.monotonic() + 60
        while not child.ready.wait(0.01):
            if child.proc.poll() is not None or time.monotonic() > deadline:
                break
        start = time.monotonic()
    else:
        start = child.spawned
    remaining = start + child.delay - time.monotonic()
    if remaining > 0:
        time.sleep(remaining)
    if child.proc.poll() is not None:
        child.exited_by_itself = True
    else:
        child.proc.send_signal(signal.SIGKILL)
    child.proc.wait(timeout=30)
    assert child.reader is not None
    child.reader.join(timeout=30)
    assert child.proc.stdout is not None
    child.proc.stdout.close()


def run_crash_loop(store_dir: Path, work: Path, rng: random.Random, kills: int) -> list[Child]:
    children: list[Child] = []
    done = 0
    while done < kills:
        n = min(kills - done, rng.choice([1, 1, 2, 3]))
        group = []
        for _ in range(n):
            seed = rng.randrange(1 << 30)
            anchor = "spawn" if rng.random() < 0.2 else "ready"
            delay = rng.uniform(0, MAX_DELAY_S)
            group.append(spawn(store_dir, seed, work / f"child-{len(children) + len(group)}", anchor, delay))
        drivers = [threading.Thread(target=drive, args=(c,)) for c in group]
        for t in drivers:
            t.start()
        for t in drivers:
            t.join()
        children.extend(group)
        done += n
    return children


def settings_for(store_dir: Path) -> Settings:
    return Settings(store=store_dir, database_url=f"sqlite:///{store_dir / 'ledger.sqlite'}")


def check_blob_folders(store_dir: Path) -> tuple[int, list[Path]]:
    """Every entry under blobs/ is a read-only regular file named by 64 hex digits; return (count, ingest leftovers)."""
    count = 0
    leftovers: list[Path] = []
    for pool in POOLS:
        pool_dir = store_dir / "versioning" / pool
        blobs = pool_dir / "blobs"
        assert sorted(os.listdir(blobs)) == ["sha256"], f"unexpected entries in {blobs}"
        for entry in os.scandir(blobs / "sha256"):
            assert HEX64.fullmatch(entry.name), f"{pool}: non-address file visible as an object: {entry.name!r}"
            st = entry.stat(follow_symlinks=False)
            assert stat.S_ISREG(st.st_mode), f"{pool}/{entry.name} is not a regular file"
            assert st.st_mode & 0o222 == 0, f"{pool}/{entry.name} is writable (mode {oct(st.st_mode)})"
            count += 1
        leftovers.extend(Path(e.path) for e in os.scandir(pool_dir / "ingest"))
    return count, leftovers


def test_sigkill_during_puts_and_appends_leaves_a_verifiable_store(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    work = tmp_path / "work"
    work.mkdir()
    init_store(settings_for(store_dir)).close()

    rng = random.Random(int(os.environ.get("RT_CRASH_SEED", "20240611")))
    children = run_crash_loop(store_dir, work, rng, ITERATIONS)

    # --- every child was killed by us, mid-run, and never failed on its own ---------------
    for i, child in enumerate(children):
        err = child.stderr_path.read_text(errors="replace")
        assert not child.exited_by_itself, f"child {i} exited by itself (rc {child.proc.returncode}):\n{err}"
        assert child.proc.returncode == -signal.SIGKILL, f"child {i}: rc {child.proc.returncode}\n{err}"
        assert err == "", f"child {i} wrote to stderr before it was killed:\n{err}"

    acked_refs: list[CasRef] = []
    acked_recs: list[tuple[int, str, str]] = []
    before_ready = after_some_op = mid_op = 0
    for child in children:
        ops_done = 0
        last_event = ""
        for line in child.lines:
            kind, _, rest = line.partition(" ")
            if kind == "ref":
                acked_refs.append(CasRef.model_validate(json.loads(rest)))
            elif kind == "recs":
                acked_recs.extend((s, i, h) for s, i, h in json.loads(rest))
            elif kind == "end":
                ops_done += 1
            if kind in ("start", "ready", "begin", "end"):
                last_event = kind
        if not child.ready.is_set():
            before_ready += 1
        if ops_done:
            after_some_op += 1
        if last_event == "begin":
            mid_op += 1
    summary = (
        f"{len(children)} kills: {before_ready} before ready, "
        f"{after_some_op} after >= 1 operation, {mid_op} inside an operation; "
        f"{len(acked_refs)} refs and {len(acked_recs)} records acknowledged"
    )
    print(summary)

    # The test must be able to fail: kills really landed in the middle of work.
    assert len(children) == ITERATIONS
    assert after_some_op >= max(1, ITERATIONS // 4), summary
    assert mid_op >= max(1, ITERATIONS // 4), summary
    assert acked_refs, summary
    assert acked_recs, summary

    # --- the CAS: only complete, intact, read-only objects are visible -----------------------
    cas = FilesystemCas(store_dir)
    objects = list(cas.iter_objects())
    assert objects, "no object survived"
    for location, name in objects:
        assert location in POOLS, f"object outside the pools: {location}/{name}"
        assert HEX64.fullmatch(name), f"non-address name listed as an object: {location}/{name!r}"
        check = cas.check_object(location, name)
        assert check.problem is None, check.problem
    count, leftovers = check_blob_folders(store_dir)
    assert count == len(objects)
    listed = {name for _, name in objects}
    for leftover in leftovers:
        assert leftover.parent.name == "ingest"
        assert leftover.name not in listed, f"temporary file {leftover} is listed as an object"
    print(f"{len(objects)} objects, {len(leftovers)} leftover temporary files in ingest/")
    for ref in acked_refs:
        assert cas.verify(ref), f"acknowledged object {ref.pool}/{ref.digest} is missing or corrupt"

    # --- the ledger: intact SQLite file, gap-free chain, acknowledged records present ----------
    conn = sqlite3.connect(store_dir / "ledger.sqlite")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()

    with open_store(settings_for(store_dir)) as store:
        report = verify_store(store)
        assert report.ok, "\n".join(report.problems)
        assert report.objects_checked == len(objects)
        envs = list(store.ledger.read())
        n = len(envs)
        assert n > 0
        assert [e.seq for e in envs] == list(range(1, n + 1))
        head = store.ledger.head()
        assert head is not None
        assert head.seq == n
        assert len({e.id for e in envs}) == n
        by_id = {e.id: e for e in envs}
        for seq, rid, h in acked_recs:
            assert rid in by_id, f"acknowledged record {rid} (seq {seq}) is gone"
            assert (by_id[rid].seq, by_id[rid].hash) == (seq, h)
        assert report.refs_checked > 0, "no record referenced a CAS object: the test lost its teeth"

    # --- a fresh process can still write: nothing is wedged ------------------------------------
    fresh = subprocess.run(
        [sys.executable, "-c", FRESH_APPEND_CODE, str(store_dir)], capture_output=True, text=True, timeout=120
    )
    assert fresh.returncode == 0, fresh.stderr
    assert json.loads(fresh.stdout) == list(range(n + 1, n + 11))
    led = open_ledger(settings_for(store_dir).database_url)
    try:
        assert list(led.verify()) == []
        assert [e.seq for e in led.read()] == list(range(1, n + 11))
    finally:
        led.close()
