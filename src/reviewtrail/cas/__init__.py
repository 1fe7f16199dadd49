"""Content-addressed storage: SHA-256 addresses, verified reads, no delete.

Public API::

    from reviewtrail.cas import FilesystemCas, MemoryCas, CasRef, CasObjectRef
"""

from reviewtrail.cas._filesystem import FilesystemCas
from reviewtrail.cas._memory import MemoryCas
from reviewtrail.cas._protocol import (
    BARE_SEARCH,
    AnyRef,
    ByteCallback,
    CasStore,
    Location,
    ObjectCheck,
    VerifyingReader,
)
from reviewtrail.cas._refs import (
    DIGEST_PATTERN,
    HEX_PATTERN,
    CasObjectRef,
    CasRef,
    Digest,
    Pool,
    check_hex,
    is_digest,
    is_hex,
    parse_address,
    parse_digest,
    refs_in,
)
from reviewtrail.cas._verified import ObjectState, StoredObject, locate_object, object_state, verified_chunks

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
    "StoredObject",
    "VerifyingReader",
    "check_hex",
    "is_digest",
    "is_hex",
    "locate_object",
    "object_state",
    "parse_address",
    "parse_digest",
    "refs_in",
    "verified_chunks",
]
