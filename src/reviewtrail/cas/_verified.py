"""An object's state (missing, intact or corrupt) and its bytes, streamed only once verified.

``reviewtrail cas verify`` and ``reviewtrail cas cat`` are built on these: :func:`locate_object`
says where an object is and how large (nothing hashed yet, for sizing a progress bar),
:func:`object_state` re-hashes it, and :func:`verified_chunks` re-hashes the whole object before
yielding its first byte, so a consumer never receives bytes of a corrupt object.
:func:`save_verified` writes an object to a file in one pass (hashed into a temporary file beside
it, renamed into place once it hashed right); :func:`save_many` does so for many, a few at a time.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, BinaryIO, Literal

from reviewtrail._value import Value
from reviewtrail.cas._address import parse_address
from reviewtrail.cas._protocol import CHUNK, ByteCallback, CasStore, Location, VerifyingReader
from reviewtrail.errors import InvalidInputError, ReviewtrailError

__all__ = [
    "ObjectState",
    "StoredObject",
    "locate_object",
    "object_state",
    "save_many",
    "save_verified",
    "state_of",
    "verified_chunks",
    "write_verified",
]

ObjectState = Literal["missing", "intact", "corrupt"]

#: How many objects :func:`save_many` fetches at once.
SAVE_THREADS = 8


class StoredObject(Value):
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

    Verification happens now, before this returns (:meth:`CasStore.open_verified`): a missing
    object raises ``ObjectNotFoundError``, a corrupt one ``CorruptObjectError``, and nothing is
    yielded. ``on_bytes`` counts both passes (the verification, then each chunk once it was
    consumed); from a remote store the second pass reads a local copy, not the store."""
    return _chunks(cas.open_verified(address, on_bytes=on_bytes), on_bytes)


def write_verified(cas: CasStore, address: str, out: BinaryIO, *, on_bytes: ByteCallback | None = None) -> None:
    """Write the object's bytes to ``out``, all of them after the whole object was verified, as
    :func:`verified_chunks` gives them. When both ends are files of the operating system (a local
    copy of a remote object, a redirected standard output) the kernel copies them (``sendfile``)."""
    stream = cas.open_verified(address, on_bytes=on_bytes)
    with stream:
        if not _sendfile(stream, out, on_bytes):
            for chunk in _chunks(stream, on_bytes):
                out.write(chunk)
    out.flush()


def save_verified(
    cas: CasStore, address: str, path: str | os.PathLike[str], *, on_bytes: ByteCallback | None = None
) -> Path:
    """Write the object to the file ``path`` in one pass: its bytes are hashed as they are written
    to a temporary file beside ``path`` (``.NAME.XXXX.part``, made as ``open`` makes a file, under
    the umask), which replaces ``path`` only once the whole object hashed to its address. A missing
    object (``ObjectNotFoundError``) or a corrupt one (``CorruptObjectError``) leaves ``path`` as it
    was and no temporary file. ``path`` naming a folder, or in a folder that does not exist, is
    ``InvalidInputError`` (field ``out``) before anything is read. Returns ``path``."""
    dest = Path(path)
    if dest.is_dir():
        raise InvalidInputError(f"{str(dest)!r} is a folder, not a file to write", field="out")
    if not dest.absolute().parent.is_dir():
        raise InvalidInputError(f"the folder of {str(dest)!r} does not exist", field="out")
    tmp = dest.with_name(f".{dest.name}.{os.urandom(4).hex()}.part")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        with open(fd, "wb") as out:
            cas.copy_verified(address, out, on_bytes=on_bytes)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return dest


def save_many(
    cas: CasStore, addresses: Sequence[str], folder: str | os.PathLike[str], *, on_bytes: ByteCallback | None = None
) -> list[Path | Exception]:
    """Each object to ``folder/<hex>`` (:func:`save_verified`), :data:`SAVE_THREADS` at a time;
    each address's file, or the error that stopped it (the others are written all the same), in
    the order given (an address given twice, once). Every address is checked first
    (``InvalidInputError``, field ``hash``: nothing is read), and ``folder`` must be a folder
    (field ``out_dir``)."""
    hexes = list(dict.fromkeys(parse_address(a, field="hash") for a in addresses))  # each once
    where = Path(folder)
    if not where.is_dir():
        raise InvalidInputError(f"{str(where)!r} is not a folder", field="out_dir")

    def one(hexdigest: str) -> Path | Exception:
        try:
            return save_verified(cas, hexdigest, where / hexdigest, on_bytes=on_bytes)
        except ReviewtrailError as exc:
            return exc

    from concurrent.futures import ThreadPoolExecutor  # only for a batch: cas cat of one never loads it

    with ThreadPoolExecutor(max_workers=min(SAVE_THREADS, max(1, len(hexes))), thread_name_prefix="cas-save") as pool:
        return list(pool.map(one, hexes))


def _sendfile(stream: IO[bytes] | VerifyingReader, out: BinaryIO, on_bytes: ByteCallback | None) -> bool:
    """Copy ``stream`` to ``out`` in the kernel; False, with nothing copied, when either end is
    not a file of the operating system or the kernel cannot copy between them."""
    if isinstance(stream, VerifyingReader):
        return False  # a reader that checks the hash at its end must read every byte itself
    try:
        src, dst = stream.fileno(), out.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    out.flush()
    offset = stream.tell()
    while True:
        try:
            sent = os.sendfile(dst, src, offset, CHUNK * 8)
        except OSError as exc:
            if offset == stream.tell() and exc.errno in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
                return False  # nothing was copied: copy in chunks instead
            raise
        if sent == 0:
            return True
        offset += sent
        if on_bytes is not None:
            on_bytes(sent)


def _chunks(stream: IO[bytes] | VerifyingReader, on_bytes: ByteCallback | None) -> Iterator[bytes]:
    with stream as reader:
        while chunk := reader.read(CHUNK):
            yield chunk
            if on_bytes is not None:
                on_bytes(len(chunk))
