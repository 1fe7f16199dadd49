"""RFC 8785 (JCS) canonical JSON: the only byte form reviewtrail ever hashes."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterator
from typing import Any

from reviewtrail.errors import CanonicalJSONError, InvalidInputError

__all__ = [
    "canonical_flat",
    "canonical_json",
    "canonical_sha256",
    "canonical_value",
    "encodable_text",
    "is_canonical",
    "is_plain",
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
    return _general_json(value, field)


def _general_json(value: Any, field: str) -> bytes:
    """:func:`canonical_json` without the C-speed path: the stdlib encoder for plain values,
    ``rfc8785`` for the rest, and the refusal worded."""
    import rfc8785  # loaded on the first value the C-speed path declines, not by every command

    try:
        if is_plain(value):
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


def is_plain(value: Any, written: bool = False) -> bool:
    """Whether ``value`` is made only of objects, arrays, text, booleans, null and safe integers
    of exactly those types, its keys text below U+D800.

    A container met twice (shared, or cyclic) is left to the general path, where a cycle ends in
    RecursionError and is then located by _cycle_path. Scalars inside a container are checked in
    place (no trip through the stack), and an ASCII key is below U+D800 without looking at its
    characters. ``written``: msgspec wrote ``value`` already, so it holds no cycle and its keys
    are text that :func:`_dump_at_c_speed` has looked at: only the values are walked."""
    t = type(value)
    if t is not dict and t is not list:
        return _plain_scalar(value)
    stack = [value]
    pop, push = stack.pop, stack.append
    seen: set[int] | None = None if written else set()
    while stack:
        item = pop()
        if seen is not None:
            if id(item) in seen:
                return False
            seen.add(id(item))
            if type(item) is dict:
                for key in item:
                    if type(key) is not str or (not key.isascii() and max(key) >= _KEY_LIMIT):
                        return False
        children: Any = item.values() if type(item) is dict else item
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
    if type(obj) is dict and _flat(obj):
        return _dump_plain(obj, field)
    return canonical_json(obj, field=field)


def canonical_sha256(value: Any, *, field: str = "value") -> str:
    """SHA-256 (lowercase hex) of the canonical bytes of ``value``."""
    return hashlib.sha256(canonical_json(value, field=field)).hexdigest()


def _parse_int(text: str) -> int | float:
    # JCS numbers are IEEE-754 doubles: 2**53 written by a float must read back as one.
    value = int(text)
    return value if abs(value) <= _SAFE_INT else float(value)


_JSON_DECODER = json.JSONDecoder(parse_int=_parse_int)


def loads_json(data: bytes | str) -> Any:
    """Parse JSON the way canonical bytes are meant: integers beyond 2**53 are doubles.

    Exactly ``json.loads(data, parse_int=...)`` (bytes decoded by their detected encoding, a
    leading BOM in text refused), with one decoder made once instead of one per call. Bytes holding no
    run of sixteen digits are read at C speed (see :data:`_MARKS`): msgspec reads every such JSON
    value as json does, and refuses what it cannot read so (NaN, a lone surrogate, too deep a
    nesting, malformed bytes, a BOM, a NUL of UTF-16 or UTF-32), which json then reads, or refuses."""
    if isinstance(data, (bytes, bytearray)):
        marks = data.translate(_MARKS)
        if marks.find(_LONG_INT) == -1 and not marks.startswith(_DIGITS):
            try:
                return _C.read(data)
            except Exception:  # noqa: S110 - what msgspec cannot read, json reads below or says why not
                pass
        text = data.decode(json.detect_encoding(data), "surrogatepass")
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


# The C-speed path: msgspec's JSON reader, its reader that refuses every float, and its sorted-key
# writer, made on first use (only what reads or checks payloads loads msgspec), and the one table
# that says which bytes it may take. Mapped by ``_MARKS``, then searched:
# - an integer of sixteen digits or more (it may be beyond 2**53 - 1, which json reads as a
#   double and msgspec as an integer): a number starts the text or follows ``:``, ``,``, ``[`` or
#   white space, which map to ``:`` with the minus sign, and digits map to ``0``. A digit run in
#   a string can only send bytes to the general path, never past it;
# - keys that may sort differently by UTF-16 code unit than by code point: that takes a character
#   in U+E000..U+FFFF (lead byte 0xEE or 0xEF, mapped to ``!``) and one above U+FFFF (lead byte
#   0xF0 to 0xF4, mapped to ``^``) in the same bytes. Either alone sorts alike both ways, as does
#   everything below U+D800 (a lone surrogate has no UTF-8 form: msgspec refuses it).
_MARKS = bytes(
    b"0"[0]
    if chr(b) in "0123456789"
    else b":"[0]
    if chr(b) in ":,[- \t\n\r"
    else b"!"[0]
    if b in (0xEE, 0xEF)
    else b"^"[0]
    if 0xF0 <= b <= 0xF4
    else b"."[0]
    for b in range(256)
)
_DIGITS = b"0" * 16
_LONG_INT = b":" + _DIGITS


def _mixed_high(marks: bytes) -> bool:
    """Whether bytes mapped by :data:`_MARKS` hold characters of both ranges whose order UTF-16
    reverses."""
    return marks.find(b"!") != -1 and marks.find(b"^") != -1


def _refuse_float(text: str) -> Any:
    raise ValueError(text)


class _CSpeed:
    """msgspec's JSON ``read`` (as :func:`loads_json` reads, floats and all), its ``exact`` read
    (every float refused with ``Float``; ``Malformed`` for what is not JSON) and its sorted-key
    ``write``, made on the first use of any of them."""

    read: Callable[[bytes | bytearray], Any]
    exact: Callable[[bytes], Any]
    write: Callable[[Any], bytes]
    Float: type[Exception]
    Malformed: type[Exception]

    def __getattr__(self, name: str) -> Any:  # only until made: then they are plain attributes
        import msgspec

        self.read = msgspec.json.Decoder().decode
        self.exact = msgspec.json.Decoder(float_hook=_refuse_float).decode
        self.write = msgspec.json.Encoder(order="sorted").encode
        self.Float, self.Malformed = msgspec.ValidationError, msgspec.DecodeError
        return self.__dict__[name]


_C = _CSpeed()


def _dump_at_c_speed(value: dict[Any, Any] | list[Any]) -> bytes | None:
    """The RFC 8785 bytes of ``value`` written by msgspec's sorted-key encoder, or ``None`` when
    that encoder may disagree with RFC 8785 or may have taken what has no JSON form (the caller
    then takes the general path, which also words the refusal).

    The encoder refuses what RFC 8785 refuses of a tree of objects, arrays, text, booleans, null
    and safe integers (keys that are not text, a lone surrogate, a value that contains itself), and
    writes the rest as RFC 8785 does, but for keys UTF-16 may order otherwise (see
    :data:`_MARKS`). So bytes it wrote are taken when the value's types say it is such a tree
    (:func:`is_plain` of what was written): never a float, NaN (written as null), a
    tuple, a date (written as text), bytes (base64) or an integer beyond 2**53 - 1."""
    try:
        data: bytes = _C.write(value)
    except Exception:  # a type, depth or text msgspec cannot write: the general path says why
        return None
    if not data.isascii() and _mixed_high(data.translate(_MARKS)):
        return None
    return data if is_plain(value, True) else None


def _flat(value: dict[Any, Any]) -> bool:
    """Whether ``value`` is an object of ASCII text keys whose values are text, booleans, null and
    safe integers: canonical JSON by its types (a lone surrogate in a value has no form at all)."""
    for key, item in value.items():
        t = type(item)
        if not (t is str or item is None or t is bool or (t is int and -_SAFE_INT <= item <= _SAFE_INT)):
            return False
        if type(key) is not str or not key.isascii():
            return False
    return True


def is_canonical(data: bytes) -> bool:
    """Whether ``data`` is exactly the RFC 8785 form of the JSON value it holds."""
    return canonical_value(data)[0]


def canonical_value(data: bytes) -> tuple[bool, Any]:
    """``(is_canonical(data), value)``: when the bytes are canonical, ``value`` is what
    :func:`loads_json` gives for them (parsed once, for callers that read the value too);
    otherwise it is ``None`` and means nothing.

    Bytes holding only objects, arrays, strings, booleans, null and integers of at most fifteen
    digits, whose keys do not mix characters of U+E000–U+FFFF with characters above U+FFFF, are
    checked at C speed, with one decode and one encode: for such values RFC 8785 is what msgspec's
    sorted-key encoder writes (strings escape only quote, backslash and control characters,
    ``\\u00xx`` lowercase; keys sort by code point, which is UTF-16 order unless both of those
    ranges meet), and msgspec reads them as :func:`loads_json`
    does, so the bytes are canonical exactly when that encoding of their parse gives them back.
    What msgspec cannot read (malformed JSON or UTF-8, a lone surrogate, too deep a nesting) has
    no canonical form; anything else (floats, long integers, high characters) takes the general
    check."""
    marks = data.translate(_MARKS)
    if marks.find(_LONG_INT) == -1 and not marks.startswith(_DIGITS) and (data.isascii() or not _mixed_high(marks)):
        c = _C
        try:
            value = c.exact(data)
        except c.Float:
            pass
        except (c.Malformed, RecursionError):
            return False, None
        else:
            return (True, value) if c.write(value) == data else (False, None)
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
