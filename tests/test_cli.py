"""The CLI: every command documented with an example, JSON output, documented exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from conftest import run_cli as run
from contracts.store_backend import StoreBackend
from reviewtrail.cli._app import app


def all_commands() -> list[tuple[str, Any]]:
    root = typer.main.get_command(app)
    out: list[tuple[str, Any]] = []

    def walk(prefix: str, cmd: Any) -> None:
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                walk(f"{prefix} {name}".strip(), sub)
        else:
            out.append((prefix, cmd))

    walk("", root)
    return out


def test_every_command_has_help_with_an_example() -> None:
    commands = all_commands()
    assert {n for n, _ in commands} >= {"init", "verify", "cas put", "cas cat", "cas verify", "ledger tail"}
    for name, cmd in commands:
        assert cmd.help and re.search(r"Example: .*reviewtrail " + name, cmd.help), name
        if name not in {"cas cat"}:
            assert any("--json" in p.opts for p in cmd.params), f"{name} lacks --json"


def test_help_does_not_import_the_library() -> None:
    code = (
        "import sys; import reviewtrail.cli._app; "
        "heavy = [m for m in ('pydantic', 'psycopg', 'sqlite3', 'rfc8785', 'reviewtrail.store') if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_commands_need_an_initialised_store(store_env: Path) -> None:
    code, _, err = run("ledger", "tail")
    assert code == 5 and "reviewtrail init" in err
    code, out, _ = run("verify", "--json")
    assert code == 5 and json.loads(out)["error"]["type"] == "StoreNotInitializedError"


def test_put_cat_verify_round_trip(backend_env: Path, store_backend: StoreBackend) -> None:
    """The CAS end to end, in the embedded store and with the objects in an S3 bucket."""
    store_env = backend_env
    assert run("init")[0] == 0
    f = store_env / "r.csv"
    f.write_bytes(b"a,b\n1,2\n")
    code, out, _ = run("cas", "put", str(f), "--media-type", "text/csv", "--json")
    assert code == 0
    ref = json.loads(out)
    assert ref["pool"] == "data" and ref["size"] == 8 and ref["mediaType"] == "text/csv"
    code, out, _ = run("cas", "put", str(f), "--pool", "agent-state")
    assert code == 0 and out.startswith(ref["digest"]) and "agent-state" in out
    code, out, _ = run("cas", "cat", ref["digest"])
    assert code == 0 and out == "a,b\n1,2\n"
    code, out, _ = run("cas", "verify", ref["digest"].split(":")[1], "--json")
    assert code == 0 and json.loads(out)["state"] == "intact"
    assert store_backend.check_objects(ref["digest"]) == {ref["digest"].split(":")[1]}  # one object, two pools
    code, out, _ = run("verify", "--json")
    assert code == 0 and json.loads(out)["ok"] is True, out


def test_cas_errors_have_documented_exit_codes(store_env: Path) -> None:
    run("init")
    code, _, err = run("cas", "cat", "../../etc/passwd")
    assert code == 2 and "64 lowercase hex" in err
    code, _, _ = run("cas", "cat", "a" * 64)
    assert code == 3
    code, _, _ = run("cas", "verify", "a" * 64)
    assert code == 3
    code, _, err = run("cas", "put", str(store_env / "missing.bin"))
    assert code == 2
    f = store_env / "x"
    f.write_bytes(b"x")
    code, _, err = run("cas", "put", str(f), "--pool", "nope")
    assert code == 2 and "pool" in err


def test_cat_of_a_corrupt_object_writes_nothing_and_exits_4(store_env: Path) -> None:
    run("init")
    f = store_env / "x"
    f.write_bytes(b"important")
    ref = json.loads(run("cas", "put", str(f), "--json")[1])
    blob = store_env / "store" / "versioning" / "data" / "blobs" / "sha256" / ref["digest"].split(":")[1]
    blob.chmod(0o644)
    blob.write_bytes(b"importanT")
    code, out, err = run("cas", "cat", ref["digest"])
    assert code == 4 and out == "" and "does not hash" in err
    assert run("cas", "verify", ref["digest"])[0] == 4
    code, out, _ = run("verify", "--json")
    assert code == 4 and json.loads(out)["ok"] is False


def test_ledger_append_tail_show_and_verify(backend_env: Path, store_backend: StoreBackend) -> None:
    """The ledger end to end, on SQLite and on PostgreSQL (with the objects in an S3 bucket)."""
    store_env = backend_env
    assert run("init")[0] == 0
    f = store_env / "x"
    f.write_bytes(b"evidence")
    ref = json.loads(run("cas", "put", str(f), "--json")[1])
    payload = json.dumps({"file": ref})
    code, out, _ = run(
        "ledger", "append", "--type", "eval.result@1", "--actor", "alice", "--privacy", "private",
        "--subject", "run:1", "--payload", payload, "--json",
    )  # fmt: skip
    assert code == 0
    first = json.loads(out)
    assert first["seq"] == 2 and first["payload"] == {"file": ref}  # seq 1 is the store's identity
    (store_env / "p.json").write_text('{"fixed": true}')
    code, out, _ = run(
        "ledger", "append", "--type", "eval.result@2", "--actor", "alice", "--privacy", "private",
        "--supersedes", first["id"], "--payload", "@p.json", "--json",
    )  # fmt: skip
    assert code == 0
    second = json.loads(out)
    code, out, _ = run("ledger", "tail", "--json", "--type", "eval.result")
    assert [r["seq"] for r in json.loads(out)] == [2, 3]
    code, out, _ = run("ledger", "tail", "--subject", "run:1")
    assert code == 0 and "eval.result@1" in out
    code, out, _ = run("ledger", "show", first["id"], "--json")
    assert json.loads(out)["supersededBy"] == [second["id"]]
    code, out, _ = run("verify")
    assert code == 0 and "intact" in out and "1 CAS references" in out
    store_backend.check_objects(ref["digest"])


def test_ledger_append_bad_input_names_the_field_and_writes_nothing(store_env: Path) -> None:
    run("init")
    base = ["ledger", "append", "--actor", "a", "--privacy", "private"]
    code, _, err = run(*base, "--type", "Bad")
    assert code == 2 and "type" in err
    code, _, err = run(*base, "--type", "a@1", "--payload", "{nope")
    assert code == 2 and "payload" in err
    code, _, err = run(*base, "--type", "a@1", "--payload", '{"f": {"hash": "' + "0" * 64 + '", "size": 1}}')
    assert code == 2 and "not in the CAS" in err
    code, _, err = run(*base, "--type", "a@1", "--supersedes", "nope")
    assert code == 2 and "supersedes" in err
    code, out, _ = run("ledger", "tail", "--json")
    assert [r["type"] for r in json.loads(out)] == ["store.identity@1"]  # nothing written but init's record
    code, _, _ = run("ledger", "show", "nope")
    assert code == 3


def test_console_script_runs(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "reviewtrail"
    assert exe.exists(), "the package is installed with its console script"
    env = {**os.environ, "REVIEWTRAIL_STORE": str(tmp_path / "s")}
    out = subprocess.run([str(exe), "init", "--json"], capture_output=True, text=True, env=env, check=True)
    info = json.loads(out.stdout)
    assert info["records"] == 1 and len(info["storeId"]) == 36
    help_out = subprocess.run([str(exe), "--help"], capture_output=True, text=True, check=True).stdout
    assert "Exit codes" in help_out


@pytest.mark.postgres
def test_store_on_postgresql(store_env: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVIEWTRAIL_DATABASE_URL", pg_url)
    code, out, _ = run("init", "--json")
    assert code == 0 and json.loads(out)["databaseUrl"] == pg_url
    f = store_env / "x"
    f.write_bytes(b"on postgres")
    ref = json.loads(run("cas", "put", str(f), "--json")[1])
    code, _, _ = run(
        "ledger", "append", "--type", "a@1", "--actor", "a", "--privacy", "private", "--payload", json.dumps({"f": ref})
    )
    assert code == 0
    code, out, _ = run("verify", "--json")
    assert code == 0 and json.loads(out)["refsChecked"] == 1
    assert not (store_env / "store" / "ledger.sqlite").exists()


def test_unreachable_database_exits_5(store_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVIEWTRAIL_DATABASE_URL", "postgresql://nobody:secret@127.0.0.1:1/none")
    code, _, err = run("init")
    assert code == 5 and "cannot connect to PostgreSQL" in err and "secret" not in err


def test_ledger_append_rejects_deep_or_binary_payloads(store_env: Path) -> None:
    run("init")
    base = ["ledger", "append", "--type", "a@1", "--actor", "a", "--privacy", "private", "--payload"]
    code, _, err = run(*base, "[" * 100_000)
    assert code == 2 and "payload" in err
    (store_env / "bad.json").write_bytes(b"\xff\xfe{}")
    code, _, err = run(*base, "@bad.json")
    assert code == 2 and "UTF-8" in err
