"""CAS addresses: SHA-256 digests, pools and media types, checked without pydantic.

What reading an object needs (``cas cat``, verified reads, the filesystem layout). The reference
models records hold (:class:`~reviewtrail.cas.CasRef`, :class:`~reviewtrail.cas.CasObjectRef`)
are pydantic models in :mod:`reviewtrail.cas._refs`, loaded where references are made or checked.
"""

from __future__ import annotations

import functools
import re
from typing import Literal, NewType, TypeGuard

from reviewtrail.errors import InvalidAddressError, InvalidInputError

__all__ = [
    "DEFAULT_MEDIA_TYPE",
    "DIGEST_PATTERN",
    "DIGEST_PREFIX",
    "HEX_PATTERN",
    "POOLS",
    "Digest",
    "Pool",
    "check_hex",
    "check_media_type",
    "check_pool",
    "is_digest",
    "is_hex",
    "parse_address",
    "parse_digest",
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
