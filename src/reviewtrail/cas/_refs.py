"""CAS references: the only form in which records point at bytes.

A reference is a msgspec model (:mod:`reviewtrail._struct`): made by its constructor or decoded
from its JSON object, it is checked by the same rules (``__post_init__``), and found in a payload
by shape (:func:`refs_in`). A payload model with a reference field decodes and describes it with
this class. The address rules are in :mod:`reviewtrail.cas._address`.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

import msgspec

from reviewtrail._struct import FieldProblem, Model, problem
from reviewtrail.cas._address import (
    DEFAULT_MEDIA_TYPE,
    DIGEST_PREFIX,
    POOLS,
    Digest,
    Pool,
    check_hex,
    check_media_type,
    is_digest,
    is_hex,
    parse_digest,
)
from reviewtrail.errors import InvalidInputError, kind_of

__all__ = ["CasObjectRef", "CasRef", "refs_in"]

R = TypeVar("R", bound="_Ref")
Size = Annotated[int, msgspec.Meta(ge=0)]


def _size(value: object) -> None:
    if type(value) is int and value >= 0:
        return
    if type(value) is not int:
        raise FieldProblem("size", f"must be an integer, not {kind_of(value)}")
    if value < 0:
        raise FieldProblem("size", "Input should be greater than or equal to 0")


def _rule(check: Any, value: object, field: str) -> None:
    if not isinstance(value, str):
        raise FieldProblem(field, "Input should be a valid string")
    try:
        check(value)
    except InvalidInputError as exc:
        raise FieldProblem(field, str(exc)) from None


class _Ref:
    """What both references share: read from a JSON object."""

    __slots__ = ()

    @classmethod
    def model_validate(cls: type[R], obj: Any) -> R:
        """A reference from its JSON object, or itself; a refusal names the field."""
        if isinstance(obj, cls):
            return obj
        try:
            return msgspec.convert(obj, cls)
        except msgspec.ValidationError as exc:
            path, words = problem(exc, cls, obj)
            raise InvalidInputError(words, field=".".join(path) or "ref") from exc


class CasObjectRef(_Ref, Model, frozen=True):
    """``{hash, size}``: the untyped reference records store (docs/architecture.md, "Content-addressed store")."""

    hash: str
    size: Size

    def __post_init__(self) -> None:
        if not is_hex(self.hash):
            _rule(check_hex, self.hash, "hash")
        _size(self.size)

    @property
    def digest(self) -> Digest:
        return Digest(DIGEST_PREFIX + self.hash)

    def to_json(self) -> dict[str, Any]:
        return {"hash": self.hash, "size": self.size}


class CasRef(_Ref, Model, frozen=True, rename={"media_type": "mediaType"}):
    """``{pool, digest, size, mediaType}``: the typed reference."""

    pool: Pool
    digest: str
    size: Size
    media_type: str = DEFAULT_MEDIA_TYPE

    def __post_init__(self) -> None:
        if self.pool not in POOLS:
            raise FieldProblem("pool", "Input should be 'data' or 'agent-state'")
        if not is_digest(self.digest):
            _rule(parse_digest, self.digest, "digest")
        _size(self.size)
        if self.media_type != DEFAULT_MEDIA_TYPE:
            _rule(check_media_type, self.media_type, "mediaType")

    @property
    def hash(self) -> str:
        return self.digest[len(DIGEST_PREFIX) :]

    def object_ref(self) -> CasObjectRef:
        return CasObjectRef(hash=self.hash, size=self.size)

    def to_json(self) -> dict[str, Any]:
        return {"pool": self.pool, "digest": self.digest, "size": self.size, "mediaType": self.media_type}


_OBJECT_KEYS = frozenset({"hash", "size"})
_TYPED_KEYS = frozenset({"pool", "digest", "size", "mediaType"})
_LEAVES = frozenset({str, int, float, bool, type(None)})  # JSON values that hold nothing


def refs_in(value: Any) -> list[CasObjectRef | CasRef]:
    """Every CAS reference in a JSON value, found by shape.

    An object whose keys are exactly ``{hash, size}`` or exactly
    ``{pool, digest, size, mediaType}`` is a reference. A shape that matches but
    does not validate raises :class:`InvalidInputError`, so a malformed reference
    can never slip into the ledger unnoticed.
    """
    found: list[CasObjectRef | CasRef] = []
    stack: list[Any] = [value]
    pop, push, leaves = stack.pop, stack.extend, _LEAVES
    while stack:
        item = pop()
        if type(item) in leaves:
            continue
        if isinstance(item, dict):
            keys = item.keys()
            if keys == _OBJECT_KEYS:
                found.append(_validate_ref(CasObjectRef, item))
            elif keys == _TYPED_KEYS:
                found.append(_validate_ref(CasRef, item))
            else:  # what holds nothing is not stacked
                push([v for v in item.values() if type(v) not in leaves])
        elif isinstance(item, (list, tuple)):
            push([v for v in item if type(v) not in leaves])
    return found


# References already validated, by their exact values and types (refs are frozen, so a record that
# names an object others named gets the same one); bounded, so it never grows with a ledger. The
# two shapes' keys differ in length, so they never meet.
_VALIDATED: dict[tuple[Any, ...], CasObjectRef | CasRef] = {}
_VALIDATED_MAX = 4096


def _validate_ref(model: type[CasObjectRef] | type[CasRef], item: dict[str, Any]) -> CasObjectRef | CasRef:
    key: tuple[Any, ...] | None
    if model is CasObjectRef:
        h, n = item["hash"], item["size"]
        key = (h, n, type(h), type(n))
    else:
        p, d, n, m = item["pool"], item["digest"], item["size"], item["mediaType"]
        key = (p, d, n, m, type(p), type(d), type(n), type(m))
    try:
        found = _VALIDATED.get(key)
    except TypeError:  # an unhashable value: not a valid reference, validated to say why
        key, found = None, None
    if found is not None:
        return found
    try:
        ref = msgspec.convert(item, model)
    except msgspec.ValidationError as exc:
        path, words = problem(exc, model, item)
        raise InvalidInputError(f"malformed CAS reference {item!r}: {words}", field=".".join(path) or "ref") from exc
    if key is not None:
        if len(_VALIDATED) >= _VALIDATED_MAX:
            _VALIDATED.clear()
        _VALIDATED[key] = ref
    return ref
