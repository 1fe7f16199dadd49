"""S3 names a CAS URL may hold: bucket names and key prefixes, checked before any request."""

from __future__ import annotations

import re

from reviewtrail.errors import InvalidInputError

__all__ = ["CAS_URL_SETTING", "check_bucket", "check_prefix"]

CAS_URL_SETTING = "REVIEWTRAIL_CAS_URL"
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_PREFIX_SEGMENT = re.compile(r"[A-Za-z0-9!_.*'()-]+")


def check_bucket(bucket: str, *, field: str = CAS_URL_SETTING) -> str:
    """An S3 bucket name: 3 to 63 lowercase letters, digits, dots and hyphens."""
    if not isinstance(bucket, str) or not _BUCKET.fullmatch(bucket) or ".." in bucket:
        raise InvalidInputError(
            f"{bucket!r} is not an S3 bucket name (3 to 63 lowercase letters, digits, '.' and '-')", field=field
        )
    return bucket


def check_prefix(prefix: str, *, field: str = CAS_URL_SETTING) -> str:
    """A key prefix of '/'-separated segments of safe characters (one leading and one trailing '/'
    allowed), returned with one trailing '/' (``""`` for the bucket's top)."""
    if not isinstance(prefix, str):
        raise InvalidInputError(f"{prefix!r} is not a key prefix", field=field)
    stripped = prefix.removeprefix("/").removesuffix("/")
    if not stripped and prefix in {"", "/"}:
        return ""
    for segment in stripped.split("/"):
        if segment in {".", ".."} or not _PREFIX_SEGMENT.fullmatch(segment):
            raise InvalidInputError(
                f"{prefix!r} is not a key prefix: its parts are letters, digits and !_.*'()- separated by single '/'",
                field=field,
            )
    return stripped + "/"
