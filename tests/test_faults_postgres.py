"""Fault campaign: the PostgreSQL server killed while batches are in flight, then restarted.

Two writer processes append batches of records (each batch pointing at CAS objects it has just
put in the store folder) to a PostgreSQL ledger without pause; a reader process reads the head
and the tail; a ``reviewtrail ledger append`` process is started just before each fault. At a
random moment (fixed seed) the server is crashed, by ``pg_ctl stop -m immediate`` or by SIGKILL to
the postmaster and every backend, left down for a moment and started again on the same port and
data folder (crash recovery). The processes are never restarted: they must carry on by
themselves. After each fault ``reviewtrail verify`` must pass (the documentation names no repair
for this), and at the end:

* every append acknowledged (returned to its caller) is in the ledger at its seq with its hash;
* every append that failed (or was cut off) is wholly there, at consecutive seqs, or wholly absent;
* every failure was a reviewtrail error with exit code 5 (the command line: exit 5 naming the
  PostgreSQL database), never a raw driver error;
* each process acknowledged again after the last restart (a lost connection is re-established).

Prints ``faults: postgres-kill trials=… faults=… in-flight=… verify-problems=… acked-lost=…``.
``RT_FAULT_TRIALS`` sets the number of faults (default 8), ``RT_FAULT_SEED`` the seed.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import need
from reviewtrail.errors import EXIT_BACKEND
from reviewtrail.verify import verify_store
from support.faults import Writer, base_env, cli, in_flight, print_figures
from support.pgserver import PgServer, find_bindir

pytestmark = pytest.mark.slow

TRIALS = int(os.environ.get("RT_FAULT_TRIALS", "8"))
SEED = int(os.environ.get("RT_FAULT_SEED", "20261202"))

# Puts a few objects, then appends one batch pointing at them; says which ids it sends.
APPENDER = r"""
from reviewtrail.app import open_store
from reviewtrail.config import load_settings
from reviewtrail.ledger import NewRecord

store = None


def step(n):
    global store
    if store is None:
        store = open_store(load_settings())
    pool = rng.choice(["data", "agent-state"])
    refs = store.cas.put_many([rng.randbytes(rng.randrange(1, 4096)) for _ in range(rng.randrange(1, 4))], pool=pool)
    records = [
        NewRecord.make(
            type="fault.batch@1", actor=name, privacy="private", subject=f"{name}-{n}",
            payload={"writer": name, "n": n, "i": i, "blob": refs[i % len(refs)].to_json()},
        )
        for i in range(rng.randrange(1, 60))
    ]
    say("begin", n=n, ids=[r.id for r in records])
    envs = store.append(records)
    say("ack", n=n, recs=[[e.seq, e.id, e.hash] for e in envs])
    time.sleep(rng.uniform(0, 0.05))


loop(step)
"""

# A long-lived reader: the head, then the last records, checked.
READER = r"""
from reviewtrail.app import open_store
from reviewtrail.config import load_settings

store = None


def step(n):
    global store
    if store is None:
        store = open_store(load_settings())
    say("begin", n=n)
    head = store.ledger.head()
    tail = store.ledger.tail(5)
    say("ack", n=n, head=head.seq if head else 0, tail=[e.seq for e in tail])
    time.sleep(0.02)


loop(step)
"""


@pytest.fixture(scope="module")
def crash_pg() -> Iterator[PgServer]:
    """A PostgreSQL server of this module's own: it is crashed and restarted, so no other test shares it."""
    need(find_bindir() is not None, "PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    server = PgServer()
    try:
        server.start()
    except Exception as exc:  # pragma: no cover - depends on the machine
        server.stop()
        need(False, f"could not start PostgreSQL: {exc}")
    yield server
    server.stop()


def _cli_append(env: dict[str, str], cwd: Path, n: int) -> subprocess.Popen[str]:
    payload = json.dumps({"cli": n})
    args = ("ledger", "append", "--type", "fault.cli@1", "--actor", "cli", "--privacy", "private", "--payload", payload)
    return subprocess.Popen(
        [sys.executable, "-m", "reviewtrail", *args, "--json"],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _ledger(env: dict[str, str], cwd: Path) -> dict[str, tuple[int, str]]:
    """id -> (seq, hash) of every record, read with the command line."""
    done = cli(env, "ledger", "tail", "-n", "100000000", "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    records: list[dict[str, Any]] = json.loads(done.stdout)
    seqs = [r["seq"] for r in records]
    assert seqs == list(range(1, len(seqs) + 1)), "the chain has a gap"
    return {r["id"]: (r["seq"], r["hash"]) for r in records}


def test_postgres_killed_mid_batch_and_restarted(
    crash_pg: PgServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = crash_pg.new_database()
    env = base_env(REVIEWTRAIL_STORE=str(tmp_path / "store"), REVIEWTRAIL_DATABASE_URL=url)
    done = cli(env, "init", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rng = random.Random(SEED)
    writers = [Writer.start(APPENDER, f"w{i}", rng.randrange(1 << 30), env, tmp_path) for i in range(2)]
    reader = Writer.start(READER, "reader", 0, env, tmp_path)
    everyone = [*writers, reader]
    flying = verify_problems = 0
    cli_codes: list[int] = []
    cli_acked: list[str] = []
    failures: list[str] = []
    try:
        for trial in range(TRIALS):
            started = time.monotonic()
            for w in everyone:
                w.resume()
            for w in everyone:  # every process works (again) before the next fault
                assert w.wait_for("ack", started), f"{w.name} acknowledged nothing since the last restart: " + (
                    json.dumps(w.seen()[-3:]) + w.stderr_path.read_text()
                )
            time.sleep(rng.uniform(0, 0.25))
            clis = [_cli_append(env, tmp_path, trial * 2 + k) for k in range(2)]
            time.sleep(rng.uniform(0, 0.3))
            fault_at = time.monotonic()
            crash_pg.crash(sigkill=trial % 2 == 1)
            flying += sum(in_flight(w, fault_at) for w in writers)
            time.sleep(rng.uniform(0, 0.5))
            crash_pg.restart()
            for proc in clis:
                out, err = proc.communicate(timeout=120)
                cli_codes.append(proc.returncode)
                if proc.returncode == 0:
                    cli_acked.append(json.loads(out)["id"])
                elif proc.returncode != EXIT_BACKEND or "PostgreSQL" not in err or "Traceback" in err:
                    failures.append(f"trial {trial}: ledger append exit {proc.returncode}: {err[-600:]}")
            for w in everyone:  # quiet while verify reads (its cost grows with the records)
                w.pause()
            checked = cli(env, "verify", "--json", "--no-progress", cwd=tmp_path)
            if checked.returncode != 0:
                verify_problems += len(json.loads(checked.stdout).get("problems") or [checked.stderr])
                failures.append(f"trial {trial}: verify exit {checked.returncode}: {checked.stdout[-2000:]}")
        restarted = time.monotonic()
        for w in everyone:  # after the last restart too
            w.resume()
        for w in everyone:
            if not w.wait_for("ack", restarted):
                failures.append(f"{w.name} acknowledged nothing after the last restart: {w.seen()[-3:]}")
    finally:
        stderrs = {w.name: w.stop() for w in everyone}

    stored = _ledger(env, tmp_path)
    acked = acked_lost = unacked = unacked_present = torn = 0
    for w in writers:
        for n, (begin, outcome) in sorted(w.outcomes().items()):
            if begin is None or outcome is None:
                continue
            if outcome["kind"] == "ack":
                for seq, rid, h in outcome["recs"]:
                    acked += 1
                    if stored.get(rid) != (seq, h):
                        acked_lost += 1
                        failures.append(f"{w.name} batch {n}: acknowledged record {rid} (seq {seq}) is not there")
                continue
            unacked += 1
            there = [stored[i][0] for i in begin["ids"] if i in stored]
            if there:
                unacked_present += 1
                if "recorded whole or not at all" not in outcome.get("error", ""):
                    failures.append(f"{w.name} batch {n} is recorded, but its error said otherwise: {outcome}")
            if there and there != list(range(there[0], there[0] + len(begin["ids"]))):
                torn += 1
                failures.append(f"{w.name} batch {n} ({outcome['kind']}): only part of it is there: seqs {there}")
    for rid in cli_acked:
        if rid not in stored:
            acked_lost += 1
            failures.append(f"ledger append acknowledged {rid}, which is not there")
    for w in everyone:
        for event in w.seen():
            if event["kind"] == "unclean" or (event["kind"] == "error" and event["code"] != EXIT_BACKEND):
                failures.append(f"{w.name}: not a clean exit-5 error: {event}")
        if stderrs[w.name].strip():
            failures.append(f"{w.name} wrote to stderr: {stderrs[w.name][-1000:]}")
    final = cli(env, "verify", "--json", "--no-progress", cwd=tmp_path)
    if final.returncode != 0:
        verify_problems += 1
        failures.append(f"final verify exit {final.returncode}: {final.stdout[-2000:]}")

    print_figures(
        capsys,
        "postgres-kill",
        trials=TRIALS,
        faults=TRIALS,
        in_flight=flying,
        verify_problems=verify_problems,
        acked=acked + len(cli_acked),
        acked_lost=acked_lost,
        unacked=unacked + cli_codes.count(EXIT_BACKEND),
        unacked_present=unacked_present,
        torn=torn,
        cli_exit5=cli_codes.count(EXIT_BACKEND),
    )
    assert not failures, "\n".join(failures[:20])
    # The faults landed: batches were in flight when the server went, and some appends failed.
    assert flying > 0 and unacked > 0, (flying, unacked)
    assert acked > 0


def _note(i: int) -> Any:
    from reviewtrail.ledger import NewRecord

    return NewRecord.make(type="fault.note@1", actor="one-process", privacy="private", payload={"i": i})


def test_one_process_reads_and_appends_again_once_the_server_is_back(crash_pg: PgServer, tmp_path: Path) -> None:
    """A long-lived process (the inspector, the MCP server, a writer) is never wedged by a server
    that crashed and came back: the calls that find it away are exit 5, the first ones after it is
    back work on a new connection. Inside a snapshot a lost connection is not replaced: the
    snapshot's reads fail instead of going on outside it."""
    from reviewtrail.app import init_store, open_store
    from reviewtrail.config import Settings
    from reviewtrail.errors import BackendUnavailableError

    settings = Settings(store=tmp_path / "store", database_url=crash_pg.new_database())
    init_store(settings).close()
    with open_store(settings) as store:
        [first] = store.append([_note(0)])
        crash_pg.crash(sigkill=True)
        try:
            with pytest.raises(BackendUnavailableError):
                store.ledger.head()
            with pytest.raises(BackendUnavailableError):
                store.append([_note(1)])
        finally:
            crash_pg.restart()
        head = store.ledger.head()
        assert head is not None and (head.seq, head.hash) == (first.seq, first.hash)
        [second] = store.append([_note(2)])
        assert second.seq == first.seq + 1
        with store.ledger.snapshot():
            crash_pg.crash()
            crash_pg.restart()
            for _ in range(2):  # the second read finds the connection closed: not silently replaced
                with pytest.raises(BackendUnavailableError):
                    store.ledger.head()
        assert [e.seq for e in store.ledger.tail(2)] == [first.seq, second.seq]
        assert verify_store(store).problems == []
