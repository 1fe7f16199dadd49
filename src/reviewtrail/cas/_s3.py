"""S3 CAS: the filesystem store's layout as keys under ``s3://bucket/prefix/``.

Keys mirror the folders of :class:`~reviewtrail.cas.FilesystemCas` under the URL's prefix:
``versioning/<pool>/{oci-layout,index.json,blobs/sha256/<hex>}`` for the pools ``data`` and
``agent-state``, and ``cas/sha256/<2 hex>/<hex>`` for legacy objects (read and verified, never
written). Any S3-compatible server works (AWS S3, SeaweedFS, Ceph).

Publishing is create-only: ``PutObject`` (or ``CompleteMultipartUpload``, above
``multipart_threshold`` bytes) with ``If-None-Match: *``. When the key exists (412) the existing
object is read and re-hashed: reused when intact, :class:`CorruptObjectError` naming it when not;
it is never overwritten. A small object is sent with its SHA-256 as ``x-amz-checksum-sha256``,
so the server refuses bytes that do not match the address; a large one is hashed again as its
parts are sent, and the upload is completed only when that hash is the address. A failed or
interrupted multipart upload is aborted, so it leaves no object and no unfinished upload.
``put_files`` hashes each file, then sends it from the file itself (no copy); ``put_stream`` spools
to a temporary file past a few MiB (constant memory); ``put_many`` sends with a pool of threads.
Every read streams the body through the shared :class:`VerifyingReader`; a read that must be
verified before its first byte is given (``cas cat``) downloads the object once, hashing it into
a temporary file (:meth:`S3Cas.copy_verified`): beside the destination file, or in ``spool_dir``.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import io
import json
import os
import stat
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, cast

from reviewtrail.cas._address import DEFAULT_MEDIA_TYPE, POOLS, Pool, check_hex, check_media_type, check_pool, is_hex
from reviewtrail.cas._filesystem import OCI_INDEX, OCI_LAYOUT
from reviewtrail.cas._protocol import CHUNK, ByteCallback, CasStore, Location, VerifyingReader, regular_files
from reviewtrail.cas._s3_client import (
    S3Body,
    S3Endpoint,
    error_code,
    is_missing,
    is_precondition_failed,
    make_client,
    s3_errors,
)
from reviewtrail.cas._s3_download import GET_PART, download_in_parts
from reviewtrail.cas._s3_names import CAS_URL_SETTING, check_bucket, check_prefix
from reviewtrail.cas._s3_upload import hash_file, read_exact, run_all, send_parts, spool_stream
from reviewtrail.errors import (
    BackendUnavailableError,
    CorruptObjectError,
    InvalidInputError,
    ObjectNotFoundError,
    ReadOnlyStoreError,
    StoreNotInitializedError,
)

if TYPE_CHECKING:
    from reviewtrail.cas._protocol import AnyRef
    from reviewtrail.cas._refs import CasRef
    from reviewtrail.config import S3Settings

__all__ = ["DEFAULT_CONCURRENCY", "DEFAULT_MULTIPART_THRESHOLD", "DEFAULT_PART_SIZE", "S3Cas"]

MIB = 1 << 20
DEFAULT_MULTIPART_THRESHOLD = 64 * MIB
DEFAULT_PART_SIZE = 16 * MIB
DEFAULT_CONCURRENCY = 16
MIN_PART_SIZE = 5 * MIB  # S3's smallest part (but the last)
_PART_WINDOW = 8  # parts of one upload in memory and in flight at once
_SPILL = 8 * MIB  # put_stream keeps this much in memory, then spools to a temporary file


@dataclass
class _Upload:
    """One object to send: its address and size, and its bytes in memory or in an open file."""

    hexdigest: str
    size: int
    data: bytes | None = None
    file: IO[bytes] | None = None


class S3Cas(CasStore):
    """The CAS in an S3 bucket, under a key prefix.

    ``s3`` gives the credentials and endpoint (``None``: the client library's own defaults);
    ``client`` is an already made boto3 S3 client to use instead. The client is made on the
    first request, so opening a store costs nothing until an object is read or written.
    ``multipart_threshold`` (bytes) is the size above which an object is sent as a multipart
    upload of ``part_size`` parts; ``concurrency`` is how many objects ``put_many`` sends at once.
    A request is tried up to ``max_attempts`` times (botocore's standard retries, with backoff:
    5xx answers, throttling, dropped connections) with the given timeouts in seconds.
    """

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        s3: S3Settings | None = None,
        client: Any = None,
        create: bool = False,
        read_only: bool = False,
        require_layout: bool = True,
        multipart_threshold: int = DEFAULT_MULTIPART_THRESHOLD,
        part_size: int = DEFAULT_PART_SIZE,
        concurrency: int = DEFAULT_CONCURRENCY,
        spool_dir: str | os.PathLike[str] | None = None,
        max_attempts: int = 5,
        connect_timeout: float = 10.0,
        read_timeout: float = 60.0,
    ) -> None:
        self.bucket = check_bucket(bucket)
        self.prefix = check_prefix(prefix)
        if part_size < MIN_PART_SIZE:
            raise InvalidInputError(f"must be at least {MIN_PART_SIZE} bytes (S3's smallest part)", field="part_size")
        if multipart_threshold < 0:
            raise InvalidInputError("must be 0 or more bytes", field="multipart_threshold")
        if concurrency < 1:
            raise InvalidInputError("must be 1 or more", field="concurrency")
        if max_attempts < 1:
            raise InvalidInputError("must be 1 or more", field="max_attempts")
        self.read_only = read_only
        self.multipart_threshold = multipart_threshold
        self.part_size = part_size
        self.concurrency = concurrency
        self.spool_dir = None if spool_dir is None else os.fspath(spool_dir)
        self._settings = s3
        self._client_value = client
        self._client_lock = threading.Lock()
        self._max_attempts = max_attempts
        self._timeouts = (connect_timeout, read_timeout)
        self._bucket_checked = False
        self.target = S3Endpoint(
            url=self.url,
            bucket=self.bucket,
            endpoint=s3.endpoint_url if s3 is not None else None,
            access_key_id=s3.access_key_id if s3 is not None else None,
        )
        if create:
            self.initialize()
        elif require_layout and any(self._get_small(self._pool_key(p, "oci-layout")) is None for p in POOLS):
            raise StoreNotInitializedError(f"no CAS at {self.url}; run 'reviewtrail init' first", field="store")

    # --- layout ---------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"

    def key(self, location: Location, hexdigest: str) -> str:
        """The key of an object (the address is validated first)."""
        check_hex(hexdigest)
        if location == "legacy":
            return f"{self.prefix}cas/sha256/{hexdigest[:2]}/{hexdigest}"
        return f"{self._location_prefix(location)}{hexdigest}"

    def _location_prefix(self, location: Location) -> str:
        if location == "legacy":
            return f"{self.prefix}cas/sha256/"
        return f"{self.prefix}versioning/{location}/blobs/sha256/"

    def _pool_key(self, pool: Pool, name: str) -> str:
        return f"{self.prefix}versioning/{pool}/{name}"

    def _relative(self, key: str) -> str:
        """A key as messages name it, beside the store's URL: without the prefix."""
        return key[len(self.prefix) :]

    def initialize(self) -> None:
        """Write both pools' ``oci-layout`` and ``index.json`` (create-only: existing ones are kept)."""
        self._check_writable()
        for pool in POOLS:
            for name, doc in (("oci-layout", OCI_LAYOUT), ("index.json", OCI_INDEX)):
                self._create(self._pool_key(pool, name), json.dumps(doc).encode())

    def furniture_problems(self) -> list[str]:
        """What is wrong with the layout's own objects: each pool's ``oci-layout`` and ``index.json``."""
        problems: list[str] = []
        for pool in POOLS:
            for name, want in (("oci-layout", OCI_LAYOUT), ("index.json", OCI_INDEX)):
                key = self._pool_key(pool, name)
                data = self._get_small(key)
                if data is None:
                    problems.append(f"{pool}: {name} is missing (s3://{self.bucket}/{key})")
                    continue
                try:
                    doc = json.loads(data)
                except ValueError as exc:
                    problems.append(f"{pool}: {name} is unreadable ({exc})")
                    continue
                if doc != want:
                    problems.append(
                        f"{pool}: {name} was changed: {json.dumps(doc)[:200]} (expected {json.dumps(want)})"
                    )
        return problems

    def stale_staging(self, older_than: float = 3600.0) -> list[str]:
        """Multipart uploads under the prefix begun more than ``older_than`` seconds ago and neither
        completed nor aborted (a writer killed mid-upload): their parts are stored, no object is."""
        return [self._upload_line(key, upload) for key, upload, _ in self._uploads_before(older_than)]

    def clean_staging(self, older_than: float = 3600.0) -> list[str]:
        """Abort :meth:`stale_staging`'s uploads (their parts are freed; no object is touched)."""
        aborted = []
        for key, upload, _ in self._uploads_before(older_than):
            self._call(
                "abort an unfinished upload", "abort_multipart_upload", missing_ok=True,
                Bucket=self.bucket, Key=key, UploadId=upload,
            )  # fmt: skip
            aborted.append(self._upload_line(key, upload))
        return aborted

    def _upload_line(self, key: str, upload: str) -> str:
        return f"s3://{self.bucket}/{key} (unfinished multipart upload {upload})"

    def _uploads_before(self, older_than: float) -> list[tuple[str, str, Any]]:
        import datetime

        cutoff = datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=older_than)
        return [(k, u, when) for k, u, when in self._uploads() if when is None or when < cutoff]

    def unfinished_uploads(self) -> list[tuple[str, str]]:
        """Multipart uploads begun under the prefix and neither completed nor aborted: ``(key, upload id)``."""
        return [(key, upload) for key, upload, _ in self._uploads()]

    def _uploads(self) -> list[tuple[str, str, Any]]:
        """``(key, upload id, when it was begun)`` of every unfinished upload under the prefix."""
        found: list[tuple[str, str, Any]] = []
        pages = iter(
            self.client.get_paginator("list_multipart_uploads").paginate(Bucket=self.bucket, Prefix=self.prefix)
        )
        while True:
            with s3_errors(self.target, "list unfinished uploads"):
                page = next(pages, None)
            if page is None:
                return found
            found.extend((u["Key"], u["UploadId"], u.get("Initiated")) for u in page.get("Uploads", []))

    # --- the client -----------------------------------------------------------------------
    @property
    def client(self) -> Any:
        """The boto3 S3 client (made on first use)."""
        with self._client_lock:
            if self._client_value is None:
                self._client_value = make_client(
                    self._settings,
                    pool_size=self.concurrency + _PART_WINDOW,
                    max_attempts=self._max_attempts,
                    connect_timeout=self._timeouts[0],
                    read_timeout=self._timeouts[1],
                    target=self.target,
                )
            return self._client_value

    def _call(
        self, action: str, operation: str, *, missing_ok: bool = False, exists_ok: bool = False, **kw: Any
    ) -> Any:
        """Call one client operation; ``None`` when ``missing_ok`` and the key is absent, ``False``
        when ``exists_ok`` and a create-only write found the key taken; every other failure is
        translated (:func:`s3_errors`)."""
        import botocore.exceptions

        method = getattr(self.client, operation)
        with s3_errors(self.target, action):
            try:
                return method(**kw)
            except botocore.exceptions.ClientError as exc:
                if missing_ok and is_missing(exc):
                    return None
                if exists_ok and is_precondition_failed(exc):
                    return False
                raise

    def _check_bucket(self) -> None:
        """Ask for the bucket itself (a HEAD's 404 or 403 does not say whether the key, the bucket
        or the credentials are wrong; a listing does)."""
        self._call("list objects", "list_objects_v2", Bucket=self.bucket, Prefix=self.prefix, MaxKeys=1)
        self._bucket_checked = True

    def _head(self, key: str) -> int | None:
        """The stored size of ``key``, or ``None`` when there is no such key (in a bucket that exists)."""
        import botocore.exceptions

        with s3_errors(self.target, f"look up {self._relative(key)}"):
            try:
                response = self.client.head_object(Bucket=self.bucket, Key=key)
            except botocore.exceptions.ClientError as exc:
                if not is_missing(exc):
                    if error_code(exc) == "403":
                        self._check_bucket()  # the listing says why: a wrong secret, an unknown key
                    raise
                response = None
        if response is None:
            if not self._bucket_checked:
                self._check_bucket()
            return None
        return int(response["ContentLength"])

    def _get_small(self, key: str) -> bytes | None:
        response = self._call(f"read {self._relative(key)}", "get_object", missing_ok=True, Bucket=self.bucket, Key=key)
        if response is None:
            return None
        with S3Body(response["Body"], self.target, key) as body:
            return body.read(1 << 16)

    def _get_range(self, key: str, name: str, first: int, last: int) -> bytes:
        """Bytes ``first`` to ``last`` (inclusive) of ``key``; the key gone is ObjectNotFoundError."""
        response = self._call(
            f"read {name}", "get_object", missing_ok=True, Bucket=self.bucket, Key=key, Range=f"bytes={first}-{last}"
        )
        if response is None:
            raise ObjectNotFoundError(f"object {name} disappeared while being read", field="ref")
        with S3Body(response["Body"], self.target, name) as body:
            return body.read()

    # --- raw primitives -------------------------------------------------------------------
    def _open_raw(self, location: Location, hexdigest: str) -> IO[bytes] | None:
        key = self.key(location, hexdigest)
        label = f"{location}/sha256:{hexdigest}"
        response = self._call(f"read {label}", "get_object", missing_ok=True, Bucket=self.bucket, Key=key)
        if response is None:
            return None
        return cast(IO[bytes], S3Body(response["Body"], self.target, label))

    def _list(self, location: Location) -> Iterator[str]:
        for name, _size in self._listed(location):
            yield name

    def object_sizes(self) -> Iterator[tuple[Location, str, int | None]]:
        """Every object name with its size, from the listing alone (no request per object)."""
        for location in (*POOLS, "legacy"):
            for name, size in self._listed(location):  # type: ignore[arg-type]
                yield location, name, size  # type: ignore[misc]

    def _listed(self, location: Location) -> Iterator[tuple[str, int]]:
        """The names (hex addresses, as the filesystem backend names them) and sizes listed at ``location``."""
        base = self._location_prefix(location)
        pages = iter(self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=base))
        while True:
            with s3_errors(self.target, f"list the {location} objects"):
                page = next(pages, None)
            if page is None:
                return
            for entry in page.get("Contents", []):
                name = str(entry["Key"])[len(base) :]
                if location == "legacy":
                    folder, _, rest = name.partition("/")
                    if is_hex(rest) and folder == rest[:2]:
                        name = rest
                yield name, int(entry.get("Size", 0))

    def locate(self, ref: AnyRef) -> Location | None:
        """The first location holding this address (one HEAD each, nothing read), or ``None``."""
        hexdigest, _size, where = self._candidates(ref)
        for loc in where:
            if self._head(self.key(loc, hexdigest)) is not None:
                return loc
        return None

    def stored_size(self, location: Location, name: str) -> int | None:
        """The size stored under ``name`` at ``location`` (not verified), ``None`` when absent or not an address."""
        if not is_hex(name.removeprefix("sha256:")):
            return None
        return self._head(self.key(location, name.removeprefix("sha256:")))

    def open_verified(self, ref: AnyRef, *, on_bytes: ByteCallback | None = None) -> IO[bytes] | VerifyingReader:
        """The object's bytes once verified, downloaded once (:meth:`copy_verified`) into a
        temporary file in ``spool_dir`` (the system's temporary folder when None), which is
        returned at its start and removed when it is closed."""
        spool = tempfile.TemporaryFile(dir=self.spool_dir)  # noqa: SIM115 (returned open to the caller)
        try:
            self.copy_verified(ref, spool, on_bytes=on_bytes)
            spool.seek(0)
        except BaseException:
            spool.close()
            raise
        return spool

    def copy_verified(self, ref: AnyRef, out: IO[bytes], *, on_bytes: ByteCallback | None = None) -> None:
        """The object's bytes written to ``out`` as they are downloaded and hashed, in one pass.
        An object larger than one part comes as ranged GETs on a few threads
        (:mod:`._s3_download`), as boto3's ``download_file`` fetches it."""
        hexdigest, size, where = self._candidates(ref)
        for location in where:  # one HEAD each, as locate asks
            stored = self._head(self.key(location, hexdigest))
            if stored is not None:
                break
        else:
            raise ObjectNotFoundError(f"no object sha256:{hexdigest} in {', '.join(where)}", field="ref")
        name = f"{location}/sha256:{hexdigest}"
        if size is not None and stored != size:
            raise CorruptObjectError(f"object {name} has {stored} bytes, its reference says {size}")
        if stored <= GET_PART:
            super().copy_verified(ref, out, on_bytes=on_bytes)
            return
        key = self.key(location, hexdigest)
        download_in_parts(
            lambda first, last: self._get_range(key, name, first, last),
            stored,
            hexdigest,
            name,
            out,
            on_bytes=on_bytes,
        )

    # --- writes ---------------------------------------------------------------------------
    def _check_writable(self) -> None:
        if self.read_only:
            raise ReadOnlyStoreError(f"the CAS at {self.url} was opened read-only; this command writes", field="store")

    def _stage_stream(self, pool: Pool, stream: IO[bytes]) -> tuple[str, int, bytes | str]:
        """Read ``stream`` once, hashing: its bytes when small, else a temporary file's path."""
        self._check_writable()
        return spool_stream(stream, keep=min(self.multipart_threshold, _SPILL), spool_dir=self.spool_dir)

    def put_files(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        pool: Pool = "data",
        media_type: str = DEFAULT_MEDIA_TYPE,
        on_bytes: ByteCallback | None = None,
    ) -> list[CasRef]:
        """Store files' bytes: every path is checked and every file hashed in one pass before any
        is sent; then each is sent from the file itself (no local copy), ``concurrency`` at once.

        A file is kept in memory from its hashing pass when it fits under ``multipart_threshold``
        (alone) or a few MiB (in a batch); any other is read again as it is sent, and refused
        (:class:`InvalidInputError`, nothing stored under its address) when its bytes changed
        since. ``on_bytes`` counts the bytes the server has received (or the object already
        there, once verified)."""
        from reviewtrail.cas._refs import CasRef

        pool = check_pool(pool)
        media_type = check_media_type(media_type)
        names = regular_files(paths)
        self._check_writable()
        keep = self.multipart_threshold if len(names) == 1 else min(self.multipart_threshold, _SPILL)
        hashed: list[tuple[str, int, bytes | str]] = []
        for p in names:
            with open(p, "rb", buffering=0) as fh:
                hexdigest, size, data = hash_file(fh, keep=keep)
            hashed.append((hexdigest, size, p if data is None else data))
        self._send(pool, hashed, on_bytes)
        return [
            CasRef(pool=pool, digest=f"sha256:{hexdigest}", size=size, media_type=media_type)
            for hexdigest, size, _ in hashed
        ]

    def _publish(self, pool: Pool, blobs: list[tuple[str, bytes | str]]) -> None:
        self._check_writable()
        owned = [content for _, content in blobs if isinstance(content, str)]  # temporary files: removed at the end
        try:
            self._send(pool, [(hexdigest, None, content) for hexdigest, content in blobs], None)
        finally:
            for tmp in owned:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)

    def _send(
        self, pool: Pool, blobs: Sequence[tuple[str, int | None, bytes | str]], on_bytes: ByteCallback | None
    ) -> None:
        """Store the first of each address in ``blobs`` (with its size when known, and its bytes or
        the path of a file holding them), ``concurrency`` at once; ``on_bytes`` is told the bytes
        sent, one call at a time, and a repeated address's size at once, so a batch counts to its total."""
        count = None if on_bytes is None else _one_at_a_time(on_bytes)
        seen: set[str] = set()
        tasks: list[Callable[[], None]] = []
        for hexdigest, size, content in blobs:
            if hexdigest not in seen:
                seen.add(hexdigest)
                tasks.append(functools.partial(self._store_staged, pool, hexdigest, size, content, count))
            elif count is not None and size is not None:
                count(size)  # the same bytes again: stored once, by the first
        self._run_all(tasks)

    def _store_staged(
        self, pool: Pool, hexdigest: str, size: int | None, content: bytes | str, on_bytes: ByteCallback | None
    ) -> None:
        if isinstance(content, bytes):
            self._store(pool, _Upload(hexdigest, len(content), data=content), on_bytes)
            return
        # Opened without waiting (a path swapped for a FIFO since it was hashed would block) and
        # sent only while it is still a regular file: an endless device is refused, not uploaded.
        with open(os.open(content, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb", buffering=0) as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise InvalidInputError(
                    f"{content!r} is no longer a regular file (sha256:{hexdigest} when hashed); nothing was stored",
                    field="path",
                )
            self._store(pool, _Upload(hexdigest, st.st_size if size is None else size, file=fh), on_bytes)

    def _run_all(self, tasks: list[Callable[[], None]]) -> None:
        if len(tasks) > 1:
            _ = self.client  # made once, before the threads share it
        run_all(tasks, self.concurrency)

    def _store(self, pool: Pool, upload: _Upload, on_bytes: ByteCallback | None) -> None:
        """Publish one object create-only; an object already at its key is verified instead."""
        key = self.key(pool, upload.hexdigest)
        if upload.data is None and upload.size <= self.multipart_threshold:
            upload = self._in_memory(upload)
        elif upload.data is not None and upload.size > self.multipart_threshold:  # large bytes (put_many)
            upload = _Upload(upload.hexdigest, upload.size, file=io.BytesIO(upload.data))
        if upload.data is not None:
            created = self._put_small(key, upload)
        elif self._head(key) is not None:
            created = False
        else:
            self._put_multipart(pool, key, upload, on_bytes)
            return
        if not created:
            self._check_existing(pool, upload)
        if on_bytes is not None:
            on_bytes(upload.size)

    def _in_memory(self, upload: _Upload) -> _Upload:
        assert upload.file is not None
        upload.file.seek(0)
        data = read_exact(upload.file, upload.size + 1)
        self._check_same(upload, hashlib.sha256(data).hexdigest(), len(data))
        return _Upload(upload.hexdigest, upload.size, data=data)

    def _check_same(self, upload: _Upload, hexdigest: str, size: int) -> None:
        if hexdigest != upload.hexdigest or size != upload.size:
            raise InvalidInputError(
                f"the bytes changed while being stored (sha256:{upload.hexdigest}, {upload.size} bytes when hashed; "
                f"{size} bytes that hash otherwise when sent); nothing was stored",
                field="path",
            )

    def _put_small(self, key: str, upload: _Upload) -> bool:
        """``PutObject`` create-only, the server checking the bytes' SHA-256; ``False`` when the key exists."""
        return self._create(key, upload.data, ChecksumSHA256=base64.b64encode(bytes.fromhex(upload.hexdigest)).decode())

    def _create(self, key: str, body: bytes | None, **checks: Any) -> bool:
        """``PutObject`` create-only (``If-None-Match: *``); ``False`` when the key exists."""
        response = self._call(
            f"write {self._relative(key)}", "put_object", exists_ok=True, Bucket=self.bucket, Key=key, Body=body,
            IfNoneMatch="*", **checks,
        )  # fmt: skip
        return response is not False

    def _put_multipart(self, pool: Pool, key: str, upload: _Upload, on_bytes: ByteCallback | None) -> None:
        """One multipart upload, completed create-only once the bytes sent hash to the address;
        aborted on any failure (and when the key was taken meanwhile: then that object is verified)."""
        assert upload.file is not None
        where = self._relative(key)
        upload_id = self._call(f"begin uploading {where}", "create_multipart_upload", Bucket=self.bucket, Key=key)[
            "UploadId"
        ]

        def send(number: int, data: bytes) -> str:
            response = self._call(
                f"upload part {number} of {where}",
                "upload_part",
                Bucket=self.bucket,
                Key=key,
                UploadId=upload_id,
                PartNumber=number,
                Body=data,
            )
            return str(response["ETag"])

        finished = False
        try:
            upload.file.seek(0)
            sent = send_parts(
                upload.file, send, part_size=self.part_size, window=_PART_WINDOW, size=upload.size, on_bytes=on_bytes
            )
            self._check_same(upload, sent.hexdigest, sent.size)
            finished = (
                self._call(
                    f"complete the upload of {where}",
                    "complete_multipart_upload",
                    exists_ok=True,
                    Bucket=self.bucket,
                    Key=key,
                    UploadId=upload_id,
                    MultipartUpload={"Parts": sent.parts},
                    IfNoneMatch="*",
                )
                is not False
            )
        finally:
            if not finished:
                with contextlib.suppress(Exception):
                    self._call(
                        f"abort the upload of {where}",
                        "abort_multipart_upload",
                        Bucket=self.bucket,
                        Key=key,
                        UploadId=upload_id,
                    )
        if not finished:  # the key was taken while the parts were sent
            self._check_existing(pool, upload)

    def _check_existing(self, pool: Pool, upload: _Upload) -> None:
        """The object at the key is intact (hash and size) or :class:`CorruptObjectError` names it."""
        label = f"{pool}/sha256:{upload.hexdigest}"
        where = f"s3://{self.bucket}/{self.key(pool, upload.hexdigest)}"
        raw = self._open_raw(pool, upload.hexdigest)
        if raw is None:
            raise BackendUnavailableError(
                f"{self.target.where} said {where} exists, then that it does not", field=CAS_URL_SETTING
            )
        try:
            with VerifyingReader(raw, upload.hexdigest, upload.size, label) as reader:
                while reader.read(CHUNK):
                    pass
        except CorruptObjectError as exc:
            raise CorruptObjectError(
                f"existing object {label} at {where} is corrupt ({exc}); refusing to reuse or replace it"
            ) from None


def _one_at_a_time(on_bytes: ByteCallback) -> ByteCallback:
    """``on_bytes`` called under a lock (the objects are sent on threads)."""
    lock = threading.Lock()

    def count(n: int) -> None:
        with lock:
            on_bytes(n)

    return count
