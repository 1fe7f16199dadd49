"""Filesystem CAS: OCI image-layout pools under ``<store>/versioning/<pool>/``.

Publishing (docs/architecture.md, "Content-addressed store"): write a temporary file in the pool's ``ingest/``
folder, fsync it, make it read-only, ``os.link`` it to ``blobs/sha256/<hex>``
(which never overwrites), fsync the ``blobs`` directory. An existing object is
verified before it is reused; a corrupt one is reported by name, never reused
and never repaired. A failure at any point leaves nothing under ``blobs/``.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, BinaryIO

from reviewtrail._durable import fsync_dir, sync_files
from reviewtrail.cas._address import POOLS, Pool, check_hex
from reviewtrail.cas._protocol import CHUNK, CasStore, Location, VerifyingReader
from reviewtrail.errors import CorruptObjectError, ReadOnlyStoreError, StoreNotInitializedError

__all__ = ["OCI_INDEX", "OCI_LAYOUT", "FilesystemCas"]

OCI_LAYOUT = {"imageLayoutVersion": "1.0.0"}
OCI_INDEX = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []}
_FULL = (errno.ENOSPC, errno.EDQUOT)


class FilesystemCas(CasStore):
    """The embedded CAS under a store folder."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        create: bool = False,
        read_only: bool = False,
        require_layout: bool = True,
    ) -> None:
        self.root = Path(root)
        self.read_only = read_only
        if create:
            self.initialize()
        elif require_layout and not all((self._pool_dir(p) / "oci-layout").is_file() for p in POOLS):
            raise StoreNotInitializedError(f"no CAS at {self.root}; run 'reviewtrail init' first", field="store")

    # --- layout ---------------------------------------------------------------------------
    def _pool_dir(self, pool: Pool) -> Path:
        return self.root / "versioning" / pool

    def _blobs(self, pool: Pool) -> Path:
        return self._pool_dir(pool) / "blobs" / "sha256"

    def _ingest(self, pool: Pool) -> Path:
        return self._pool_dir(pool) / "ingest"

    def _legacy_path(self, hexdigest: str) -> Path:
        return self.root / "cas" / "sha256" / hexdigest[:2] / hexdigest

    def object_path(self, location: Location, hexdigest: str) -> Path:
        """Where an object lives (the address is validated first)."""
        check_hex(hexdigest)
        if location == "legacy":
            return self._legacy_path(hexdigest)
        return self._blobs(location) / hexdigest

    def initialize(self) -> None:
        """Create both pools' OCI layouts (idempotent, atomic per file)."""
        for pool in POOLS:
            base = self._pool_dir(pool)
            for d in (self._blobs(pool), self._ingest(pool)):
                d.mkdir(parents=True, exist_ok=True)
            for name, doc in (("oci-layout", OCI_LAYOUT), ("index.json", OCI_INDEX)):
                target = base / name
                if target.exists():
                    continue
                import tempfile  # only when writing: reads never load it

                fd, tmp = tempfile.mkstemp(dir=self._ingest(pool), prefix=f".{name}.")
                with os.fdopen(fd, "wb") as fh:
                    fh.write(json.dumps(doc).encode())
                    fh.flush()
                    os.fsync(fh.fileno())
                with contextlib.suppress(FileExistsError):
                    os.link(tmp, target)
                os.unlink(tmp)
            fsync_dir(base)

    # --- the layout's own files ----------------------------------------------------------------
    def furniture_problems(self) -> list[str]:
        """What is wrong with the layout itself: ``oci-layout``, ``index.json``, the blob folders."""
        problems: list[str] = []
        versioning = self.root / "versioning"
        if versioning.is_symlink():
            problems.append(f"versioning is a symlink (to {os.readlink(versioning)}), not a folder in the store")
        for pool in POOLS:
            base = self._pool_dir(pool)
            if base.is_symlink():
                problems.append(
                    f"{pool}: the pool folder is a symlink (to {os.readlink(base)}), not a folder in the store"
                )
            for name, want in (("oci-layout", OCI_LAYOUT), ("index.json", OCI_INDEX)):
                problem = _layout_file_problem(base / name, want)
                if problem:
                    problems.append(f"{pool}: {name} {problem}")
            for folder in (base / "blobs", self._blobs(pool), self._ingest(pool)):
                if folder.is_symlink() or not folder.is_dir():
                    problems.append(f"{pool}: {folder.relative_to(self.root)} is not a plain folder")
        return problems

    # --- interrupted writes ------------------------------------------------------------------
    def stale_ingest(self, older_than: float = 3600.0) -> list[Path]:
        """Temporary files left in ``ingest/`` by interrupted writes, older than ``older_than`` seconds.

        They are never objects (nothing under ``blobs/`` points at them); a write still in
        progress is younger than any sensible threshold.
        """
        import time

        cutoff = time.time() - older_than
        stale: list[Path] = []
        for pool in POOLS:
            if not self._ingest(pool).is_dir():
                continue  # a missing folder is reported by furniture_problems
            for entry in sorted(self._ingest(pool).iterdir()):
                with contextlib.suppress(FileNotFoundError):
                    if entry.is_file() and entry.stat().st_mtime < cutoff:
                        stale.append(entry)
        return stale

    def stale_staging(self, older_than: float = 3600.0) -> list[str]:
        """The temporary files of :meth:`stale_ingest`, as paths."""
        return [str(p) for p in self.stale_ingest(older_than)]

    def clean_staging(self, older_than: float = 3600.0) -> list[str]:
        """:meth:`clean_ingest`, as paths."""
        return [str(p) for p in self.clean_ingest(older_than)]

    def local_folder(self) -> Path:
        return self.root

    def unfinished_writes_note(self) -> str | None:
        """The temporary files now in ``ingest/``, with their bytes, for ``verify``."""
        temps = self.stale_ingest(older_than=0)
        if not temps:
            return None
        size = sum(_size_or_zero(p) for p in temps)  # a write in progress may finish meanwhile
        return (
            f"{len(temps)} temporary file(s) ({size} bytes) in ingest/: writes in progress or left by "
            "interrupted writes; 'reviewtrail cas clean-ingest' removes those older than an hour"
        )

    def clean_ingest(self, older_than: float = 3600.0) -> list[Path]:
        """Remove stale temporary files (see :meth:`stale_ingest`); objects are never touched."""
        removed: list[Path] = []
        for entry in self.stale_ingest(older_than):
            with contextlib.suppress(FileNotFoundError):
                entry.unlink()
                removed.append(entry)
        return removed

    # --- raw primitives -------------------------------------------------------------------
    def _open_raw(self, location: Location, hexdigest: str) -> BinaryIO | None:
        """Open an object file; a symlink or anything but a regular file is never an object."""
        path = self.object_path(location, hexdigest)
        label = f"object {location}/sha256:{hexdigest} at {path}"
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(info.st_mode):
            raise CorruptObjectError(f"{label} is a symlink, not an object file")
        if not stat.S_ISREG(info.st_mode):
            raise CorruptObjectError(f"{label} is not a regular file")
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise CorruptObjectError(f"{label} is unreadable ({exc.strerror})") from exc
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped between lstat and open
            os.close(fd)
            raise CorruptObjectError(f"{label} is not a regular file")
        os.set_blocking(fd, True)
        return open(fd, "rb")

    def _list(self, location: Location) -> Iterator[str]:
        if location == "legacy":
            base = self.root / "cas" / "sha256"
            if not base.is_dir():
                return
            for sub in sorted(base.iterdir()):
                if sub.is_dir():
                    for entry in sorted(sub.iterdir()):
                        yield entry.name
                else:
                    yield sub.name
            return
        blobs = self._blobs(location)
        if blobs.is_dir():
            yield from sorted(os.listdir(blobs))

    def _new_temp(self, pool: Pool) -> tuple[int, str]:
        if self.read_only:
            raise ReadOnlyStoreError(
                f"the store at {self.root} was opened read-only; this command writes", field="store"
            )
        import tempfile  # only when writing: reads never load it

        return tempfile.mkstemp(dir=self._ingest(pool), prefix="put-")

    @contextlib.contextmanager
    def _room(self, pool: Pool) -> Iterator[None]:
        """A full disk (or quota) while an object is stored says where: a write or an fsync names
        no file, so the error is given the pool's folder (still an ``OSError``, which callers turn
        into their own exit 5 message). The temporary files were removed on the way out."""
        try:
            yield
        except OSError as exc:
            if exc.errno not in _FULL or exc.filename is not None:
                raise
            raise OSError(exc.errno, exc.strerror, str(self._pool_dir(pool))) from exc

    def _stage_stream(self, pool: Pool, src: IO[bytes]) -> tuple[str, int, bytes | str]:
        with self._room(pool):
            return self._stage_temp(pool, src)

    def _stage_temp(self, pool: Pool, src: IO[bytes]) -> tuple[str, int, bytes | str]:
        h = hashlib.sha256()
        size = 0
        fd, tmp = self._new_temp(pool)
        try:
            buf = bytearray(CHUNK)
            view = memoryview(buf)
            readinto = getattr(src, "readinto", None)
            while True:
                if readinto is not None:
                    n = readinto(buf) or 0
                    chunk = view[:n]
                else:
                    data = src.read(CHUNK)
                    n, chunk = len(data), memoryview(data)
                if not n:
                    break
                h.update(chunk)
                while chunk:
                    written = os.write(fd, chunk)
                    chunk = chunk[written:]
                size += n
            os.fsync(fd)
            os.fchmod(fd, 0o444)
        except BaseException:
            os.close(fd)
            os.unlink(tmp)
            raise
        os.close(fd)
        return h.hexdigest(), size, tmp

    def _existing_is_intact(self, pool: Pool, hexdigest: str) -> bool:
        """``False`` when absent; ``True`` when intact; raise when corrupt."""
        target = self._blobs(pool) / hexdigest
        try:
            fh = open(target, "rb")  # noqa: SIM115
        except FileNotFoundError:
            return False
        name = f"{pool}/sha256:{hexdigest}"
        with VerifyingReader(fh, hexdigest, None, name) as reader:
            try:
                while reader.read(CHUNK):
                    pass
            except CorruptObjectError as exc:
                raise CorruptObjectError(
                    f"existing object {name} at {target} is corrupt; refusing to reuse or replace it"
                ) from exc
        return True

    def _publish(self, pool: Pool, blobs: list[tuple[str, bytes | str]]) -> None:
        with self._room(pool):
            self._link_all(pool, blobs)

    def _link_all(self, pool: Pool, blobs: list[tuple[str, bytes | str]]) -> None:
        blob_dir = self._blobs(pool)
        # Every temp file this call owns, removed in the end whatever happens.
        temps: list[str] = [c for _, c in blobs if isinstance(c, str)]
        staged: list[tuple[str, str]] = []
        seen: set[str] = set()
        try:
            for hexdigest, content in blobs:
                if hexdigest in seen or self._existing_is_intact(pool, hexdigest):
                    seen.add(hexdigest)
                    continue
                seen.add(hexdigest)
                if isinstance(content, str):
                    staged.append((hexdigest, content))
                    continue
                fd, tmp = self._new_temp(pool)
                temps.append(tmp)
                staged.append((hexdigest, tmp))
                with os.fdopen(fd, "wb") as fh:
                    fh.write(content)
                    os.fchmod(fh.fileno(), 0o444)
                    if len(blobs) == 1:
                        fh.flush()
                        os.fsync(fh.fileno())
            if not staged:
                return
            if len(blobs) > 1:
                sync_files(self._ingest(pool), [t for _, t in staged])
            for hexdigest, tmp in staged:
                try:
                    os.link(tmp, blob_dir / hexdigest)
                except FileExistsError:
                    # Another writer published the same address first: verify it.
                    self._existing_is_intact(pool, hexdigest)
            fsync_dir(blob_dir)
        finally:
            for tmp in temps:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)


def _layout_file_problem(path: Path, want: Mapping[str, object]) -> str | None:
    if path.is_symlink() or not path.is_file():
        return "is missing or not a regular file"
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        return f"is unreadable ({exc})"
    if doc != want:
        return f"was changed: {json.dumps(doc)[:200]} (expected {json.dumps(want)})"
    return None


def _size_or_zero(path: Path) -> int:
    """The file's size, or 0 when it is gone (a write that finished meanwhile)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0
