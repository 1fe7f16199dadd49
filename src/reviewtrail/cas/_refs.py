"""CAS references: the only form in which records point at bytes.

The references are pydantic models, loaded where one is made or checked; the address rules they
apply (and that reading an object by its address needs, without pydantic) are in
:mod:`reviewtrail.cas._address`.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from reviewtrail._strict import IS_INT
from reviewtrail.cas._address import (
    DEFAULT_MEDIA_TYPE,
    DIGEST_PREFIX,
    Digest,
    Pool,
    check_hex,
    check_media_type,
    parse_digest,
)
from reviewtrail.errors import InvalidInputError

__all__ = ["CasObjectRef", "CasRef", "refs_in"]


class CasObjectRef(BaseModel):
    """``{hash, size}``: the untyped reference records store (docs/architecture.md, "Content-addressed store")."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    hash: str
    size: Annotated[int, Field(ge=0), IS_INT]

    @field_validator("hash")
    @classmethod
    def _hash(cls, v: str) -> str:
        return check_hex(v)

    @property
    def digest(self) -> Digest:
        return Digest(DIGEST_PREFIX + self.hash)

    def to_json(self) -> dict[str, Any]:
        return {"hash": self.hash, "size": self.size}


class CasRef(BaseModel):
    """``{pool, digest, size, mediaType}``: the typed reference."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, defer_build=True)

    pool: Pool
    digest: str
    size: Annotated[int, Field(ge=0), IS_INT]
    media_type: str = Field(default=DEFAULT_MEDIA_TYPE, alias="mediaType")

    @field_validator("digest")
    @classmethod
    def _digest(cls, v: str) -> str:
        return parse_digest(v, field="digest")

    @field_validator("media_type")
    @classmethod
    def _media(cls, v: str) -> str:
        return check_media_type(v)

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
    while stack:
        item = stack.pop()
        if type(item) in _LEAVES:
            continue
        if isinstance(item, dict):
            keys = item.keys()
            if keys == _OBJECT_KEYS:
                found.append(_validate_ref(CasObjectRef, item))
                continue
            if keys == _TYPED_KEYS:
                found.append(_validate_ref(CasRef, item))
                continue
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return found


# References already validated, by their exact values and types (refs are frozen, so a record that
# names an object others named gets the same one); bounded, so it never grows with a ledger. The
# two shapes' keys differ in length, so they never meet.
_VALIDATED: dict[tuple[Any, ...], CasObjectRef | CasRef] = {}
_VALIDATED_MAX = 4096


def _validate_ref(model: type[CasObjectRef] | type[CasRef], item: dict[str, Any]) -> CasObjectRef | CasRef:
    from pydantic import ValidationError

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
        ref = model.model_validate(item)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "ref"
        raise InvalidInputError(f"malformed CAS reference {item!r}: {first['msg']}", field=loc) from exc
    if key is not None:
        if len(_VALIDATED) >= _VALIDATED_MAX:
            _VALIDATED.clear()
        _VALIDATED[key] = ref
    return ref
