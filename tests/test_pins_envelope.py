"""The ledger envelope's fixed values and each verify diagnostic, one at a time."""

from __future__ import annotations

import hashlib
import re
import uuid
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.errors import CanonicalJSONError, InvalidInputError
from reviewtrail.ledger.records import _fields
from reviewtrail.ledger.records._envelope import (
    GENESIS_HASH,
    Envelope,
    chain_problems,
    compute_hash,
    encode_payload,
    format_time,
    header_of,
    may_hold_refs,
    record_problems,
    seal,
)
from reviewtrail.ledger.records._fields import PRIVACY_LEVELS, new_id
from reviewtrail.ledger.records._new_record import NewRecord

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
    changed = env.replace(**changes)  # type: ignore[arg-type]
    payload_hash = hashlib.sha256(changed.payload).hexdigest()
    changed = changed.replace(payload_hash=payload_hash)
    return changed.replace(hash=compute_hash(changed.prev_hash, header_of(changed)))


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
    bad = env.replace(payload=b'{"a":2}')
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
    bad = env.replace(actor="someone else")
    assert record_problems(bad) == [f"ledger seq 1 ({env.id}): hash does not match the envelope"]


def test_header_that_cannot_be_hashed() -> None:
    [env] = _chain(_record())
    bad = env.replace(actor="\ud800")
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


# --- the fast paths: plain payloads, header hashes and batches ------------------------------

SAFE = 2**53 - 1
PREV = "cd" * 32
PAYLOAD_HASH = "ef" * 32


def _refuse(*args: object, **kwargs: object) -> None:
    raise AssertionError("the general path was taken")


@pytest.mark.parametrize(
    ("value", "plain"),
    [
        ({}, True),
        ({"a": "x", "b": None, "c": True, "d": 0}, True),
        ({"a": SAFE, "b": -SAFE}, True),
        ({"\ud7ff": 1, "é": 2}, True),
        ({"\ud800": 1}, False),
        ({"x\U0001f600": 1}, False),
        ({1: "x"}, False),
    ],
)
def test_flat_payloads_are_judged_without_the_general_walk(
    value: dict[object, object], plain: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewtrail.ledger.records import _envelope

    monkeypatch.setattr(_envelope, "is_plain", _refuse)
    assert _envelope._plain(value) is plain


@pytest.mark.parametrize(
    ("value", "plain"),
    [
        ([1, "a"], True),
        ({"a": [1.5]}, False),
        ({"a": {"b": 1}}, True),
        (1.5, False),
        ({"a": SAFE + 1}, False),
        ({"a": -SAFE - 1}, False),
        ({"a": 1.5}, False),
    ],
)
def test_nested_payloads_are_left_to_the_general_walk(value: object, plain: bool) -> None:
    from reviewtrail.ledger.records import _envelope

    assert _envelope._plain(value) is plain


def test_the_plain_encoder_refuses_what_is_not_plain() -> None:
    from reviewtrail.ledger.records import _envelope

    with pytest.raises(TypeError, match=r"^object is not a plain JSON value$"):
        "".join(_envelope._PLAIN_ENCODE({"a": object()}, 0))


@pytest.mark.parametrize(
    ("payload", "body"),
    [
        ({"b": 1, "a": "é\n", "c": None}, '{"a":"é\\n","b":1,"c":null}'.encode()),
        ({"k": [True, {"z": -SAFE}]}, b'{"k":[true,{"z":-9007199254740991}]}'),
        ({}, b"{}"),
    ],
)
def test_plain_payloads_are_encoded_without_canonical_json(
    payload: dict[str, object], body: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewtrail.ledger.records import _envelope

    monkeypatch.setattr(_envelope, "canonical_json", _refuse)
    record = _record(payload=payload)
    assert encode_payload(record) == body
    monkeypatch.setattr(_envelope, "encode_payload", _refuse)
    assert _envelope.encode_payloads([record, _record(payload={"n": 2})]) == [body, b'{"n":2}']


def test_a_batch_of_payloads_checks_each_for_references() -> None:
    from reviewtrail.ledger.records import _envelope

    good = {"ref": {"hash": HEX, "size": 1}}
    assert _envelope.encode_payloads([_record(payload=good)]) == [f'{{"ref":{{"hash":"{HEX}","size":1}}}}'.encode()]
    for bad in (
        {"size": {"hash": "xyz", "size": 1}},
        {"a": {"hash": "xyz", "size": 1}},
        {"size": 1.5, "x": {"hash": "x", "size": 0}},
    ):
        with pytest.raises(InvalidInputError) as info:
            _envelope.encode_payloads([_record(payload={"n": 1}), _record(payload=bad)])
        assert info.value.field == "hash"
        with pytest.raises(InvalidInputError):
            encode_payload(_record(payload=bad))


def _env(**changes: object) -> Envelope:
    fields: dict[str, object] = {
        "seq": 1,
        "id": "i",
        "type": "t@1",
        "time": "T",
        "actor": "a",
        "privacy": "private",
        "subject": None,
        "supersedes": None,
        "payload": b"{}",
        "payload_hash": PAYLOAD_HASH,
        "prev_hash": PREV,
        "hash": "",
    }
    return Envelope(**{**fields, **changes})  # type: ignore[arg-type]


def _sha(header: str) -> str:
    return hashlib.sha256((PREV + header).encode()).hexdigest()


def _header(seq: str = "1", subject: str = "null", supersedes: str = "null", actor: str = '"a"') -> str:
    return (
        f'{{"actor":{actor},"id":"i","payloadHash":"{PAYLOAD_HASH}","prevHash":"{PREV}","privacy":"private",'
        f'"seq":{seq},"subject":{subject},"supersedes":{supersedes},"time":"T","type":"t@1"}}'
    )


@pytest.mark.parametrize(
    ("changes", "header"),
    [
        ({}, _header()),
        ({"seq": SAFE}, _header(seq="9007199254740991")),
        ({"seq": -SAFE}, _header(seq="-9007199254740991")),
        ({"subject": "s\u00e9"}, _header(subject='"s\u00e9"')),
        ({"supersedes": "p"}, _header(supersedes='"p"')),
        ({"subject": "s", "supersedes": "p"}, _header(subject='"s"', supersedes='"p"')),
    ],
)
def test_envelope_hash_of_sealed_types_is_written_directly(
    changes: dict[str, object], header: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewtrail.ledger.records import _envelope

    monkeypatch.setattr(_envelope, "compute_hash", _refuse)
    assert _envelope.envelope_hash(_env(**changes)) == _sha(header)


@pytest.mark.parametrize(
    ("changes", "header"),
    [
        ({"seq": True}, _header(seq="true")),
        ({"actor": 5}, _header(actor="5")),
        ({"subject": 2}, _header(subject="2")),
        ({"supersedes": 3}, _header(supersedes="3")),
    ],
)
def test_envelope_hash_of_other_types_is_the_canonical_one(changes: dict[str, object], header: str) -> None:
    from reviewtrail.ledger.records import _envelope

    assert _envelope.envelope_hash(_env(**changes)) == _sha(header)


@pytest.mark.parametrize(
    "changes",
    [
        {"seq": SAFE + 1},
        {"seq": -SAFE - 1},
        {"actor": object()},
        {"subject": object()},
        {"supersedes": object()},
        {"time": "\ud800"},
        {"prev_hash": None},
    ],
)
def test_envelope_hash_is_none_for_a_header_no_record_has(changes: dict[str, object]) -> None:
    from reviewtrail.ledger.records import _envelope

    assert _envelope.envelope_hash(_env(**changes)) is None


def test_stored_problem_names_each_fault() -> None:
    from reviewtrail.ledger.records._envelope import stored_problem

    [env] = _chain(_record(id="r-1"))
    assert stored_problem(env) is None
    assert stored_problem(env.replace(payload=b"{ }")) == "ledger seq 1 (r-1): payload does not hash to payloadHash"
    assert stored_problem(_resealed(env, type=1)) == "ledger seq 1 (r-1): type 1 is not 'name@version'"
    assert stored_problem(_resealed(env, type="A@1")) == "ledger seq 1 (r-1): type 'A@1' is not 'name@version'"
    assert stored_problem(_resealed(env, privacy="secret")) == (
        "ledger seq 1 (r-1): privacy 'secret' is not one of public-source, private, sensitive"
    )
    assert stored_problem(env.replace(actor="b")) == "ledger seq 1 (r-1): hash does not match the envelope"


def test_record_problems_keeps_the_parsed_payload() -> None:
    [env] = _chain(_record(payload={"k": [1, "x"]}))
    assert "payload_value" not in env.__dict__
    assert record_problems(env) == []
    assert env.__dict__["payload_value"] == {"k": [1, "x"]}


def test_seal_takes_the_record_time_subject_and_supersedes() -> None:
    record = _record(time=datetime(2025, 5, 6, 7, 8, 9, 10, tzinfo=UTC), subject="s", supersedes="p")
    env = seal(record, seq=2, prev_hash=HEX, now=NOW, now_text="ignored")
    assert (env.time, env.subject, env.supersedes) == ("2025-05-06T07:08:09.000010Z", "s", "p")


def test_chain_problems_after_a_given_record() -> None:
    first, second, third = _chain(_record(), _record(), _record())
    assert list(chain_problems([second, third], after=(1, first.hash))) == []
    assert list(chain_problems([third], after=(1, first.hash))) == [
        "ledger: expected seq 2, found 3 (gap or reorder)",
        f"ledger seq 3 ({third.id}): prevHash does not match the hash of seq 2",
    ]
    assert list(chain_problems([second], after=(1, "f" * 64))) == [
        f"ledger seq 2 ({second.id}): prevHash does not match the hash of seq 1"
    ]


def test_chain_problems_with_the_repeated_ids_given() -> None:
    chain = _chain(_record(id="x"), _record(id="x"))
    assert list(chain_problems(chain, repeated_ids={})) == []
    assert list(chain_problems(chain, repeated_ids={2: "x"})) == ["ledger seq 2: id x used twice"]
    assert list(chain_problems(chain, repeated_ids={1: "y"})) == ["ledger seq 1: id y used twice"]


class _Slotted:
    """A record that keeps its fields in slots, not in a ``__dict__``."""

    __slots__ = ("actor", "id", "privacy", "subject", "supersedes", "time", "type")

    def __init__(
        self, id: str, actor: str = "tester", subject: str | None = None, supersedes: str | None = None
    ) -> None:
        self.id, self.type, self.actor, self.privacy = id, "note@1", actor, "private"
        self.subject, self.supersedes, self.time = subject, supersedes, None


def _sealed_one_by_one(records: list[object], payloads: list[bytes], seq: int, prev: str) -> list[Envelope]:
    out = []
    for record, body in zip(records, payloads, strict=True):
        seq += 1
        env = seal(record, seq=seq, prev_hash=prev, now=NOW, payload=body)  # type: ignore[arg-type]
        out.append(env)
        prev = env.hash
    return out


def test_seal_chain_equals_sealing_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewtrail.ledger.records import _envelope

    later = datetime(2025, 1, 1, tzinfo=UTC)
    records: list[object] = [
        _record(id="r1", payload={"a": 1}),
        _record(id="r2", subject="s\u00e9", supersedes="r1", time=later),
        _record(id="r3", privacy="sensitive", supersedes="old"),
        _record(id="r4", time=later),
    ]
    payloads = [b'{"a":1}', b"{}", b"[]", b'"x"']
    expected = _sealed_one_by_one(records, payloads, 7, "1" * 64)
    columns: list[object] = []
    monkeypatch.setattr(_envelope, "seal", _refuse)
    got = _envelope.seal_chain(records, payloads, seq=7, prev_hash="1" * 64, now=NOW, existing={"old"}, columns=columns)  # type: ignore[arg-type]
    assert got == expected
    assert [e.seq for e in got] == [8, 9, 10, 11]
    assert got[1].time == "2025-01-01T00:00:00.000000Z"
    assert got[0].time == "2026-01-02T03:04:05.678901Z"
    assert columns[:12] == [
        8,
        "r1",
        "note@1",
        "2026-01-02T03:04:05.678901Z",
        "tester",
        "private",
        None,
        None,
        b'{"a":1}',
        hashlib.sha256(b'{"a":1}').hexdigest(),
        "1" * 64,
        got[0].hash,
    ]
    assert len(columns) == 48
    assert columns[-1] == got[-1].hash


def test_seal_chain_reads_records_without_a_dict_and_mixed_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewtrail.ledger.records import _envelope

    for records in ([_Slotted("s1"), _Slotted("s2", subject="x")], [_record(id="m1"), _Slotted("m2", supersedes="m1")]):
        payloads = [b"{}", b"{}"]
        expected = _sealed_one_by_one(list(records), payloads, 0, GENESIS_HASH)
        with monkeypatch.context() as patch:
            patch.setattr(_envelope, "seal", _refuse)
            assert _envelope.seal_chain(records, payloads, seq=0, prev_hash=GENESIS_HASH, now=NOW) == expected  # type: ignore[arg-type]


def test_seal_chain_refusals() -> None:
    from reviewtrail.ledger.records import _envelope

    with pytest.raises(ValueError, match="zip"):
        _envelope.seal_chain([_record(), _record()], [b"{}"], seq=0, prev_hash=GENESIS_HASH, now=NOW)
    later_first = [_Slotted("a", supersedes="b"), _Slotted("b")]
    with pytest.raises(InvalidInputError) as info:
        _envelope.seal_chain(later_first, [b"{}", b"{}"], seq=5, prev_hash=GENESIS_HASH, now=NOW)  # type: ignore[arg-type]
    assert str(info.value) == "supersedes: no earlier record with id 'b'"
    with pytest.raises(CanonicalJSONError) as canonical:
        _envelope.seal_chain([_Slotted("a", actor="\ud800")], [b"{}"], seq=0, prev_hash=HEX, now=NOW)  # type: ignore[arg-type]
    assert (
        str(canonical.value)
        == "envelope: cannot be canonicalized (surrogates not allowed); lone surrogates are not allowed"
    )
