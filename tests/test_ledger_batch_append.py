"""Batch appends: the batch paths give exactly what the one-record reference functions give.

``encode_payload`` against ``canonical_json``, ``seal_chain`` against ``seal`` one record at a
time, SQLite's multi-row inserts at every batch size around their chunk sizes, and the read-back
of an append against rows that a trigger changes after the insert.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.canonical import canonical_json, is_plain
from reviewtrail.errors import CanonicalJSONError, IntegrityError, InvalidInputError
from reviewtrail.ledger import NewRecord, open_ledger
from reviewtrail.ledger.backends._sql_schema import env_row
from reviewtrail.ledger.backends._sqlite import SqliteLedger
from reviewtrail.ledger.records._envelope import GENESIS_HASH, Envelope, _plain, encode_payload, seal, seal_chain

NOW = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)

_text = st.text(
    st.characters(min_codepoint=0, max_codepoint=0x10FFFF) | st.sampled_from(["\ud800", "\udfff", '"', "\\"]),
    max_size=6,
)
_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**60), max_value=2**60) | st.floats() | _text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_text, children, max_size=4),
    max_leaves=12,
)


def _record(payload: Any) -> NewRecord:
    return NewRecord.model_construct(type="a@1", actor="a", privacy="private", payload=payload, id="x")


@given(_values)
def test_encode_payload_writes_what_canonical_json_writes_or_refuses_alike(value: Any) -> None:
    try:
        expected = canonical_json(value, field="payload")
    except CanonicalJSONError as exc:
        with pytest.raises(CanonicalJSONError) as got:
            encode_payload(_record(value))
        assert (str(got.value), got.value.field) == (str(exc), exc.field)
    else:
        assert encode_payload(_record(value)) == expected


@given(_values | st.dictionaries(_text, st.none() | st.booleans() | st.integers() | _text | st.floats(), max_size=6))
def test_the_plain_check_answers_as_canonicals_does(value: Any) -> None:
    assert _plain(value) is is_plain(value)


def test_encode_payload_refuses_a_shared_or_cyclic_or_deep_value_as_canonical_json_does() -> None:
    shared: list[Any] = [1]
    assert encode_payload(_record({"a": shared, "b": shared})) == b'{"a":[1],"b":[1]}'
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    deep: list[Any] = []
    inner = deep
    for _ in range(100_000):
        inner.append([])
        inner = inner[0]
    for bad in (cyclic, deep):
        with pytest.raises(CanonicalJSONError) as expected:
            canonical_json(bad, field="payload")
        with pytest.raises(CanonicalJSONError) as got:
            encode_payload(_record(bad))
        assert str(got.value) == str(expected.value)


_names = st.text(st.characters(exclude_categories=("Cs", "Cc")), min_size=1, max_size=20)
_moments = st.none() | st.datetimes(timezones=st.just(timezone(timedelta(hours=-3))))


@st.composite
def _batches(draw: st.DrawFn) -> list[NewRecord]:
    count = draw(st.integers(min_value=1, max_value=6))
    records: list[NewRecord] = []
    for n in range(count):
        earlier = [r.id for r in records]
        records.append(
            NewRecord(
                type=draw(st.sampled_from(["a@1", "note.x@2", "t-b_c@99"])),
                actor=draw(st.sampled_from(["a", 'q"uote', "é\\"]) | _names),
                privacy=draw(st.sampled_from(["public-source", "private", "sensitive"])),
                subject=draw(st.none() | _names),
                supersedes=draw(st.none() | st.sampled_from(earlier)) if earlier else None,
                id=f"id-{n}-{draw(_names)}",
                time=draw(_moments),
                payload={"n": n},
            )
        )
    return records


@given(_batches(), st.sampled_from([None, (7, "ab" * 32), (3, 'odd "head" \\ hash')]))
def test_seal_chain_seals_each_record_as_seal_does(records: list[NewRecord], head: tuple[int, str] | None) -> None:
    seq, prev = head if head is not None else (0, GENESIS_HASH)
    payloads = [encode_payload(r) for r in records]
    columns: list[Any] = []
    got = seal_chain(records, payloads, seq=seq, prev_hash=prev, now=NOW, columns=columns)
    expected: list[Envelope] = []
    for record, payload in zip(records, payloads, strict=True):
        seq += 1
        expected.append(seal(record, seq=seq, prev_hash=prev, now=NOW, payload=payload))
        prev = expected[-1].hash
    assert got == expected
    assert columns == [value for env in got for value in env_row(env)]
    assert [env.cas_refs for env in got] == [[] for _ in got]


def test_seal_chain_refuses_what_seal_refuses() -> None:
    lone = NewRecord.model_construct(type="a@1", actor="a\ud800", privacy="private", payload={}, id="x")
    with pytest.raises(CanonicalJSONError) as expected:
        seal(lone, seq=1, prev_hash=GENESIS_HASH, now=NOW, payload=b"{}")
    with pytest.raises(CanonicalJSONError) as got:
        seal_chain([lone], [b"{}"], seq=0, prev_hash=GENESIS_HASH, now=NOW)
    assert str(got.value) == str(expected.value)
    naive = NewRecord.model_construct(
        type="a@1", actor="a", privacy="private", payload={}, id="y", time=datetime(2026, 1, 1)
    )
    with pytest.raises(InvalidInputError, match="timezone-aware"):
        seal_chain([naive], [b"{}"], seq=0, prev_hash=GENESIS_HASH, now=NOW)
    dangling = NewRecord(type="a@1", actor="a", privacy="private", supersedes="nowhere")
    with pytest.raises(InvalidInputError, match="no earlier record with id 'nowhere'"):
        seal_chain([dangling], [b"{}"], seq=0, prev_hash=GENESIS_HASH, now=NOW)
    assert seal_chain([dangling], [b"{}"], seq=0, prev_hash=GENESIS_HASH, now=NOW, existing={"nowhere"})


@pytest.mark.parametrize("sizes", [[1, 2, 3], [511, 512, 513], [1000, 1025, 7, 2001]])
def test_sqlite_batches_of_every_size_are_stored_as_sealed(tmp_path: Path, sizes: list[int]) -> None:
    with open_ledger(f"sqlite:///{tmp_path / 'l.sqlite'}") as led:
        sealed: list[Envelope] = []
        for size in sizes:
            batch = [NewRecord(type="a@1", actor="a", privacy="private", payload={"n": n}) for n in range(size)]
            sealed += led.append(batch)
        assert list(led.read()) == sealed
        assert [e.seq for e in sealed] == list(range(1, sum(sizes) + 1))
        assert list(led.verify()) == []


def test_sqlite_inserts_fewer_rows_per_statement_when_sqlite_allows_fewer_parameters(tmp_path: Path) -> None:
    with open_ledger(f"sqlite:///{tmp_path / 'l.sqlite'}") as led:
        assert isinstance(led, SqliteLedger)
        assert led.recorder._rows_per_insert == 1000
    with closing(sqlite3.connect(":memory:")) as conn:
        conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
        limited = conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
    with open_ledger(f"sqlite:///{tmp_path / 'l.sqlite'}") as led:
        assert isinstance(led, SqliteLedger)
        led.recorder._conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, limited)
        led.recorder._rows_per_insert = limited // 12  # what a connection with 999 parameters gets
        led.recorder._ids_per_query = limited
        sealed = led.append([NewRecord(type="a@1", actor="a", privacy="private", payload={"n": n}) for n in range(150)])
        assert list(led.read()) == sealed


_UNGUARDED = "DROP TRIGGER rt_records_no_update; DROP TRIGGER rt_records_no_delete;"


@pytest.mark.parametrize(
    "trigger",
    [
        # a changed first digit, whatever it was (always 'f' left 1 hash in 16 unchanged)
        "UPDATE rt_records SET hash = (CASE WHEN substr(hash, 1, 1) = 'f' THEN 'e' ELSE 'f' END) || substr(hash, 2) "
        "WHERE seq = NEW.seq AND NEW.seq = 3",
        "UPDATE rt_records SET seq = seq + 5000 WHERE seq = NEW.seq AND NEW.seq = 2",
        "DELETE FROM rt_records WHERE seq = NEW.seq AND NEW.seq = 3",
        "INSERT INTO rt_records (seq, id, type, time, actor, privacy, payload, payload_hash, prev_hash, hash) "
        "SELECT NEW.seq + 1000, NEW.id || '-extra', NEW.type, NEW.time, NEW.actor, NEW.privacy, NEW.payload, "
        "NEW.payload_hash, NEW.prev_hash, NEW.hash WHERE NEW.seq = 3",
    ],
    ids=["hash-changed", "seq-moved", "row-deleted", "row-added"],
)
def test_an_append_whose_rows_a_trigger_changes_is_refused(tmp_path: Path, trigger: str) -> None:
    path = tmp_path / "l.sqlite"
    with open_ledger(f"sqlite:///{path}") as led:
        led.append([NewRecord(type="a@1", actor="a", privacy="private")])
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.executescript(_UNGUARDED + f"CREATE TRIGGER meddle AFTER INSERT ON rt_records BEGIN {trigger}; END;")
    with open_ledger(f"sqlite:///{path}") as led:
        head = led.head()
        batch = [NewRecord(type="a@1", actor="a", privacy="private", payload={"n": n}) for n in range(3)]
        with pytest.raises(IntegrityError, match="was not stored as sealed"):
            led.append(batch)
        assert led.head() == head


@pytest.mark.postgres
@pytest.mark.parametrize("size", [1, 3])
def test_a_postgres_append_whose_hash_a_trigger_changes_is_refused(pg_url: str, size: int) -> None:
    import psycopg

    with open_ledger(pg_url) as led:
        led.append([NewRecord(type="a@1", actor="a", privacy="private")])
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(
                "CREATE FUNCTION meddle() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "IF NEW.seq = 2 THEN NEW.hash := (CASE WHEN left(NEW.hash, 1) = 'f' THEN 'e' ELSE 'f' END) "
                "|| substr(NEW.hash, 2); END IF; RETURN NEW; END $$"
            )
            conn.execute("CREATE TRIGGER meddle BEFORE INSERT ON rt_records FOR EACH ROW EXECUTE FUNCTION meddle()")
        head = led.head()
        batch = [NewRecord(type="a@1", actor="a", privacy="private", payload={"n": n}) for n in range(size)]
        with pytest.raises(IntegrityError, match="was not stored as sealed"):
            led.append(batch)
        assert led.head() == head
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("DROP TRIGGER meddle ON rt_records")
        assert [e.seq for e in led.append(batch)] == list(range(2, 2 + size))
