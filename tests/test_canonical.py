"""RFC 8785 canonical JSON: errors for what has no canonical form; the flat fast path agrees."""

from __future__ import annotations

import enum
import json
import math
from typing import Any

import pytest
import rfc8785
from hypothesis import example, given
from hypothesis import strategies as st

from reviewtrail.canonical import canonical_flat, canonical_json, loads_canonical, loads_json, unique_members
from reviewtrail.errors import CanonicalJSONError, InvalidInputError

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=("Cs",))),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(st.characters(exclude_categories=("Cs",)), max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, {"a": [1, math.nan]}])
def test_nan_and_infinity_are_rejected_with_the_field_named(bad: object) -> None:
    with pytest.raises(CanonicalJSONError) as err:
        canonical_json(bad, field="payload")
    assert err.value.field == "payload"
    assert isinstance(err.value, InvalidInputError)


@pytest.mark.parametrize("bad", ["\ud800", {"k": "x\udfffy"}, {"\ud800": 1}])
def test_lone_surrogates_are_rejected(bad: object) -> None:
    with pytest.raises(CanonicalJSONError, match="surrogate"):
        canonical_json(bad)


def test_huge_integers_and_non_json_types_are_rejected() -> None:
    with pytest.raises(CanonicalJSONError):
        canonical_json(2**60)
    with pytest.raises(CanonicalJSONError):
        canonical_json({"a": object()})


def test_known_vector() -> None:
    # RFC 8785 §3.2.3 style: keys sorted by UTF-16 code units, numbers in ECMAScript form.
    assert canonical_json({"b": 1.0, "a": [1e21, 0.5], "\u20ac": "x", "\U0001f600": None}) == (
        b'{"a":[1e+21,0.5],"b":1,"\xe2\x82\xac":"x","\xf0\x9f\x98\x80":null}'
    )


@given(json_values)
def test_canonical_bytes_round_trip_and_are_stable(value: object) -> None:
    data = canonical_json(value)
    assert canonical_json(loads_canonical(data)) == data
    assert canonical_json(loads_json(data)) == data


@given(
    st.dictionaries(
        st.text(st.characters(max_codepoint=127), min_size=1, max_size=12),
        st.none() | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1) | st.text(),
        max_size=12,
    )
)
def test_flat_fast_path_matches_rfc8785(obj: dict[str, str | int | None]) -> None:
    try:
        expected = rfc8785.dumps(obj)
    except rfc8785.CanonicalizationError:
        with pytest.raises(CanonicalJSONError):
            canonical_flat(obj)
        return
    assert canonical_flat(obj) == expected


def test_non_canonical_bytes_are_refused() -> None:
    with pytest.raises(CanonicalJSONError, match="canonical"):
        loads_canonical(b'{"b":1, "a":2}')
    with pytest.raises(CanonicalJSONError):
        loads_canonical(b"NaN")


_any_text = st.text(
    st.characters(min_codepoint=0, max_codepoint=0x10FFFF)
    | st.sampled_from(["\ud800", "\udfff", "\ue000", "\U0001f600"]),
    max_size=6,
)
wide_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**60), max_value=2**60) | st.floats() | _any_text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_any_text, children, max_size=4),
    max_leaves=20,
)


@given(wide_values)
@example({"\ud800": None})
@example({"\ue000": 1, "\U0001f600": 2})
@example(9007199254740992.0)
def test_canonical_json_matches_rfc8785_exactly(value: object) -> None:
    """The fast path never disagrees with the reference implementation, bytes or errors."""
    try:
        expected = rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, UnicodeEncodeError):  # lone surrogate in a key: UnicodeEncodeError
        with pytest.raises(CanonicalJSONError):
            canonical_json(value)
        return
    assert canonical_json(value) == expected


def test_key_order_is_by_utf16_code_units() -> None:
    # U+E000 sorts after U+1F600 by code point, before it by UTF-16 code unit (0xD83D).
    value = {"\ue000": 1, "\U0001f600": 2}
    assert canonical_json(value) == rfc8785.dumps(value)
    assert canonical_json(value).index("\U0001f600".encode()) < canonical_json(value).index("\ue000".encode())


def test_deep_nesting_is_a_clear_error() -> None:
    deep: list[object] = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(CanonicalJSONError, match="nested too deeply"):
        canonical_json(deep, field="payload")
    deep_float: list[object] = [1.5]
    for _ in range(5000):
        deep_float = [deep_float]
    with pytest.raises(CanonicalJSONError, match="nested too deeply"):
        canonical_json(deep_float)


def _self_dict(extra: object) -> dict[str, object]:
    d: dict[str, object] = {"x": extra}
    d["self"] = d
    return d


def _self_list(extra: object) -> list[object]:
    items: list[object] = [extra]
    items.append(items)
    return items


# 1 keeps the value on the fast path; 1.5 (a float) sends it through rfc8785.
@pytest.mark.parametrize("extra", [1, 1.5], ids=["fast-path", "rfc8785-path"])
@pytest.mark.parametrize("make", [_self_dict, _self_list], ids=["dict", "list"])
def test_a_value_that_contains_itself_is_a_clear_error(make: Any, extra: object) -> None:
    value = {"outer": make(extra)}
    with pytest.raises(CanonicalJSONError, match="contains itself") as err:
        canonical_json(value, field="payload")
    assert err.value.field == "payload"
    assert "payload.outer" in str(err.value)


def test_shared_but_acyclic_values_still_canonicalize() -> None:
    shared: list[object] = [1, "a"]
    floaty: list[object] = [0.5]
    value = {"a": shared, "b": shared, "c": [shared, floaty, floaty]}
    assert canonical_json(value) == rfc8785.dumps(value)
    assert canonical_json({"a": shared, "b": shared}) == b'{"a":[1,"a"],"b":[1,"a"]}'


def _containers(value: object) -> list[Any]:
    found: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            found.append(item)
            stack.extend(item)
    return found


@given(
    st.one_of(st.lists(json_values, max_size=3), st.dictionaries(st.text(max_size=4), json_values, max_size=3)),
    st.data(),
)
def test_any_cycle_is_refused_on_either_path(root: Any, data: st.DataObject) -> None:
    target = data.draw(st.sampled_from(_containers(root)))
    if isinstance(target, dict):
        target["\x00cycle"] = root
    else:
        target.append(root)
    with pytest.raises(CanonicalJSONError, match="contains itself") as err:
        canonical_json(root, field="payload")
    assert err.value.field == "payload"


class _Repeated(InvalidInputError):
    """The error a caller chooses for a repeated key."""


@pytest.mark.parametrize(
    ("text", "key"),
    [('{"a": 1, "a": 1}', "a"), ('{"x": [{"b": 1, "c": 2, "b": 3}]}', "b"), ('[{"": 1}, {"k": {"": 0, "": 0}}]', "")],
)
def test_a_key_given_twice_in_one_object_is_refused_at_any_depth(text: str, key: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        json.loads(text, object_pairs_hook=unique_members("payload"))
    assert type(caught.value) is InvalidInputError and caught.value.field == "payload"
    assert str(caught.value) == (
        f"payload: key {key!r} appears twice in one object (RFC 8785 JSON has unique member names)"
    )
    with pytest.raises(_Repeated) as chosen:
        json.loads(text, object_pairs_hook=unique_members("body", _Repeated))
    assert chosen.value.field == "body"


@given(json_values)
def test_a_document_without_repeated_keys_reads_as_json_reads_it(value: Any) -> None:
    text = json.dumps(value)
    assert json.loads(text, object_pairs_hook=unique_members("payload")) == json.loads(text)


@given(json_values.filter(lambda v: isinstance(v, (dict, list))))
def test_the_c_speed_encoding_is_rfc8785_or_declines(value: Any) -> None:
    """msgspec's sorted-key encoding is kept only where it is RFC 8785 byte for byte; anything
    else is declined (None) and left to the general path."""
    from reviewtrail.canonical import _dump_at_c_speed

    fast = _dump_at_c_speed(value)
    if fast is not None:
        assert fast == rfc8785.dumps(value)


@pytest.mark.parametrize(
    "value",
    [
        [math.nan],  # msgspec writes null
        {"a": (1, 2)},  # a tuple reads back as a list
        {1: "one"},  # a key that is not a string
        [1.5],  # a float: its ECMAScript form may differ
        {"\ue000": 1, "\U0001f600": 2},  # keys whose UTF-16 order differs from code point order
        [2**53],  # beyond the safe integers
        [b"bytes"],  # msgspec writes base64
    ],
    ids=["nan", "tuple", "int-key", "float", "high-keys", "long-int", "bytes"],
)
def test_the_c_speed_encoding_declines_what_it_may_get_wrong(value: Any) -> None:
    from reviewtrail.canonical import _dump_at_c_speed

    assert _dump_at_c_speed(value) is None


def test_the_c_speed_encoding_takes_plain_values() -> None:
    from reviewtrail.canonical import _dump_at_c_speed

    value = {"b": [1, "two\n\u2028\x7f", None, True], "a": {"é": -3}}
    assert _dump_at_c_speed(value) == rfc8785.dumps(value)


def _typed(value: Any) -> Any:
    """``value`` with each scalar's type beside it (1 and 1.0 and True differ), dict order kept."""
    if isinstance(value, dict):
        return ("dict", [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, "nan" if isinstance(value, float) and math.isnan(value) else value)


@given(wide_values, st.sampled_from([None, 0, 2]), st.booleans())
@example([1234567890123456789], None, False)
@example({"a": 1, "a ": [1e400]}, 1, True)
def test_json_bytes_read_as_json_reads_them(value: Any, indent: int | None, repeat_a_key: bool) -> None:
    """Bytes read at C speed give what json.loads (integers beyond 2**53 as doubles) gives, type
    for type, whatever the spacing, long integers, NaN or repeated keys; or the same refusal."""
    from reviewtrail.canonical import _parse_int

    try:
        text = json.dumps(value, indent=indent, ensure_ascii=bool(indent))
    except (UnicodeEncodeError, ValueError):
        return
    if repeat_a_key and text.startswith("{") and text != "{}":
        text = '{"k": 1, "k": [2],' + text[1:]
    data = text.encode("utf-8", "surrogatepass")
    try:
        expected = json.loads(text, parse_int=_parse_int)
    except ValueError:
        with pytest.raises(ValueError):
            loads_json(data)
        return
    assert _typed(loads_json(data)) == _typed(expected)


class _Text(str):
    pass


class _Count(enum.IntEnum):
    ONE = 1


class _Word(enum.StrEnum):
    A = "a"


# Whatever a caller may hand over: JSON values and what only looks like one (floats, NaN, tuples,
# bytes, dates, sets, subclasses, keys that are not text, integers past 2**53).
_odd_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.sampled_from([2**53 - 1, 2**53, -(2**53) - 1, 10**15, 10**16, _Count.ONE, _Word.A, -0.0])
    | st.floats()
    | _any_text
    | _any_text.map(_Text)
    | st.binary(max_size=4)
    | st.datetimes()
    | st.uuids()
    | st.decimals(allow_nan=False)
)
odd_values = st.recursive(
    _odd_scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.lists(children, max_size=3).map(tuple)
        | st.frozensets(st.integers(0, 9), max_size=3)
        | st.dictionaries(_any_text, children, max_size=4)
        | st.dictionaries(st.integers(0, 9) | st.none() | _any_text.map(_Text), children, max_size=3)
    ),
    max_leaves=16,
)


@given(odd_values.filter(lambda v: type(v) in (dict, list)))
@example([math.nan])
@example({"a": [1, (2,)]})
@example({"\ue000": [1], "\U0001f600": [2]})
@example({"a": [2**53]})
@example({1: "one"})
@example([_Text("t"), {"k": _Count.ONE}])
def test_the_c_speed_path_writes_rfc8785_or_declines_on_any_value(value: Any) -> None:
    """Bytes msgspec wrote are taken only where they are RFC 8785's; and canonical_json gives
    RFC 8785's bytes for any value, or refuses what RFC 8785 refuses."""
    from reviewtrail.canonical import _dump_at_c_speed

    try:
        expected = rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, UnicodeEncodeError, ValueError, TypeError, RecursionError):
        assert _dump_at_c_speed(value) is None
        with pytest.raises(CanonicalJSONError):
            canonical_json(value)
        return
    fast = _dump_at_c_speed(value)
    assert fast is None or fast == expected
    assert canonical_json(value) == expected


@given(json_values, st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-32-be"]), st.binary(max_size=3))
@example(1, "utf-16-le", b"")
@example({"a": 1}, "utf-8-sig", b"")
def test_bytes_in_any_encoding_read_as_json_loads_reads_them(value: Any, encoding: str, tail: bytes) -> None:
    """loads_json reads bytes of any encoding json detects (a BOM, UTF-16, UTF-32), or anything
    else, exactly as json.loads with doubles past 2**53, or refuses them as it does."""
    from reviewtrail.canonical import _parse_int

    for data in (json.dumps(value).encode(encoding), json.dumps(value).encode(encoding) + tail):
        try:
            expected = json.loads(data, parse_int=_parse_int)
        except ValueError:
            with pytest.raises(ValueError):
                loads_json(data)
            continue
        assert _typed(loads_json(data)) == _typed(expected)
