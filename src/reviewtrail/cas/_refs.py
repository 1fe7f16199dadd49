"""CAS references: the only form in which records point at bytes."""

from __future__ import annotations

import functools
import re
from typing import Annotated, Any, Literal, NewType, TypeGuard

from pydantic import BaseModel, ConfigDict, Field, field_validator

from reviewtrail._strict import IS_INT
from reviewtrail.errors import InvalidAddressError, InvalidInputError

__all__ = [
    "DEFAULT_MEDIA_TYPE",
    "DIGEST_PATTERN",
    "DIGEST_PREFIX",
    "HEX_PATTERN",
    "POOLS",
    "CasObjectRef",
    "CasRef",
    "Digest",
    "Pool",
    "check_hex",
    "check_media_type",
    "check_pool",
    "is_digest",
    "is_hex",
    "parse_address",
    "parse_digest",
    "refs_in",
]

Pool = Literal["data", "agent-state"]
POOLS: tuple[Pool, ...] = ("data", "agent-state")
DEFAULT_MEDIA_TYPE = "application/octet-stream"

Digest = NewType("Digest", str)
"""A typed SHA-256 digest: ``sha256:`` followed by exactly 64 lowercase hex digits."""
DIGEST_PREFIX = "sha256:"
# The same rules as regular expressions (for JSON schemas and pydantic patterns).
HEX_PATTERN = r"[0-9a-f]{64}"
DIGEST_PATTERN = rf"sha256:{HEX_PATTERN}"

_HEX64 = re.compile(HEX_PATTERN)


@functools.cache
def _media_type() -> re.Pattern[str]:
    """RFC 6838 type/subtype with optional parameters; conservative on purpose (compiled on
    first use: reading never checks a media type)."""
    return re.compile(
        r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
        r"(\s*;\s*[A-Za-z0-9!#$&^_.+-]+=(\"[^\"\\]*\"|[A-Za-z0-9!#$&^_.+-]+))*"
    )


def is_hex(value: object) -> TypeGuard[str]:
    """Is ``value`` exactly 64 lowercase hex digits (a bare SHA-256 address)?"""
    return isinstance(value, str) and _HEX64.fullmatch(value) is not None


def is_digest(value: object) -> bool:
    """Is ``value`` a :data:`Digest` (``sha256:`` and 64 lowercase hex digits)?"""
    return isinstance(value, str) and value.startswith(DIGEST_PREFIX) and is_hex(value[len(DIGEST_PREFIX) :])


def check_hex(value: object, *, field: str = "hash") -> str:
    """Return ``value`` if it is exactly 64 lowercase hex digits, else raise.

    Runs before any file access: separators, ``..``, a trailing newline and
    uppercase digits are all rejected.
    """
    if not is_hex(value):
        raise InvalidAddressError(f"{value!r} is not a SHA-256 address (exactly 64 lowercase hex digits)", field=field)
    return value


def parse_digest(value: object, *, field: str = "digest") -> Digest:
    """Return ``value`` as a :data:`Digest` if it is ``sha256:<64 hex>``, else raise naming ``field``."""
    if not isinstance(value, str) or not value.startswith(DIGEST_PREFIX):
        raise InvalidAddressError(f"{value!r} must start with {DIGEST_PREFIX!r}", field=field)
    check_hex(value[len(DIGEST_PREFIX) :], field=field)
    return Digest(value)


def parse_address(value: str, *, field: str = "address") -> str:
    """Accept ``<hex>`` or ``sha256:<hex>`` and return the bare hex."""
    if isinstance(value, str) and value.startswith(DIGEST_PREFIX):
        return check_hex(value[len(DIGEST_PREFIX) :], field=field)
    return check_hex(value, field=field)


def check_pool(value: object, *, field: str = "pool") -> Pool:
    if value == "data":
        return "data"
    if value == "agent-state":
        return "agent-state"
    raise InvalidInputError(f"{value!r} is not a pool; use one of {', '.join(POOLS)}", field=field)


def check_media_type(value: object, *, field: str = "mediaType") -> str:
    if not isinstance(value, str) or _media_type().fullmatch(value) is None:
        raise InvalidInputError(f"{value!r} is not a media type like 'text/plain'", field=field)
    return value


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
