"""A PostgreSQL connection lost at any point of a command is exit 5 naming the database, never a
traceback, and leaves nothing half-written.

Each command runs as a process against a real server while the test terminates every backend of
the command's database after a delay that walks across the command's run (connect, snapshot,
reads, the append's transaction, the COMMIT). Whatever the moment: the command either finished
(exit 0) or stopped with exit 5 naming the PostgreSQL database (password redacted), and afterwards
the store verifies: a write either is recorded whole, with its query rows, or not at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import pytest

from reviewtrail.app import open_store
from reviewtrail.config import Settings
from reviewtrail.errors import EXIT_BACKEND
from reviewtrail.verify import verify_store
from support.human_review import campaign_with_items, new_store

pytestmark = pytest.mark.postgres

# Delays (seconds) after the start of the process at which every backend is terminated: from
# before the first connection to after the command's last statement.
DELAYS = (0.05, 0.12, 0.18, 0.22, 0.26, 0.3, 0.35, 0.42, 0.55, 0.8)


_TERMINATE = (
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
)


def _terminate_all(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(_TERMINATE)


def _env(root: Path, url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVIEWTRAIL_")}
    env["REVIEWTRAIL_STORE"] = str(root)
    env["REVIEWTRAIL_DATABASE_URL"] = url
    env["REVIEWTRAIL_REVIEWER_ID"] = "rev-test"  # review decide records who decides
    return env


def _run_killed(cwd: Path, root: Path, url: str, delay: float, *args: str, storm: bool = False) -> tuple[int, str, str]:
    """Run ``reviewtrail ARGS`` and terminate its database connections ``delay`` s after it
    starts; with ``storm``, again and again from then until it ends (so kills land inside the
    command, however the machine's load shifts its timing)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "reviewtrail", *args],
        cwd=cwd,
        env=_env(root, url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    done = threading.Event()

    def kill() -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            if done.wait(delay):
                return
            conn.execute(_TERMINATE)
            while storm and not done.is_set():
                conn.execute(_TERMINATE)

    killer = threading.Thread(target=kill)
    killer.start()
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        done.set()
        killer.join()
    return proc.returncode, out, err


def _with_password(url: str) -> str:
    """``url`` with a password the server ignores (trust auth), to see it redacted."""
    scheme, rest = url.split("://", 1)
    userinfo, host = rest.split("@", 1) if "@" in rest else ("postgres", rest)
    user = userinfo.split(":", 1)[0]
    return f"{scheme}://{user}:s3cr3t-pw@{host}"


def _assert_clean_outcome(code: int, err: str, what: str) -> None:
    assert "Traceback" not in err, f"{what}: {err}"
    assert code in (0, EXIT_BACKEND), f"{what}: exit {code}: {err}"
    if code == EXIT_BACKEND:
        assert "PostgreSQL" in err and "database" in err, f"{what}: {err}"
    assert "s3cr3t-pw" not in err, f"{what}: the password was printed: {err}"


@pytest.fixture
def pg_store(tmp_path: Path, pg_url: str) -> tuple[Path, str, list[str]]:
    store = new_store(tmp_path, pg_url)
    try:
        items = [item.item_id for item in campaign_with_items(store, 12)]
    finally:
        store.close()
    return tmp_path / "store", pg_url, items


def _verify_problems(root: Path, url: str) -> list[str]:
    with open_store(Settings(store=root, database_url=url)) as store:
        return verify_store(store).problems


def test_reads_stop_with_exit_5_naming_the_database(tmp_path: Path, pg_store: tuple[Path, str, list[str]]) -> None:
    root, url, _ = pg_store
    secret_url = _with_password(url)
    stormed: list[int] = []
    for args in (
        ("ledger", "tail", "-n", "5", "--json"),
        ("review", "queue", "camp", "--version", "1", "--json"),
        ("verify", "--json", "--no-progress"),
    ):
        for delay in DELAYS:
            code, _, err = _run_killed(tmp_path, root, secret_url, delay, *args)
            _assert_clean_outcome(code, err, f"{' '.join(args)} killed at {delay}s")
        code, _, err = _run_killed(tmp_path, root, secret_url, 0.0, *args, storm=True)
        _assert_clean_outcome(code, err, f"{' '.join(args)} under a storm of kills")
        stormed.append(code)
    # The kills landed inside the commands (a test that never cut a connection would prove nothing).
    assert EXIT_BACKEND in stormed, stormed
    assert _verify_problems(root, url) == []


def test_writes_are_whole_or_absent(tmp_path: Path, pg_store: tuple[Path, str, list[str]]) -> None:
    root, url, items = pg_store
    secret_url = _with_password(url)
    with open_store(Settings(store=root, database_url=url)) as store:
        start = store.ledger.head()
    start_seq = start.seq if start is not None else 0
    acknowledged: list[str] = []
    codes: list[int] = []
    for n, (delay, storm) in enumerate([*((d, False) for d in DELAYS), (0.0, True), (0.2, True)]):
        payload = json.dumps({"n": n})
        code, out, err = _run_killed(
            tmp_path,
            root,
            secret_url,
            delay,
            "ledger",
            "append",
            "--type",
            "eval.result@1",
            "--actor",
            "alice",
            "--privacy",
            "private",
            "--payload",
            payload,
            "--json",
            storm=storm,
        )
        _assert_clean_outcome(code, err, f"ledger append killed at {delay}s")
        codes.append(code)
        if code == 0:
            acknowledged.append(json.loads(out)["id"])
        code, out, err = _run_killed(
            tmp_path,
            root,
            secret_url,
            delay,
            *("review", "decide", items[n], "--prefer", "A", "--strength", "slight"),
            storm=storm,
        )
        _assert_clean_outcome(code, err, f"review decide killed at {delay}s")
        codes.append(code)
    assert EXIT_BACKEND in codes[-4:], codes  # the storms of kills landed inside the commands
    assert _verify_problems(root, url) == []
    with open_store(Settings(store=root, database_url=url)) as store:
        stored = {env.id for env in store.ledger.tail(10_000, type="eval.result@1")}
        head = store.ledger.head()
    assert set(acknowledged) <= stored  # every acknowledged write is there
    assert head is not None and head.seq >= start_seq
