"""Content-addressed storage: SHA-256 addresses, verified reads, no delete.

Public API::

    from reviewtrail.cas import FilesystemCas, MemoryCas, S3Cas, CasRef, CasObjectRef, open_cas

    cas = open_cas(settings.cas_url, store=settings.store, s3=settings.s3)  # the store's CAS
"""

import importlib
import typing

from reviewtrail.cas._address import (
    DIGEST_PATTERN,
    HEX_PATTERN,
    Digest,
    Pool,
    check_hex,
    is_digest,
    is_hex,
    parse_address,
    parse_digest,
)
from reviewtrail.cas._filesystem import FilesystemCas
from reviewtrail.cas._memory import MemoryCas
from reviewtrail.cas._open import open_cas, parse_cas_url
from reviewtrail.cas._protocol import (
    BARE_SEARCH,
    ByteCallback,
    CasStore,
    Location,
    ObjectCheck,
    VerifyingReader,
)
from reviewtrail.cas._verified import (
    ObjectState,
    StoredObject,
    locate_object,
    object_state,
    save_many,
    save_verified,
    verified_chunks,
    write_verified,
)

if typing.TYPE_CHECKING:
    from reviewtrail.cas._protocol import AnyRef
    from reviewtrail.cas._refs import CasObjectRef, CasRef, refs_in
    from reviewtrail.cas._s3 import S3Cas

# The reference models are pydantic models, loaded on first use: reading an object by its address,
# and reading records, never load pydantic. The S3 backend is loaded where it is named or opened.
_LAZY = {"AnyRef": "_protocol", "CasObjectRef": "_refs", "CasRef": "_refs", "S3Cas": "_s3", "refs_in": "_refs"}


def __getattr__(name: str) -> typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "BARE_SEARCH",
    "DIGEST_PATTERN",
    "HEX_PATTERN",
    "AnyRef",
    "ByteCallback",
    "CasObjectRef",
    "CasRef",
    "CasStore",
    "Digest",
    "FilesystemCas",
    "Location",
    "MemoryCas",
    "ObjectCheck",
    "ObjectState",
    "Pool",
    "S3Cas",
    "StoredObject",
    "VerifyingReader",
    "check_hex",
    "is_digest",
    "is_hex",
    "locate_object",
    "object_state",
    "open_cas",
    "parse_address",
    "parse_cas_url",
    "parse_digest",
    "refs_in",
    "save_many",
    "save_verified",
    "verified_chunks",
    "write_verified",
]
