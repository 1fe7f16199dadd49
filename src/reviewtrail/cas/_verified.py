"""An object's state (missing, intact or corrupt) and its bytes, streamed only once verified.

``reviewtrail cas verify`` and ``reviewtrail cas cat`` are built on these: :func:`locate_object`
says where an object is and how large (nothing hashed yet, for sizing a progress bar),
:func:`object_state` re-hashes it, and :func:`verified_chunks` re-hashes the whole object before
yielding its first byte, so a consumer never receives bytes of a corrupt object.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from reviewtrail.cas._address import parse_address
from reviewtrail.cas._protocol import CHUNK, ByteCallback, CasStore, Location
from reviewtrail.errors import CorruptObjectError

__all__ = ["ObjectState", "StoredObject", "locate_object", "object_state", "state_of", "verified_chunks"]

ObjectState = Literal["missing", "intact", "corrupt"]


@dataclass(frozen=True)
class StoredObject:
    """Where an address is stored and how many bytes are there; nothing verified yet."""

    hexdigest: str
    location: Location | None
    size: int | None

    @property
    def digest(self) -> str:
        return f"sha256:{self.hexdigest}"


def state_of(location: Location | None, intact: bool) -> ObjectState:
    """The rule: no location is missing; a located object is intact only when its re-hash matched."""
    if location is None:
        return "missing"
    return "intact" if intact else "corrupt"


def locate_object(cas: CasStore, address: str) -> StoredObject:
    """The first location holding ``address`` and its stored size (not verified).

    An address that is not 64 lowercase hex digits (bare or ``sha256:``-prefixed) is refused
    (``InvalidInputError``) before any file is looked at."""
    location = cas.locate(address)
    hexdigest = parse_address(address, field="hash")
    size = cas.stored_size(location, hexdigest) if location else None
    return StoredObject(hexdigest, location, size)


def object_state(cas: CasStore, found: StoredObject, *, on_bytes: ByteCallback | None = None) -> ObjectState:
    """Re-hash the object :func:`locate_object` found; ``on_bytes`` counts the bytes read."""
    intact = found.location is not None and cas.verify(found.hexdigest, on_bytes=on_bytes)
    return state_of(found.location, intact)


def verified_chunks(cas: CasStore, address: str, *, on_bytes: ByteCallback | None = None) -> Iterator[bytes]:
    """The object's bytes in chunks, after the whole object was verified.

    Verification happens now, before this returns: a missing object raises
    ``ObjectNotFoundError``, a corrupt one ``CorruptObjectError``, and nothing is yielded.
    ``on_bytes`` counts both passes (the verification, then each chunk once it was consumed)."""
    if not cas.verify(address, on_bytes=on_bytes):
        cas.read(address)  # raises the precise not-found or integrity error
        raise CorruptObjectError(f"object {address} changed while being verified")
    return _chunks(cas, address, on_bytes)


def _chunks(cas: CasStore, address: str, on_bytes: ByteCallback | None) -> Iterator[bytes]:
    with cas.open(address) as reader:
        while chunk := reader.read(CHUNK):
            yield chunk
            if on_bytes is not None:
                on_bytes(len(chunk))
