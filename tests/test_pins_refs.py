"""CAS addresses, digests and references: the accepting paths and each boundary."""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from reviewtrail.cas import (
    DIGEST_PATTERN,
    HEX_PATTERN,
    CasObjectRef,
    CasRef,
    Digest,
    check_hex,
    is_digest,
    is_hex,
    parse_address,
    parse_digest,
    refs_in,
)
from reviewtrail.cas._address import check_media_type, check_pool
from reviewtrail.errors import InvalidAddressError, InvalidInputError

HEX = "0123456789abcdef" * 4
hex64 = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
# near misses: one character off the alphabet, or one too many or too few
near_hex = st.one_of(
    st.text(alphabet="0123456789abcdef", min_size=63, max_size=65).filter(lambda s: len(s) != 64),
    st.tuples(hex64, st.integers(0, 63), st.sampled_from(list("ABCDEFgxz/ .\n:"))).map(
        lambda t: t[0][: t[1]] + t[2] + t[0][t[1] + 1 :]
    ),
    hex64.map(lambda s: s + "\n"),
)


# --- bare hex and addresses --------------------------------------------------------------


@given(hex64)
def test_parse_address_accepts_bare_and_prefixed_hex(text: str) -> None:
    assert parse_address(text) == text
    assert parse_address("sha256:" + text) == text
    assert check_hex(text) == text
    assert is_hex(text)


@given(near_hex)
@example("A" * 64)
@example("")
@example("sha256:" + HEX)
def test_anything_else_is_not_bare_hex(text: str) -> None:
    assert not is_hex(text)
    with pytest.raises(InvalidAddressError) as info:
        check_hex(text, field="headHash")
    assert str(info.value) == f"headHash: {text!r} is not a SHA-256 address (exactly 64 lowercase hex digits)"


@given(near_hex)
@example("sha256:" + HEX[:60])
@example("SHA256:" + HEX[7:] + "0000000")
def test_parse_address_refuses_near_misses_with_or_without_prefix(text: str) -> None:
    for candidate in (text, "sha256:" + text):
        with pytest.raises(InvalidAddressError) as info:
            parse_address(candidate, field="ref")
        assert info.value.field == "ref"
        assert "is not a SHA-256 address (exactly 64 lowercase hex digits)" in str(info.value)


@pytest.mark.parametrize("value", [None, 1, b"a" * 64, ["a" * 64]])
def test_non_strings_are_not_addresses(value: object) -> None:
    with pytest.raises(InvalidAddressError) as info:
        parse_address(value)  # type: ignore[arg-type]
    assert str(info.value) == f"address: {value!r} is not a SHA-256 address (exactly 64 lowercase hex digits)"
    assert not is_hex(value)
    assert not is_digest(value)


def test_the_prefix_is_taken_once_and_in_lowercase() -> None:
    for text in ("sha256:sha256:" + HEX, "SHA256:" + HEX, " sha256:" + HEX, "sha256: " + HEX):
        with pytest.raises(InvalidAddressError):
            parse_address(text)


def test_the_prefixed_error_names_the_bare_part() -> None:
    with pytest.raises(InvalidAddressError) as info:
        parse_address("sha256:xyz")
    assert str(info.value) == "address: 'xyz' is not a SHA-256 address (exactly 64 lowercase hex digits)"


# --- digests -----------------------------------------------------------------------------


@given(hex64)
def test_parse_digest_accepts_prefixed_hex(text: str) -> None:
    digest = parse_digest("sha256:" + text)
    assert digest == Digest("sha256:" + text)
    assert is_digest(digest)


def test_bare_hex_is_not_a_digest() -> None:
    assert not is_digest(HEX)
    with pytest.raises(InvalidAddressError) as info:
        parse_digest(HEX)
    assert str(info.value) == f"digest: {HEX!r} must start with 'sha256:'"


@given(near_hex)
@example(HEX.upper())
def test_parse_digest_refuses_bare_or_malformed_hex(text: str) -> None:
    assert not is_digest(text)
    assert not is_digest("sha256:" + text)
    with pytest.raises(InvalidAddressError) as info:
        parse_digest(text, field="contentHash")
    assert str(info.value) == f"contentHash: {text!r} must start with 'sha256:'"
    with pytest.raises(InvalidAddressError) as info:
        parse_digest("sha256:" + text, field="contentHash")
    assert str(info.value) == f"contentHash: {text!r} is not a SHA-256 address (exactly 64 lowercase hex digits)"


def test_digest_pattern_is_the_same_rule() -> None:
    import re

    pattern = re.compile(DIGEST_PATTERN)
    assert pattern.fullmatch("sha256:" + HEX)
    assert not pattern.fullmatch(HEX)
    assert not pattern.fullmatch("sha256:" + HEX.upper())
    assert not pattern.fullmatch("sha256:" + HEX + "0")
    assert DIGEST_PATTERN == "sha256:" + HEX_PATTERN
    assert re.fullmatch(HEX_PATTERN, HEX)
    assert not re.fullmatch(HEX_PATTERN, HEX.upper())


@pytest.mark.parametrize("value", ["sha256:" + HEX.upper(), "sha256:" + HEX[:-1], "sha256:" + HEX + "\n", "sha256:"])
def test_typed_references_check_the_hex_of_their_digest(value: str) -> None:
    with pytest.raises(ValueError, match="is not a SHA-256 address"):
        CasRef(pool="data", digest=value, size=1)
    with pytest.raises(InvalidInputError) as info:
        refs_in({"pool": "data", "digest": value, "size": 1, "mediaType": "text/plain"})
    assert info.value.field == "digest"


def test_typed_references_need_the_prefix() -> None:
    with pytest.raises(ValueError, match="must start with 'sha256:'"):
        CasRef(pool="data", digest=HEX, size=1)


# --- references --------------------------------------------------------------------------


def test_size_zero_references_are_valid() -> None:
    empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    plain = CasObjectRef(hash=empty, size=0)
    typed = CasRef(pool="agent-state", digest="sha256:" + empty, size=0)
    assert plain.to_json() == {"hash": empty, "size": 0}
    assert plain.digest == "sha256:" + empty
    assert typed.to_json() == {
        "pool": "agent-state",
        "digest": "sha256:" + empty,
        "size": 0,
        "mediaType": "application/octet-stream",
    }
    assert typed.hash == empty
    assert typed.object_ref() == plain
    assert refs_in([{"hash": empty, "size": 0}, {"x": typed.to_json()}]) == [typed, plain]


@pytest.mark.parametrize("size", [-1, -(2**40)])
def test_negative_sizes_are_refused(size: int) -> None:
    with pytest.raises(InvalidInputError) as info:
        refs_in({"hash": HEX, "size": size})
    assert info.value.field == "size"
    assert "greater than or equal to 0" in str(info.value)


def test_refs_are_found_by_exact_shape_at_any_depth() -> None:
    plain = {"hash": HEX, "size": 3}
    typed = {"pool": "data", "digest": "sha256:" + HEX, "size": 3, "mediaType": "text/plain; charset=utf-8"}
    value = {"a": [plain, ({"b": typed},)], "c": {"hash": HEX, "size": 3, "extra": 1}, "d": "x"}
    found = refs_in(value)
    assert sorted(type(r).__name__ for r in found) == ["CasObjectRef", "CasRef"]
    assert refs_in({"hash": HEX}) == []
    assert refs_in({"pool": "data", "digest": "x", "size": 1}) == []
    assert refs_in([]) == []
    assert refs_in("hash") == []


def test_a_malformed_reference_names_its_field_and_shows_itself() -> None:
    with pytest.raises(InvalidInputError) as info:
        refs_in([{"hash": "xyz", "size": 1}])
    assert info.value.field == "hash"
    assert str(info.value).startswith("hash: malformed CAS reference {'hash': 'xyz', 'size': 1}: ")


def test_pools() -> None:
    assert check_pool("data") == "data"
    assert check_pool("agent-state") == "agent-state"
    with pytest.raises(InvalidInputError) as info:
        check_pool("Data", field="ref.pool")
    assert str(info.value) == "ref.pool: 'Data' is not a pool; use one of data, agent-state"


@pytest.mark.parametrize(
    "media",
    [
        "text/plain",
        "application/vnd.api+json",
        "text/plain; charset=utf-8",
        'text/plain;charset="utf 8"',
        "a/" + "b" * 127,
        "a" * 127 + "/b",
        "x/y; a=1; b=2",
    ],
)
def test_good_media_types(media: str) -> None:
    assert check_media_type(media) == media
    assert CasRef(pool="data", digest="sha256:" + HEX, size=1, media_type=media).media_type == media


@pytest.mark.parametrize(
    "media",
    ["text", "/plain", "text/", "a/" + "b" * 128, "a" * 128 + "/b", "text/plain;", "text/plain; a", "te xt/plain", 1],
)
def test_bad_media_types(media: object) -> None:
    with pytest.raises(InvalidInputError) as info:
        check_media_type(media)
    assert str(info.value) == f"mediaType: {media!r} is not a media type like 'text/plain'"


@given(st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=127))
def test_media_type_names_up_to_127_characters(name: str) -> None:
    assert check_media_type(f"{name}/{name}") == f"{name}/{name}"


def test_an_untyped_reference_names_the_hash_field_in_its_message() -> None:
    with pytest.raises(InvalidInputError) as info:
        refs_in({"hash": "xyz", "size": 1})
    assert "Value error, hash: 'xyz' is not a SHA-256 address" in str(info.value)
    with pytest.raises(InvalidAddressError) as address:
        check_hex("xyz")
    assert address.value.field == "hash"


@pytest.mark.parametrize("order", [(0, 1, 2, 3), (1, 0, 3, 2), (0, 0, 1, 1), (1, 1, 0, 0)])
def test_every_reference_in_a_list_is_found(order: tuple[int, ...]) -> None:
    plain = {"hash": HEX, "size": 1}
    typed = {"pool": "data", "digest": "sha256:" + HEX, "size": 2, "mediaType": "text/plain"}
    items = [plain if i % 2 == 0 else typed for i in order]
    found = refs_in(items)
    assert sorted(type(r).__name__ for r in found) == sorted("CasObjectRef" if i % 2 == 0 else "CasRef" for i in order)


# --- the model's refusals, and the cache of references -----------------------------------

TYPED = {"pool": "data", "digest": "sha256:" + HEX, "size": 1, "mediaType": "text/plain"}


@pytest.fixture
def empty_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewtrail.cas import _refs

    monkeypatch.setattr(_refs, "_VALIDATED", {})


@pytest.mark.parametrize("size", [0, 1, 2**53])
def test_valid_untyped_references(size: int, empty_cache: None) -> None:
    ref = CasObjectRef(hash=HEX, size=size)
    assert (ref.hash, ref.size) == (HEX, size)
    assert CasObjectRef.model_validate({"hash": HEX, "size": size}) == ref
    assert refs_in({"hash": HEX, "size": size}) == [ref]


@pytest.mark.parametrize(
    ("fields", "media"),
    [
        ({"pool": "data", "digest": "sha256:" + HEX, "size": 0}, "application/octet-stream"),
        ({"pool": "agent-state", "digest": "sha256:" + HEX, "size": 7, "mediaType": "text/plain"}, "text/plain"),
        ({"pool": "data", "digest": "sha256:" + HEX, "size": 7, "mediaType": "a/b; c=d"}, "a/b; c=d"),
    ],
)
def test_valid_typed_references(fields: dict[str, object], media: str, empty_cache: None) -> None:
    ref = CasRef.model_validate(fields)
    assert (ref.pool, ref.digest, ref.size, ref.media_type) == (fields["pool"], "sha256:" + HEX, fields["size"], media)
    assert CasRef(pool=ref.pool, digest=ref.digest, size=ref.size, media_type=media) == ref
    if "mediaType" in fields:
        assert refs_in([fields]) == [ref]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"size": -1}, "Input should be greater than or equal to 0"),
        ({"size": True}, "must be an integer, not a boolean"),
        ({"size": 1.0}, "must be an integer, not a decimal number"),
        ({"mediaType": 1}, "Input should be a valid string"),
        ({"mediaType": "text"}, "mediaType: 'text' is not a media type like 'text/plain'"),
        ({"mediaType": "text/plain;"}, "mediaType: 'text/plain;' is not a media type like 'text/plain'"),
        ({"pool": "Data"}, "Input should be 'data' or 'agent-state'"),
        ({"digest": HEX}, "must start with 'sha256:'"),
    ],
)
def test_typed_references_refuse_each_bad_field(change: dict[str, object], message: str) -> None:
    """The constructor and the decoder keep the same rules and word them alike."""
    name = next(iter(change))
    fields = {**TYPED, **change}
    with pytest.raises(InvalidInputError, match=re.escape(message)) as made:
        CasRef(pool=fields["pool"], digest=fields["digest"], size=fields["size"], media_type=fields["mediaType"])  # type: ignore[arg-type]
    assert made.value.field == name
    with pytest.raises(InvalidInputError, match=re.escape(message)) as read:
        CasRef.model_validate(fields)
    assert read.value.field == name


@pytest.mark.parametrize("extra", [{"extra": 1}, {"media_type": "text/plain"}])
def test_typed_references_refuse_unknown_fields(extra: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError, match="Extra inputs are not permitted") as read:
        CasRef.model_validate({**TYPED, **extra})
    assert read.value.field == next(iter(extra))
    with pytest.raises(TypeError, match="Unexpected keyword argument"):
        CasRef(**{**TYPED, **extra})  # type: ignore[arg-type]


def test_a_size_that_equals_a_cached_one_is_still_checked(empty_cache: None) -> None:
    assert refs_in({"hash": HEX, "size": 1}) == [CasObjectRef(hash=HEX, size=1)]
    assert refs_in(TYPED) == [CasRef.model_validate(TYPED)]
    with pytest.raises(InvalidInputError) as info:
        refs_in({"hash": HEX, "size": True})
    assert (
        str(info.value)
        == f"size: malformed CAS reference {{'hash': {HEX!r}, 'size': True}}: must be an integer, not a boolean"
    )
    with pytest.raises(InvalidInputError) as info:
        refs_in({**TYPED, "size": True})
    assert info.value.field == "size"
    assert str(info.value).endswith(": must be an integer, not a boolean")


def test_an_unhashable_value_is_refused_by_the_model(empty_cache: None) -> None:
    with pytest.raises(InvalidInputError) as info:
        refs_in({"hash": HEX, "size": [1]})
    assert (
        str(info.value)
        == f"size: malformed CAS reference {{'hash': {HEX!r}, 'size': [1]}}: must be an integer, not a list"
    )
    with pytest.raises(InvalidInputError) as info:
        refs_in({**TYPED, "mediaType": ["text/plain"]})
    assert info.value.field == "mediaType"


def test_a_reference_found_twice_is_the_same_object(empty_cache: None) -> None:
    plain = refs_in({"hash": HEX, "size": 5})[0]
    typed = refs_in(dict(TYPED))[0]
    assert refs_in([{"hash": HEX, "size": 5}, dict(TYPED)]) == [typed, plain]
    again_typed, again_plain = refs_in([{"hash": HEX, "size": 5}, dict(TYPED)])
    assert again_plain is plain
    assert again_typed is typed


def test_the_cache_is_cleared_when_full(monkeypatch: pytest.MonkeyPatch, empty_cache: None) -> None:
    from reviewtrail.cas import _refs

    monkeypatch.setattr(_refs, "_VALIDATED_MAX", 2)
    refs_in([{"hash": HEX, "size": 1}, {"hash": HEX, "size": 2}])
    assert len(_refs._VALIDATED) == 2
    refs_in({"hash": HEX, "size": 3})
    assert list(_refs._VALIDATED.values()) == [CasObjectRef(hash=HEX, size=3)]


class _Text(str):
    pass


def test_values_of_json_kinds_are_taken_as_their_values(empty_cache: None) -> None:
    import enum

    class One(enum.IntEnum):
        ONE = 1

    for found in (
        refs_in({"hash": _Text(HEX), "size": One.ONE})[0],
        CasObjectRef.model_validate({"hash": _Text(HEX), "size": One.ONE}),
    ):
        assert type(found) is CasObjectRef
        assert (found.hash, found.size) == (HEX, 1)
        assert type(found.size) is int
    typed = CasRef.model_validate({**TYPED, "pool": _Text("agent-state")})
    assert typed == CasRef(pool="agent-state", digest="sha256:" + HEX, size=1, media_type="text/plain")


def test_model_validate_refuses_what_is_not_an_object() -> None:
    with pytest.raises(InvalidInputError, match=r"^ref: Input should be a valid dictionary$"):
        CasRef.model_validate([1])
    with pytest.raises(InvalidInputError, match=r"^ref: Input should be a valid dictionary$"):
        CasObjectRef.model_validate(None)
    ref = CasObjectRef(hash=HEX, size=1)
    assert CasObjectRef.model_validate(ref) is ref


def test_references_are_frozen_hashed_and_shown_by_their_values() -> None:
    plain = CasObjectRef(hash=HEX, size=1)
    typed = CasRef(pool="data", digest="sha256:" + HEX, size=1)
    assert repr(plain) == f"CasObjectRef(hash={HEX!r}, size=1)"
    assert repr(typed) == f"CasRef(pool='data', digest='sha256:{HEX}', size=1, media_type='application/octet-stream')"
    assert hash(plain) == hash(CasObjectRef(hash=HEX, size=1))
    assert hash(plain) != hash(CasObjectRef(hash=HEX, size=2))
    assert hash(typed) != hash(CasRef(pool="agent-state", digest="sha256:" + HEX, size=1))
    with pytest.raises(AttributeError, match=r"^immutable type: 'CasObjectRef'$"):
        plain.size = 2  # type: ignore[misc]
    with pytest.raises(AttributeError, match=r"^immutable type: 'CasRef'$"):
        del typed.pool


def test_references_pickle_and_copy_as_themselves() -> None:
    import copy
    import pickle

    for ref in (
        CasObjectRef(hash=HEX, size=3),
        CasRef(pool="agent-state", digest="sha256:" + HEX, size=3, media_type="a/b"),
    ):
        for back in (pickle.loads(pickle.dumps(ref)), copy.copy(ref), copy.deepcopy(ref)):
            assert type(back) is type(ref)
            assert back == ref
            assert repr(back) == repr(ref)
