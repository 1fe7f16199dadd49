"""CAS references are checked with plain Python (no pydantic when they are valid); the pydantic
models they replaced (``cas/_ref_models.py``, unchanged) still word every refusal and describe a
reference inside a payload model. On generated values, making a reference, ``model_validate``,
``refs_in`` and a payload model holding references agree with the models: the same values, or the
same refusal; JSON Schemas and dumps are the models'."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from reviewtrail.cas import CasObjectRef, CasRef, refs_in
from reviewtrail.cas import _ref_models as models
from reviewtrail.errors import InvalidInputError

HEX = "0123456789abcdef" * 4
DIGEST = "sha256:" + HEX


class Text(str):
    """A str subclass: pydantic gives back a plain str."""


STRINGS = st.one_of(
    st.sampled_from([HEX, DIGEST, HEX.upper(), HEX[:-1], HEX + "\n", "sha256:" + HEX.upper(), "sha256:", ""]),
    st.sampled_from(["data", "agent-state", "legacy", "Data", "text/plain", "text/markdown", "application/json"]),
    st.sampled_from(['text/plain; charset="utf-8"', "text/plain;charset=utf-8", "text", "text/", "a/b\n", "é/b"]),
    st.builds(Text, st.sampled_from([HEX, DIGEST, "data", "text/plain"])),
    st.text(max_size=8),
)
VALUES = st.one_of(
    STRINGS,
    st.integers(-2, 2**64),
    st.booleans(),
    st.none(),
    st.just(1.0),
    st.just(b"data"),
    st.just([HEX]),
)


@st.composite
def object_ref_fields(draw: st.DrawFn) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        fields["hash"] = draw(st.one_of(st.just(HEX), VALUES))
    if draw(st.integers(0, 9)):
        fields["size"] = draw(st.one_of(st.integers(0, 2**40), VALUES))
    if draw(st.integers(0, 9)) == 0:
        fields[draw(st.sampled_from(["pool", "digest", "extra"]))] = draw(VALUES)
    return fields


@st.composite
def typed_ref_fields(draw: st.DrawFn) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        fields["pool"] = draw(st.one_of(st.sampled_from(["data", "agent-state"]), VALUES))
    if draw(st.integers(0, 9)):
        fields["digest"] = draw(st.one_of(st.just(DIGEST), VALUES))
    if draw(st.integers(0, 9)):
        fields["size"] = draw(st.one_of(st.integers(0, 2**40), VALUES))
    for key in ("mediaType", "media_type"):
        if draw(st.integers(0, 2)) == 0:
            fields[key] = draw(st.one_of(st.sampled_from(["text/plain", "text/markdown"]), VALUES))
    if draw(st.integers(0, 9)) == 0:
        fields[draw(st.sampled_from(["hash", "extra"]))] = draw(VALUES)
    return fields


def _values(ref: Any, names: tuple[str, ...]) -> dict[str, Any]:
    return {name: (type(getattr(ref, name)), getattr(ref, name)) for name in names}


def _outcome(make: Any, names: tuple[str, ...]) -> tuple[str, Any]:
    try:
        ref = make()
    except ValidationError as exc:
        return "refused", str(exc)
    except InvalidInputError as exc:
        return "refused", (str(exc), exc.field)
    return "made", _values(ref, names)


def _old_refs_in(model: type[BaseModel], item: dict[str, Any]) -> BaseModel:
    """``refs_in``'s check of one reference, as it was (on the model)."""
    try:
        return model.model_validate(item)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "ref"
        raise InvalidInputError(f"malformed CAS reference {item!r}: {first['msg']}", field=loc) from exc


@given(object_ref_fields())
def test_an_object_reference_agrees_with_its_model(fields: dict[str, Any]) -> None:
    names = CasObjectRef.FIELDS
    assert _outcome(lambda: CasObjectRef(**fields), names) == _outcome(lambda: models.CasObjectRef(**fields), names)
    assert _outcome(lambda: CasObjectRef.model_validate(fields), names) == _outcome(
        lambda: models.CasObjectRef.model_validate(fields), names
    )
    if fields.keys() == {"hash", "size"}:
        assert _outcome(lambda: refs_in({"x": [fields]})[0], names) == _outcome(
            lambda: _old_refs_in(models.CasObjectRef, fields), names
        )


@given(typed_ref_fields())
def test_a_typed_reference_agrees_with_its_model(fields: dict[str, Any]) -> None:
    names = CasRef.FIELDS
    assert _outcome(lambda: CasRef(**fields), names) == _outcome(lambda: models.CasRef(**fields), names)
    assert _outcome(lambda: CasRef.model_validate(fields), names) == _outcome(
        lambda: models.CasRef.model_validate(fields), names
    )
    if fields.keys() == {"pool", "digest", "size", "mediaType"}:
        assert _outcome(lambda: refs_in([{"k": fields}])[0], names) == _outcome(
            lambda: _old_refs_in(models.CasRef, fields), names
        )


class Holder(BaseModel):
    """A payload model holding references (as trace, model-call and evidence records do)."""

    ref: CasRef
    maybe: CasRef | None = None
    bare: list[CasObjectRef] = []


class OldHolder(BaseModel):
    ref: models.CasRef
    maybe: models.CasRef | None = None
    bare: list[models.CasObjectRef] = []


@st.composite
def holder_docs(draw: st.DrawFn) -> dict[str, Any]:
    doc: dict[str, Any] = {"ref": draw(typed_ref_fields())}
    if draw(st.booleans()):
        doc["maybe"] = draw(st.one_of(st.none(), typed_ref_fields()))
    if draw(st.booleans()):
        doc["bare"] = draw(st.lists(object_ref_fields(), max_size=2))
    return doc


def _holder(model: type[BaseModel], doc: dict[str, Any], *, as_json: bool) -> tuple[str, Any]:
    try:
        held = model.model_validate_json(json.dumps(doc), strict=True) if as_json else model.model_validate(doc)
    except ValidationError as exc:
        return "refused", exc.errors(include_url=False, include_context=False)
    return "made", (held.model_dump(), held.model_dump(mode="json", by_alias=True), held.model_dump_json())


@given(holder_docs(), st.booleans())
def test_a_payload_model_holding_references_validates_and_dumps_them_as_before(
    doc: dict[str, Any], as_json: bool
) -> None:
    try:
        json.dumps(doc)
    except (TypeError, ValueError):
        as_json = False
    assert _holder(Holder, doc, as_json=as_json) == _holder(OldHolder, doc, as_json=as_json)


def test_a_payload_model_takes_a_reference_as_it_is_and_gives_back_the_plain_class() -> None:
    ref = CasRef(pool="data", digest=DIGEST, size=3, media_type="text/plain")
    held = Holder(ref=ref, bare=[ref.object_ref()])
    assert held.ref is ref
    assert type(Holder.model_validate({"ref": ref.to_json()}).ref) is CasRef
    assert type(held.bare[0]) is CasObjectRef
    with pytest.raises(ValidationError, match="Input should be a valid dictionary or instance of CasRef"):
        Holder(ref=ref.object_ref())


def test_json_schemas_are_the_models() -> None:
    def schema(model: type[BaseModel], mode: str) -> dict[str, Any]:
        return {k: v for k, v in model.model_json_schema(mode=mode).items() if k not in ("title", "description")}  # type: ignore[arg-type]

    for mode in ("validation", "serialization"):
        assert schema(Holder, mode) == schema(OldHolder, mode)
        assert CasRef.model_json_schema(mode=mode) == models.CasRef.model_json_schema(mode=mode)


def test_a_reference_is_frozen_compared_hashed_shown_and_pickled_as_the_model_was() -> None:
    ref = CasRef(pool="agent-state", digest=DIGEST, size=3, mediaType="text/markdown")  # type: ignore[call-arg]
    model = models.CasRef.model_validate(
        {"pool": "agent-state", "digest": DIGEST, "size": 3, "mediaType": "text/markdown"}
    )
    assert repr(ref) == repr(model)
    assert hash(ref) == hash(CasRef.model_validate(ref.to_json())) and ref == CasRef.model_validate(ref.to_json())
    assert ref != ref.object_ref() and ref.object_ref() == CasObjectRef(hash=HEX, size=3)
    assert repr(ref.object_ref()) == repr(models.CasObjectRef(hash=HEX, size=3))
    assert ref.model_dump() == model.model_dump() and ref.model_dump(by_alias=True) == model.model_dump(by_alias=True)
    assert (ref.hash, ref.to_json()["mediaType"], str(ref.object_ref().digest)) == (HEX, "text/markdown", DIGEST)
    assert pickle.loads(pickle.dumps(ref)) == ref
    with pytest.raises(AttributeError):
        ref.size = 4


def test_valid_references_are_made_and_found_without_pydantic() -> None:
    code = (
        "import sys\n"
        "from reviewtrail.cas import CasRef, CasObjectRef, MemoryCas, refs_in\n"
        "cas = MemoryCas()\n"
        "ref = cas.put(b'hello', pool='agent-state', media_type='text/plain')\n"
        "found = refs_in({'a': ref.to_json(), 'b': [{'hash': ref.hash, 'size': 5}]})\n"
        "assert all(cas.has(r) for r in found), found\n"
        "assert 'pydantic' not in sys.modules, 'pydantic loaded'\n"
        "try:\n"
        "    refs_in({'hash': ref.hash, 'size': True})\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith("InvalidInputError size: malformed CAS reference ")
    assert out.endswith(": must be an integer, not a boolean\n")
