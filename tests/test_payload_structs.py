"""One model per record payload: the trace records, the CAS references and the record to append
are msgspec models (``reviewtrail._struct``), the only implementation of their rules. On generated
input, what each model accepts and what it refuses (naming the field path and the problem), and
the record catalog taking msgspec and pydantic models alike."""

from __future__ import annotations

import copy
import importlib.util
import re
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail import app
from reviewtrail._struct import PayloadStruct
from reviewtrail.cas import CasObjectRef, CasRef, refs_in
from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger import NewRecord, RecordCatalog, RecordPayload, record_type
from reviewtrail.tracing.custody._call_record import ReviewCallRecord, SaveBegunRecord

CALL, BEGUN = "trace.review-call@1", "trace.save-begun@1"
HEX = "0123456789abcdef" * 4
TOKEN = HEX[:32]
REF = {"pool": "agent-state", "digest": "sha256:" + HEX, "size": 12, "mediaType": "text/markdown"}
DIGEST = {"sha256": HEX, "size": 3}
FULL_CALL: dict[str, Any] = {
    "skill": "bench",
    "run_id": "2026-01-02_run01",
    "trace_path": ".aris/traces/bench/2026-01-02_run01/",
    "meta": {"call_number": 1, "purpose": "round", "score": 0.5, "error": None, "files": ["a.py"], "n": {"x": [1]}},
    "prompt": dict(REF),
    "response": dict(REF),
    "files": {"001-round.meta.json": dict(DIGEST), "run.meta.json": dict(DIGEST)},
    "event": dict(DIGEST),
    "recovered": True,
    "save": TOKEN,
    "origin": HEX[32:],
}
OPTIONAL = ("prompt", "response", "files", "event", "recovered", "save", "origin")


def check(type_: str, payload: Any) -> None:
    app.catalog().validate(type_, payload)


@st.composite
def valid_calls(draw: st.DrawFn) -> dict[str, Any]:
    payload = copy.deepcopy(FULL_CALL)
    for name in OPTIONAL:
        if draw(st.booleans()):
            del payload[name]
    payload["skill"] = draw(st.text(max_size=8))
    payload["meta"]["free"] = draw(st.recursive(st.none() | st.booleans() | st.integers(-9, 9) | st.text(max_size=4),
                                                lambda inner: st.lists(inner, max_size=3)
                                                | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                                                max_leaves=8))  # fmt: skip
    return payload


@given(valid_calls())
def test_a_valid_trace_payload_is_accepted_and_decoded_as_written(payload: dict[str, Any]) -> None:
    check(CALL, payload)
    decoded = msgspec.json.decode(msgspec.json.encode(payload), type=ReviewCallRecord)
    written = decoded.payload_json()
    assert {k: v for k, v in written.items() if v is not None} == payload
    assert decoded.prompt is None or type(decoded.prompt) is CasRef


# Each place a payload can be broken, and values that break it there (each one surely wrong).
NOT_TEXT = st.one_of(st.integers(), st.booleans(), st.none(), st.lists(st.text(max_size=2), max_size=2))
NOT_OBJECT = st.one_of(st.integers(), st.booleans(), st.text(max_size=3), st.lists(st.integers(), max_size=2))
NOT_SIZE = st.one_of(st.integers(max_value=-1), st.booleans(), st.just(1.5), st.text(max_size=2), st.none())
NOT_TOKEN = st.one_of(st.text(max_size=40).filter(lambda s: re.fullmatch("[0-9a-f]{32}", s) is None), st.integers())
BROKEN: list[tuple[tuple[str, ...], st.SearchStrategy[Any]]] = [
    (("skill",), NOT_TEXT),
    (("run_id",), NOT_TEXT),
    (("trace_path",), NOT_TEXT),
    (("meta",), NOT_OBJECT),
    (("prompt", "pool"), st.sampled_from(["Data", "", "agent_state", 1])),
    (("prompt", "digest"), st.sampled_from([HEX, "sha256:" + HEX.upper(), "sha256:", 3])),
    (("prompt", "size"), NOT_SIZE),
    (("prompt", "mediaType"), st.sampled_from(["text", "text/", 1, None])),
    (("response",), NOT_OBJECT),
    (("files", "run.meta.json", "sha256"), st.sampled_from([HEX.upper(), HEX[:-1], 1])),
    (("files", "run.meta.json", "size"), NOT_SIZE),
    (("event", "size"), NOT_SIZE),
    (("recovered",), st.one_of(st.integers(), st.text(max_size=3))),
    (("save",), NOT_TOKEN),
    (("origin",), NOT_TOKEN),
]


@given(st.sampled_from(BROKEN).flatmap(lambda b: st.tuples(st.just(b[0]), b[1])))
def test_a_trace_payload_broken_in_one_place_is_refused_naming_that_place(case: tuple[tuple[str, ...], Any]) -> None:
    place, value = case
    payload = copy.deepcopy(FULL_CALL)
    here = payload
    for key in place[:-1]:
        here = here[key]
    here[place[-1]] = value
    with pytest.raises(InvalidInputError) as info:
        check(CALL, payload)
    assert info.value.field == ".".join(("payload", *place)), str(info.value)
    assert str(info.value).endswith(f"(record type {CALL})")


@given(st.sampled_from(["extra", "prompt.extra", "event.extra", "files.run.meta.json.extra"]))
def test_an_unknown_field_is_refused_naming_it(where: str) -> None:
    payload = copy.deepcopy(FULL_CALL)
    *parents, last = ["files", "run.meta.json", "extra"] if where.startswith("files") else where.split(".")
    here = payload
    for key in parents:
        here = here[key]
    here[last] = 1
    with pytest.raises(InvalidInputError) as info:
        check(CALL, payload)
    assert str(info.value) == f"payload.{where}: Extra inputs are not permitted (record type {CALL})"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"save": TOKEN, "skill": "s"}, "payload.purpose: Field required"),
        ({"save": TOKEN.upper(), "skill": "s", "purpose": "p"}, "payload.save: String should match pattern"),
        ({"save": TOKEN, "skill": True, "purpose": "p"}, "payload.skill: Input should be a valid string"),
        ([], "payload: Input should be a valid dictionary"),
    ],
)
def test_save_begun_refusals_name_the_field_and_the_problem(payload: Any, message: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        check(BEGUN, payload)
    assert str(info.value).startswith(message)


def test_a_payload_nested_too_deeply_is_refused_naming_it() -> None:
    deep: list[Any] = []
    here = deep
    for _ in range(100_000):
        here.append([])
        here = here[0]
    with pytest.raises(InvalidInputError) as info:
        check(CALL, {**FULL_CALL, "meta": {"deep": deep}})
    assert str(info.value) == "payload: nested too deeply to check"


def test_refusals_keep_pydantics_words() -> None:
    base = {k: FULL_CALL[k] for k in ("skill", "run_id", "trace_path", "meta")}
    cases = [
        (
            {"files": {"a": {"sha256": HEX, "size": -1}}},
            "payload.files.a.size",
            "Input should be greater than or equal to 0",
        ),
        ({"event": {"sha256": HEX, "size": True}}, "payload.event.size", "must be an integer, not a boolean"),
        ({"recovered": 1}, "payload.recovered", "must be a boolean (true or false), not an integer"),
        ({"prompt": {**REF, "pool": "x"}}, "payload.prompt.pool", "Input should be 'data' or 'agent-state'"),
        (
            {"prompt": {**REF, "digest": "x"}},
            "payload.prompt.digest",
            "Value error, digest: 'x' must start with 'sha256:'",
        ),
        ({"prompt": {"hash": HEX, "size": 1}}, "payload.prompt.hash", "Extra inputs are not permitted"),
    ]
    for change, field, words in cases:
        with pytest.raises(InvalidInputError) as info:
            check(CALL, {**base, **change})
        assert (info.value.field, str(info.value)) == (field, f"{field}: {words} (record type {CALL})")


# --- the record to append -----------------------------------------------------------------

TEXTS = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["a@1", "cas.put@1", "x-y_z.w@123456789", "A@1", "a@0", "a@1234567890", ""]),
    st.sampled_from(["x" * 1024, "x" * 1025]),
    st.sampled_from(["tab\there", "nl\n", "del\x7f", "é@1", "ok\u2028"]),
)
VALUES = st.one_of(TEXTS, st.none(), st.booleans(), st.integers(-2, 2), st.just(["a@1"]))


def _text_ok(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= 1024 and re.search(r"[\x00-\x1f\x7f]", value) is None


def _first_problem(fields: dict[str, Any]) -> str | None:
    """The rules of a record, restated: the first field that breaks one (None: all kept)."""
    kind = fields["type"]
    if not isinstance(kind, str) or re.fullmatch(r"[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*@[1-9][0-9]{0,8}", kind) is None:
        return "type"
    for name in ("actor", "id"):
        if name in fields and not _text_ok(fields[name]):
            return name
    if fields["privacy"] not in ("public-source", "private", "sensitive"):
        return "privacy"
    for name in ("subject", "supersedes"):
        if fields.get(name) is not None and not _text_ok(fields[name]):
            return name
    return None


@st.composite
def record_fields(draw: st.DrawFn) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "type": draw(st.one_of(st.just("a@1"), VALUES)),
        "actor": draw(st.one_of(st.just("me"), VALUES)),
        "privacy": draw(st.one_of(st.sampled_from(["public-source", "private", "sensitive"]), VALUES)),
    }
    for name in ("subject", "supersedes", "id"):
        if draw(st.booleans()):
            fields[name] = draw(VALUES)
    if draw(st.booleans()):
        fields["time"] = draw(st.one_of(st.none(), st.just(datetime(2026, 1, 2, tzinfo=UTC)), st.just("2026-01-02")))
    return fields


@given(record_fields())
def test_a_record_is_made_exactly_when_it_keeps_the_rules(fields: dict[str, Any]) -> None:
    bad = _first_problem(fields)
    if bad is None and isinstance(fields.get("time"), str):
        bad = "time"
    if bad is None:
        record = NewRecord.make(**fields)
        assert {k: getattr(record, k) for k in fields} == fields
        assert NewRecord(**fields) == record if "id" in fields else True
        return
    for make in (NewRecord.make, NewRecord):
        with pytest.raises(InvalidInputError) as info:
            make(**fields)
        assert info.value.field == bad


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"type": "A", "actor": "me", "privacy": "private"}, "type: 'A' is not 'name@version' (e.g. 'cas.put@1')"),
        ({"type": "a@1", "actor": "", "privacy": "private"}, "actor: value must be 1..1024 printable characters"),
        (
            {"type": "a@1", "actor": "me", "privacy": "open"},
            "privacy: Input should be 'public-source', 'private' or 'sensitive'",
        ),
        ({"type": "a@1", "actor": "me"}, "privacy: Field required"),
        ({"type": "a@1", "actor": "me", "privacy": "private", "seq": 1}, "seq: Extra inputs are not permitted"),
    ],
)
def test_a_refused_record_names_the_field_and_the_problem(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        NewRecord.make(**fields)
    assert str(info.value) == message


def test_a_record_is_frozen_compared_and_pickled() -> None:
    import pickle

    when = datetime(2026, 1, 2, tzinfo=UTC)
    record = NewRecord(type="a@1", actor="me", privacy="private", payload={"n": 1}, id="i1", time=when)
    assert record == NewRecord(type="a@1", actor="me", privacy="private", payload={"n": 1}, id="i1", time=when)
    assert record != NewRecord(type="a@1", actor="me", privacy="private", payload={"n": 2}, id="i1", time=when)
    assert pickle.loads(pickle.dumps(record)) == record
    with pytest.raises(AttributeError):
        record.actor = "other"  # type: ignore[misc]
    bare = NewRecord.model_construct(type="a@1", actor="a\ud800", privacy="private")
    assert (bare.actor, bare.subject, bare.payload, bare.time) == ("a\ud800", None, {}, None)


# --- CAS references -----------------------------------------------------------------------


@given(
    st.one_of(st.integers(-3, 2**60), st.booleans(), st.floats(allow_nan=False), st.none(), st.text(max_size=2)),
    st.one_of(st.sampled_from([HEX, HEX.upper(), HEX[:-1], "sha256:" + HEX]), st.text(max_size=4)),
)
def test_a_reference_is_found_exactly_when_its_fields_keep_the_rules(size: Any, hash_: Any) -> None:
    size_ok = type(size) is int and size >= 0
    hash_ok = isinstance(hash_, str) and re.fullmatch("[0-9a-f]{64}", hash_) is not None
    ok = size_ok and hash_ok
    value = {"hash": hash_, "size": size}
    if ok:
        assert refs_in([value]) == [CasObjectRef(hash=hash_, size=size)]
        return
    with pytest.raises(InvalidInputError) as info:
        refs_in([value])
    # the first field refused in decoding order: a value of the wrong kind or out of range, then
    # the model's own rules (the address)
    assert info.value.field == ("size" if not size_ok else "hash")
    assert str(info.value).startswith(f"{info.value.field}: malformed CAS reference {value!r}: ")
    with pytest.raises(InvalidInputError):
        CasObjectRef(hash=hash_, size=size)


# --- the catalog and the published schemas ----------------------------------------------------


def test_the_catalog_takes_msgspec_and_pydantic_models_alike() -> None:
    @record_type("test.struct@1")
    class Note(PayloadStruct, frozen=True):
        """A note."""

        text: str
        count: int = 0

    @record_type("test.model@1")
    class Old(RecordPayload):
        text: str

    catalog = RecordCatalog([Note, Old], builtins=False)
    catalog.validate("test.struct@1", {"text": "x"})
    catalog.validate("test.model@1", {"text": "x"})
    for type_ in ("test.struct@1", "test.model@1"):
        with pytest.raises(InvalidInputError) as info:
            catalog.validate(type_, {"text": 1})
        assert str(info.value) == f"payload.text: Input should be a valid string (record type {type_})"
    schemas = catalog.schemas()
    assert schemas["test.struct@1"] == {
        "additionalProperties": False,
        "description": "A note.",
        "properties": {
            "count": {"default": 0, "title": "Count", "type": "integer"},
            "text": {"title": "Text", "type": "string"},
        },
        "required": ["text"],
        "title": "Note",
        "type": "object",
    }
    assert schemas["test.model@1"]["properties"] == {"text": {"title": "Text", "type": "string"}}


@given(valid_calls())
def test_every_payload_the_model_accepts_the_published_schema_accepts(payload: dict[str, Any]) -> None:
    from jsonschema import Draft202012Validator

    Draft202012Validator(app.payload_schemas()[CALL]).validate(payload)


def test_the_trace_and_reference_models_are_msgspec_models_and_their_twins_are_gone() -> None:
    for model in (ReviewCallRecord, SaveBegunRecord, CasRef, CasObjectRef, NewRecord):
        assert issubclass(model, msgspec.Struct)
    for twin in ("reviewtrail.tracing.custody._payload_checks", "reviewtrail.ledger.records._new_record_model"):
        assert importlib.util.find_spec(twin) is None


# --- the key records ---------------------------------------------------------------------------


@given(st.binary(min_size=0, max_size=40), st.booleans(), st.text(min_size=0, max_size=3))
def test_a_key_declaration_is_accepted_exactly_when_its_key_is_its_id(raw: bytes, own_id: bool, name: str) -> None:
    import base64
    import hashlib

    key_id = hashlib.sha256(raw).hexdigest() if own_id else "0" * 64
    public_key = base64.b64encode(raw).decode()
    payload = {"alg": "ed25519", "keyId": key_id, "publicKey": public_key, "name": name}
    # the fields in order, each against its own constraints, then the rule across them
    problem = None
    if len(public_key) != 44:
        most = "at least" if len(public_key) < 44 else "at most"
        problem = f"payload.publicKey: String should have {most} 44 characters"
    elif not name:
        problem = "payload.name: String should have at least 1 character"
    elif len(raw) != 32:
        problem = "payload: Value error, publicKey must be the base64 of a 32-byte Ed25519 public key"
    elif not own_id:
        problem = "payload: Value error, keyId must be the SHA-256 (hex) of the public key's 32 bytes"
    if problem is None:
        check("store.key.declared@1", payload)
        return
    with pytest.raises(InvalidInputError) as info:
        check("store.key.declared@1", payload)
    assert str(info.value) == f"{problem} (record type store.key.declared@1)"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"keyId": "A" * 64, "reason": "r"}, "payload.keyId: String should match pattern '^[0-9a-f]{64}$'"),
        ({"keyId": "a" * 64, "reason": ""}, "payload.reason: String should have at least 1 character"),
        ({"key_id": "a" * 64, "reason": "r"}, "payload.key_id: Extra inputs are not permitted"),
    ],
)
def test_a_key_revocation_refusal_names_the_wire_field(payload: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        check("store.key.revoked@1", payload)
    assert str(info.value) == f"{message} (record type store.key.revoked@1)"
