"""A record whose payload was altered into bytes that are not UTF-8, not JSON, or JSON without the
fields its type has is reported by ``verify`` (exit 4, naming its seq), never a traceback: the checks
beside the chain walk (trace files against their records, session workspaces, folders no session
names) read payloads too. ``session ls`` over such a record is exit 4 naming it."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reviewtrail.app import init_store, open_store
from reviewtrail.cli._app import app
from reviewtrail.config import Settings
from reviewtrail.provenance.runs import create_session
from reviewtrail.tracing.custody import record_call
from reviewtrail.tracing.files import ReviewCall

runner = CliRunner()


def _settings(project: Path) -> Settings:
    return Settings(store=project / ".reviewtrail", database_url=f"sqlite:///{project / '.reviewtrail' / 'ledger.db'}")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store with a session and a saved trace (its files under .aris/traces)."""
    for name in ("ARIS_TRACE_MODE", "ARIS_TRACE_RUN_ID", "REVIEWTRAIL_CAS_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("REVIEWTRAIL_STORE", str(tmp_path / ".reviewtrail"))
    monkeypatch.setenv("REVIEWTRAIL_DATABASE_URL", _settings(tmp_path).database_url)
    monkeypatch.chdir(tmp_path)
    init_store(_settings(tmp_path)).close()
    with open_store(_settings(tmp_path)) as store:
        create_session(store)
        call = ReviewCall(
            skill="auto-review-loop", purpose="round-1-review", prompt="Please review.", response=b"Score: 6/10\n",
            backend="claude", executor="codex", executor_model="gpt-6-astra",
            requested_reviewer_model="claude-opus-4", status="ok", verdict="almost",
        )  # fmt: skip
        record_call(call, project_dir=tmp_path, store=store)
    return tmp_path


def _not_utf8(data: bytes) -> bytes:
    return data[: len(data) // 2] + b"\xff" + data[len(data) // 2 + 1 :]


def _not_json(data: bytes) -> bytes:
    return b"x" + data[1:]


def _key_renamed(data: bytes) -> bytes:
    value = json.loads(data)
    return json.dumps({f"{key}Q": item for key, item in value.items()}, separators=(",", ":")).encode()


DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "not-utf8": _not_utf8,
    "not-json": _not_json,
    "key-renamed": _key_renamed,
}


def _alter_payload(project: Path, record_type: str, damage: Callable[[bytes], bytes]) -> int:
    """The payload of the first record of ``record_type`` rewritten, the append-only triggers
    dropped for the edit and put back; its seq."""
    with closing(sqlite3.connect(project / ".reviewtrail" / "ledger.db", isolation_level=None)) as conn:
        seq, payload = conn.execute(
            "SELECT seq, payload FROM rt_records WHERE type = ? ORDER BY seq", (record_type,)
        ).fetchone()
        triggers = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'rt_records'"
        ).fetchall()
        for name, _ in triggers:
            conn.execute(f'DROP TRIGGER "{name}"')
        conn.execute("UPDATE rt_records SET payload = ? WHERE seq = ?", (damage(bytes(payload)), seq))
        for _, sql in triggers:
            conn.execute(sql)
    return int(seq)


@pytest.mark.parametrize("damage", list(DAMAGE))
@pytest.mark.parametrize("record_type", ["provenance.session@1", "trace.review-call@1"])
def test_an_altered_payload_is_reported_not_a_traceback(project: Path, record_type: str, damage: str) -> None:
    assert runner.invoke(app, ["verify", "--json", "--project-dir", str(project)]).exit_code == 0
    seq = _alter_payload(project, record_type, DAMAGE[damage])
    result = runner.invoke(app, ["verify", "--json", "--project-dir", str(project)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 4, result.stdout + result.stderr
    problems = json.loads(result.stdout)["problems"]
    assert any(f"seq {seq} " in p or f"seq {seq})" in p for p in problems), problems


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_session_ls_over_an_altered_session_record_is_exit_4(project: Path, damage: str) -> None:
    seq = _alter_payload(project, "provenance.session@1", DAMAGE[damage])
    result = runner.invoke(app, ["session", "ls", "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 4 and f"session record at seq {seq} " in result.stderr, result.stderr
