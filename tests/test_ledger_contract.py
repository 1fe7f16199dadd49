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
from contracts.ledger_pages import ITEMS, item
from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger import Ledger, MemoryLedger, NewRecord, Projection, Recorder, open_ledger
from reviewtrail.ledger.backends._memory import MemoryRecorder
from reviewtrail.ledger.contract._protocol import catalog_of


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


class PrimitivesOnly(MemoryRecorder):
    """The in-memory recorder giving only the primitives a backend must give: every read a backend
    may answer faster (the last record, rows by many values) comes from the contract's defaults."""

    head = Recorder.head
    select_rows_in = Recorder.select_rows_in


class TestLedgerOverRecorderPrimitives(LedgerContract):
    """The one ``Ledger`` over a recorder of the primitives alone passes the whole contract."""

    def make_ledger(self, projections: Sequence[Projection] | None = None) -> Ledger:
        catalog = catalog_of(projections)
        return Ledger(PrimitivesOnly(catalog.projections), catalog)

    def tamper(self, ledger: Ledger, seq: int, column: str, value: Any) -> None:
        assert isinstance(ledger.recorder, PrimitivesOnly)
        ledger.recorder.tamper(seq, **{column: value})


def test_a_backend_gives_the_storage_primitives_and_the_ledger_composes_the_rest() -> None:
    from reviewtrail.ledger.backends._postgres import PostgresLedger, PostgresRecorder
    from reviewtrail.ledger.backends._sqlite import SqliteLedger, SqliteRecorder

    assert sorted(Recorder.__abstractmethods__) == [
        "append",
        "append_sealed",
        "count_rows",
        "get_many",
        "projected_seq_max",
        "read",
        "rebuild_projections",
        "records_at",
        "select_page",
        "select_rows",
        "signatures_at",
        "stats",
        "stray_signatures",
        "tail",
    ]
    pairs = ((MemoryRecorder, MemoryLedger), (SqliteRecorder, SqliteLedger), (PostgresRecorder, PostgresLedger))
    for recorder, ledger in pairs:
        assert issubclass(recorder, Recorder) and not issubclass(recorder, Ledger)
        assert issubclass(ledger, Ledger) and not issubclass(ledger, Recorder)
    # The checked reads, the signature gate and signing are the ledger's, never a backend's.
    above = {"checked_records", "checked_get_many", "records_about", "check_links", "rows", "page", "signer"}
    assert not above & set(dir(Recorder)) and above <= set(dir(Ledger))


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

    def run_sql_url(self, url: str, statement: str) -> None:
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        conn.execute(statement)
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

    def run_sql_url(self, url: str, statement: str) -> None:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(statement)


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
    from reviewtrail.ledger.backends._sql_schema import SCHEMA_VERSION

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
    conn = led.recorder._conn  # type: ignore[attr-defined]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    led.close()


def test_open_ledger_rejects_unknown_urls(tmp_path: Path) -> None:
    from reviewtrail.errors import ConfigError

    with pytest.raises(ConfigError):
        open_ledger("mysql://x")
    with pytest.raises(ConfigError):
        open_ledger(f"sqlite:///{tmp_path}/missing-dir/l.sqlite")


def _page_plans(led: Ledger, where: dict[str, Any], order_by: str, after: Any, descending: bool) -> list[str]:
    """How SQLite runs the page query (``EXPLAIN QUERY PLAN``), one line per step."""
    conn: sqlite3.Connection = led.recorder._conn  # type: ignore[attr-defined]
    statements: list[str] = []
    conn.set_trace_callback(statements.append)  # the statement as run, its values filled in
    try:
        led.page("items", where, order_by=order_by, after=after, limit=5, descending=descending)
    finally:
        conn.set_trace_callback(None)
    [query] = [s for s in statements if "FROM rt_p_items" in s]
    return [str(step[3]) for step in conn.execute("EXPLAIN QUERY PLAN " + query).fetchall()]


@pytest.mark.parametrize(
    ("where", "order_by", "after", "descending"),
    [
        ({}, "rank", None, False),
        ({}, "rank", 40, True),
        ({}, "name", "n3", False),
        ({"lane": "a"}, "rank", 3, False),
        ({"lane": "b"}, "rank", None, True),
        ({"lane": "a"}, "name", "n1", True),
    ],
)
def test_sqlite_serves_a_page_from_an_index_without_sorting(
    tmp_path: Path, where: dict[str, Any], order_by: str, after: Any, descending: bool
) -> None:
    led = open_ledger(f"sqlite:///{tmp_path / 'l.sqlite'}", [ITEMS])
    led.append([item(i, "ab"[i % 2], f"n{i}") for i in range(100)])
    plans = _page_plans(led, where, order_by, after, descending)
    assert not any("TEMP B-TREE" in p for p in plans), plans
    # the check can fail: a column no index covers ("seq") is sorted
    assert any("TEMP B-TREE" in p for p in _page_plans(led, where, "seq", None, descending))
    led.close()


# --- PostgreSQL only --------------------------------------------------------------------------


def _pg_database(pg_server: Any, options: str = "") -> str:
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} {options}")
    return str(pg_server.url).rsplit("/", 1)[0] + f"/{name}"


@pytest.mark.postgres
def test_postgres_pages_order_text_by_code_point_whatever_the_database_collation(pg_server: Any) -> None:
    import psycopg

    url = _pg_database(pg_server, "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en' LOCALE 'C'")
    with open_ledger(url, [ITEMS]) as led:
        led.append([item(1, name="b"), item(2, name="Z"), item(3, name="ä"), item(4, name="e")])
        assert [r["name"] for r in led.page("items", order_by="name", limit=10)] == ["Z", "b", "e", "ä"]
        assert [r["name"] for r in led.page("items", order_by="name", after="Z", limit=2)] == ["b", "e"]
        assert [r["name"] for r in led.page("items", order_by="name", after="e", limit=9, descending=True)] == [
            "b", "Z",
        ]  # fmt: skip
    with psycopg.connect(url) as conn:  # the database's own order is another one
        own = [r[0] for r in conn.execute("SELECT name FROM rt_p_items ORDER BY name").fetchall()]
    assert own != ["Z", "b", "e", "ä"]


@pytest.mark.postgres
@pytest.mark.parametrize(("where", "order_by", "after"), [({}, "name", "n3"), ({"lane": "a"}, "rank", 3)])
def test_postgres_serves_a_page_from_an_index_in_a_code_point_database(
    pg_server: Any, where: dict[str, Any], order_by: str, after: Any
) -> None:
    import psycopg

    from reviewtrail.ledger.contract._pages import page_order, page_sql

    url = _pg_database(pg_server)  # the test server's databases collate with "C"
    with open_ledger(url, [ITEMS]) as led:
        led.append([item(i, "ab"[i % 2], f"n{i}") for i in range(200)])
        spec = led.tables["items"]
        collation = led.recorder._text_order_collation()  # type: ignore[attr-defined]
        for descending in (False, True):
            order = page_order(spec, order_by, after, 5, descending)
            sql, params, _ = page_sql(spec, where, order, text_collation=collation)
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("SET enable_seqscan = off")
                conn.execute("SET enable_sort = off")  # a sort is then only taken when nothing else can serve
                plan = [r[0] for r in conn.execute("EXPLAIN " + sql.replace("?", "%s"), params).fetchall()]
            assert not any("Sort" in step for step in plan), plan
            assert any("Index" in step for step in plan), plan
