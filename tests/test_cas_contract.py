"""One contract every CAS backend passes (memory, filesystem; S3 joins later)."""

from __future__ import annotations

import hashlib
import io
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.cas import CasObjectRef, CasRef, CasStore, FilesystemCas, MemoryCas, parse_address
from reviewtrail.errors import CorruptObjectError, InvalidAddressError, InvalidInputError, ObjectNotFoundError

Tamper = Callable[[str, str, bytes], None]


class Backend:
    def __init__(self, cas: CasStore, tamper: Tamper, name: str) -> None:
        self.cas = cas
        self.tamper = tamper
        self.name = name


def _fs_tamper(cas: FilesystemCas) -> Tamper:
    def tamper(location: str, hexdigest: str, data: bytes) -> None:
        path = cas.object_path(location, hexdigest)  # type: ignore[arg-type]
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            path.chmod(0o644)
        path.write_bytes(data)

    return tamper


@pytest.fixture(params=["memory", "filesystem"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "memory":
        mem = MemoryCas()
        yield Backend(mem, mem.tamper, "memory")  # type: ignore[arg-type]
    else:
        fs = FilesystemCas(tmp_path / "store", create=True)
        yield Backend(fs, _fs_tamper(fs), "filesystem")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_put_returns_typed_ref_and_read_round_trips(backend: Backend) -> None:
    ref = backend.cas.put(b"hello", pool="agent-state", media_type="text/plain")
    assert ref == CasRef(pool="agent-state", digest=f"sha256:{sha(b'hello')}", size=5, media_type="text/plain")
    assert ref.object_ref() == CasObjectRef(hash=sha(b"hello"), size=5)
    assert backend.cas.read(ref) == b"hello"
    assert backend.cas.read(ref.hash) == b"hello"
    assert backend.cas.read(ref.object_ref()) == b"hello"


def test_put_is_idempotent_and_deduplicates(backend: Backend) -> None:
    a = backend.cas.put(b"same")
    b = backend.cas.put(b"same")
    assert a == b
    assert [n for _, n in backend.cas.iter_objects()] == [sha(b"same")]


def test_empty_object(backend: Backend) -> None:
    ref = backend.cas.put(b"")
    assert ref.size == 0
    assert backend.cas.read(ref) == b""
    assert backend.cas.verify(ref)


def test_put_many_returns_refs_in_order_and_stores_each_once(backend: Backend) -> None:
    items = [b"a", b"b", b"a", b"c" * 10_000]
    refs = backend.cas.put_many(items, pool="data")
    assert [r.hash for r in refs] == [sha(i) for i in items]
    assert sorted(n for _, n in backend.cas.iter_objects()) == sorted({sha(i) for i in items})
    for item, ref in zip(items, refs, strict=True):
        assert backend.cas.read(ref) == item


def test_put_file_streams_the_bytes(backend: Backend, tmp_path: Path) -> None:
    data = os.urandom(3 * (1 << 20) + 17)  # several chunks and a tail
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    ref = backend.cas.put_file(path, media_type="application/x-test")
    assert ref.hash == sha(data) and ref.size == len(data) and ref.media_type == "application/x-test"
    assert backend.cas.read(ref) == data


def test_put_file_rejects_missing_files_and_folders(backend: Backend, tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError) as err:
        backend.cas.put_file(tmp_path / "nope")
    assert err.value.field == "path"
    with pytest.raises(InvalidInputError):
        backend.cas.put_file(tmp_path)
    assert list(backend.cas.iter_objects()) == []


def test_bad_pool_and_media_type_are_named(backend: Backend) -> None:
    with pytest.raises(InvalidInputError) as err:
        backend.cas.put(b"x", pool="tmp")  # type: ignore[arg-type]
    assert err.value.field == "pool"
    with pytest.raises(InvalidInputError) as err:
        backend.cas.put(b"x", media_type="not a media type")
    assert err.value.field == "mediaType"
    assert list(backend.cas.iter_objects()) == []


def test_pools_are_separate_for_typed_refs(backend: Backend) -> None:
    ref = backend.cas.put(b"only in data", pool="data")
    other = CasRef(pool="agent-state", digest=ref.digest, size=ref.size)
    assert backend.cas.has(ref) and not backend.cas.has(other)
    assert not backend.cas.verify(other)
    with pytest.raises(ObjectNotFoundError):
        backend.cas.read(other)
    # A bare hash finds it in any pool.
    assert backend.cas.has(ref.hash)


def test_has_checks_size_for_refs(backend: Backend) -> None:
    ref = backend.cas.put(b"12345")
    assert not backend.cas.has(CasRef(pool="data", digest=ref.digest, size=4))
    assert not backend.cas.has(CasObjectRef(hash=ref.hash, size=6))
    with pytest.raises(CorruptObjectError):
        backend.cas.read(CasObjectRef(hash=ref.hash, size=6))


def test_bare_hash_search_order_data_agent_state_legacy(backend: Backend) -> None:
    data = b"in both pools"
    backend.cas.put(data, pool="agent-state")
    assert backend.cas.locate(sha(data)) == "agent-state"
    backend.cas.put(data, pool="data")
    assert backend.cas.locate(sha(data)) == "data"
    legacy = b"old object"
    backend.tamper("legacy", sha(legacy), legacy)
    assert backend.cas.locate(sha(legacy)) == "legacy"
    assert backend.cas.read(sha(legacy)) == legacy


def test_corrupt_legacy_object_is_an_integrity_error(backend: Backend) -> None:
    backend.tamper("legacy", sha(b"legacy"), b"legacY")
    with pytest.raises(CorruptObjectError):
        backend.cas.read(sha(b"legacy"))
    assert not backend.cas.verify(sha(b"legacy"))


def test_missing_object(backend: Backend) -> None:
    missing = sha(b"never stored")
    assert not backend.cas.verify(missing) and not backend.cas.has(missing)
    with pytest.raises(ObjectNotFoundError):
        backend.cas.read(missing)


def test_read_verifies_and_names_the_object(backend: Backend) -> None:
    ref = backend.cas.put(b"original")
    backend.tamper("data", ref.hash, b"origina!")
    with pytest.raises(CorruptObjectError, match=ref.hash):
        backend.cas.read(ref)
    assert not backend.cas.verify(ref)
    assert not backend.cas.has(ref)
    check = backend.cas.check_object("data", ref.hash)
    assert check.problem is not None and ref.hash in check.problem


def test_truncated_object_is_caught_by_streaming_open(backend: Backend) -> None:
    ref = backend.cas.put(b"x" * 100)
    backend.tamper("data", ref.hash, b"x" * 99)
    with pytest.raises(CorruptObjectError), backend.cas.open(ref) as reader:
        while reader.read(10):
            pass


def test_put_refuses_to_reuse_a_corrupt_existing_object(backend: Backend) -> None:
    ref = backend.cas.put(b"payload")
    backend.tamper("data", ref.hash, b"garbage")
    with pytest.raises(CorruptObjectError, match=ref.hash):
        backend.cas.put(b"payload")
    with pytest.raises(CorruptObjectError):
        backend.cas.put_many([b"other", b"payload"])
    # never repaired silently
    assert not backend.cas.verify(ref)


@pytest.mark.parametrize(
    "address",
    [
        "../" + "a" * 61,
        "a" * 63,
        "a" * 65,
        "A" * 64,
        "a" * 64 + "\n",
        "a" * 32 + "/" + "a" * 31,
        "sha256:" + "g" * 64,
        "",
        "..",
        "sha512:" + "a" * 64,
    ],
)
def test_bad_addresses_are_rejected_before_file_access(backend: Backend, address: str) -> None:
    with pytest.raises(InvalidAddressError):
        backend.cas.read(address)
    with pytest.raises(InvalidAddressError):
        backend.cas.verify(address)


@given(st.text(max_size=80))
def test_parse_address_accepts_only_64_lowercase_hex(text: str) -> None:
    valid = len(text) == 64 and all(c in "0123456789abcdef" for c in text)
    if valid:
        assert parse_address(text) == text
        assert parse_address("sha256:" + text) == text
    else:
        with pytest.raises(InvalidAddressError):
            parse_address(text)


@given(st.lists(st.binary(max_size=300), max_size=8))
def test_any_bytes_round_trip_on_memory(items: list[bytes]) -> None:
    cas = MemoryCas()
    refs = cas.put_many(items)
    for item, ref in zip(items, refs, strict=True):
        assert cas.read(ref) == item and ref.size == len(item)


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
    _fs_tamper(cas)("data", ref.hash, b"tampered")
    src = tmp_path / "src.bin"
    src.write_bytes(b"hello")
    with pytest.raises(CorruptObjectError):
        cas.put_file(src)
    assert list((tmp_path / "s" / "versioning" / "data" / "ingest").iterdir()) == []


# --- retain: promote a bare-hash object into a typed pool --------------------------------------
def test_retain_promotes_a_legacy_object_into_a_typed_pool(backend: Backend) -> None:
    data = b"legacy bytes"
    backend.tamper("legacy", sha(data), data)
    ref = backend.cas.retain(CasObjectRef(hash=sha(data), size=len(data)), pool="data", media_type="text/plain")
    assert ref == CasRef(pool="data", digest=f"sha256:{sha(data)}", size=len(data), media_type="text/plain")
    assert backend.cas.locate(ref) == "data"
    assert backend.cas.read(ref) == data


def test_retain_from_the_other_pool_and_of_an_object_already_there(backend: Backend) -> None:
    typed = backend.cas.put(b"state", pool="agent-state")
    moved = backend.cas.retain(typed.object_ref(), pool="data")
    assert moved.pool == "data" and backend.cas.read(moved) == b"state"
    again = backend.cas.retain(moved.object_ref(), pool="data")
    assert again == moved


@pytest.mark.parametrize("fault", ["wrong-size", "corrupt", "longer"])
def test_retain_checks_size_and_hash_before_publishing(backend: Backend, fault: str) -> None:
    data = b"legacy bytes"
    stored = {"wrong-size": data, "corrupt": b"LEGACY BYTES", "longer": data + b"!"}[fault]
    size = len(data) - 1 if fault == "wrong-size" else len(data)
    backend.tamper("legacy", sha(data), stored)
    with pytest.raises(CorruptObjectError):
        backend.cas.retain(CasObjectRef(hash=sha(data), size=size), pool="data")
    assert backend.cas.locate(CasRef(pool="data", digest=f"sha256:{sha(data)}", size=len(data))) is None
    assert backend.cas.locate(CasRef(pool="data", digest=f"sha256:{sha(stored)}", size=len(stored))) is None
    if isinstance(backend.cas, FilesystemCas):
        assert backend.cas.stale_ingest(older_than=-1) == []


def test_retain_of_a_missing_object_or_a_typed_ref_is_refused(backend: Backend) -> None:
    with pytest.raises(ObjectNotFoundError):
        backend.cas.retain(CasObjectRef(hash="cd" * 32, size=1), pool="data")
    typed = backend.cas.put(b"x")
    with pytest.raises(InvalidInputError):
        backend.cas.retain(typed, pool="data")  # type: ignore[arg-type]


@given(st.binary(max_size=4096))
def test_stored_size_and_byte_callbacks_count_every_byte(data: bytes) -> None:
    cas = MemoryCas()
    seen: list[int] = []
    ref = cas.put_stream(io.BytesIO(data), on_bytes=seen.append)
    assert sum(seen) == len(data)
    assert cas.stored_size("data", ref.hash) == len(data)
    checked: list[int] = []
    assert cas.verify(ref, on_bytes=checked.append)
    assert sum(checked) == len(data)
    assert cas.check_object("data", ref.hash, checked.append).problem is None
    assert sum(checked) == 2 * len(data)
    assert cas.stored_size("data", "ef" * 32) is None
    assert cas.stored_size("data", "not-an-address") is None
