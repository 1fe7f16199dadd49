"""One contract every ledger backend passes: memory, SQLite and PostgreSQL."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.errors import CanonicalJSONError, ConflictError, InvalidInputError, NotFoundError
from reviewtrail.ledger import (
    GENESIS_HASH,
    Ledger,
    MemoryLedger,
    NewRecord,
    Projection,
    ProjectionTable,
    compute_hash,
    header_of,
    open_ledger,
)

# tamper(seq, column, value): what only an attacker with raw write access could do.
Tamper = Callable[[int, str, Any], None]


class Backend:
    def __init__(self, ledger: Ledger, tamper: Tamper, reopen: Callable[..., Ledger]) -> None:
        self.ledger = ledger
        self.tamper = tamper
        self.reopen = reopen


def _sql_tamper_sqlite(path: Path) -> Tamper:
    def tamper(seq: int, column: str, value: Any) -> None:
        conn = sqlite3.connect(path)
        conn.execute("DROP TRIGGER IF EXISTS rt_records_no_update")
        conn.execute(f"UPDATE rt_records SET {column} = ? WHERE seq = ?", (value, seq))
        conn.commit()
        conn.close()

    return tamper


def _sql_tamper_pg(url: str) -> Tamper:
    import psycopg

    def tamper(seq: int, column: str, value: Any) -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ALTER TABLE rt_records DISABLE TRIGGER USER")
            conn.execute(f"UPDATE rt_records SET {column} = %s WHERE seq = %s", (value, seq))
            conn.execute("ALTER TABLE rt_records ENABLE TRIGGER USER")

    return tamper


def _make_backend(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if kind == "memory":
        mem = MemoryLedger()

        def tamper(seq: int, column: str, value: Any) -> None:
            mem.tamper(seq, **{column: value})

        yield Backend(mem, tamper, lambda projections=None: mem)
        return
    if kind == "sqlite":
        path = tmp_path / "ledger.sqlite"
        url = f"sqlite:///{path}"
        tamper = _sql_tamper_sqlite(path)
    else:
        url = request.getfixturevalue("pg_url")
        tamper = _sql_tamper_pg(url)
    opened: list[Ledger] = []

    def reopen(projections: Any = None) -> Ledger:
        led = open_ledger(url, projections)
        opened.append(led)
        return led

    led = reopen()
    yield Backend(led, tamper, reopen)
    for o in opened:
        o.close()


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    yield from _make_backend(request.param, request, tmp_path)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def sql_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    yield from _make_backend(request.param, request, tmp_path)


def rec(n: int = 0, **kw: Any) -> NewRecord:
    fields: dict[str, Any] = {"type": "test.item@1", "actor": "tester", "privacy": "private", "payload": {"n": n}}
    fields.update(kw)
    return NewRecord(**fields)


def test_append_assigns_gap_free_seqs_and_links_the_chain(backend: Backend) -> None:
    first = backend.ledger.append([rec(1), rec(2)])
    second = backend.ledger.append([rec(3)])
    envs = first + second
    assert [e.seq for e in envs] == [1, 2, 3]
    assert envs[0].prev_hash == GENESIS_HASH
    for a, b in itertools.pairwise(envs):
        assert b.prev_hash == a.hash
    for e in envs:
        assert e.hash == compute_hash(e.prev_hash, header_of(e))
    assert list(backend.ledger.read()) == envs
    assert list(backend.ledger.verify()) == []


def test_envelope_fields(backend: Backend) -> None:
    when = datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
    [env] = backend.ledger.append(
        [rec(7, id="rec-1", time=when, actor="alice", privacy="sensitive", subject="artifact:x")]
    )
    doc = env.to_json()
    assert set(doc) == {
        "seq", "id", "type", "time", "actor", "privacy", "subject", "supersedes",
        "payload", "payloadHash", "prevHash", "hash",
    }  # fmt: skip
    assert doc["time"] == "2026-01-02T03:04:05.000006Z"
    assert env.payload == b'{"n":7}'
    assert backend.ledger.get("rec-1") == env


def test_empty_append_is_a_no_op(backend: Backend) -> None:
    assert backend.ledger.append([]) == []
    assert backend.ledger.head() is None
    assert list(backend.ledger.read()) == []


def test_batch_is_atomic_when_one_record_is_invalid(backend: Backend) -> None:
    backend.ledger.append([rec(0, id="taken")])
    with pytest.raises(ConflictError):
        backend.ledger.append([rec(1), rec(2, id="taken")])
    with pytest.raises(CanonicalJSONError) as err:
        backend.ledger.append([rec(3), rec(4, payload={"x": float("nan")})])
    assert err.value.field == "payload"
    with pytest.raises(InvalidInputError):
        backend.ledger.append([rec(5, id="dup"), rec(6, id="dup")])
    assert [e.seq for e in backend.ledger.read()] == [1]
    assert list(backend.ledger.verify()) == []


def test_malformed_cas_reference_is_rejected(backend: Backend) -> None:
    with pytest.raises(InvalidInputError):
        backend.ledger.append([rec(payload={"blob": {"hash": "../etc/passwd", "size": 1}})])
    assert backend.ledger.head() is None


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


def test_reads_by_range_type_and_subject(backend: Backend) -> None:
    backend.ledger.append(
        [
            rec(1, type="alpha@1", subject="s1"),
            rec(2, type="alpha@2", subject="s2"),
            rec(3, type="beta@1", subject="s1"),
            rec(4, type="alpha_x@1", subject="s1"),
        ]
    )
    seqs = lambda **kw: [e.seq for e in backend.ledger.read(**kw)]  # noqa: E731
    assert seqs(start=2, end=3) == [2, 3]
    assert seqs(type="alpha") == [1, 2]  # every version; "alpha_x" is another type
    assert seqs(type="alpha@2") == [2]
    assert seqs(subject="s1") == [1, 3, 4]
    assert seqs(type="alpha", subject="s1") == [1]
    assert seqs(limit=2) == [1, 2]
    assert [e.seq for e in backend.ledger.tail(2)] == [3, 4]
    assert [e.seq for e in backend.ledger.tail(5, subject="s1")] == [1, 3, 4]
    with pytest.raises(InvalidInputError):
        list(backend.ledger.read(start=0))
    with pytest.raises(InvalidInputError):
        list(backend.ledger.read(type="Bad Type"))


def test_reads_page_through_large_ledgers(backend: Backend) -> None:
    backend.ledger.append([rec(i) for i in range(2500)])
    assert [e.seq for e in backend.ledger.read(start=990, limit=1100)] == list(range(990, 2090))
    assert sum(1 for _ in backend.ledger.read()) == 2500
    head = backend.ledger.head()
    assert head is not None and head.seq == 2500


def test_get_unknown_id(backend: Backend) -> None:
    with pytest.raises(NotFoundError):
        backend.ledger.get("nope")


def test_corrections_name_what_they_supersede(backend: Backend) -> None:
    [orig] = backend.ledger.append([rec(1, id="orig")])
    [fix] = backend.ledger.append([rec(2, supersedes="orig")])
    assert backend.ledger.superseded_by("orig") == [fix.id]
    assert backend.ledger.get("orig") == orig  # never changed
    with pytest.raises(InvalidInputError) as err:
        backend.ledger.append([rec(3, supersedes="missing-id")])
    assert err.value.field == "supersedes"
    # a batch may correct a record appended earlier in the same batch
    backend.ledger.append([rec(4, id="b1"), rec(5, supersedes="b1")])


def test_cas_ref_projection_is_written_with_the_append(backend: Backend) -> None:
    h = "ab" * 32
    backend.ledger.append(
        [
            rec(1, payload={"a": {"hash": h, "size": 3}}),
            rec(
                2,
                payload={"b": [{"pool": "agent-state", "digest": f"sha256:{h}", "size": 3, "mediaType": "text/plain"}]},
            ),
        ]
    )
    rows = sorted(backend.ledger.rows("cas_refs", hash=h), key=lambda r: r["seq"])
    assert rows == [
        {"seq": 1, "hash": h, "size": 3, "pool": ""},
        {"seq": 2, "hash": h, "size": 3, "pool": "agent-state"},
    ]
    with pytest.raises(NotFoundError):
        backend.ledger.rows("no_such_table")
    with pytest.raises(InvalidInputError):
        backend.ledger.rows("cas_refs", bogus=1)


def test_a_new_projection_is_built_from_existing_records(sql_backend: Backend) -> None:
    backend = sql_backend
    backend.ledger.append([rec(i, subject=f"s{i % 2}") for i in range(5)])
    counts = Projection(
        name="subject_last",
        version=1,
        tables=(ProjectionTable("subject_last", (("subject", "text"), ("seq", "int")), key=("subject",)),),
        rows=lambda env: [("subject_last", {"subject": env.subject, "seq": env.seq})] if env.subject else [],
    )
    led = backend.reopen([counts])
    assert sorted((r["subject"], r["seq"]) for r in led.rows("subject_last")) == [("s0", 5), ("s1", 4)]
    led.append([rec(9, subject="s1")])
    assert led.rows("subject_last", subject="s1") == [{"subject": "s1", "seq": 6}]


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("payload", b'{"n":99}'),
        ("type", "test.item@2"),
        ("actor", "mallory"),
        ("privacy", "public-source"),
        ("time", "2020-01-01T00:00:00.000000Z"),
        ("subject", "forged"),
        ("payload_hash", "0" * 64),
        ("prev_hash", "1" * 64),
        ("hash", "2" * 64),
        ("id", "forged-id"),
    ],
)
def test_tampering_with_any_field_is_detected(backend: Backend, column: str, value: Any) -> None:
    backend.ledger.append([rec(i) for i in range(3)])
    assert list(backend.ledger.verify()) == []
    backend.tamper(2, column, value)
    problems = list(backend.ledger.verify())
    assert problems, f"tampering with {column} went unnoticed"
    assert any("seq 2" in p or "seq 3" in p for p in problems)


def test_records_cannot_be_updated_or_deleted_through_the_database(backend: Backend, tmp_path: Path) -> None:
    backend.ledger.append([rec(1)])
    led = backend.ledger
    if isinstance(led, MemoryLedger):
        assert not hasattr(led, "update") and not hasattr(led, "delete")
        return
    conn: Any = led._conn  # type: ignore[attr-defined]
    with pytest.raises(Exception, match="append-only"), led._write_txn() as cur:  # type: ignore[attr-defined]
        cur.execute("UPDATE rt_records SET actor = 'x'")
    with pytest.raises(Exception, match="append-only"), led._write_txn() as cur:  # type: ignore[attr-defined]
        cur.execute("DELETE FROM rt_records")
    assert conn is not None
    assert [e.actor for e in led.read()] == ["tester"]


@given(
    st.lists(
        st.recursive(
            st.none()
            | st.booleans()
            | st.integers(-(2**53) + 1, 2**53 - 1)
            | st.floats(allow_nan=False, allow_infinity=False)
            | st.text(),
            lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
            max_leaves=10,
        ).filter(lambda v: "\ud800" not in str(v)),
        min_size=1,
        max_size=5,
    )
)
def test_any_json_payload_appends_and_verifies(payloads: list[Any]) -> None:
    led = MemoryLedger()
    try:
        envs = led.append([rec(payload=p) for p in payloads])
    except CanonicalJSONError:
        return  # e.g. a lone surrogate: rejected with a clear error, nothing written
    except InvalidInputError:
        return  # a dict shaped like a CAS ref with an invalid hash
    assert len(envs) == len(payloads)
    assert list(led.verify()) == []


def test_schema_migrations_are_versioned(tmp_path: Path) -> None:
    from reviewtrail.ledger import SCHEMA_VERSION

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


def test_typed_payloads_are_validated_on_append() -> None:
    from pydantic import Field

    from reviewtrail.ledger import RecordPayload, new_record, payload_schemas, record_type

    @record_type("test.typed-score@1")
    class Score(RecordPayload):
        run_id: str = Field(alias="runId")
        score: float

    led = MemoryLedger()
    [env] = led.append([new_record(Score(run_id="r1", score=0.5), actor="a", privacy="private")])
    assert env.type == "test.typed-score@1" and env.payload_value == {"runId": "r1", "score": 0.5}
    with pytest.raises(InvalidInputError) as err:
        led.append([rec(type="test.typed-score@1", payload={"runId": "r2", "score": "high"})])
    assert err.value.field == "records[0].payload.score"
    with pytest.raises(InvalidInputError):
        led.append([rec(type="test.typed-score@1", payload={"runId": "r2", "score": 1, "extra": 1})])
    assert [e.seq for e in led.read()] == [1]
    schema = payload_schemas()["test.typed-score@1"]
    assert set(schema["properties"]) == {"runId", "score"}


def test_a_failing_projection_rolls_back_the_whole_append(backend: Backend) -> None:
    def rows(env: Any) -> list[tuple[str, dict[str, Any]]]:
        if env.payload_value.get("n") == 13:
            raise RuntimeError("projection failed")
        return [("seen", {"seq": env.seq})]

    seen = Projection(
        name="seen", version=1, tables=(ProjectionTable("seen", (("seq", "int"),), key=("seq",)),), rows=rows
    )
    led = backend.reopen([seen]) if not isinstance(backend.ledger, MemoryLedger) else MemoryLedger([seen])
    led.append([rec(1)])
    with pytest.raises(RuntimeError, match="projection failed"):
        led.append([rec(12), rec(13)])
    assert [e.seq for e in led.read()] == [1]
    assert led.rows("seen") == [{"seq": 1}]
    led.append([rec(14)])
    assert [e.seq for e in led.read()] == [1, 2]
    assert sorted(r["seq"] for r in led.rows("seen")) == [1, 2]


def test_a_unique_projection_key_makes_the_second_claim_fail(backend: Backend) -> None:
    from reviewtrail.errors import ConflictError

    claims = Projection(
        name="claims",
        version=1,
        tables=(ProjectionTable("claims", (("slot", "text"), ("seq", "int")), key=("slot",), on_conflict="error"),),
        rows=lambda env: [("claims", {"slot": env.payload_value["slot"], "seq": env.seq})],
    )
    led = backend.reopen([claims]) if not isinstance(backend.ledger, MemoryLedger) else MemoryLedger([claims])
    led.append([rec(payload={"slot": "v1"})])
    with pytest.raises(ConflictError):
        led.append([rec(payload={"slot": "v2"}), rec(payload={"slot": "v1"})])
    with pytest.raises(ConflictError):
        led.append([rec(payload={"slot": "v3"}), rec(payload={"slot": "v3"})])
    assert [e.seq for e in led.read()] == [1]
    led.append([rec(payload={"slot": "v2"})])
    assert sorted(r["slot"] for r in led.rows("claims")) == ["v1", "v2"]
