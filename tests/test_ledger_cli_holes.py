"""`ledger append` refuses reserved types and non-object payloads; a closed output pipe is quiet;
a full disk is a clear error."""

from __future__ import annotations

import json
import os
import resource
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import init_cli_store
from conftest import run_cli as run
from reviewtrail.app import open_store, payload_schemas
from reviewtrail.ledger import NewRecord, is_reserved_type

EXIT_PIPE_CLOSED = 141


@pytest.fixture
def store_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return init_cli_store(tmp_path, monkeypatch)


def records() -> list[dict[str, object]]:
    """The user's records (``init`` itself records the store's identity)."""
    code, out, _ = run("ledger", "tail", "--json", "-n", "1000")
    assert code == 0
    value = json.loads(out)
    assert isinstance(value, list)
    return [r for r in value if r["type"] != "store.identity@1"]


BASE = ["ledger", "append", "--actor", "a", "--privacy", "private"]


# --- reserved record types ----------------------------------------------------------------
@pytest.mark.parametrize(
    "type_",
    [
        "provenance.execution-run@1",
        "provenance.prompt-manifest@1",
        "trace.review-call@1",
        "review.decision@1",
        "reviewer.artifact-review-run@1",
        "evidence.claim@1",
        "evidence.pdf-extraction@1",
        "stream.thought.chunk@1",
        "store.identity@1",
        "store@1",
        "checkpoint.statement@1",
        "human-review.decision@1",
        "reviewtrail.checkpoint@1",
    ],
)
def test_ledger_append_refuses_types_reserved_for_reviewtrails_own_records(store_env: Path, type_: str) -> None:
    code, out, err = run(*BASE, "--type", type_, "--payload", "{}", "--json")
    assert code == 2
    assert err.startswith("error: type: ") and "reserved" in err and type_ in err
    assert json.loads(out)["error"]["field"] == "type"
    assert records() == []


@pytest.mark.parametrize(
    "type_", ["eval.result@1", "reviews.note@1", "storefront.sale@1", "stream.other@1", "tracer@2"]
)
def test_user_types_near_reserved_names_are_still_accepted(store_env: Path, type_: str) -> None:
    code, _, err = run(*BASE, "--type", type_, "--payload", '{"ok": true}')
    assert code == 0, err
    assert [r["type"] for r in records()] == [type_]


def test_every_record_type_the_package_defines_is_reserved() -> None:
    from reviewtrail.tracing.catalog import TRACE_RECORD_TYPE

    defined = [*payload_schemas(), TRACE_RECORD_TYPE]
    assert len(defined) >= 10
    assert [t for t in defined if not is_reserved_type(t)] == []
    assert not is_reserved_type("eval.result@1") and not is_reserved_type("provenancex@1")


def test_library_appends_of_reserved_types_are_not_restricted(store_env: Path) -> None:
    with open_store() as store:
        [env] = store.append([NewRecord.make(type="checkpoint.note@1", actor="a", privacy="private", payload={})])
    assert env.type == "checkpoint.note@1" and [r["type"] for r in records()] == ["checkpoint.note@1"]


# --- payload must be an object ------------------------------------------------------------
@pytest.mark.parametrize("payload", ["[1, 2]", '"text"', "42", "null", "true", "1.5"])
def test_ledger_append_payload_must_be_a_json_object(store_env: Path, payload: str) -> None:
    code, _, err = run(*BASE, "--type", "eval.result@1", "--payload", payload)
    assert code == 2
    assert err.startswith("error: payload: ") and "JSON object" in err
    (store_env / "p.json").write_text(payload)
    code, _, err = run(*BASE, "--type", "eval.result@1", "--payload", "@p.json")
    assert code == 2 and err.startswith("error: payload: ")
    code, _, err = run(*BASE, "--type", "eval.result@1", "--payload", "-", input=payload)
    assert code == 2 and err.startswith("error: payload: ")
    assert records() == []


# --- a closed output pipe -----------------------------------------------------------------
def cli_env(store: Path, *, unbuffered: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONUNBUFFERED", "REVIEWTRAIL_DATABASE_URL"}}
    env["REVIEWTRAIL_STORE"] = str(store)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.fixture(scope="module")
def busy_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[str]]]:
    """A store whose `ledger tail -n 2000` (and `cas cat` of its 1 MiB object) is far more than a pipe holds."""
    root = tmp_path_factory.mktemp("busy")
    env = cli_env(root / "store", unbuffered=False)
    subprocess.run([sys.executable, "-m", "reviewtrail", "init"], env=env, check=True, capture_output=True)
    code = (
        "from reviewtrail.app import open_store\n"
        "from reviewtrail.ledger import NewRecord\n"
        "with open_store() as s:\n"
        "    s.append([NewRecord.make(type='eval.result@1', actor='a', privacy='private',\n"
        "              payload={'i': i, 'pad': 'x' * 200}) for i in range(2000)])\n"
        "    print(s.ledger.head().id)\n"
        "    print(s.cas.put(bytes(range(256)) * 4096).digest)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    yield root / "store", out.stdout.split()


def commands(last_id: str, digest: str) -> list[list[str]]:
    return [
        ["cas", "cat", digest],  # bytes straight to stdout
        ["ledger", "tail", "-n", "2000", "--json"],  # one large JSON write
        ["ledger", "tail", "-n", "2000"],  # a rich table
        ["ledger", "show", last_id],  # print() line by line, small
        ["ledger", "show", last_id, "--json"],
        ["verify"],
        ["--help"],  # written by the command framework itself
    ]


@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
def test_writing_to_a_pipe_whose_reader_is_gone_is_quiet(busy_store: tuple[Path, list[str]], unbuffered: bool) -> None:
    store, (last_id, digest) = busy_store
    env = cli_env(store, unbuffered=unbuffered)
    for args in commands(last_id, digest):
        read_end, write_end = os.pipe()
        os.close(read_end)  # the reader went away before anything was written
        try:
            done = subprocess.run(
                [sys.executable, "-m", "reviewtrail", *args], stdout=write_end, stderr=subprocess.PIPE, env=env
            )
        finally:
            os.close(write_end)
        assert done.stderr.decode().strip() == "", args  # (verify's progress display ends with a newline)
        assert done.returncode == EXIT_PIPE_CLOSED, args


@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("args", [["ledger", "tail", "-n", "2000", "--json"], ["ledger", "tail", "-n", "2000"]])
def test_piping_into_head_is_quiet(busy_store: tuple[Path, list[str]], args: list[str], unbuffered: bool) -> None:
    store, _ = busy_store
    shell = f"{sys.executable} -m reviewtrail {' '.join(args)} | head -n1"
    done = subprocess.run(
        ["bash", "-c", shell + '; echo "rc=${PIPESTATUS[0]}" >&2'],
        capture_output=True,
        text=True,
        env=cli_env(store, unbuffered=unbuffered),
    )
    assert done.stdout.count("\n") == 1
    *noise, status = done.stderr.splitlines()
    assert noise == []
    # The whole output may fit in what was written before head left (exit 0), or not (141).
    assert status in {"rc=0", f"rc={EXIT_PIPE_CLOSED}"}


def test_other_broken_pipes_are_still_errors(store_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a closed stdout is quiet: a broken pipe elsewhere (a sandbox, a socket) is reported."""
    from reviewtrail.cli.store import _ledger

    def broken(*_: object, **__: object) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(_ledger, "_read_payload", broken)
    code, _, err = run(*BASE, "--type", "eval.result@1")
    assert code == 1 and "Broken pipe" in err


# --- a full disk ------------------------------------------------------------------------
def test_disk_full_during_append_is_a_clear_error(store_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite's own "database or disk is full" (SQLITE_FULL), from a page limit at the current size."""
    from reviewtrail.ledger.backends import _sqlite

    connect = _sqlite.SqliteRecorder._connect

    def full_connect(self: _sqlite.SqliteRecorder, **kwargs: bool) -> sqlite3.Connection:
        conn = connect(self, **kwargs)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        return conn

    (store_env / "big.json").write_text(json.dumps({"blob": "y" * 200_000}))
    with monkeypatch.context() as patch:
        patch.setattr(_sqlite.SqliteRecorder, "_connect", full_connect)
        code, out, err = run(*BASE, "--type", "eval.result@1", "--payload", "@big.json", "--json")
    assert code == 5
    assert json.loads(out)["error"]["type"] == "StorageFullError"
    assert err.startswith("error: ") and err.count("\n") == 1 and "no space left" in err
    assert records() == []
    assert run("verify")[0] == 0


def _limit_file_size() -> None:
    # Files may not grow past 40 kB: the WAL write of a 200 kB payload is refused (EFBIG).
    resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, 40_000))


def test_a_write_the_filesystem_refuses_during_append_is_a_clear_error(store_env: Path) -> None:
    env = cli_env(store_env / "store", unbuffered=False)
    (store_env / "big.json").write_text(json.dumps({"blob": "y" * 200_000}))
    done = subprocess.run(
        [sys.executable, "-m", "reviewtrail", *BASE, "--type", "eval.result@1", "--payload", "@big.json"],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=_limit_file_size,
    )
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert done.returncode == 5
    assert records() == []
    assert run("verify")[0] == 0
