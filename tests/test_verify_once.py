"""What ``verify`` does once per record: its CAS references are found once (whether its payload is
canonical or not: the reference checks and the recomputed ``cas_refs`` rows share them), its
canonical form is checked by one C decode and one C encode (never the stdlib encoder) where the
bytes allow, and its query-table rows are asked only of the projections its type feeds."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import reviewtrail.cas
from reviewtrail import canonical
from reviewtrail.app import init_store, open_store
from reviewtrail.config import Settings
from reviewtrail.ledger import Envelope, NewRecord, Projection, ProjectionTable, compute_hash
from reviewtrail.ledger.records._envelope import header_of
from reviewtrail.verify import verify_store


def _settings(root: Path) -> Settings:
    return Settings(store=root / "store", database_url=f"sqlite:///{root / 'store' / 'ledger.sqlite'}")


def _rewrite_last(root: Path, payload: bytes) -> int:
    """The last record's payload replaced by ``payload``, its payloadHash and hash recomputed (the
    append-only triggers dropped for the edit and put back): only its byte form gives it away."""
    with closing(sqlite3.connect(root / "store" / "ledger.sqlite", isolation_level=None)) as conn:
        row = conn.execute(
            "SELECT seq, id, type, time, actor, privacy, subject, supersedes, payload, payload_hash, prev_hash, hash "
            "FROM rt_records ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        env = Envelope(*row[:8], payload, hashlib.sha256(payload).hexdigest(), row[10], "")
        sealed = compute_hash(env.prev_hash, header_of(env))
        triggers = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'rt_records'"
        ).fetchall()
        for name, _ in triggers:
            conn.execute(f'DROP TRIGGER "{name}"')
        conn.execute(
            "UPDATE rt_records SET payload = ?, payload_hash = ?, hash = ? WHERE seq = ?",
            (payload, env.payload_hash, sealed, row[0]),
        )
        for _, sql in triggers:
            conn.execute(sql)
    return int(row[0])


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every value ``refs_in`` is asked to search, wherever verify asks it."""
    searched: list[Any] = []
    real = reviewtrail.cas.refs_in

    def refs_in(value: Any) -> Any:
        searched.append(value)
        return real(value)

    monkeypatch.setattr(reviewtrail.cas, "refs_in", refs_in)
    return searched


@pytest.mark.parametrize("canonical_form", [True, False])
def test_each_record_s_references_are_found_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, canonical_form: bool
) -> None:
    init_store(_settings(tmp_path)).close()
    with open_store(_settings(tmp_path)) as store:
        ref = store.cas.put(b"evidence").to_json()
        store.ledger.append(
            [
                NewRecord(type="t.ref@1", actor="a", privacy="private", payload={"f": ref, "n": 1}),
                NewRecord(type="t.ref@1", actor="a", privacy="private", payload={"f": ref, "g": [ref], "n": 2}),
            ]
        )
    if not canonical_form:  # the same value, in bytes with spaces: still a "size": key to find
        seq = _rewrite_last(tmp_path, json.dumps({"f": ref, "g": [ref], "n": 2}).encode())
    searched = _counting(monkeypatch)
    with open_store(_settings(tmp_path)) as store:
        report = verify_store(store)
    assert report.refs_checked == 3
    assert [value["n"] for value in searched] == [1, 2], searched  # once per record holding references
    if canonical_form:
        assert report.ok, report.problems
    else:  # reported exactly as before: the byte form, nothing about references or query rows
        assert report.problems == [f"ledger seq {seq} ({_id_at(tmp_path, seq)}): payload bytes are not canonical JSON"]


def test_references_in_a_payload_of_another_byte_form_are_still_checked(tmp_path: Path) -> None:
    """A payload whose bytes write ``"size" :`` (not canonical) is reported as such, and the object
    it points at is still looked for: a missing one is reported too."""
    init_store(_settings(tmp_path)).close()
    with open_store(_settings(tmp_path)) as store:
        ref = store.cas.put(b"evidence").to_json()
        store.ledger.append([NewRecord(type="t.ref@1", actor="a", privacy="private", payload={"f": ref})])
    missing = ref | {"digest": "sha256:" + hashlib.sha256(b"never stored").hexdigest(), "size": 12}
    seq = _rewrite_last(tmp_path, json.dumps({"f": missing}, separators=(" , ", " : ")).encode())
    with open_store(_settings(tmp_path)) as store:
        report = verify_store(store)
    where = f"ledger seq {seq} ({_id_at(tmp_path, seq)})"
    assert report.problems[0] == f"{where}: payload bytes are not canonical JSON"
    assert report.refs_checked == 1
    assert any(where in p and "object missing" in p for p in report.problems[1:]), report.problems


def _id_at(root: Path, seq: int) -> str:
    with closing(sqlite3.connect(root / "store" / "ledger.sqlite")) as conn:
        return str(conn.execute("SELECT id FROM rt_records WHERE seq = ?", (seq,)).fetchone()[0])


def _refuse(*args: object, **kwargs: object) -> None:
    raise AssertionError("the stdlib encoder or the general check was used")


@pytest.mark.parametrize(
    "data",
    [
        b'{"code":{"digest":"sha256:' + b"a" * 64 + b'","mediaType":"text/plain","pool":"agent-state","size":10}}',
        '{"a":[1,-2,true,null],"b":"é\\n\\u001f\\"\\\\","c":{}}'.encode(),
        b'{"n":-123456789012345}',
    ],
)
def test_canonical_bytes_are_checked_without_the_stdlib_encoder(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(canonical, "loads_canonical", _refuse)
    assert canonical.canonical_value(data) == (True, json.loads(data))


@pytest.mark.parametrize(
    "data",
    [
        b'{"a":1, "b":2}',  # a space
        b'{"b":1,"a":2}',  # keys out of order
        b'{"a":"\\u0041"}',  # an escape RFC 8785 does not write
        b'{"a":"\\/"}',
        b'{"a":1,"a":1}',  # a key given twice
        b'{"a":-0}',
        b'{"a":1}\n',
    ],
)
def test_non_canonical_bytes_are_refused_without_the_stdlib_encoder(
    data: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(canonical, "loads_canonical", _refuse)
    assert canonical.canonical_value(data) == (False, None)


_TEXT = st.text(
    st.characters(codec="utf-8") | st.sampled_from(["\x00", "\x1f", "\x7f", '"', "\\", "\u2028"]), max_size=6
)
_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.sampled_from([2**53 - 1, 2**53, 2**53 + 1, -(2**53) - 1, 10**15, 10**16])
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=400)
@given(_VALUES, st.booleans())
@example({"n": 2**53 + 1}, True)
@example([9007199254740993], True)
@example({"a": 1.0}, True)
def test_canonical_value_reads_as_loads_json_and_answers_as_rfc8785(value: Any, sort: bool) -> None:
    """Whichever path answers, the bytes are canonical exactly when RFC 8785 of their parse gives
    them back, and the value kept is what ``loads_json`` reads, type for type (a double beyond
    2**53 stays a double)."""
    data = json.dumps(value, sort_keys=sort, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    parsed = canonical.loads_json(data)
    try:
        expected = canonical.canonical_json(parsed) == data
    except canonical.CanonicalJSONError:
        expected = False
    ok, kept = canonical.canonical_value(data)
    assert ok is expected
    if ok:
        assert _typed(kept) == _typed(parsed)


def _typed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def _rows_of(table: str) -> Any:
    def rows(env: Envelope) -> Iterable[tuple[str, dict[str, Any]]]:
        return [(table, {"seq": env.seq})]

    return rows


def _env(type_: str, *, supersedes: str | None = None, payload: bytes = b"{}") -> Envelope:
    return Envelope(1, "r1", type_, "t", "a", "private", None, supersedes, payload, "", "", "")


def test_a_record_is_offered_only_to_the_projections_its_type_feeds() -> None:
    from reviewtrail.ledger import row_makers

    table = ProjectionTable("x", (("seq", "int"),), key=("seq",))
    typed = Projection("typed", 1, (table,), rows=_rows_of("x"), types=frozenset({"t.a@1"}))
    any_type = Projection("any", 1, (ProjectionTable("y", (("seq", "int"),), key=("seq",)),), rows=_rows_of("y"))
    pick = row_makers([typed, any_type])
    assert pick(_env("t.a@1")) == [typed.rows, any_type.rows]
    assert pick(_env("t.b@1")) == [any_type.rows]
    assert pick(_env("t.a@1")) == [typed.rows, any_type.rows]  # chosen once per type, answered alike


def test_the_built_in_projections_are_asked_only_when_a_record_can_give_them_rows() -> None:
    from reviewtrail.ledger import BUILTIN_PROJECTIONS, row_makers

    pick = row_makers(BUILTIN_PROJECTIONS)
    assert pick(_env("t.a@1")) == []
    assert len(pick(_env("t.a@1", supersedes="r0"))) == 2
    assert len(pick(_env("t.a@1", payload=b'{"f":{"hash":"x","size":1}}'))) == 2
