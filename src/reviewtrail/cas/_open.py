"""One way to open the store's CAS from its URL (``REVIEWTRAIL_CAS_URL`` or ``cas_url``).

``None`` is the filesystem CAS in the store's folder; ``file:///absolute/folder`` a filesystem
CAS in that folder; ``s3://bucket/prefix`` the S3 CAS under that prefix, with the credentials
and endpoint of :class:`~reviewtrail.config.S3Settings`. A URL that is none of these is
:class:`~reviewtrail.errors.InvalidInputError` naming ``REVIEWTRAIL_CAS_URL`` (exit 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from reviewtrail.cas._filesystem import FilesystemCas
from reviewtrail.cas._protocol import CasStore
from reviewtrail.cas._s3_names import CAS_URL_SETTING, check_bucket, check_prefix
from reviewtrail.errors import InvalidInputError

if TYPE_CHECKING:
    from reviewtrail.config import S3Settings

__all__ = ["open_cas", "parse_cas_url"]

_FORMS = "s3://bucket/prefix or file:///absolute/folder (unset: the store's folder)"


def parse_cas_url(url: str, *, field: str = CAS_URL_SETTING) -> tuple[str, str, str]:
    """``("file", folder, "")`` or ``("s3", bucket, prefix)``; anything else is refused, naming
    ``field`` (the setting or option the URL came from)."""
    from urllib.parse import unquote, urlsplit

    def refuse(why: str) -> InvalidInputError:
        return InvalidInputError(f"{url!r} {why}; use {_FORMS}", field=field)

    if not isinstance(url, str) or not url.strip() or any(ord(c) < 0x20 or c == "\x7f" for c in url):
        raise refuse("is not a CAS location")
    try:
        parts = urlsplit(url.strip())
    except ValueError as exc:
        raise refuse(f"is not a URL ({exc})") from None
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise refuse("has a query or fragment")
    scheme = parts.scheme.lower()
    if scheme == "file":
        if parts.netloc not in {"", "localhost"}:
            raise refuse("names a host: a file URL is file:///absolute/folder")
        folder = unquote(parts.path)
        if not folder.startswith("/") or "\x00" in folder:
            raise refuse("is not an absolute folder")
        return "file", folder, ""
    if scheme == "s3":
        if not parts.netloc or "@" in parts.netloc or ":" in parts.netloc:
            raise refuse("does not name a bucket (s3://bucket/prefix, no user or port)")
        return "s3", check_bucket(parts.netloc, field=field), check_prefix(parts.path, field=field)
    raise refuse("is not a CAS location")


def open_cas(
    url: str | None,
    *,
    store: Path,
    s3: S3Settings | None = None,
    read_only: bool = False,
    create: bool = False,
    require_layout: bool = True,
    field: str = CAS_URL_SETTING,
) -> CasStore:
    """The CAS ``url`` names: ``None`` is the one in the ``store`` folder.

    ``create`` lays out the pools (idempotent); otherwise ``require_layout`` refuses a CAS with
    no layout (:class:`~reviewtrail.errors.StoreNotInitializedError`). ``read_only`` refuses
    every write. An S3 URL needs boto3 (``reviewtrail[s3]``), else
    :class:`~reviewtrail.errors.BackendUnavailableError` (exit 5). A malformed URL is
    :class:`~reviewtrail.errors.InvalidInputError` naming ``field`` (default ``REVIEWTRAIL_CAS_URL``).
    """
    if url is None:
        return FilesystemCas(store, create=create, read_only=read_only, require_layout=require_layout)
    kind, where, prefix = parse_cas_url(url, field=field)
    if kind == "file":
        return FilesystemCas(Path(where), create=create, read_only=read_only, require_layout=require_layout)
    from reviewtrail.cas._s3_client import require_boto3

    require_boto3()
    from reviewtrail.cas._s3 import S3Cas

    return S3Cas(where, prefix, s3=s3, create=create, read_only=read_only, require_layout=require_layout)
