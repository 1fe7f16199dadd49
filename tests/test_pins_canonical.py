"""Canonical JSON at its boundaries: the safe-integer limit, UTF-16 key order, the flat
fallback, malformed input and the fixed error texts."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
import rfc8785
from hypothesis import example, given
from hypothesis import strategies as st

from reviewtrail import canonical
from reviewtrail.canonical import (
    canonical_flat,
    canonical_json,
    canonical_sha256,
    loads_canonical,
    loads_document,
    loads_json,
)
from reviewtrail.errors import CanonicalJSONError

SAFE = 2**53 - 1
# Code point order and UTF-16 code unit order disagree above U+D800: U+10000 is the
# surrogate pair D800 DC00, so it sorts before U+E000 in RFC 8785.
BMP_HIGH = "a\ue000"
ASTRAL = "a\U00010000"


def _rfc_calls(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Record every value handed to the general (rfc8785) path."""
    calls: list[Any] = []
    real = rfc8785.dumps

    def spy(value: Any) -> bytes:
        calls.append(value)
        return real(value)

    monkeypatch.setattr(rfc8785, "dumps", spy)
    return calls


# --- the 2^53 - 1 boundary -------------------------------------------------------------


@pytest.mark.parametrize("n", [SAFE, -SAFE, 0, 1, -1])
def test_safe_integers_take_the_fast_path(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _rfc_calls(monkeypatch)
    assert canonical_json({"n": [n]}) == f'{{"n":[{n}]}}'.encode()
    assert calls == []


@pytest.mark.parametrize("n", [SAFE + 1, -SAFE - 1, 2**64])
def test_integers_past_the_safe_range_are_refused_with_the_field(n: int) -> None:
    with pytest.raises(CanonicalJSONError) as info:
        canonical_json({"n": n}, field="payload")
    assert info.value.field == "payload"
    assert "integer outside the JSON safe range" in str(info.value)


@given(st.integers(min_value=-(2**60), max_value=2**60) | st.sampled_from([SAFE, SAFE + 1, -SAFE, -SAFE - 1]))
def test_integers_are_accepted_exactly_up_to_the_safe_limit(n: int) -> None:
    if abs(n) <= SAFE:
        assert canonical_json(n) == str(n).encode()
    else:
        with pytest.raises(CanonicalJSONError, match="safe range"):
            canonical_json(n)


@pytest.mark.parametrize(("text", "value"), [("9007199254740991", SAFE), ("-9007199254740991", -SAFE)])
def test_loads_json_keeps_safe_integers_exact(text: str, value: int) -> None:
    parsed = loads_json(text)
    assert parsed == value
    assert type(parsed) is int


@pytest.mark.parametrize("text", ["9007199254740992", "-9007199254740992", "18446744073709551616"])
def test_loads_json_reads_larger_integers_as_doubles(text: str) -> None:
    parsed = loads_json(text)
    assert type(parsed) is float
    assert parsed == float(int(text))


# --- key order ---------------------------------------------------------------------------


def test_keys_sort_by_utf16_code_units_not_code_points() -> None:
    out = canonical_json({BMP_HIGH: 1, ASTRAL: 2})
    assert out == f'{{"{ASTRAL}":2,"{BMP_HIGH}":1}}'.encode()
    assert canonical_json({ASTRAL: 2, BMP_HIGH: 1}) == out


@pytest.mark.parametrize("keys", [(BMP_HIGH, ASTRAL), ("\ue000", "x\U0001f600y"), ("a", "\uffff\U00010000")])
def test_keys_utf16_may_order_otherwise_leave_the_fast_path(
    keys: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A character in U+E000..U+FFFF and one above U+FFFF in the same value: the general path
    orders the keys."""
    import rfc8785

    value = {key: [i] for i, key in enumerate(keys)}
    expected = rfc8785.dumps(value)
    calls = _rfc_calls(monkeypatch)
    assert canonical_json(value) == expected
    assert len(calls) == 1


@pytest.mark.parametrize("key", [BMP_HIGH, ASTRAL, "\ue000", "x\U0001f600y"])
def test_keys_of_one_high_range_order_alike_and_stay_on_the_fast_path(
    key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import rfc8785

    value = {key: [1], key + "a": [2], "b": {key: 3}}
    expected = rfc8785.dumps(value)
    calls = _rfc_calls(monkeypatch)
    assert canonical_json(value) == expected
    assert calls == []


@pytest.mark.parametrize("key", ["", "a", "\ud7ff", "z\ud7ffz", "é"])
def test_keys_below_u_d800_stay_on_the_fast_path(key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _rfc_calls(monkeypatch)
    assert canonical_json({key: 1}) == json.dumps({key: 1}, ensure_ascii=False, separators=(",", ":")).encode()
    assert calls == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.5, b"1.5"),
        ({"a": 1.0}, b'{"a":1}'),
        ([True, 2.5], b"[true,2.5]"),
        (("t",), b'["t"]'),
        ({"a": (1,)}, b'{"a":[1]}'),
    ],
)
def test_floats_and_tuples_take_the_general_path(value: Any, expected: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _rfc_calls(monkeypatch)
    assert canonical_json(value) == expected
    assert len(calls) == 1


def test_non_string_keys_are_refused_by_the_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _rfc_calls(monkeypatch)
    with pytest.raises(CanonicalJSONError, match="object keys must be strings"):
        canonical_json({1: "x"})
    assert len(calls) == 1


def test_a_container_met_twice_is_written_in_each_place_at_c_speed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A shared (acyclic) container is written where it stands each time by msgspec's encoder;
    only a container that contains itself, which that encoder cannot write, goes on to the
    general path, and is refused there by name."""
    calls = _rfc_calls(monkeypatch)
    shared: dict[str, int] = {"k": 1}
    items = [1, 2]
    assert canonical_json({"a": shared, "b": shared}) == b'{"a":{"k":1},"b":{"k":1}}'
    assert canonical_json([items, items]) == b"[[1,2],[1,2]]"
    assert calls == []
    looped: list[Any] = [1]
    looped.append(looped)
    with pytest.raises(CanonicalJSONError, match="contains itself"):
        canonical_json(looped)
    assert len(calls) == 1


@given(st.text(st.characters(min_codepoint=0xD7F0, max_codepoint=0x10100, exclude_categories=["Cs"]), max_size=3))
@example(BMP_HIGH)
@example(ASTRAL)
def test_keys_near_the_surrogate_range_match_rfc8785(key: str) -> None:
    import rfc8785

    value = {key: 1, key + "\U00010000": 2, key + "\ue000": 3}
    assert canonical_json(value) == rfc8785.dumps(value)


# --- canonical_flat ----------------------------------------------------------------------


def test_flat_fast_path_bytes() -> None:
    assert canonical_flat({"b": None, "a": "x", "c": SAFE}) == b'{"a":"x","b":null,"c":9007199254740991}'
    assert canonical_flat({"c": -SAFE}) == b'{"c":-9007199254740991}'


def test_flat_falls_back_for_non_ascii_keys() -> None:
    # the fast path would sort by code point; RFC 8785 sorts U+10000 first
    assert canonical_flat({BMP_HIGH: "x", ASTRAL: "y"}) == f'{{"{ASTRAL}":"y","{BMP_HIGH}":"x"}}'.encode()  # type: ignore[dict-item]


@pytest.mark.parametrize(
    ("obj", "expected"),
    [({"a": 1.0}, b'{"a":1}'), ({"a": 1e21}, b'{"a":1e+21}'), ({"a": True}, b'{"a":true}'), ({"a": [1]}, b'{"a":[1]}')],
)
def test_flat_falls_back_for_values_that_are_not_strings_ints_or_null(obj: Any, expected: bytes) -> None:
    assert canonical_flat(obj) == expected


@pytest.mark.parametrize("n", [SAFE + 1, -SAFE - 1])
def test_flat_refuses_unsafe_integers_naming_the_field(n: int) -> None:
    with pytest.raises(CanonicalJSONError) as info:
        canonical_flat({"seq": n}, field="envelope")
    assert info.value.field == "envelope"
    assert "safe range" in str(info.value)


def test_flat_refuses_lone_surrogates_naming_the_field() -> None:
    with pytest.raises(CanonicalJSONError) as info:
        canonical_flat({"id": "\ud800"}, field="envelope")
    assert info.value.field == "envelope"
    assert str(info.value).startswith("envelope: cannot be canonicalized (surrogates not allowed)")


@given(
    st.dictionaries(
        st.text(max_size=4),
        st.none() | st.text(max_size=4) | st.integers(min_value=-(2**54), max_value=2**54) | st.floats(),
        max_size=4,
    )
)
def test_flat_always_equals_canonical_json(obj: dict[str, Any]) -> None:
    try:
        expected = canonical_json(obj)
    except CanonicalJSONError as exc:
        with pytest.raises(CanonicalJSONError) as info:
            canonical_flat(obj)
        assert type(info.value) is type(exc)
        return
    assert canonical_flat(obj) == expected


# --- hashing -----------------------------------------------------------------------------


def test_canonical_sha256_is_the_hash_of_the_canonical_bytes() -> None:
    assert canonical_sha256({"b": 1, "a": [True, None]}) == hashlib.sha256(b'{"a":[true,null],"b":1}').hexdigest()
    assert canonical_sha256({}) == "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"


def test_canonical_sha256_names_the_field() -> None:
    with pytest.raises(CanonicalJSONError) as info:
        canonical_sha256(float("nan"), field="configuration")
    assert info.value.field == "configuration"


# --- loads_canonical ---------------------------------------------------------------------


def _not_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


@given(st.binary(max_size=24))
@example(b'"\xff"')
@example(b'"\xc0\xaf"')  # overlong "/"
@example(b'"\xed\xa0\x80"')  # an encoded surrogate
@example(b'\xff\xfe"\x00a\x00"\x00')  # UTF-16 with a byte-order mark
@example(b'{"a":"\xe2\x82"}')  # truncated sequence
def test_malformed_utf8_is_a_canonical_json_error_naming_the_field(data: bytes) -> None:
    if not _not_utf8(data):
        data = b'"' + data + b'\xff"'
    assert _not_utf8(data)
    with pytest.raises(CanonicalJSONError) as info:
        loads_canonical(data, field="record")
    assert info.value.field == "record"
    assert str(info.value).startswith("record: not valid UTF-8 JSON (")


@pytest.mark.parametrize("data", [b"", b"{", b"[1,]", b"nul", b"1 2", b'{"a" 1}'])
def test_malformed_json_is_a_canonical_json_error(data: bytes) -> None:
    with pytest.raises(CanonicalJSONError, match=r"^value: not valid UTF-8 JSON \("):
        loads_canonical(data)


@pytest.mark.parametrize("data", [b'{"b":1,"a":2}', b"[1, 2]", b'"\\u0041"', b"1.0", b" 1", b"1\n", b'{"a":1E2}'])
def test_valid_but_non_canonical_bytes_are_refused_exactly(data: bytes) -> None:
    with pytest.raises(CanonicalJSONError) as info:
        loads_canonical(data, field="payload")
    assert str(info.value) == "payload: bytes are not in RFC 8785 canonical form"


@pytest.mark.parametrize(
    ("data", "value"),
    [(b'{"a":2,"b":1}', {"a": 2, "b": 1}), (b"9007199254740991", SAFE), (b'"\xc3\xa9"', "é"), (b"[]", [])],
)
def test_canonical_bytes_are_read_back(data: bytes, value: Any) -> None:
    assert loads_canonical(data) == value


def test_too_deep_documents_are_decode_errors_not_recursion_errors() -> None:
    deep = "[" * 200_000 + "]" * 200_000
    for data in (deep, deep.encode()):
        with pytest.raises(json.JSONDecodeError, match="nested too deeply to read"):
            loads_document(data)
    with pytest.raises(CanonicalJSONError, match="not valid UTF-8 JSON"):
        loads_canonical(deep.encode())


# --- which path, exactly -----------------------------------------------------------------


def test_strings_booleans_and_null_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _rfc_calls(monkeypatch)
    assert canonical_json(["x", True, False, None, {"k": "v"}]) == b'["x",true,false,null,{"k":"v"}]'
    assert canonical_json("x") == b'"x"'
    assert canonical_json(None) == b"null"
    assert canonical_json(True) == b"true"
    assert calls == []


def test_a_key_holding_u_d800_itself_takes_the_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _rfc_calls(monkeypatch)
    with pytest.raises(CanonicalJSONError, match="lone surrogates are not allowed"):
        canonical_json({"a\ud800": 1})
    assert len(calls) == 1


def _flat_fallbacks(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    calls: list[Any] = []
    real = canonical.canonical_json

    def spy(value: Any, *, field: str = "value") -> bytes:
        calls.append(value)
        return real(value, field=field)

    monkeypatch.setattr(canonical, "canonical_json", spy)
    return calls


@pytest.mark.parametrize(
    "obj", [{"a": SAFE}, {"a": -SAFE}, {"a": 0}, {"a": None}, {"a": "x"}, {}, {"a": "é"}, {"a": True, "b": False}]
)
def test_flat_headers_never_fall_back(obj: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _flat_fallbacks(monkeypatch)
    assert canonical_flat(obj) == json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()
    assert calls == []


@pytest.mark.parametrize("obj", [{"é": "x"}, {"a": 1.5}, {"a": [1]}, {"a": "x", "b": 2.0}])
def test_flat_falls_back_once_for_anything_else(obj: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _flat_fallbacks(monkeypatch)
    canonical_flat(obj)
    assert calls == [obj]


@pytest.mark.parametrize("n", [SAFE + 1, -SAFE - 1])
def test_flat_falls_back_for_unsafe_integers(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _flat_fallbacks(monkeypatch)
    with pytest.raises(CanonicalJSONError):
        canonical_flat({"a": n})
    assert len(calls) == 1


# --- error texts and the default field ----------------------------------------------------


def test_the_default_field_is_value() -> None:
    for call in (
        lambda: canonical_json(float("nan")),
        lambda: canonical_flat({"a": 2**60}),
        lambda: canonical_sha256(float("inf")),
        lambda: loads_canonical(b"{"),
    ):
        with pytest.raises(CanonicalJSONError) as info:
            call()
        assert info.value.field == "value"


def test_nan_text() -> None:
    with pytest.raises(CanonicalJSONError) as info:
        canonical_json(float("nan"), field="x")
    # Names where the value is (issue 17: refused naming its path, never stored as null).
    assert str(info.value) == "x: NaN at x: NaN and Infinity have no JSON form and are refused, never stored as null"


def test_deep_but_acyclic_values_are_too_deep_naming_the_field() -> None:
    value: list[Any] = []
    cur = value
    for _ in range(100_000):
        cur.append([])
        cur = cur[0]
    with pytest.raises(CanonicalJSONError) as info:
        canonical_json(value, field="payload")
    assert str(info.value) == "payload: nested too deeply to canonicalize"


class _BadInt(int):
    def __int__(self) -> int:
        raise TypeError("no int")


class _BadFloat(float):
    def __float__(self) -> float:
        raise ValueError("no float")


@pytest.mark.parametrize(("value", "reason"), [(_BadInt(3), "no int"), ({"a": _BadFloat(1.5)}, "no float")])
def test_values_that_fail_conversion_are_not_json_values(value: object, reason: str) -> None:
    with pytest.raises(CanonicalJSONError) as info:
        canonical_json(value, field="payload")
    assert str(info.value) == f"payload: not a JSON value ({reason})"


def _cyclic_list() -> Any:
    a: list[Any] = []
    a.append(a)
    return a


def _cyclic_nested() -> Any:
    d: dict[str, Any] = {"x": {"y": None}}
    d["x"]["y"] = d
    return d


def _cyclic_spaced_key() -> Any:
    d: dict[str, Any] = {"a b": None}
    d["a b"] = d
    return d


def _cyclic_through_a_number_key() -> Any:
    # RFC 8785 visits "a" first and recurses; the cycle search walks "b" first
    d: dict[str, Any] = {}
    d["b"] = {1.5: d}
    d["a"] = [d]
    return d


def _cyclic_through_a_null_key() -> Any:
    d: dict[str, Any] = {}
    d["b"] = {None: d}
    d["a"] = [d]
    return d


def _cyclic_through_a_list() -> Any:
    d: dict[str, Any] = {"k": [None]}
    d["k"][0] = d
    return d


@pytest.mark.parametrize(
    ("make", "where"),
    [
        (_cyclic_list, "value[0]"),
        (_cyclic_nested, "value.x.y"),
        (_cyclic_spaced_key, 'value["a b"]'),
        (_cyclic_through_a_number_key, "value.b[1.5]"),
        (_cyclic_through_a_null_key, "value.b[None]"),
        (_cyclic_through_a_list, "value.k[0]"),
    ],
)
def test_a_cycle_is_located_exactly(make: Any, where: str) -> None:
    with pytest.raises(CanonicalJSONError) as info:
        canonical_json(make())
    assert str(info.value) == f"value: contains itself (at {where}); a JSON value cannot be cyclic"


# --- loads -------------------------------------------------------------------------------


def test_too_deep_error_fields() -> None:
    text = "[" * 100_000
    with pytest.raises(json.JSONDecodeError) as info:
        loads_document(text)
    assert (info.value.msg, info.value.doc, info.value.pos) == ("nested too deeply to read", text[:80], 0)


def test_too_deep_utf16_bytes_are_a_decode_error_too() -> None:
    data = ("[" * 100_000).encode("utf-16")  # with a byte-order mark: not UTF-8
    with pytest.raises(json.JSONDecodeError) as info:
        loads_document(data)
    assert info.value.msg == "nested too deeply to read"
    assert info.value.doc.startswith("\ufffd\ufffd[")


def test_a_parsed_lone_surrogate_names_the_field() -> None:
    with pytest.raises(CanonicalJSONError) as info:
        loads_canonical(b'"\\ud800"', field="record")
    assert info.value.field == "record"
    assert "lone surrogates are not allowed" in str(info.value)


# --- encodable text, the canonical check's fast path, non-finite floats, loads_json ---------


def _refuse(*args: object, **kwargs: object) -> None:
    raise AssertionError("the general path was taken")


@pytest.mark.parametrize(
    ("value", "encodable"),
    [
        ("", True),
        ("abc", True),
        ("é\U0001f600", True),
        ("\ud800", False),
        ("a\udfff", False),
        (b"abc", False),
        (1, False),
    ],
)
def test_encodable_text(value: object, encodable: bool) -> None:
    class Text(str):
        pass

    assert canonical.encodable_text(value) is encodable
    assert canonical.encodable_text(Text("abc")) is False


@pytest.mark.parametrize(
    ("data", "value"),
    [
        (b'{"a":1}', {"a": 1}),
        (b'[true,null,"x",-12345678901234]', [True, None, "x", -12345678901234]),
        (b"123456789012345", 123456789012345),
        ('{"é":"\u00e9"}'.encode(), {"é": "é"}),
    ],
)
def test_canonical_bytes_are_recognised_by_the_fast_check(
    data: bytes, value: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(canonical, "loads_canonical", _refuse)
    assert canonical.canonical_value(data) == (True, value)
    assert canonical.is_canonical(data) is True


@pytest.mark.parametrize("data", [b'{"b":1,"a":2}', b"[1, 2]", b'"\\ud800"', b"\xc3", b"{", b"01"])
def test_non_canonical_bytes_are_refused_by_the_fast_check(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(canonical, "loads_canonical", _refuse)
    assert canonical.canonical_value(data) == (False, None)
    assert canonical.is_canonical(data) is False


@pytest.mark.parametrize(
    ("data", "value"),
    [
        (b"1.5", 1.5),
        (b"1234567890123456", 1234567890123456),
        ('"\ue000"'.encode(), "\ue000"),
        ('{"\U0001f600":2,"\ue000":1}'.encode(), {"\U0001f600": 2, "\ue000": 1}),
    ],
)
def test_canonical_bytes_left_to_the_general_check(data: bytes, value: Any) -> None:
    assert canonical.canonical_value(data) == (True, value)
    assert canonical.is_canonical(data) is True


@pytest.mark.parametrize(
    "data", [b"9007199254740993", b"1.50", b"\xff", '{"\ue000":1,"\U0001f600":2}'.encode(), b"NaN"]
)
def test_non_canonical_bytes_refused_by_the_general_check(data: bytes) -> None:
    assert canonical.canonical_value(data) == (False, None)
    assert canonical.is_canonical(data) is False


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ([1, {"a": float("inf")}], "Infinity at value[1].a"),
        ({"b": [1.5, -float("inf")]}, "-Infinity at value.b[1]"),
        ({"a": 2.5, "b": {"c d": float("nan")}}, 'NaN at value.b["c d"]'),
        (float("nan"), "NaN at value"),
    ],
)
def test_non_finite_floats_are_located(value: Any, where: str) -> None:
    with pytest.raises(CanonicalJSONError) as info:
        canonical_json(value)
    assert (
        str(info.value) == f"value: {where}: NaN and Infinity have no JSON form and are refused, never stored as null"
    )


def test_a_shared_container_is_searched_once_for_non_finite_floats() -> None:
    shared = [1.0, 2.0]
    with pytest.raises(CanonicalJSONError) as info:
        canonical_json({"a": shared, "b": shared, "c": [float("inf")]}, field="f")
    assert (
        str(info.value)
        == "f: Infinity at f.c[0]: NaN and Infinity have no JSON form and are refused, never stored as null"
    )


@pytest.mark.parametrize("n", [SAFE, -SAFE, 0])
def test_top_level_safe_integers_take_the_fast_path(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rfc8785, "dumps", _refuse)
    assert canonical_json(n) == str(n).encode()


def test_a_lone_surrogate_in_a_high_key_names_the_field() -> None:
    with pytest.raises(CanonicalJSONError) as info:
        canonical_json({"\ue000": "\ud800"}, field="f")
    assert info.value.field == "f"
    assert str(info.value).startswith("f: cannot be canonicalized (")
    assert str(info.value).endswith("); lone surrogates are not allowed")


def test_loads_json_reads_bytes_in_their_encoding() -> None:
    assert canonical.loads_json('["é"]'.encode("utf-16-le")) == ["é"]
    assert canonical.loads_json('["é"]'.encode("utf-16")) == ["é"]
    assert canonical.loads_json(b'\xef\xbb\xbf["x"]') == ["x"]
    assert canonical.loads_json(b'"\xed\xa0\x80"') == "\ud800"
    assert canonical.loads_json(bytearray(b"[9007199254740993]")) == [9007199254740992.0]


def test_loads_json_refuses_a_bom_in_text_like_json_loads() -> None:
    with pytest.raises(json.JSONDecodeError) as info:
        canonical.loads_json("\ufeff[1]")
    assert (info.value.msg, info.value.doc, info.value.pos) == (
        "Unexpected UTF-8 BOM (decode using utf-8-sig)",
        "\ufeff[1]",
        0,
    )


def test_loads_json_refuses_other_types_like_json_loads() -> None:
    with pytest.raises(TypeError) as info:
        canonical.loads_json(5)  # type: ignore[arg-type]
    assert str(info.value) == "the JSON object must be str, bytes or bytearray, not int"


def test_loads_json_nested_too_deeply_is_a_decode_error() -> None:
    text = "[" * 200_000 + "]" * 200_000
    with pytest.raises(json.JSONDecodeError) as info:
        canonical.loads_json(text)
    assert (info.value.msg, info.value.doc, info.value.pos) == ("nested too deeply to read", "[" * 80, 0)


def test_loads_document_passes_its_options() -> None:
    assert canonical.loads_document("[1]", parse_int=float) == [1.0]


# --- the C-speed path writes a plain tree once ---------------------------------------------------
def _never_read(data: Any) -> Any:
    raise AssertionError("bytes were read back")


@pytest.mark.parametrize(
    "value",
    [
        {"b": {"x": [1, "two\n", None, True]}, "a": [{"k": -SAFE}, []], "é": "\u2028\U0001f600"},
        [{"input": {"messages": [{"role": "user", "content": "hi"}]}}, {"z": 0, "y": SAFE}],
        {"prompt": "p", "chosen": "c", "rejected": "r"},
    ],
    ids=["nested", "rows", "flat"],
)
def test_a_plain_tree_is_written_once_and_never_read_back(value: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its types already make msgspec's bytes RFC 8785's: neither read back nor handed on."""
    import rfc8785

    expected = rfc8785.dumps(value)
    canonical._C.write  # noqa: B018 - made before the readers are replaced
    monkeypatch.setattr(canonical._C, "exact", _never_read)
    monkeypatch.setattr(canonical._C, "read", _never_read)
    calls = _rfc_calls(monkeypatch)
    assert canonical_json(value) == expected
    assert calls == []
