"""One contract every ledger backend passes: memory, SQLite and PostgreSQL.

The tests themselves are in ``tests/contracts/ledger.py``; each class here is one backend.
Below them: the rules that hold whatever the backend, and SQLite's own settings.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from contracts.ledger import LedgerContract, SqlLedgerContract, rec
from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger import Ledger, MemoryLedger, NewRecord, Projection, open_ledger


class TestMemoryLedger(LedgerContract):
    def make_ledger(self, projections: Sequence[Projection] | None = None) -> Ledger:
        return MemoryLedger(projections)

    def tamper(self, ledger: Ledger, seq: int, column: str, value: Any) -> None:
        assert isinstance(ledger, MemoryLedger)
        ledger.tamper(seq, **{column: value})

    def test_records_cannot_be_updated_or_deleted(self, ledger: Ledger) -> None:
        ledger.append([rec(1)])
        assert not hasattr(ledger, "update") and not hasattr(ledger, "delete")
        assert [e.actor for e in ledger.read()] == ["tester"]


class TestSQLiteLedger(SqlLedgerContract):
    property_examples = 50  # each example creates a database file

    def make_url(self) -> str:
        return f"sqlite:///{self.tmp_path / f'ledger-{uuid.uuid4().hex[:12]}.sqlite'}"

    def tamper_url(self, url: str, seq: int, column: str, value: Any) -> None:
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        conn.execute("DROP TRIGGER IF EXISTS rt_records_no_update")
        conn.execute(f"UPDATE rt_records SET {column} = ? WHERE seq = ?", (value, seq))
        conn.commit()
        conn.close()


@pytest.mark.postgres
class TestPostgreSQLLedger(SqlLedgerContract):
    property_examples = 10  # each example creates a database on the test server

    def make_url(self) -> str:
        return str(self.request.getfixturevalue("pg_server").new_database())

    def tamper_url(self, url: str, seq: int, column: str, value: Any) -> None:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ALTER TABLE rt_records DISABLE TRIGGER USER")
            conn.execute(f"UPDATE rt_records SET {column} = %s WHERE seq = %s", (value, seq))
            conn.execute("ALTER TABLE rt_records ENABLE TRIGGER USER")


# --- whatever the backend ---------------------------------------------------------------------


def test_new_record_validation_names_the_field() -> None:
    with pytest.raises(InvalidInputError) as err:
        NewRecord.make(type="NoVersion", actor="a", privacy="private")
    assert err.value.field == "type"
    with pytest.raises(InvalidInputError) as err:
        NewRecord.make(type="a@1", actor="a", privacy="secret")
    assert err.value.field == "privacy"
    with pytest.raises(InvalidInputError) as err:
        NewRecord.make(type="a@1", actor="", privacy="private")
    assert err.value.field == "actor"


def test_typed_payloads_are_validated_on_append() -> None:
    from pydantic import Field

    from reviewtrail.ledger import RecordCatalog, RecordPayload, new_record, record_type

    @record_type("test.typed-score@1")
    class Score(RecordPayload):
        run_id: str = Field(alias="runId")
        score: float

    catalog = RecordCatalog([Score])
    led = MemoryLedger(catalog)
    [env] = led.append([new_record(Score(run_id="r1", score=0.5), actor="a", privacy="private")])
    assert env.type == "test.typed-score@1" and env.payload_value == {"runId": "r1", "score": 0.5}
    with pytest.raises(InvalidInputError) as err:
        led.append([rec(type="test.typed-score@1", payload={"runId": "r2", "score": "high"})])
    assert err.value.field == "records[0].payload.score"
    with pytest.raises(InvalidInputError):
        led.append([rec(type="test.typed-score@1", payload={"runId": "r2", "score": 1, "extra": 1})])
    assert [e.seq for e in led.read()] == [1]
    schema = catalog.schemas()["test.typed-score@1"]
    assert set(schema["properties"]) == {"runId", "score"}


# --- SQLite only ------------------------------------------------------------------------------


def test_schema_migrations_are_versioned(tmp_path: Path) -> None:
    from reviewtrail.ledger._sql import SCHEMA_VERSION

    url = f"sqlite:///{tmp_path / 'l.sqlite'}"
    led = open_ledger(url)
    assert led.schema_version() == SCHEMA_VERSION  # type: ignore[attr-defined]
    led.append([rec(1)])
    led.close()
    again = open_ledger(url)  # re-opening does not re-run migrations or lose data
    assert [e.seq for e in again.read()] == [1]
    conn = sqlite3.connect(tmp_path / "l.sqlite")
    assert conn.execute("SELECT COUNT(*) FROM rt_migrations").fetchone()[0] == SCHEMA_VERSION
    conn.close()
    again.close()


def test_sqlite_pragmas(tmp_path: Path) -> None:
    led = open_ledger(f"sqlite:///{tmp_path / 'l.sqlite'}")
    conn = led._conn  # type: ignore[attr-defined]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    led.close()


def test_open_ledger_rejects_unknown_urls(tmp_path: Path) -> None:
    from reviewtrail.errors import ConfigError

    with pytest.raises(ConfigError):
        open_ledger("mysql://x")
    with pytest.raises(ConfigError):
        open_ledger(f"sqlite:///{tmp_path}/missing-dir/l.sqlite")
