"""RFC 8785 (JCS) canonical JSON: the only byte form reviewtrail ever hashes."""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Callable, Iterator
from typing import Any

import rfc8785

from reviewtrail.errors import CanonicalJSONError, InvalidInputError

__all__ = [
    "canonical_flat",
    "canonical_json",
    "canonical_sha256",
    "canonical_value",
    "encodable_text",
    "is_canonical",
    "loads_canonical",
    "loads_document",
    "loads_json",
    "unique_members",
]


def encodable_text(value: object) -> bool:
    """Exactly a ``str`` that UTF-8 can encode (no lone surrogate): text canonical JSON writes
    as itself and reads back unchanged."""
    if type(value) is not str:
        return False
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def canonical_json(value: Any, *, field: str = "value") -> bytes:
    """Return the RFC 8785 bytes of ``value``.

    Raises :class:`CanonicalJSONError` naming ``field`` for NaN, Infinity, lone
    surrogates, integers beyond the IEEE-754 safe range, values that contain
    themselves and non-JSON types.
    """
    if type(value) is dict or type(value) is list:
        fast = _dump_at_c_speed(value)
        if fast is not None:
            return fast
    try:
        if _is_plain(value):
            return _dump_plain(value, field)
        return rfc8785.dumps(value)
    except CanonicalJSONError:
        raise
    except RecursionError as exc:
        where = _cycle_path(value, field)
        if where is not None:
            raise CanonicalJSONError(
                f"contains itself (at {where}); a JSON value cannot be cyclic", field=field
            ) from exc
        raise CanonicalJSONError("nested too deeply to canonicalize", field=field) from exc
    except rfc8785.FloatDomainError as exc:
        found = _non_finite_path(value, field)
        if found is not None:
            raise CanonicalJSONError(
                f"{found[1]} at {found[0]}: NaN and Infinity have no JSON form and are refused, never stored as null",
                field=field,
            ) from exc
        raise CanonicalJSONError(f"not representable in canonical JSON ({exc})", field=field) from exc
    except rfc8785.IntegerDomainError as exc:
        raise CanonicalJSONError(f"integer outside the JSON safe range ({exc})", field=field) from exc
    except (rfc8785.CanonicalizationError, UnicodeError) as exc:
        raise CanonicalJSONError(
            f"cannot be canonicalized ({exc}); lone surrogates are not allowed", field=field
        ) from exc
    except (TypeError, ValueError) as exc:
        raise CanonicalJSONError(f"not a JSON value ({exc})", field=field) from exc


# Fast path. For values made only of objects, arrays, strings, booleans, null and
# safe integers, whose object keys hold no code point at or above U+D800, RFC 8785
# coincides with sorted-key, separator-free JSON without ASCII escaping: strings
# escape only quote, backslash and control characters (lowercase \\u00xx), and
# sorting by code point equals sorting by UTF-16 code unit. Floats (whose ECMAScript
# form differs from Python's repr) and anything else go through ``rfc8785``.
# tests/test_canonical.py checks the equivalence on generated values.
_PLAIN_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode
_SAFE_INT = 2**53 - 1
_KEY_LIMIT = "\ud800"


def _dump_plain(value: Any, field: str) -> bytes:
    try:
        return _PLAIN_DUMPS(value).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CanonicalJSONError(
            f"cannot be canonicalized ({exc.reason}); lone surrogates are not allowed", field=field
        ) from exc


def _is_plain(value: Any) -> bool:
    # A container met twice (shared, or cyclic) is left to the general path, where a
    # cycle ends in RecursionError and is then located by _cycle_path. Scalars inside a
    # container are checked in place (no trip through the stack), and an ASCII key is
    # below U+D800 without looking at its characters.
    t = type(value)
    if t is not dict and t is not list:
        return _plain_scalar(value)
    stack = [value]
    pop, push = stack.pop, stack.append
    seen: set[int] = set()
    mark = seen.add
    while stack:
        item = pop()
        if id(item) in seen:
            return False
        mark(id(item))
        if type(item) is dict:
            for key in item:
                if type(key) is not str or (not key.isascii() and max(key) >= _KEY_LIMIT):
                    return False
            children: Any = item.values()
        else:
            children = item
        for child in children:
            t = type(child)
            if t is str or t is bool or child is None:
                continue
            if t is int:
                if -_SAFE_INT <= child <= _SAFE_INT:
                    continue
                return False
            if t is dict or t is list:
                push(child)
                continue
            return False
    return True


def _plain_scalar(value: Any) -> bool:
    t = type(value)
    if t is str or t is bool or value is None:
        return True
    return t is int and -_SAFE_INT <= value <= _SAFE_INT


def _cycle_path(value: Any, root: str) -> str | None:
    """Where ``value`` first refers back to a container it is inside of, or ``None``.

    Depth-first without recursion; only the keys of the current path are kept, and a
    container explored once is not explored again, so shared (acyclic) parts cost nothing.
    """
    top = _children(value)
    if top is None:
        return None
    on_path = {id(value)}
    done: set[int] = set()
    frames: list[tuple[Any, Iterator[tuple[Any, Any]]]] = [(value, top)]
    keys: list[Any] = []  # keys[i] leads from frames[i] to frames[i + 1]
    while frames:
        item, children = frames[-1]
        for key, child in children:
            sub = _children(child)
            if sub is None or id(child) in done:
                continue
            if id(child) in on_path:
                return root + "".join(_step(k) for k in [*keys, key])
            on_path.add(id(child))
            frames.append((child, sub))
            keys.append(key)
            break
        else:
            frames.pop()
            on_path.discard(id(item))
            done.add(id(item))
            if keys:
                keys.pop()
    return None


def _non_finite_path(value: Any, root: str) -> tuple[str, str] | None:
    """Where ``value`` first holds a float that is NaN or infinite, and which, or ``None``
    (depth-first, in the order an encoder meets them; shared containers visited once)."""
    stack: list[tuple[Any, str]] = [(value, root)]
    done: set[int] = set()
    while stack:
        item, where = stack.pop()
        if isinstance(item, float):
            if math.isnan(item):
                return where, "NaN"
            if math.isinf(item):
                return where, "Infinity" if item > 0 else "-Infinity"
            continue
        children = _children(item)
        if children is None or id(item) in done:
            continue
        done.add(id(item))
        stack.extend(reversed([(child, where + _step(key)) for key, child in children]))
    return None


def _children(item: Any) -> Iterator[tuple[Any, Any]] | None:
    if isinstance(item, dict):
        return iter(item.items())
    if isinstance(item, (list, tuple)):
        return iter(enumerate(item))
    return None


def _step(key: Any) -> str:
    if isinstance(key, int):
        return f"[{key}]"
    if isinstance(key, str) and key.isidentifier():
        return f".{key}"
    return f"[{json.dumps(key) if isinstance(key, str) else repr(key)}]"


def canonical_flat(obj: dict[str, str | int | None], *, field: str = "value") -> bytes:
    """RFC 8785 bytes of a flat object with ASCII keys (a record header): same bytes as
    :func:`canonical_json`, without walking a tree."""
    for key, value in obj.items():
        if not (
            key.isascii()
            and (value is None or type(value) is str or (type(value) is int and -_SAFE_INT <= value <= _SAFE_INT))
        ):
            return canonical_json(obj, field=field)
    return _dump_plain(obj, field)


def canonical_sha256(value: Any, *, field: str = "value") -> str:
    """SHA-256 (lowercase hex) of the canonical bytes of ``value``."""
    return hashlib.sha256(canonical_json(value, field=field)).hexdigest()


def _parse_int(text: str) -> int | float:
    # JCS numbers are IEEE-754 doubles: 2**53 written by a float must read back as one.
    value = int(text)
    return value if abs(value) <= _SAFE_INT else float(value)


_JSON_DECODER = json.JSONDecoder(parse_int=_parse_int)


_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


def loads_json(data: bytes | str) -> Any:
    """Parse JSON the way canonical bytes are meant: integers beyond 2**53 are doubles.

    Exactly ``json.loads(data, parse_int=...)`` (bytes decoded by their detected encoding, a
    leading BOM refused), with one decoder made once instead of one per call."""
    if isinstance(data, (bytes, bytearray)):
        # UTF-8 (what canonical bytes are) unless a BOM or a NUL in the first four bytes says
        # otherwise: json.detect_encoding's answer, without calling it.
        plain = b"\x00" not in data[:4] and not data.startswith(_BOMS)
        if plain and data.translate(_DIGIT_RUNS).find(_SIXTEEN_DIGITS) == -1:
            read = _read_at_c_speed(data)
            if read is not _UNREAD:
                return read
        text = data.decode("utf-8" if plain else json.detect_encoding(data), "surrogatepass")
    elif isinstance(data, str):
        if data.startswith("\ufeff"):
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", data, 0)
        text = data
    else:
        return loads_document(data, parse_int=_parse_int)  # its own TypeError, as json.loads gives
    try:
        return _JSON_DECODER.decode(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply to read", text[:80], 0) from None


# What loads_json reads at C speed: UTF-8 bytes with no run of sixteen digits (an integer that
# long may be beyond 2**53 - 1, which json reads as a double and msgspec as an integer). msgspec
# reads every other JSON value as json does; what it refuses (NaN, a lone surrogate, too deep a
# nesting, malformed bytes) is read, or refused, by json.
_DIGIT_RUNS = bytes(b"0"[0] if b in b"0123456789" else b"."[0] for b in range(256))
_SIXTEEN_DIGITS = b"0" * 16
_UNREAD = object()


def _read_at_c_speed(data: bytes | bytearray) -> Any:
    try:
        return _plain_decode()(data)
    except Exception:  # what msgspec cannot read: json reads it, or says why it cannot
        return _UNREAD


@functools.cache
def _plain_decode() -> Any:
    import msgspec

    return msgspec.json.Decoder().decode


def unique_members(
    field: str, error: type[InvalidInputError] = InvalidInputError
) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    """An ``object_pairs_hook`` for :func:`json.loads` that refuses a key given twice in one
    object, at any depth (``error``, an :class:`~reviewtrail.errors.InvalidInputError`, naming
    ``field`` and the key), where ``json`` would keep the last one: RFC 8785 JSON has unique
    member names."""

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise error(
                    f"key {key!r} appears twice in one object (RFC 8785 JSON has unique member names)", field=field
                )
            out[key] = value
        return out

    return hook


def loads_document(data: bytes | str, **options: Any) -> Any:
    """``json.loads`` that never ends in a RecursionError: a document nested too deeply for the
    parser is a :class:`json.JSONDecodeError` (a ``ValueError``) like any other malformed JSON."""
    try:
        return json.loads(data, **options)
    except RecursionError:
        text = data if isinstance(data, str) else data.decode("utf-8", errors="replace")
        raise json.JSONDecodeError("nested too deeply to read", text[:80], 0) from None


# What the fast canonical check must leave to the general one, found in one pass over the bytes
# (mapped by ``_MARKS``, then searched): a lead byte of a code point at or above U+D000 (keys
# holding such characters may sort differently by UTF-16 code unit), mapped to ``!``; and an
# integer of sixteen digits or more (it may be beyond 2**53 - 1, which reads as a double). In
# bytes an encoder gives back, a number starts the value or follows ``:``, ``,`` or ``[``: these
# and the minus sign map to ``:``, digits to ``0``. A digit run in a string can only send bytes
# to the general check, never past it.
_MARKS = bytes(
    b"0"[0] if chr(b) in "0123456789" else b":"[0] if chr(b) in ":,[-" else b"!"[0] if b >= 0xED else b"."[0]
    for b in range(256)
)
_LONG_INT = b":" + b"0" * 16


def _refuse_float(text: str) -> Any:
    raise ValueError(text)


@functools.cache
def _fast() -> tuple[Any, Any, type[Exception], type[Exception]]:
    """msgspec's JSON decoder (refusing every float) and sorted-key encoder, made on first use:
    loaded only by what checks stored payloads."""
    import msgspec

    return (
        msgspec.json.Decoder(float_hook=_refuse_float).decode,
        msgspec.json.Encoder(order="sorted").encode,
        msgspec.ValidationError,
        msgspec.DecodeError,
    )


def _dump_at_c_speed(value: dict[Any, Any] | list[Any]) -> bytes | None:
    """The RFC 8785 bytes of ``value`` written by msgspec's sorted-key encoder, or ``None`` when
    that encoder may disagree with RFC 8785 or may have taken what has no JSON form (the caller
    then takes the general path, which also words the refusal). The encoding is kept only when
    its bytes hold what :func:`canonical_value` checks at C speed (no float, no integer of
    sixteen digits or more, no character at or above U+D000) and read back equal to ``value``:
    so NaN (written as null), a tuple, a non-string key or a date (written as a string) are
    never taken, and a value that contains itself fails the encoder."""
    decode, encode, _float, _malformed = _fast()
    try:
        data: bytes = encode(value)
    except Exception:  # a type, depth or text msgspec cannot write: the general path says why
        return None
    marks = data.translate(_MARKS)
    if marks.find(b"!") != -1 or marks.find(_LONG_INT) != -1:
        return None
    try:
        back = decode(data)
    except Exception:  # a float (refused by the decoder) or too deep a nesting
        return None
    return data if back == value else None


def is_canonical(data: bytes) -> bool:
    """Whether ``data`` is exactly the RFC 8785 form of the JSON value it holds."""
    return canonical_value(data)[0]


def canonical_value(data: bytes) -> tuple[bool, Any]:
    """``(is_canonical(data), value)``: when the bytes are canonical, ``value`` is what
    :func:`loads_json` gives for them (parsed once, for callers that read the value too);
    otherwise it is ``None`` and means nothing.

    Bytes holding only objects, arrays, strings, booleans, null and integers of at most fifteen
    digits, with no character at or above U+D000, are checked at C speed, with one decode and one
    encode: for such values RFC 8785 is what msgspec's sorted-key encoder writes (strings escape
    only quote, backslash and control characters, ``\\u00xx`` lowercase; keys sort by code
    point, which is UTF-16 order below U+D000), and msgspec reads them as :func:`loads_json`
    does, so the bytes are canonical exactly when that encoding of their parse gives them back.
    What msgspec cannot read (malformed JSON or UTF-8, a lone surrogate, too deep a nesting) has
    no canonical form; anything else (floats, long integers, high characters) takes the general
    check."""
    marks = data.translate(_MARKS)
    if (
        (data.isascii() or marks.find(b"!") == -1)  # ASCII bytes hold no lead byte of a high character
        and marks.find(_LONG_INT) == -1
        and not marks.startswith(_LONG_INT[1:])
    ):
        decode, encode, has_float, malformed = _fast()
        try:
            value = decode(data)
        except has_float:
            pass
        except (malformed, RecursionError):
            return False, None
        else:
            return (True, value) if encode(value) == data else (False, None)
    try:
        value = loads_canonical(data)
    except CanonicalJSONError:
        return False, None
    return True, value


def loads_canonical(data: bytes, *, field: str = "value") -> Any:
    """Parse JSON bytes and check they are exactly canonical (RFC 8785)."""
    try:
        value = loads_json(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CanonicalJSONError(f"not valid UTF-8 JSON ({exc})", field=field) from exc
    if canonical_json(value, field=field) != data:
        raise CanonicalJSONError("bytes are not in RFC 8785 canonical form", field=field)
    return value
