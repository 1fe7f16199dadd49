"""One contract every CAS backend passes: memory, filesystem and S3 (against a real SeaweedFS).

The tests themselves are in ``tests/contracts/cas.py``; each class here is one backend.
Below them: address and reference rules, and the filesystem store's own layout and failures.
"""

from __future__ import annotations

import os
import stat
import uuid
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contracts.cas import CasContract
from reviewtrail.cas import CasObjectRef, CasRef, CasStore, FilesystemCas, Location, MemoryCas, S3Cas, parse_address
from reviewtrail.config import S3Settings
from reviewtrail.errors import CorruptObjectError, InvalidAddressError
from support.seaweed import SeaweedServer


class TestMemoryCas(CasContract):
    def make_cas(self) -> CasStore:
        return MemoryCas()

    def tamper(self, cas: CasStore, location: Location, hexdigest: str, data: bytes) -> None:
        assert isinstance(cas, MemoryCas)
        cas.tamper(location, hexdigest, data)


class TestFilesystemCas(CasContract):
    property_examples = 50  # each example lays out a new store on disk

    def make_cas(self) -> CasStore:
        return FilesystemCas(self.tmp_path / f"store-{uuid.uuid4().hex[:12]}", create=True)

    def tamper(self, cas: CasStore, location: Location, hexdigest: str, data: bytes) -> None:
        assert isinstance(cas, FilesystemCas)
        fs_tamper(cas, location, hexdigest, data)

    def leftover_staging(self, cas: CasStore) -> list[Path]:
        assert isinstance(cas, FilesystemCas)
        return cas.stale_ingest(older_than=-1)


class TestS3Cas(CasContract):
    """The S3 backend on a real SeaweedFS: a fresh prefix per store, a fresh bucket per test."""

    property_examples = 15  # each example lays out a new store with requests to the server

    def make_cas(self) -> CasStore:
        server: SeaweedServer = self.request.getfixturevalue("seaweed")
        if not hasattr(self, "bucket"):
            self.bucket = server.new_bucket()
        spool = self.tmp_path / f"spool-{uuid.uuid4().hex[:12]}"
        spool.mkdir()
        return S3Cas(
            self.bucket,
            f"stores/{uuid.uuid4().hex[:12]}",
            s3=s3_settings(server),
            create=True,
            spool_dir=spool,
        )

    def tamper(self, cas: CasStore, location: Location, hexdigest: str, data: bytes) -> None:
        assert isinstance(cas, S3Cas)
        s3_tamper(self.request.getfixturevalue("seaweed"), cas, location, hexdigest, data)

    def leftover_staging(self, cas: CasStore) -> list[object]:
        assert isinstance(cas, S3Cas) and cas.spool_dir is not None
        return [*cas.unfinished_uploads(), *Path(cas.spool_dir).iterdir()]


def s3_settings(server: SeaweedServer) -> S3Settings:
    """Settings that point a store at ``server`` with its real credentials."""
    return S3Settings(
        access_key_id=server.access_key,
        secret_access_key=server.secret_key,
        endpoint_url=server.endpoint,
        region="us-east-1",
    )


def s3_tamper(server: SeaweedServer, cas: S3Cas, location: Location, hexdigest: str, data: bytes) -> None:
    """Overwrite an object's bytes with a plain PutObject, behind the store's back."""
    server.client().put_object(Bucket=cas.bucket, Key=cas.key(location, hexdigest), Body=data)


def fs_tamper(cas: FilesystemCas, location: Location, hexdigest: str, data: bytes) -> None:
    path = cas.object_path(location, hexdigest)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.chmod(0o644)
    path.write_bytes(data)


# --- addresses and references, whatever the backend ------------------------------------------


@given(st.text(max_size=80))
def test_parse_address_accepts_only_64_lowercase_hex(text: str) -> None:
    valid = len(text) == 64 and all(c in "0123456789abcdef" for c in text)
    if valid:
        assert parse_address(text) == text
        assert parse_address("sha256:" + text) == text
    else:
        with pytest.raises(InvalidAddressError):
            parse_address(text)


def test_refs_reject_malformed_fields() -> None:
    with pytest.raises(ValueError):
        CasObjectRef(hash="A" * 64, size=1)
    with pytest.raises(ValueError):
        CasObjectRef(hash="a" * 64, size=-1)
    with pytest.raises(ValueError):
        CasRef(pool="data", digest="a" * 64, size=1)
    with pytest.raises(ValueError):
        CasRef(pool="other", digest="sha256:" + "a" * 64, size=1)  # type: ignore[arg-type]


# --- filesystem-only behaviour -------------------------------------------------------------


def test_filesystem_layout_is_an_oci_image_layout(tmp_path: Path) -> None:
    import json

    cas = FilesystemCas(tmp_path, create=True)
    for pool in ("data", "agent-state"):
        base = tmp_path / "versioning" / pool
        assert json.loads((base / "oci-layout").read_text()) == {"imageLayoutVersion": "1.0.0"}
        assert json.loads((base / "index.json").read_text())["schemaVersion"] == 2
        assert (base / "blobs" / "sha256").is_dir() and (base / "ingest").is_dir()
    ref = cas.put(b"blob", pool="agent-state")
    path = tmp_path / "versioning" / "agent-state" / "blobs" / "sha256" / ref.hash
    assert path.read_bytes() == b"blob"
    assert not stat.S_IMODE(path.stat().st_mode) & 0o222, "published objects are read-only"
    assert list((tmp_path / "versioning" / "agent-state" / "ingest").iterdir()) == []
    assert not (tmp_path / "cas").exists(), "nothing new is written to the legacy layout"


def test_filesystem_requires_init(tmp_path: Path) -> None:
    from reviewtrail.errors import StoreNotInitializedError

    with pytest.raises(StoreNotInitializedError):
        FilesystemCas(tmp_path / "absent")


def test_failed_put_file_leaves_nothing_under_blobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cas = FilesystemCas(tmp_path, create=True)
    src = tmp_path / "src.bin"
    src.write_bytes(os.urandom(5 << 20))

    def boom(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("reviewtrail.cas._filesystem.os.link", boom)
    with pytest.raises(OSError, match="No space"):
        cas.put_file(src)
    with pytest.raises(OSError):
        cas.put_many([b"a", b"b"])
    blobs = tmp_path / "versioning" / "data" / "blobs" / "sha256"
    assert list(blobs.iterdir()) == []
    assert list((tmp_path / "versioning" / "data" / "ingest").iterdir()) == [], "temp files are cleaned up"


def test_failed_write_midway_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cas = FilesystemCas(tmp_path, create=True)
    src = tmp_path / "src.bin"
    src.write_bytes(os.urandom(3 << 20))
    real_write = os.write
    calls = {"n": 0}

    def flaky_write(fd: int, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(5, "Input/output error")
        return real_write(fd, data)

    monkeypatch.setattr("reviewtrail.cas._filesystem.os.write", flaky_write)
    with pytest.raises(OSError, match="Input/output"):
        cas.put_file(src)
    assert list((tmp_path / "versioning" / "data" / "blobs" / "sha256").iterdir()) == []
    assert list((tmp_path / "versioning" / "data" / "ingest").iterdir()) == []


def test_put_file_onto_a_corrupt_object_leaves_no_temp_file(tmp_path: Path) -> None:
    cas = FilesystemCas(tmp_path / "s", create=True)
    ref = cas.put(b"hello")
    fs_tamper(cas, "data", ref.hash, b"tampered")
    src = tmp_path / "src.bin"
    src.write_bytes(b"hello")
    with pytest.raises(CorruptObjectError):
        cas.put_file(src)
    assert list((tmp_path / "s" / "versioning" / "data" / "ingest").iterdir()) == []
