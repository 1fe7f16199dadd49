"""Payload models as msgspec ``Struct``s: one model decodes, checks, describes and builds a payload.

A model is a frozen :class:`PayloadStruct` (unknown fields refused, fields given by keyword); its
wire names are its field names unless the class renames them (``rename={"media_type": "mediaType"}``
or ``rename="camel"``). :func:`decode` checks a payload in its JSON form, strictly (``"3"`` is not
an integer and ``true`` is not 1), with one cached decoder per model, and turns a refusal into
:class:`~reviewtrail.errors.InvalidInputError` naming the field path (``payload.files.a.size``) and
the problem in the words pydantic's models used (``Field required``, ``must be an integer, not a
boolean``...). A model's own rules go in ``__post_init__``, raising :class:`FieldProblem`.

:func:`json_schema` describes a model as pydantic's ``model_json_schema(by_alias=True)`` did (the
published schemas stay byte for byte): titles, ``$defs``, ``additionalProperties``, defaults and
constraints (``msgspec.Meta``).
"""

from __future__ import annotations

import ast
import inspect
import re
import types
import typing
from datetime import datetime
from typing import Any, ClassVar, Self, TypeVar

import msgspec

from reviewtrail.errors import InvalidInputError

__all__ = [
    "FieldProblem",
    "Model",
    "PayloadStruct",
    "decode",
    "json_schema",
    "parse",
    "problem",
    "read",
    "whole",
    "words",
]

S = TypeVar("S", bound=msgspec.Struct)


class FieldProblem(InvalidInputError):
    """A model's own rule broken (raised by ``__post_init__``, so by the constructor and the
    decoder alike): ``field`` is the wire name of the field (``None``: the object itself) and
    ``message`` the problem; a decoder's refusal words it as pydantic's validators did
    (``Value error, ...``)."""

    def __init__(self, field: str | None, message: str) -> None:
        prefix = f"{field}: "
        super().__init__(message.removeprefix(prefix) if field else message, field=field)
        self.message = message


class Model(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Base of every msgspec model: frozen, unknown fields refused, fields given by keyword."""

    @classmethod
    def read(cls, value: Any, *, field: str = "payload") -> Self:
        """The model from its JSON value (a stored payload): :func:`decode` at ``field``."""
        return decode(cls, value, field=field)


class PayloadStruct(Model, frozen=True):
    """Base of every msgspec payload model: the protocol the record catalog asks of a model."""

    record_type: ClassVar[str]

    @classmethod
    def check_payload(cls, type_: str, payload: Any, *, field: str = "payload") -> None:
        """Raise :class:`InvalidInputError` naming the first bad field when ``payload`` breaks the model."""
        decode(cls, payload, field=field, where=f" (record type {type_})")

    @classmethod
    def payload_schema(cls) -> dict[str, Any]:
        return json_schema(cls)

    def payload_json(self) -> dict[str, Any]:
        """The payload as JSON values under its wire names (every field, ``None`` as null)."""
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out


_DECODERS: dict[type[Any], msgspec.json.Decoder[Any]] = {}


def _decoder(model: type[S]) -> msgspec.json.Decoder[S]:
    decoder = _DECODERS.get(model)
    if decoder is None:
        decoder = _DECODERS[model] = msgspec.json.Decoder(model)
    return decoder


def read(model: type[S], data: bytes, *, field: str = "payload") -> S:
    """``model`` from stored JSON bytes (a record's payload), decoded once; a refusal as
    :func:`decode` words it."""
    try:
        return _decoder(model).decode(data)
    except msgspec.ValidationError:
        return decode(model, msgspec.json.decode(data), field=field)


def words(exc: InvalidInputError) -> str:
    """A refusal's problem without the field it names."""
    return str(exc).removeprefix(f"{exc.field}: ") if exc.field else str(exc)


def parse(model: type[S], value: Any, *, field: str) -> S:
    """:func:`decode`, a refused field named by its path in ``value`` alone (``field`` when the
    value as a whole is refused): for input that is not yet a record's payload."""
    return decode(model, value, field=field, within=False)


def decode(model: type[S], value: Any, *, field: str, where: str = "", within: bool = True) -> S:
    """``model`` from a Python value, checked in its JSON form (what a reader of the record sees);
    a refusal as :class:`InvalidInputError` at ``field`` (``where`` ends its message).

    msgspec writes that form (a ``str`` subclass as its text, a tuple as an array); what has no
    JSON form but msgspec can write (NaN as null, bytes as base64 text...) passes here only where
    the model takes any value, and is refused when the record is encoded (canonical JSON names
    its path)."""
    try:
        return _decoder(model).decode(_encode(value))
    except msgspec.ValidationError as exc:
        path, words = problem(exc, model, value)
        named = ".".join((field, *path)) if within else ".".join(path) or field
        raise InvalidInputError(f"{words}{where}", field=named) from exc
    except RecursionError as exc:
        raise InvalidInputError("nested too deeply to check", field=field) from exc
    except (TypeError, ValueError, OverflowError, msgspec.DecodeError) as exc:
        raise InvalidInputError(f"not a JSON value ({exc})", field=field) from exc


_encode = msgspec.json.Encoder().encode


# --- refusals in pydantic's words ----------------------------------------------------------

_AT = re.compile(r"^(?P<message>.*?)(?: - at (?P<key>`key` in )?`\$(?P<path>[^`]*)`)?$", re.S)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")
_EXPECTED = re.compile(r"^Expected `(?P<want>[^`]+)`, got `(?P<got>[^`]+)`$")
_BOUND = re.compile(r"^Expected `(?:int|float)` (?P<op>>=|>|<=|<) (?P<n>\S+)$")
_LENGTH = re.compile(r"^Expected `(?P<kind>str|array|object)` of length (?P<op>>=|<=) (?P<n>\d+)$")
_LENGTH_WORDS = {"str": ("String", "character"), "array": ("List", "item"), "object": ("Dictionary", "item")}
_KINDS = {
    "bool": "a boolean",
    "int": "an integer",
    "float": "a decimal number",
    "str": "a string",
    "null": "null",
    "array": "a list",
    "object": "a mapping",
}
_BOUNDS = {
    ">=": "greater than or equal to",
    ">": "greater than",
    "<=": "less than or equal to",
    "<": "less than",
}
_SAID = {
    "Expected `datetime` with a timezone component": "Input should have timezone info",
    "Invalid RFC3339 encoded datetime": "Input should be a valid datetime",
}
_WANTED = {
    "str": "Input should be a valid string",
    "object": "Input should be a valid dictionary",
    "array": "Input should be a valid list",
}


#: A pattern's end of text. Python's ``$`` also matches before a final newline, so a model's
#: pattern ends with ``\Z`` (:func:`whole`), published and worded as ``$`` (JSON Schema's end).
_END = r"\Z"


def whole(pattern: str) -> str:
    """``pattern`` (anchored ``^...$``) matching the whole text only, for ``msgspec.Meta``."""
    return pattern.removesuffix("$") + _END


def problem(exc: msgspec.ValidationError, model: type[Any], value: Any) -> tuple[tuple[str, ...], str]:
    """The field path (wire names, keys, indexes) and the words of a decoder's refusal."""
    cause = exc.__cause__
    found = _AT.match(str(exc))
    assert found is not None
    message, raw = found["message"], found["path"] or ""
    path = _resolve(raw, model, value)
    if found["key"]:  # a mapping's key refused: the first key its type refuses, as pydantic named it
        keys = typing.get_args(_bare(_type_at(model, path)))[:1]
        at = _step_into_path(value, path, model)
        bad = next((k for k, _ in _items(at) if keys and not _accepts(keys[0], k)), "...")
        return (*path, bad, "[key]"), _words(message, keys[0] if keys else None)
    if isinstance(cause, FieldProblem):
        return ((*path, cause.field) if cause.field else path), f"Value error, {cause.message}"
    tag_words = _tag_words(message, path, model, value)
    if tag_words is not None:
        return tag_words
    for pattern, named in (("Object contains unknown field `", "Extra inputs are not permitted"),
                           ("Object missing required field `", "Field required")):  # fmt: skip
        if message.startswith(pattern):
            return (*path, message[len(pattern) : -1]), named
    return path, _words(message, _type_at(model, path))


def _words(message: str, tp: Any) -> str:
    if message in _SAID:
        return _SAID[message]
    expected = _EXPECTED.match(message)
    if expected is not None:
        want = expected["want"].removesuffix(" | null")
        got = _KINDS.get(expected["got"], expected["got"])
        if want == "int":
            return f"must be an integer, not {got}"
        if want == "bool":
            return f"must be a boolean (true or false), not {got}"
        if want == "float" and expected["got"] != "object":
            return f"must be a number, not {got}"
        return _WANTED.get(want, message)
    bound = _BOUND.match(message)
    if bound is not None:
        return f"Input should be {_BOUNDS[bound['op']]} {bound['n'].removesuffix('.0')}"  # a bound as written
    length = _LENGTH.match(message)
    if length is not None:
        most = "at least" if length["op"] == ">=" else "at most"
        what, unit = _LENGTH_WORDS[length["kind"]]
        return f"{what} should have {most} {length['n']} {unit}{'' if length['n'] == '1' else 's'}"
    if message.startswith("Expected `str` matching regex "):  # the pattern as written, not its repr
        pattern = ast.literal_eval(message.removeprefix("Expected `str` matching regex "))
        if pattern.endswith(_END):  # a whole-text pattern is shown as published, ending in $
            pattern = pattern.removesuffix(_END) + "$"
        return f"String should match pattern '{pattern}'"
    if message.startswith("Invalid enum value "):
        values = [repr(v) for v in _literal_values(tp)]
        if values:
            shown = values[0] if len(values) == 1 else f"{', '.join(values[:-1])} or {values[-1]}"
            return f"Input should be {shown}"
    return message


def _resolve(raw: str, model: type[Any], value: Any) -> tuple[str, ...]:
    """msgspec's path (``.files[...].size``) with each mapping's key found in ``value``."""
    out: list[str] = []
    tp: Any = model
    for name, index in [("", ""), *_STEP.findall(raw)]:
        step = name or index
        if step == "...":  # a mapping's value: the first key whose value the mapping's type refuses
            value_type = _mapping_value(tp)
            step = next((k for k, v in _items(value) if not _accepts(value_type, v)), "...")
            tp = value_type
        elif step:
            tp = _child(tp, step)
        if step:
            out.append(step)
            value = _step_into(value, step)
        tagged = _tagged(tp, value)
        if tagged is not None:  # one of tagged models: pydantic named the tag in the path
            out.append(tagged[1])
            tp = tagged[0]
    return tuple(out)


def _tag_words(message: str, path: tuple[str, ...], model: Any, value: Any) -> tuple[tuple[str, ...], str] | None:
    """The refusal of a missing or unknown tag of tagged models, in pydantic's words (at the tag)."""
    lacking = "Object missing required field `"
    missing = message.startswith(lacking)
    parent = path if missing else path[:-1]
    options = typing.get_args(_bare(_type_at(model, parent))) if path or missing else ()
    tags = [_tag(o) for o in options if _is_struct(o) and _tag(o)[0]]
    named = message[len(lacking) : -1] if missing else (path[-1] if path else None)
    if not tags or named != tags[0][0]:
        return None
    field = str(tags[0][0])
    if missing:
        return (*parent, field), f"Unable to extract tag using discriminator {field!r}"
    given = _step_into_path(value, path, model)
    expected = ", ".join(repr(tag) for _, tag in tags)
    return path, f"Input tag '{given}' found using {field!r} does not match any of the expected tags: {expected}"


def _tagged(tp: Any, value: Any) -> tuple[Any, Any] | None:
    """The model of a union of tagged models that ``value`` names by its tag, and the tag."""
    options = typing.get_args(_bare(tp)) if _is_union(_bare(tp)) else ()
    for option in options:
        field, tag = _tag(option) if _is_struct(option) else (None, None)
        if field is not None and isinstance(value, dict) and value.get(field) == tag:
            return option, tag
    return None


def _step_into_path(value: Any, path: tuple[str, ...], model: Any) -> Any:
    tp = model
    for step in path:
        tagged = _tagged(tp, value)
        if tagged is not None and step == tagged[1]:
            tp = tagged[0]
            continue
        value, tp = _step_into(value, step), _child(tp, step)
    return value


def _items(value: Any) -> list[tuple[str, Any]]:
    return list(value.items()) if isinstance(value, dict) else []


def _step_into(value: Any, step: str) -> Any:
    if isinstance(value, dict):
        return value.get(step)
    if isinstance(value, list) and step.isdigit() and int(step) < len(value):
        return value[int(step)]
    return None


def _accepts(tp: Any, value: Any) -> bool:
    if tp is None:
        return True
    try:
        msgspec.json.decode(_encode(value), type=tp)
    except (msgspec.ValidationError, msgspec.DecodeError, TypeError, ValueError):
        return False
    return True


def _bare(tp: Any) -> Any:
    """``tp`` without ``Annotated`` and without ``None`` in a union of one other type."""
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    if _is_union(tp):
        rest = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(rest) == 1:
            return _bare(rest[0])
    return tp


def _child(tp: Any, step: str) -> Any:
    tp = _bare(tp)
    for option in typing.get_args(tp) if _is_union(tp) else ():  # the model a tag names
        if _is_struct(option) and _tag(option)[1] == step:
            return option
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        for f in msgspec.structs.fields(tp):
            if f.encode_name == step:
                return f.type
        return None
    if typing.get_origin(tp) in (list, tuple):
        args = typing.get_args(tp)
        return args[0] if args else None
    return _mapping_value(tp)


def _mapping_value(tp: Any) -> Any:
    tp = _bare(tp)
    if typing.get_origin(tp) is dict:
        return typing.get_args(tp)[1]
    return None


def _type_at(model: type[Any], path: tuple[str, ...]) -> Any:
    tp: Any = model
    for step in path:
        tp = _child(tp, step)
    return tp


def _literal_values(tp: Any) -> tuple[Any, ...]:
    tp = _bare(tp)
    return typing.get_args(tp) if typing.get_origin(tp) is typing.Literal else ()


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


# --- JSON Schema, as pydantic wrote it ---------------------------------------------------


def json_schema(model: type[msgspec.Struct]) -> dict[str, Any]:
    """The JSON Schema of ``model`` (wire names) in the form of pydantic's ``model_json_schema``."""
    defs: dict[str, Any] = {}
    out = _object(model, defs)
    return {"$defs": dict(sorted(defs.items())), **out} if defs else out


def _object(model: type[msgspec.Struct], defs: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    tag_field, tag = _tag(model)
    if tag_field is not None:  # a tagged model's tag: a field of its own in pydantic's form
        properties[tag_field] = {"const": tag, "default": tag, "title": tag_field.title(), "type": "string"}
    for f in msgspec.structs.fields(model):
        schema = _schema(f.type, defs)
        if not _is_struct(_bare(f.type)):
            schema["title"] = f.encode_name.title().replace("_", " ")
        if f.default is not msgspec.NODEFAULT:
            schema["default"] = msgspec.json.decode(_encode(f.default))  # its JSON value: a tuple as a list
        if f.required:
            required.append(f.encode_name)
        properties[f.encode_name] = schema
    out: dict[str, Any] = {"additionalProperties": False}
    doc = model.__dict__.get("__doc__")
    if doc:
        out["description"] = inspect.cleandoc(doc)
    out["properties"] = properties
    if required:
        out["required"] = required
    return {**out, "title": model.__name__, "type": "object"}


def _tag(model: Any) -> tuple[str | None, Any]:
    config = model.__struct_config__
    return config.tag_field, config.tag


def _is_struct(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, msgspec.Struct)


_SCALARS: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    bool: {"type": "boolean"},
    float: {"type": "number"},
    type(None): {"type": "null"},
    datetime: {"format": "date-time", "type": "string"},
}
_META = {
    "ge": "minimum",
    "gt": "exclusiveMinimum",
    "le": "maximum",
    "lt": "exclusiveMaximum",
    "pattern": "pattern",
    "min_length": "minLength",
    "max_length": "maxLength",
    "description": "description",
}


def _schema(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Annotated:
        out = _schema(args[0], defs)
        for meta in args[1:]:
            if isinstance(meta, msgspec.Meta) and meta.extra_json_schema is not None:
                out.update(meta.extra_json_schema)  # the constraints as published, written as they are
            elif isinstance(meta, msgspec.Meta):
                out.update({key: getattr(meta, name) for name, key in _META.items() if getattr(meta, name) is not None})
                if "pattern" in out and out["pattern"].endswith(_END):
                    out["pattern"] = out["pattern"].removesuffix(_END) + "$"
        if out.get("type") in ("array", "object"):  # a length bounds a list's items, a mapping's keys
            for length, bound in (("minLength", "min"), ("maxLength", "max")):
                if length in out:
                    out[bound + ("Items" if out["type"] == "array" else "Properties")] = out.pop(length)
        return out
    if tp is Any:
        return {}
    if tp in _SCALARS:
        return dict(_SCALARS[tp])
    if _is_struct(tp):
        if tp.__name__ not in defs:
            defs[tp.__name__] = {}  # taken before its fields, so a model that holds itself ends
            defs[tp.__name__] = _object(tp, defs)
        return {"$ref": f"#/$defs/{tp.__name__}"}
    if _is_union(tp) and all(_is_struct(a) and _tag(a)[0] for a in args):  # tagged: pydantic's discriminator
        refs = [_schema(a, defs) for a in args]
        mapping = {_tag(a)[1]: ref["$ref"] for a, ref in zip(args, refs, strict=True)}
        return {"discriminator": {"mapping": mapping, "propertyName": _tag(args[0])[0]}, "oneOf": refs}
    if _is_union(tp):
        return {"anyOf": [_schema(a, defs) for a in args]}
    if origin is typing.Literal:
        kinds = {type(a) for a in args}
        kind = _SCALARS[kinds.pop()]["type"] if len(kinds) == 1 and next(iter(kinds)) in _SCALARS else None
        out = {"const": args[0]} if len(args) == 1 else {"enum": list(args)}
        return {**out, "type": kind} if kind else out
    if origin is dict:
        key, value = args if args else (str, Any)
        pattern = _schema(key, defs).get("pattern")
        if pattern is not None:  # keys of a pattern
            return {"patternProperties": {pattern: _schema(value, defs)}, "type": "object"}
        return {"additionalProperties": True if value is Any else _schema(value, defs), "type": "object"}
    if origin in (list, tuple) and args:
        return {"items": _schema(args[0], defs), "type": "array"}
    raise TypeError(f"no JSON Schema for {tp!r}: add its form to reviewtrail._struct")
