"""The CAS store contract and the logic every backend shares.

Backends implement a handful of raw primitives (open an object's bytes, publish
new objects, list objects); addressing, pool search order, verification on every
read and the typed-ref checks live here once.
"""

from __future__ import annotations

import abc
import contextlib
import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any, Literal

from reviewtrail._value import Value
from reviewtrail.cas._address import (
    DEFAULT_MEDIA_TYPE,
    POOLS,
    Pool,
    check_media_type,
    check_pool,
    parse_address,
)
from reviewtrail.errors import CorruptObjectError, InvalidInputError, ObjectNotFoundError

if TYPE_CHECKING:
    from pathlib import Path

    # The references are pydantic models (reviewtrail.cas._refs), loaded where one is made or
    # given: reading an object by its address never loads pydantic.
    from reviewtrail.cas._refs import CasObjectRef, CasRef

__all__ = [
    "BARE_SEARCH",
    "CHUNK",
    "AnyRef",
    "ByteCallback",
    "CasStore",
    "Location",
    "ObjectCheck",
    "VerifyingReader",
    "regular_files",
]

CHUNK = 1 << 20
Location = Literal["data", "agent-state", "legacy"]
if TYPE_CHECKING:
    AnyRef = CasRef | CasObjectRef | str
# Called with the number of bytes just read (progress reporting on long reads and writes).
ByteCallback = Callable[[int], None]
# Search order for a bare hash (docs/architecture.md, "Content-addressed store"): data, then
# agent-state, then the legacy layout.
BARE_SEARCH: tuple[Location, ...] = ("data", "agent-state", "legacy")


def __getattr__(name: str) -> Any:
    """``AnyRef`` at run time, a union with the reference models (pydantic): made on first use."""
    if name == "AnyRef":
        from reviewtrail.cas._refs import CasObjectRef, CasRef

        return CasRef | CasObjectRef | str
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ObjectCheck(Value):
    """The outcome of re-hashing one stored object."""

    location: Location
    name: str
    size: int
    problem: str | None


class VerifyingReader:
    """A read-only stream that hashes what it yields and fails at the end on mismatch.

    The final read that reaches end of stream raises :class:`CorruptObjectError`
    instead of returning ``b""`` when the bytes do not hash to the address or the
    size differs, so a consumer that reads to the end never accepts corrupt data.
    """

    def __init__(self, raw: IO[bytes], hexdigest: str, size: int | None, name: str) -> None:
        self._raw = raw
        self._expected = hexdigest
        self._size = size
        self._hash = hashlib.sha256()
        self._seen = 0
        self._name = name
        self._done = False

    def read(self, n: int = -1) -> bytes:
        chunk = self._raw.read(n) if n is not None and n >= 0 else self._raw.read()
        if chunk:
            self._hash.update(chunk)
            self._seen += len(chunk)
            if self._size is not None and self._seen > self._size:
                raise CorruptObjectError(f"object {self._name} is larger than its recorded size {self._size}")
        if not chunk or n is None or n < 0:
            self._finish()
        return chunk

    def _finish(self) -> None:
        if self._done:
            return
        self._done = True
        if self._size is not None and self._seen != self._size:
            raise CorruptObjectError(f"object {self._name} has {self._seen} bytes, its reference says {self._size}")
        if self._hash.hexdigest() != self._expected:
            raise CorruptObjectError(f"object {self._name} does not hash to its address")

    @property
    def bytes_read(self) -> int:
        return self._seen

    def close(self) -> None:
        self._raw.close()

    def __enter__(self) -> VerifyingReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _CountingReader:
    """Reports the size of every chunk read through it (for progress bars)."""

    def __init__(self, raw: IO[bytes] | VerifyingReader, on_bytes: ByteCallback) -> None:
        self._raw = raw
        self._on_bytes = on_bytes

    def read(self, n: int = -1) -> bytes:
        chunk = self._raw.read(n)
        if chunk:
            self._on_bytes(len(chunk))
        return chunk


def _counted(raw: IO[bytes], on_bytes: ByteCallback | None) -> IO[bytes]:
    return raw if on_bytes is None else _CountingReader(raw, on_bytes)  # type: ignore[return-value]


def regular_files(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """The paths as strings, every one checked first: one that is not a readable regular file is
    :class:`InvalidInputError` naming it."""
    names = [os.fspath(p) for p in paths]
    for p in names:
        if not os.path.isfile(p):
            raise InvalidInputError(f"{p!r} is not a readable regular file", field="path")
    return names


def _drain(reader: VerifyingReader, on_bytes: ByteCallback | None) -> None:
    while chunk := reader.read(CHUNK):
        if on_bytes is not None:
            on_bytes(len(chunk))


class CasStore(abc.ABC):
    """A content-addressed store with pools ``data`` and ``agent-state``.

    There is no delete or overwrite: objects are only ever added.
    """

    # --- raw primitives each backend supplies -------------------------------------------
    @abc.abstractmethod
    def _open_raw(self, location: Location, hexdigest: str) -> IO[bytes] | None:
        """Open an object's stored bytes, or ``None`` when absent."""

    @abc.abstractmethod
    def _publish(self, pool: Pool, blobs: list[tuple[str, bytes | str]]) -> None:
        """Durably publish ``(hex, bytes-or-staged-path)`` pairs, never overwriting.

        Must verify an existing object before reusing it and raise
        :class:`CorruptObjectError` naming it when it is corrupt.
        """

    @abc.abstractmethod
    def _list(self, location: Location) -> Iterator[str]:
        """Yield the names (normally hex addresses) stored at ``location``."""

    def _stage_stream(self, pool: Pool, stream: IO[bytes]) -> tuple[str, int, bytes | str]:
        """Read ``stream`` once, hashing as it goes; return (hex, size, staged)."""
        h = hashlib.sha256()
        parts: list[bytes] = []
        while chunk := stream.read(CHUNK):
            h.update(chunk)
            parts.append(chunk)
        data = b"".join(parts)
        return h.hexdigest(), len(data), data

    # --- writes ---------------------------------------------------------------------------
    def put(self, data: bytes, *, pool: Pool = "data", media_type: str = DEFAULT_MEDIA_TYPE) -> CasRef:
        """Store ``data``; return its typed ref. Idempotent."""
        return self.put_many([data], pool=pool, media_type=media_type)[0]

    def put_many(
        self, items: Iterable[bytes], *, pool: Pool = "data", media_type: str = DEFAULT_MEDIA_TYPE
    ) -> list[CasRef]:
        """Store a batch; one durability barrier for the whole batch."""
        from reviewtrail.cas._refs import CasRef

        pool = check_pool(pool)
        media_type = check_media_type(media_type)
        blobs: list[tuple[str, bytes | str]] = []
        refs: list[CasRef] = []
        for data in items:
            if not isinstance(data, (bytes, bytearray, memoryview)):
                raise InvalidInputError(f"expected bytes, got {type(data).__name__}", field="data")
            raw = data if isinstance(data, bytes) else bytes(data)
            hexdigest = hashlib.sha256(raw).hexdigest()
            blobs.append((hexdigest, raw))
            refs.append(CasRef(pool=pool, digest=f"sha256:{hexdigest}", size=len(raw), media_type=media_type))
        self._publish(pool, blobs)
        return refs

    def put_file(
        self,
        path: str | os.PathLike[str],
        *,
        pool: Pool = "data",
        media_type: str = DEFAULT_MEDIA_TYPE,
        on_bytes: ByteCallback | None = None,
    ) -> CasRef:
        """Store a file's bytes, hashing while copying (one pass, constant memory)."""
        return self.put_files([path], pool=pool, media_type=media_type, on_bytes=on_bytes)[0]

    def put_files(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        pool: Pool = "data",
        media_type: str = DEFAULT_MEDIA_TYPE,
        on_bytes: ByteCallback | None = None,
    ) -> list[CasRef]:
        """Store many files' bytes, each hashed while copied (one pass, constant memory), and
        publish them together (one durability barrier for the batch; a remote store sends them a
        few at a time). Every path is checked first: one that is not a readable regular file is
        :class:`InvalidInputError` naming it, and nothing is stored. Their refs, in order."""
        from reviewtrail.cas._refs import CasRef

        pool = check_pool(pool)
        media_type = check_media_type(media_type)
        names = regular_files(paths)
        staged: list[tuple[str, int, bytes | str]] = []
        try:
            for p in names:
                with open(p, "rb", buffering=0) as fh:
                    staged.append(self._stage_stream(pool, _counted(fh, on_bytes)))
        except BaseException:
            for _, _, content in staged:
                if isinstance(content, str):  # a temporary file: never published
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(content)
            raise
        self._publish(pool, [(hexdigest, content) for hexdigest, _, content in staged])
        return [
            CasRef(pool=pool, digest=f"sha256:{hexdigest}", size=size, media_type=media_type)
            for hexdigest, size, _ in staged
        ]

    def put_stream(
        self,
        stream: IO[bytes],
        *,
        pool: Pool = "data",
        media_type: str = DEFAULT_MEDIA_TYPE,
        on_bytes: ByteCallback | None = None,
    ) -> CasRef:
        """Store everything readable from an open binary stream (one pass, constant memory on disk).

        Use it with a descriptor opened safely by the caller (e.g. without following symlinks).
        """
        from reviewtrail.cas._refs import CasRef

        pool = check_pool(pool)
        media_type = check_media_type(media_type)
        hexdigest, size, staged = self._stage_stream(pool, _counted(stream, on_bytes))
        self._publish(pool, [(hexdigest, staged)])
        return CasRef(pool=pool, digest=f"sha256:{hexdigest}", size=size, media_type=media_type)

    def retain(
        self,
        ref: CasObjectRef,
        *,
        pool: Pool,
        media_type: str = DEFAULT_MEDIA_TYPE,
        on_bytes: ByteCallback | None = None,
    ) -> CasRef:
        """Promote a bare-hash object (the legacy layout, or the other pool) into a typed pool.

        The object is found in the bare search order and copied in one streaming pass; its size
        and hash are checked against ``ref`` before anything is published, so a corrupt or
        wrong-size original raises :class:`CorruptObjectError` and leaves nothing in ``pool``.
        Retaining an object already in ``pool`` verifies it and returns its typed ref.
        """
        from reviewtrail.cas._refs import CasObjectRef, CasRef

        pool = check_pool(pool)
        media_type = check_media_type(media_type)
        if not isinstance(ref, CasObjectRef):
            raise InvalidInputError(
                f"retain takes a bare reference {{hash, size}}, not {type(ref).__name__}", field="ref"
            )
        with self.open(ref) as reader:  # checks hash and size when the last chunk is read
            hexdigest, size, staged = self._stage_stream(pool, _counted(reader, on_bytes))  # type: ignore[arg-type]
        self._publish(pool, [(hexdigest, staged)])
        return CasRef(pool=pool, digest=f"sha256:{hexdigest}", size=size, media_type=media_type)

    # --- reads ----------------------------------------------------------------------------
    def _candidates(self, ref: AnyRef) -> tuple[str, int | None, tuple[Location, ...]]:
        if isinstance(ref, str):  # an address: no reference model is needed
            return parse_address(ref), None, BARE_SEARCH
        from reviewtrail.cas._refs import CasObjectRef, CasRef

        if isinstance(ref, CasRef):
            return ref.hash, ref.size, (ref.pool,)
        if isinstance(ref, CasObjectRef):
            return ref.hash, ref.size, BARE_SEARCH
        raise InvalidInputError(f"not a CAS reference: {type(ref).__name__}", field="ref")

    def locate(self, ref: AnyRef) -> Location | None:
        """The first location holding this address (without verifying), or ``None``."""
        hexdigest, _size, where = self._candidates(ref)
        for loc in where:
            fh = self._open_raw(loc, hexdigest)
            if fh is not None:
                fh.close()
                return loc
        return None

    def open(self, ref: AnyRef) -> VerifyingReader:
        """Open an object for streaming; reading to the end verifies hash and size."""
        hexdigest, size, where = self._candidates(ref)
        for loc in where:
            fh = self._open_raw(loc, hexdigest)
            if fh is not None:
                return VerifyingReader(fh, hexdigest, size, f"{loc}/sha256:{hexdigest}")
        raise ObjectNotFoundError(f"no object sha256:{hexdigest} in {', '.join(where)}", field="ref")

    def read(self, ref: AnyRef) -> bytes:
        """Return an object's bytes after verifying hash and size."""
        with self.open(ref) as reader:
            return reader.read()

    def open_verified(self, ref: AnyRef, *, on_bytes: ByteCallback | None = None) -> IO[bytes] | VerifyingReader:
        """The object's bytes as a stream, given only once the whole object was verified: a
        missing object raises :class:`ObjectNotFoundError` and a corrupt one
        :class:`CorruptObjectError` before any byte is readable. ``on_bytes`` counts the bytes of
        the verifying pass. Here a second read costs little, so the object is verified where it is
        stored and opened again (a reader that still checks the hash at its end); a remote store
        reads it once into a local temporary file instead (:class:`~reviewtrail.cas.S3Cas`)."""
        if not self.verify(ref, on_bytes=on_bytes):
            self.read(ref)  # raises the precise not-found or integrity error
            raise CorruptObjectError(f"object {ref} changed while being verified")
        return self.open(ref)

    def copy_verified(self, ref: AnyRef, out: IO[bytes], *, on_bytes: ByteCallback | None = None) -> None:
        """Write the object's bytes to ``out`` in one pass, hashing them as they go: a missing
        object raises :class:`ObjectNotFoundError` before anything is written, and bytes that do
        not hash to the address (or differ from the reference's size) :class:`CorruptObjectError`
        once they were written, so ``out`` must be a place to discard then (a temporary file:
        :func:`~reviewtrail.cas.save_verified`). ``on_bytes`` counts the bytes written."""
        with self.open(ref) as reader:
            while chunk := reader.read(CHUNK):
                out.write(chunk)
                if on_bytes is not None:
                    on_bytes(len(chunk))

    def verify(self, ref: AnyRef, *, on_bytes: ByteCallback | None = None) -> bool:
        """True only when the object exists (in the ref's pool, for typed refs) and is intact."""
        try:
            with self.open(ref) as reader:
                _drain(reader, on_bytes)
        except (ObjectNotFoundError, CorruptObjectError):
            return False
        return True

    def stored_size(self, location: Location, name: str) -> int | None:
        """The size of the bytes stored under ``name`` at ``location`` (not verified), or ``None``
        when there is none or ``name`` is not an address (for sizing progress bars)."""
        try:
            fh = self._open_raw(location, parse_address(name))
        except (InvalidInputError, CorruptObjectError):
            return None
        if fh is None:
            return None
        with fh:
            return fh.seek(0, os.SEEK_END)

    def has(self, ref: AnyRef) -> bool:
        """Like :meth:`verify`: present and intact; typed refs also match pool and size."""
        return self.verify(ref)

    def check_object(self, location: Location, name: str, on_bytes: ByteCallback | None = None) -> ObjectCheck:
        """Re-hash one stored object; the result says its size and any problem."""
        try:
            hexdigest = parse_address(name)
        except InvalidInputError:
            return ObjectCheck(location, name, 0, f"{location}: stray file {name!r} is not a SHA-256 address")
        label = f"{location}/sha256:{hexdigest}"
        try:
            fh = self._open_raw(location, hexdigest)
        except CorruptObjectError as exc:
            return ObjectCheck(location, hexdigest, 0, str(exc))
        if fh is None:
            return ObjectCheck(location, hexdigest, 0, f"{label}: vanished while verifying")
        reader = VerifyingReader(fh, hexdigest, None, label)
        try:
            with reader:
                _drain(reader, on_bytes)
        except CorruptObjectError as exc:
            return ObjectCheck(location, hexdigest, reader.bytes_read, str(exc))
        return ObjectCheck(location, hexdigest, reader.bytes_read, None)

    def furniture_problems(self) -> list[str]:
        """What is wrong with the layout's own files (not the objects); none for a backend without any."""
        return []

    def iter_objects(self) -> Iterator[tuple[Location, str]]:
        """Every stored object name, pool by pool, legacy last."""
        for loc in (*POOLS, "legacy"):
            for name in self._list(loc):  # type: ignore[arg-type]
                yield loc, name  # type: ignore[misc]

    def stale_staging(self, older_than: float = 3600.0) -> list[str]:
        """What interrupted writes left behind, older than ``older_than`` seconds, one line each
        (never an object: nothing is published until it is whole). None for a backend that stages
        nothing."""
        return []

    def clean_staging(self, older_than: float = 3600.0) -> list[str]:
        """Remove :meth:`stale_staging`'s leftovers; the lines of those removed. Objects are never touched."""
        return []

    def local_folder(self) -> Path | None:
        """The folder on this machine that holds the objects, which nothing but the CAS may
        write into; None for a backend that keeps them elsewhere (a server)."""
        return None

    def unfinished_writes_note(self) -> str | None:
        """A note for ``verify`` on the writes now unfinished (in progress, or left by interrupted
        writes), in this backend's words; None when there are none."""
        left = self.stale_staging(older_than=0)
        if not left:
            return None
        return (
            f"{len(left)} unfinished write(s): in progress, or left by interrupted writes (no object is "
            f"visible until whole; e.g. {left[0]}); 'reviewtrail cas clean-ingest' removes those older "
            "than an hour"
        )

    def object_sizes(self) -> Iterator[tuple[Location, str, int | None]]:
        """Every stored object name with the size stored under it (``None``: gone, or not an
        address), without reading any object: what ``verify --no-read-data`` checks. A backend
        whose listing gives sizes overrides it (S3: no request per object)."""
        for location, name in self.iter_objects():
            yield location, name, self.stored_size(location, name)
