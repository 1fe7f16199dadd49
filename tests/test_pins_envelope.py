"""The ledger envelope's fixed values and each verify diagnostic, one at a time."""

from __future__ import annotations

import dataclasses
import hashlib
import re
import uuid
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.errors import CanonicalJSONError, InvalidInputError
from reviewtrail.ledger import _fields
from reviewtrail.ledger._envelope import (
    GENESIS_HASH,
    PRIVACY_LEVELS,
    Envelope,
    chain_problems,
    compute_hash,
    encode_payload,
    format_time,
    header_of,
    may_hold_refs,
    new_id,
    record_problems,
    seal,
)
from reviewtrail.ledger._new_record import NewRecord

NOW = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
HEX = "ab" * 32


def _chain(*records: NewRecord) -> list[Envelope]:
    out: list[Envelope] = []
    prev = GENESIS_HASH
    for seq, record in enumerate(records, start=1):
        env = seal(record, seq=seq, prev_hash=prev, now=NOW)
        out.append(env)
        prev = env.hash
    return out


def _record(privacy: str = "private", **fields: object) -> NewRecord:
    return NewRecord.make(type="note@1", actor="tester", privacy=privacy, **fields)


def _resealed(env: Envelope, **changes: object) -> Envelope:
    """``env`` with fields changed and every hash recomputed, so only the change is wrong."""
    changed = dataclasses.replace(env, **changes)  # type: ignore[arg-type]
    payload_hash = hashlib.sha256(changed.payload).hexdigest()
    changed = dataclasses.replace(changed, payload_hash=payload_hash)
    return dataclasses.replace(changed, hash=compute_hash(changed.prev_hash, header_of(changed)))


# --- fixed values ------------------------------------------------------------------------


def test_genesis_prev_hash_is_64_zeros() -> None:
    assert GENESIS_HASH == "0000000000000000000000000000000000000000000000000000000000000000"
    [first, second] = _chain(_record(), _record())
    assert first.prev_hash == GENESIS_HASH
    assert second.prev_hash == first.hash


def test_a_chain_not_starting_at_genesis_is_reported() -> None:
    [env] = _chain(_record())
    moved = _resealed(env, prev_hash="1" + "0" * 63)
    assert list(chain_problems([moved])) == [
        f"ledger seq 1 ({env.id}): prevHash does not match the hash of seq 0",
    ]


def test_privacy_levels_and_their_order() -> None:
    assert PRIVACY_LEVELS == ("public-source", "private", "sensitive")


def test_hash_rule_known_vector() -> None:
    record = NewRecord(
        type="note@1", actor="a", privacy="sensitive", payload={"k": 1}, id="id-1", time=NOW, subject="s"
    )
    env = seal(record, seq=1, prev_hash=GENESIS_HASH, now=NOW)
    assert env.payload == b'{"k":1}'
    assert env.payload_hash == hashlib.sha256(b'{"k":1}').hexdigest()
    assert env.time == "2026-01-02T03:04:05.678901Z"
    header = (
        '{"actor":"a","id":"id-1","payloadHash":"' + env.payload_hash + '","prevHash":"' + GENESIS_HASH + '",'
        '"privacy":"sensitive","seq":1,"subject":"s","supersedes":null,"time":"2026-01-02T03:04:05.678901Z",'
        '"type":"note@1"}'
    )
    assert env.hash == hashlib.sha256(GENESIS_HASH.encode() + header.encode()).hexdigest()
    assert env.to_json() == {
        "seq": 1,
        "id": "id-1",
        "type": "note@1",
        "time": "2026-01-02T03:04:05.678901Z",
        "actor": "a",
        "privacy": "sensitive",
        "subject": "s",
        "supersedes": None,
        "payloadHash": env.payload_hash,
        "prevHash": GENESIS_HASH,
        "payload": {"k": 1},
        "hash": env.hash,
    }


def test_seal_uses_now_without_a_record_time_and_takes_given_payload_bytes() -> None:
    env = seal(_record(payload={"a": 1}), seq=3, prev_hash=HEX, now=NOW, payload=b'{"a":2}')
    assert (env.seq, env.prev_hash, env.time) == (3, HEX, "2026-01-02T03:04:05.678901Z")
    assert env.payload == b'{"a":2}'
    assert env.payload_value == {"a": 2}
    assert env.payload_json() == {"a": 2}


# --- record ids (UUIDv7) -----------------------------------------------------------------


def test_new_id_bit_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    ms = 0x0123456789AB
    monkeypatch.setattr(_fields.time, "time_ns", lambda: ms * 1_000_000 + 999_999)
    monkeypatch.setattr(_fields.os, "urandom", lambda n: bytes(range(1, n + 1)))
    rand = int.from_bytes(bytes(range(1, 11)), "big")
    value = new_id()
    assert value == "01234567-89ab-7" + f"{rand >> 68 & 0xFFF:03x}" + "-" + value[19:]
    parsed = uuid.UUID(value)
    assert parsed.version == 7
    assert parsed.variant == uuid.RFC_4122
    assert parsed.int >> 80 == ms
    assert parsed.int >> 64 & 0xFFF == rand >> 68 & 0xFFF
    assert parsed.int & (2**62 - 1) == rand & (2**62 - 1)
    assert value == "01234567-89ab-7010-8304-05060708090a"


def test_new_id_with_all_random_bits_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_fields.time, "time_ns", lambda: 0)
    monkeypatch.setattr(_fields.os, "urandom", lambda n: b"\xff" * n)
    assert new_id() == "00000000-0000-7fff-bfff-ffffffffffff"


def test_new_id_keeps_only_48_bits_of_milliseconds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_fields.time, "time_ns", lambda: (2**48 + 5) * 1_000_000)
    monkeypatch.setattr(_fields.os, "urandom", lambda n: b"\x00" * n)
    assert new_id() == "00000000-0005-7000-8000-000000000000"


@given(st.lists(st.integers(min_value=0, max_value=2**48 - 1), min_size=2, max_size=6, unique=True))
def test_ids_sort_by_creation_millisecond(stamps: list[int]) -> None:
    ids = {}
    for ms in stamps:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_fields.time, "time_ns", lambda ms=ms: ms * 1_000_000)
            ids[ms] = new_id()
    assert [ids[ms] for ms in sorted(stamps)] == sorted(ids.values())
    for value in ids.values():
        assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", value)


# --- record validation -------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["a@1", "cas.put@1", "a1.b-c_d@123456789", "trace.review-call@2"])
def test_good_type_names(kind: str) -> None:
    assert NewRecord.make(type=kind, actor="a", privacy="private").type == kind


@pytest.mark.parametrize("kind", ["a@0", "a@01", "a@1234567890", "A@1", "1a@1", "a..b@1", "a.@1", "a", "a@", "a@1 "])
def test_bad_type_names(kind: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        NewRecord.make(type=kind, actor="a", privacy="private")
    assert info.value.field == "type"
    assert f"{kind!r} is not 'name@version' (e.g. 'cas.put@1')" in str(info.value)


@pytest.mark.parametrize("field", ["actor", "id", "subject", "supersedes"])
@pytest.mark.parametrize("text", ["x", "x" * 1024, "a b", "é"])
def test_text_fields_accept_1_to_1024_printable_characters(field: str, text: str) -> None:
    fields = {"type": "a@1", "actor": "a", "privacy": "private", field: text}
    assert getattr(NewRecord.make(**fields), field) == text


@pytest.mark.parametrize("field", ["actor", "id", "subject", "supersedes"])
@pytest.mark.parametrize("text", ["", "x" * 1025, "a\nb", "\x00", "a\x7f", "\x1f"])
def test_text_fields_refuse_empty_long_or_control_text(field: str, text: str) -> None:
    fields = {"type": "a@1", "actor": "a", "privacy": "private", field: text}
    with pytest.raises(InvalidInputError) as info:
        NewRecord.make(**fields)
    assert info.value.field == field
    assert "value must be 1..1024 printable characters" in str(info.value)


def test_optional_text_fields_may_be_null() -> None:
    record = NewRecord.make(type="a@1", actor="a", privacy="private", subject=None, supersedes=None)
    assert (record.subject, record.supersedes, record.time) == (None, None, None)
    assert record.payload == {}


def test_unknown_privacy_and_extra_fields_are_refused() -> None:
    with pytest.raises(InvalidInputError) as info:
        NewRecord.make(type="a@1", actor="a", privacy="secret")
    assert info.value.field == "privacy"
    with pytest.raises(InvalidInputError) as info:
        NewRecord.make(type="a@1", actor="a", privacy="private", color="red")
    assert info.value.field == "color"


def test_format_time() -> None:
    east = timezone(timedelta(hours=2))
    assert format_time(datetime(2026, 1, 2, 5, 0, tzinfo=east)) == "2026-01-02T03:00:00.000000Z"
    with pytest.raises(InvalidInputError) as info:
        format_time(datetime(2026, 1, 2))
    assert str(info.value) == "time: must be timezone-aware"


# --- payloads and references -------------------------------------------------------------


def test_may_hold_refs_looks_for_a_size_key() -> None:
    assert may_hold_refs(b'{"size":1}')
    assert not may_hold_refs(b'{"sizes":1}')
    assert not may_hold_refs(b'{"a":"size"}')


def test_malformed_references_are_refused_when_encoding() -> None:
    with pytest.raises(InvalidInputError, match="malformed CAS reference"):
        encode_payload(_record(payload={"r": {"hash": "xyz", "size": 1}}))
    assert (
        encode_payload(_record(payload={"r": {"hash": HEX, "size": 0}}))
        == b'{"r":{"hash":"' + HEX.encode() + b'","size":0}}'
    )


def test_payload_that_is_not_json_names_the_payload() -> None:
    with pytest.raises(CanonicalJSONError) as info:
        encode_payload(_record(payload={"x": float("nan")}))
    assert info.value.field == "payload"


# --- verify: a sound chain, then each diagnostic on its own --------------------------------


@pytest.mark.parametrize("privacy", PRIVACY_LEVELS)
def test_a_sound_chain_has_no_problems_whatever_the_privacy(privacy: str) -> None:
    chain = _chain(_record(), _record(privacy=privacy, payload={"secret": "x"}), _record())
    assert list(chain_problems(chain)) == []
    assert [record_problems(env) for env in chain] == [[], [], []]


def test_a_memory_ledger_holding_a_sensitive_record_verifies() -> None:
    from reviewtrail.ledger import MemoryLedger

    ledger = MemoryLedger()
    ledger.append([_record(), _record(privacy="sensitive", payload={"token": "s3cret"}), _record()])
    assert [env.privacy for env in ledger.read()] == ["private", "sensitive", "private"]
    assert list(ledger.verify()) == []


def test_altered_payload_bytes() -> None:
    [env] = _chain(_record(payload={"a": 1}))
    bad = dataclasses.replace(env, payload=b'{"a":2}')
    assert record_problems(bad) == [f"ledger seq 1 ({env.id}): payload does not hash to payloadHash"]


def test_non_canonical_payload() -> None:
    [env] = _chain(_record(payload={"a": 1, "b": 2}))
    bad = _resealed(env, payload=b'{"b":2,"a":1}')
    assert record_problems(bad) == [f"ledger seq 1 ({env.id}): payload bytes are not canonical JSON"]


@pytest.mark.parametrize("payload", [b"{", b"\xff", b'{"a":NaN}', b"1e400"])
def test_payload_that_is_not_valid_json(payload: bytes) -> None:
    [env] = _chain(_record())
    bad = _resealed(env, payload=payload)
    assert record_problems(bad) == [f"ledger seq 1 ({env.id}): payload is not valid JSON"]


def test_bad_type() -> None:
    [env] = _chain(_record())
    bad = _resealed(env, type="Note@1")
    assert record_problems(bad) == [f"ledger seq 1 ({env.id}): type 'Note@1' is not 'name@version'"]


def test_bad_privacy() -> None:
    [env] = _chain(_record())
    bad = _resealed(env, privacy="secret")
    assert record_problems(bad) == [
        f"ledger seq 1 ({env.id}): privacy 'secret' is not one of public-source, private, sensitive"
    ]


def test_altered_header() -> None:
    [env] = _chain(_record())
    bad = dataclasses.replace(env, actor="someone else")
    assert record_problems(bad) == [f"ledger seq 1 ({env.id}): hash does not match the envelope"]


def test_header_that_cannot_be_hashed() -> None:
    [env] = _chain(_record())
    bad = dataclasses.replace(env, actor="\ud800")
    assert record_problems(bad) == [f"ledger seq 1 ({env.id}): hash does not match the envelope"]


def test_seq_gap() -> None:
    first, second, third = _chain(_record(), _record(), _record())
    assert list(chain_problems([first, third])) == [
        "ledger: expected seq 2, found 3 (gap or reorder)",
        f"ledger seq 3 ({third.id}): prevHash does not match the hash of seq 2",
    ]
    assert second.seq == 2


def test_chain_not_starting_at_one() -> None:
    _, second = _chain(_record(), _record())
    assert list(chain_problems([second])) == [
        "ledger: expected seq 1, found 2 (gap or reorder)",
        f"ledger seq 2 ({second.id}): prevHash does not match the hash of seq 1",
    ]


def test_duplicate_id() -> None:
    same = "0191c0de-0000-7000-8000-000000000001"
    chain = _chain(_record(id=same), _record(id=same), _record())
    assert list(chain_problems(chain)) == [f"ledger seq 2: id {same} used twice"]


def test_seq_count_resumes_after_a_gap() -> None:
    records = _chain(_record(), _record(), _record(), _record())
    problems = list(chain_problems([records[0], records[2], records[3]]))
    assert problems == [
        "ledger: expected seq 2, found 3 (gap or reorder)",
        f"ledger seq 3 ({records[2].id}): prevHash does not match the hash of seq 2",
    ]


def test_a_header_that_cannot_be_canonical_names_the_envelope() -> None:
    record = NewRecord(type="a@1", actor="\ud800", privacy="private")
    with pytest.raises(CanonicalJSONError) as info:
        seal(record, seq=1, prev_hash=GENESIS_HASH, now=NOW)
    assert info.value.field == "envelope"
    assert str(info.value).startswith("envelope: cannot be canonicalized")


def test_format_time_is_utc_whatever_the_local_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        east = timezone(timedelta(hours=2))
        assert format_time(datetime(2026, 1, 2, 5, 0, tzinfo=east)) == "2026-01-02T03:00:00.000000Z"
        assert format_time(NOW) == "2026-01-02T03:04:05.678901Z"
    finally:
        monkeypatch.undo()
        time.tzset()
