"""An append's batch paths refuse, seal and store exactly as the one-record rules do.

SQLite leaves a recorded id to the unique key on ``rt_records.id`` (only what a batch supersedes is
looked up before sealing): the conflict names the same record, is reported before any other
refusal, and leaves nothing written, on every backend; a table rebuilt without that key has every
id looked up again. SQLite writes a column that is null in the whole batch as NULL in the statement
and the payload as text cast to its UTF-8 bytes (bytes, in a database whose text is not UTF-8): the
rows are stored as sealed either way. The batch's payloads are encoded as ``encode_payload``
encodes each one, and a record that keeps its fields outside ``__dict__`` is sealed as ``seal``
seals it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.errors import CanonicalJSONError, ConflictError, InvalidInputError
from reviewtrail.ledger import Ledger, MemoryLedger, NewRecord, open_ledger
from reviewtrail.ledger.backends._sqlite import SqliteLedger
from reviewtrail.ledger.records._envelope import GENESIS_HASH, encode_payload, encode_payloads, seal, seal_chain

NOW = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
HEX = "ab" * 32


def _rec(n: int, **kw: Any) -> NewRecord:
    fields: dict[str, Any] = {"type": "t.x@1", "actor": "a", "privacy": "private", "payload": {"n": n}}
    return NewRecord(**{**fields, **kw})


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def make_ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Ledger]]:
    opened: list[Ledger] = []

    def make() -> Ledger:
        if request.param == "memory":
            led: Ledger = MemoryLedger()
        elif request.param == "sqlite":
            led = open_ledger(f"sqlite:///{tmp_path / f'l{len(opened)}.sqlite'}")
        else:
            led = open_ledger(request.getfixturevalue("pg_url"))
        opened.append(led)
        return led

    yield make
    for led in opened:
        led.close()


def test_a_recorded_id_is_a_conflict_naming_the_first_recorded_one(make_ledger: Callable[[], Ledger]) -> None:
    led = make_ledger()
    first = led.append([_rec(0, id="kept-1"), _rec(1, id="kept-2")])
    batch = [_rec(2, id="new-1"), _rec(3, id="kept-2"), _rec(4, id="kept-1")]
    with pytest.raises(ConflictError, match="a record with id 'kept-2' already exists") as err:
        led.append(batch)
    assert err.value.field == "id"
    assert list(led.read()) == first
    assert [e.seq for e in led.append(batch[:1])] == [3]
    assert list(led.verify()) == []


def test_a_conflict_is_reported_before_a_dangling_supersedes_or_a_naive_time(
    make_ledger: Callable[[], Ledger],
) -> None:
    led = make_ledger()
    led.append([_rec(0, id="kept")])
    for bad in (
        _rec(1, supersedes="nowhere"),
        NewRecord.model_construct(**{**_fields(1), "time": datetime(2026, 1, 1)}),
    ):
        with pytest.raises(ConflictError, match="'kept'"):
            led.append([bad, _rec(2, id="kept")])
    with pytest.raises(InvalidInputError, match="no earlier record with id 'nowhere'"):
        led.append([_rec(1, supersedes="nowhere"), _rec(2)])
    assert led.head_seq() == 1


def _fields(n: int) -> dict[str, Any]:
    return {"type": "t.x@1", "actor": "a", "privacy": "private", "payload": {"n": n}, "id": f"naive-{n}"}


def test_supersedes_names_a_recorded_record_or_an_earlier_one_of_the_batch(make_ledger: Callable[[], Ledger]) -> None:
    led = make_ledger()
    led.append([_rec(0, id="old")])
    envs = led.append([_rec(1, id="b1", supersedes="old"), _rec(2, id="b2", supersedes="b1"), _rec(3, id="b3")])
    assert [e.supersedes for e in envs] == ["old", "b1", None]
    for batch in (
        [_rec(4, id="c1", supersedes="c2"), _rec(5, id="c2")],  # a later record of the batch
        [_rec(4, id="c1", supersedes="c1")],  # itself
    ):
        with pytest.raises(InvalidInputError, match="no earlier record"):
            led.append(batch)
    assert led.head_seq() == 4
    assert led.superseded_by("old") == ["b1"]
    assert list(led.verify()) == []


def test_a_batch_that_is_not_all_new_records_names_the_first_other(make_ledger: Callable[[], Ledger]) -> None:
    led = make_ledger()
    with pytest.raises(InvalidInputError, match="expected NewRecord, got dict") as err:
        led.append([_rec(0), _rec(1), {"type": "t.x@1"}])  # type: ignore[list-item]
    assert err.value.field == "records[2]"
    assert led.head() is None


def test_cas_reference_rows_are_written_for_the_records_that_hold_references(
    make_ledger: Callable[[], Ledger],
) -> None:
    led = make_ledger()
    envs = led.append([_rec(0), _rec(1, payload={"blob": {"hash": HEX, "size": 3}}), _rec(2, payload={"size": 1})])
    assert led.rows("cas_refs") == [{"seq": envs[1].seq, "hash": HEX, "size": 3, "pool": ""}]
    assert [len(e.cas_refs) for e in envs] == [0, 1, 0]


_leaves = (
    st.none() | st.booleans() | st.integers(min_value=-(2**60), max_value=2**60) | st.floats() | st.text(max_size=4)
)
_payloads = st.recursive(
    _leaves,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3),
)


@given(st.lists(_payloads, min_size=1, max_size=5))
def test_encode_payloads_gives_what_encode_payload_gives_each_record(values: list[Any]) -> None:
    records = [NewRecord.model_construct(type="a@1", actor="a", privacy="private", payload=v, id="x") for v in values]
    expected: list[bytes] = []
    try:
        for r in records:
            expected.append(encode_payload(r))
    except CanonicalJSONError as exc:
        with pytest.raises(CanonicalJSONError) as got:
            encode_payloads(records)
        assert str(got.value) == str(exc)
    else:
        assert encode_payloads(records) == expected


class _Slotted:
    """A record whose fields are attributes, not ``__dict__`` items."""

    __slots__ = ("actor", "id", "payload", "privacy", "subject", "supersedes", "time", "type")

    def __init__(self, record: NewRecord) -> None:
        for name in self.__slots__:
            setattr(self, name, getattr(record, name))


def test_records_that_keep_their_fields_elsewhere_are_sealed_as_seal_does() -> None:
    made = [
        _rec(0, id="s0"),
        _rec(1, id="s1", subject="x", supersedes="s0", actor='q"', time=datetime(2025, 5, 6, tzinfo=UTC)),
        _rec(2, id="s2", privacy="sensitive", type="other@2"),
    ]
    payloads = [encode_payload(r) for r in made]
    for records in ([_Slotted(r) for r in made], [made[0], _Slotted(made[1]), made[2]]):
        got = seal_chain(records, payloads, seq=4, prev_hash=HEX, now=NOW)  # type: ignore[arg-type]
        prev, expected = HEX, []
        for seq, (record, payload) in enumerate(zip(made, payloads, strict=True), start=5):
            expected.append(seal(record, seq=seq, prev_hash=prev, now=NOW, payload=payload))
            prev = expected[-1].hash
        assert got == expected


def test_seal_chain_reuses_a_combination_of_actor_type_privacy_and_time_only_for_equal_ones() -> None:
    moments = [None, datetime(2025, 1, 1, tzinfo=UTC), None, datetime(2025, 1, 1, 1, tzinfo=UTC), None]
    records = [_rec(n, id=f"m{n}", time=t, actor=("a", "b")[n % 2]) for n, t in enumerate(moments)]
    payloads = [encode_payload(r) for r in records]
    got = seal_chain(records, payloads, seq=0, prev_hash=GENESIS_HASH, now=NOW)
    assert [e.time for e in got] == [
        "2026-01-02T03:04:05.678901Z",
        "2025-01-01T00:00:00.000000Z",
        "2026-01-02T03:04:05.678901Z",
        "2025-01-01T01:00:00.000000Z",
        "2026-01-02T03:04:05.678901Z",
    ]
    assert [e.actor for e in got] == ["a", "b", "a", "b", "a"]
    prev = GENESIS_HASH
    for seq, (record, payload, env) in enumerate(zip(records, payloads, got, strict=True), start=1):
        assert env == seal(record, seq=seq, prev_hash=prev, now=NOW, payload=payload)
        prev = env.hash


_REBUILT = """
DROP TRIGGER rt_records_no_update; DROP TRIGGER rt_records_no_delete;
ALTER TABLE rt_records RENAME TO rt_old;
CREATE TABLE rt_records (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL, type TEXT NOT NULL, time TEXT NOT NULL, actor TEXT NOT NULL,
    privacy TEXT NOT NULL, subject TEXT, supersedes TEXT, payload BLOB NOT NULL, payload_hash TEXT NOT NULL,
    prev_hash TEXT NOT NULL, hash TEXT NOT NULL
);
INSERT INTO rt_records SELECT * FROM rt_old;
DROP TABLE rt_old;
"""


@pytest.mark.parametrize(
    "key",
    ["", "CREATE UNIQUE INDEX rt_id_nocase ON rt_records (id COLLATE NOCASE)", "CREATE INDEX rt_id ON rt_records (id)"],
    ids=["no-key", "nocase-key", "plain-index"],
)
def test_sqlite_looks_up_every_id_when_the_table_has_no_binary_unique_key_on_id(tmp_path: Path, key: str) -> None:
    path = tmp_path / "l.sqlite"
    with open_ledger(f"sqlite:///{path}") as led:
        assert isinstance(led, SqliteLedger)
        with led.recorder._read() as cur:
            assert led.recorder._id_key_refuses(cur)
        led.append([_rec(0, id="kept")])
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.executescript(_REBUILT + (f"{key};" if key else ""))
    with open_ledger(f"sqlite:///{path}") as led:
        assert isinstance(led, SqliteLedger)
        with led.recorder._read() as cur:
            assert not led.recorder._id_key_refuses(cur)
        with pytest.raises(ConflictError, match="a record with id 'kept' already exists"):
            led.append([_rec(1, id="new"), _rec(2, id="kept")])
        assert [e.id for e in led.read()] == ["kept"]
        assert [e.seq for e in led.append([_rec(1, id="new")])] == [2]


@pytest.mark.parametrize(
    "subjects",
    [[None, None, None], ["s", None, "t"], ["s", "s", "s"]],
    ids=["all-null", "some-null", "none-null"],
)
def test_sqlite_stores_every_row_as_sealed_whichever_columns_are_null_in_the_whole_batch(
    tmp_path: Path, subjects: list[str | None]
) -> None:
    path = tmp_path / "l.sqlite"
    with open_ledger(f"sqlite:///{path}") as led:
        led.append([_rec(0, id="first")])
        batch = [
            _rec(1, subject=subjects[0], payload={"text": "é ☃ 𝄞 \u2028", "q": '"\\'}),
            _rec(2, subject=subjects[1], supersedes="first" if subjects[1] else None),
            _rec(3, subject=subjects[2], payload=["a", 1, None, True, {"size": 1}]),
        ]
        sealed = led.append(batch)
        assert list(led.read(start=2)) == sealed
        assert list(led.verify()) == []
    with closing(sqlite3.connect(path)) as conn:
        stored = conn.execute(
            "SELECT typeof(payload), payload, subject, supersedes FROM rt_records WHERE seq > 1 ORDER BY seq"
        ).fetchall()
    assert stored == [("blob", e.payload, e.subject, e.supersedes) for e in sealed]


def test_sqlite_binds_payload_bytes_to_a_database_whose_text_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA encoding = 'UTF-16le'")
        conn.execute("CREATE TABLE rt_placeholder (x)")  # the encoding is fixed by the first table
        conn.execute("DROP TABLE rt_placeholder")
    records = [_rec(0, payload={"text": "é ☃"}), _rec(1, subject="s")]
    payloads = encode_payloads(records)
    columns: list[Any] = []
    sealed = seal_chain(records, payloads, seq=0, prev_hash=GENESIS_HASH, now=NOW, columns=columns)
    with open_ledger(f"sqlite:///{path}") as led:
        assert isinstance(led, SqliteLedger)
        with pytest.raises(LookupError), led.recorder._write_txn() as cur:  # inserted, read, rolled back
            led.recorder._insert_records(cur, columns)
            cur.execute("SELECT typeof(payload), payload FROM rt_records ORDER BY seq")
            stored = cur.fetchall()
            raise LookupError
        assert led.recorder._utf8 is False
        assert led.head() is None
    assert stored == [("blob", e.payload) for e in sealed]
