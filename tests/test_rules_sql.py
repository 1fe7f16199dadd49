"""The SQL ledgers' pure SQL text (ledger.backends._sql_schema): read filters, upserts, query-table DDL, row mapping."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger.backends._sql_schema import (
    COLUMNS,
    MIGRATIONS,
    SCHEMA_VERSION,
    env_row,
    filter_sql,
    row_to_env,
    table_ddl,
    upsert_sql,
)
from reviewtrail.ledger.contract._projections import ROW_SEQ, ProjectionTable
from reviewtrail.ledger.records._envelope import Envelope

# Record type names: segments joined by '.', '_' or '-' ('_' is a LIKE wildcard, so it must be escaped).
_SEGMENT = st.from_regex(r"[a-z0-9]{1,3}", fullmatch=True)
_NAME = st.builds(
    lambda head, rest: head + "".join(sep + seg for sep, seg in rest),
    st.from_regex(r"[a-z][a-z0-9]{0,2}", fullmatch=True),
    st.lists(st.tuples(st.sampled_from("._-"), _SEGMENT), max_size=3),
)


def _matching(sql: str, params: list[object], types: list[str]) -> set[str]:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE rt_records (seq INTEGER, type TEXT, subject TEXT)")
    db.executemany("INSERT INTO rt_records VALUES (?, ?, NULL)", list(enumerate(types)))
    return {r[0] for r in db.execute(f"SELECT type FROM rt_records WHERE seq >= 0{sql}", params)}


@given(_NAME, st.lists(st.tuples(_NAME, st.integers(1, 99)), max_size=8))
def test_a_type_name_filter_matches_exactly_the_versions_of_that_name(name: str, others: list[tuple[str, int]]) -> None:
    types = [f"{n}@{v}" for n, v in others] + [f"{name}@1", f"{name}@12"]
    sql, params = filter_sql(name, None)
    assert sql == " AND type LIKE ? ESCAPE '!'"
    assert _matching(sql, params, types) == {t for t in types if t.split("@")[0] == name}


def test_like_wildcards_in_a_name_are_escaped() -> None:
    sql, params = filter_sql("a_b", None)
    assert params == ["a!_b@%"]
    assert _matching(sql, params, ["a_b@1", "axb@1", "a_b@2"]) == {"a_b@1", "a_b@2"}


def test_an_exact_type_and_a_subject_filter_compare_for_equality() -> None:
    assert filter_sql("run.x@2", "session:1") == (" AND type = ? AND subject = ?", ["run.x@2", "session:1"])
    assert filter_sql(None, None) == ("", [])
    assert filter_sql(None, "s") == (" AND subject = ?", ["s"])


@pytest.mark.parametrize("bad", ["Run@1", "run@0", "run@", "a..b", ""])
def test_a_malformed_type_filter_is_refused_naming_the_field(bad: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        filter_sql(bad, None)
    assert info.value.field == "type"


_TABLE = ProjectionTable(name="runs", columns=(("run_id", "text"), ("n", "int")), key=("run_id",), indexes=(("n",),))


def test_upsert_updates_every_non_key_column_on_its_key() -> None:
    sql, cols = upsert_sql(_TABLE)
    assert cols == ("run_id", "n", ROW_SEQ)
    assert sql == (
        "INSERT INTO rt_p_runs (run_id, n, rt_seq) VALUES (?, ?, ?) "
        "ON CONFLICT (run_id) DO UPDATE SET n = excluded.n, rt_seq = excluded.rt_seq"
    )


def test_an_error_on_conflict_table_gets_a_plain_insert() -> None:
    table = ProjectionTable(name="claims", columns=(("k", "text"),), key=("k",), on_conflict="error")
    sql, _ = upsert_sql(table)
    assert sql == "INSERT INTO rt_p_claims (k, rt_seq) VALUES (?, ?)"


def test_the_ddl_and_upsert_work_together_on_sqlite() -> None:
    db = sqlite3.connect(":memory:")
    for stmt in table_ddl(_TABLE, "INTEGER"):
        db.execute(stmt)
    sql, _ = upsert_sql(_TABLE)
    db.execute(sql, ("r1", 1, 10))
    db.execute(sql, ("r1", 2, 11))
    assert db.execute("SELECT run_id, n, rt_seq FROM rt_p_runs").fetchall() == [("r1", 2, 11)]
    assert db.execute("SELECT name FROM sqlite_master WHERE type = 'index'").fetchall()[-1] == ("rt_p_runs_n",)
    assert (
        table_ddl(_TABLE, "BIGINT")[1]
        == "CREATE TABLE rt_p_runs (run_id TEXT, n BIGINT, rt_seq BIGINT, PRIMARY KEY (run_id))"
    )


def test_rows_and_envelopes_convert_both_ways() -> None:
    env = Envelope(
        seq=3, id="i", type="t@1", time="2026-01-01T00:00:00.000000Z", actor="a", privacy="private",
        subject=None, supersedes="s", payload=b"{}", payload_hash="p", prev_hash="q", hash="h",
    )  # fmt: skip
    row = env_row(env)
    assert len(row) == len(COLUMNS.split(", ")) and row[0] == 3 and row[8] == b"{}"
    assert row_to_env(row) == env
    assert row_to_env((*row[:8], memoryview(b"{}"), *row[9:])).payload == b"{}"
    assert row_to_env((*row[:8], "{}", *row[9:])).payload == b"{}"


def test_migrations_are_numbered_in_order_and_the_schema_version_is_the_last() -> None:
    assert [v for v, _, _ in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    assert SCHEMA_VERSION == MIGRATIONS[-1][0] == 4
