"""The CAS contract: what every content-addressed store does, wherever it keeps the bytes.

A backend joins with one subclass that implements :meth:`CasContract.make_cas` (a new,
empty store) and :meth:`CasContract.tamper` (overwrite stored bytes, as only an attacker
with raw access could); :meth:`CasContract.leftover_staging` is there for a backend that
stages writes somewhere before publishing them.
"""

from __future__ import annotations

import abc
import hashlib
import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewtrail.cas import CasObjectRef, CasRef, CasStore, Location
from reviewtrail.errors import CorruptObjectError, InvalidAddressError, InvalidInputError, ObjectNotFoundError

__all__ = ["BAD_ADDRESSES", "CasContract", "sha"]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


BAD_ADDRESSES = [
    pytest.param("../" + "a" * 61, id="path-traversal"),
    pytest.param("a" * 63, id="63-hex"),
    pytest.param("a" * 65, id="65-hex"),
    pytest.param("A" * 64, id="upper-case"),
    pytest.param("a" * 64 + "\n", id="trailing-newline"),
    pytest.param("a" * 32 + "/" + "a" * 31, id="slash-inside"),
    pytest.param("sha256:" + "g" * 64, id="prefixed-non-hex"),
    pytest.param("", id="empty"),
    pytest.param("..", id="dot-dot"),
    pytest.param("sha512:" + "a" * 64, id="other-algorithm"),
]


class CasContract(abc.ABC):
    """Every CAS backend passes these tests. Subclass it as ``Test<Backend>Cas``."""

    #: Hypothesis examples per property test; set it lower for a backend whose stores are slow to make.
    property_examples: ClassVar[int | None] = None

    @abc.abstractmethod
    def make_cas(self) -> CasStore:
        """A new, empty store of this backend.

        ``self.tmp_path`` (a fresh folder per test) and ``self.request`` (for fixtures) are set
        before any test calls it.
        """

    @abc.abstractmethod
    def tamper(self, cas: CasStore, location: Location, hexdigest: str, data: bytes) -> None:
        """Store ``data`` under ``location``/``hexdigest`` in ``cas``, replacing what is there, unchecked."""

    def leftover_staging(self, cas: CasStore) -> list[Any]:
        """Partial writes a failed put left behind (temporary files, unfinished uploads): none here."""
        return []

    # --- plumbing -------------------------------------------------------------------------
    @pytest.fixture(autouse=True)
    def _contract_resources(self, request: pytest.FixtureRequest, tmp_path: Path) -> None:
        self.request = request
        self.tmp_path = tmp_path

    @pytest.fixture
    def cas(self, _contract_resources: None) -> Iterator[CasStore]:
        yield self.make_cas()

    def property_settings(self) -> settings:
        if self.property_examples is None:
            return settings()
        return settings(max_examples=self.property_examples)

    # --- puts and reads -------------------------------------------------------------------
    def test_put_returns_typed_ref_and_read_round_trips(self, cas: CasStore) -> None:
        ref = cas.put(b"hello", pool="agent-state", media_type="text/plain")
        assert ref == CasRef(pool="agent-state", digest=f"sha256:{sha(b'hello')}", size=5, media_type="text/plain")
        assert ref.object_ref() == CasObjectRef(hash=sha(b"hello"), size=5)
        assert cas.read(ref) == b"hello"
        assert cas.read(ref.hash) == b"hello"
        assert cas.read(ref.object_ref()) == b"hello"

    def test_put_is_idempotent_and_deduplicates(self, cas: CasStore) -> None:
        a = cas.put(b"same")
        b = cas.put(b"same")
        assert a == b
        assert [n for _, n in cas.iter_objects()] == [sha(b"same")]

    def test_empty_object(self, cas: CasStore) -> None:
        ref = cas.put(b"")
        assert ref.size == 0
        assert cas.read(ref) == b""
        assert cas.verify(ref)

    def test_put_many_returns_refs_in_order_and_stores_each_once(self, cas: CasStore) -> None:
        items = [b"a", b"b", b"a", b"c" * 10_000]
        refs = cas.put_many(items, pool="data")
        assert [r.hash for r in refs] == [sha(i) for i in items]
        assert sorted(n for _, n in cas.iter_objects()) == sorted({sha(i) for i in items})
        for item, ref in zip(items, refs, strict=True):
            assert cas.read(ref) == item

    def test_put_file_streams_the_bytes(self, cas: CasStore) -> None:
        data = os.urandom(3 * (1 << 20) + 17)  # several chunks and a tail
        path = self.tmp_path / "f.bin"
        path.write_bytes(data)
        ref = cas.put_file(path, media_type="application/x-test")
        assert ref.hash == sha(data) and ref.size == len(data) and ref.media_type == "application/x-test"
        assert cas.read(ref) == data

    def test_put_file_rejects_missing_files_and_folders(self, cas: CasStore) -> None:
        with pytest.raises(InvalidInputError) as err:
            cas.put_file(self.tmp_path / "nope")
        assert err.value.field == "path"
        with pytest.raises(InvalidInputError):
            cas.put_file(self.tmp_path)
        assert list(cas.iter_objects()) == []

    def test_bad_pool_and_media_type_are_named(self, cas: CasStore) -> None:
        with pytest.raises(InvalidInputError) as err:
            cas.put(b"x", pool="tmp")  # type: ignore[arg-type]
        assert err.value.field == "pool"
        with pytest.raises(InvalidInputError) as err:
            cas.put(b"x", media_type="not a media type")
        assert err.value.field == "mediaType"
        assert list(cas.iter_objects()) == []

    # --- pools and lookups ----------------------------------------------------------------
    def test_pools_are_separate_for_typed_refs(self, cas: CasStore) -> None:
        ref = cas.put(b"only in data", pool="data")
        other = CasRef(pool="agent-state", digest=ref.digest, size=ref.size)
        assert cas.has(ref) and not cas.has(other)
        assert not cas.verify(other)
        with pytest.raises(ObjectNotFoundError):
            cas.read(other)
        # A bare hash finds it in any pool.
        assert cas.has(ref.hash)

    def test_has_checks_size_for_refs(self, cas: CasStore) -> None:
        ref = cas.put(b"12345")
        assert not cas.has(CasRef(pool="data", digest=ref.digest, size=4))
        assert not cas.has(CasObjectRef(hash=ref.hash, size=6))
        with pytest.raises(CorruptObjectError):
            cas.read(CasObjectRef(hash=ref.hash, size=6))

    def test_bare_hash_search_order_data_agent_state_legacy(self, cas: CasStore) -> None:
        data = b"in both pools"
        cas.put(data, pool="agent-state")
        assert cas.locate(sha(data)) == "agent-state"
        cas.put(data, pool="data")
        assert cas.locate(sha(data)) == "data"
        legacy = b"old object"
        self.tamper(cas, "legacy", sha(legacy), legacy)
        assert cas.locate(sha(legacy)) == "legacy"
        assert cas.read(sha(legacy)) == legacy

    def test_missing_object(self, cas: CasStore) -> None:
        missing = sha(b"never stored")
        assert not cas.verify(missing) and not cas.has(missing)
        with pytest.raises(ObjectNotFoundError):
            cas.read(missing)

    @pytest.mark.parametrize("address", BAD_ADDRESSES)
    def test_bad_addresses_are_rejected_before_file_access(self, cas: CasStore, address: str) -> None:
        with pytest.raises(InvalidAddressError):
            cas.read(address)
        with pytest.raises(InvalidAddressError):
            cas.verify(address)

    # --- corruption -----------------------------------------------------------------------
    def test_corrupt_legacy_object_is_an_integrity_error(self, cas: CasStore) -> None:
        self.tamper(cas, "legacy", sha(b"legacy"), b"legacY")
        with pytest.raises(CorruptObjectError):
            cas.read(sha(b"legacy"))
        assert not cas.verify(sha(b"legacy"))

    def test_read_verifies_and_names_the_object(self, cas: CasStore) -> None:
        ref = cas.put(b"original")
        self.tamper(cas, "data", ref.hash, b"origina!")
        with pytest.raises(CorruptObjectError, match=ref.hash):
            cas.read(ref)
        assert not cas.verify(ref)
        assert not cas.has(ref)
        check = cas.check_object("data", ref.hash)
        assert check.problem is not None and ref.hash in check.problem

    def test_truncated_object_is_caught_by_streaming_open(self, cas: CasStore) -> None:
        ref = cas.put(b"x" * 100)
        self.tamper(cas, "data", ref.hash, b"x" * 99)
        with pytest.raises(CorruptObjectError), cas.open(ref) as reader:
            while reader.read(10):
                pass

    def test_put_refuses_to_reuse_a_corrupt_existing_object(self, cas: CasStore) -> None:
        ref = cas.put(b"payload")
        self.tamper(cas, "data", ref.hash, b"garbage")
        with pytest.raises(CorruptObjectError, match=ref.hash):
            cas.put(b"payload")
        with pytest.raises(CorruptObjectError):
            cas.put_many([b"other", b"payload"])
        # never repaired silently
        assert not cas.verify(ref)

    # --- retain: promote a bare-hash object into a typed pool -----------------------------
    def test_retain_promotes_a_legacy_object_into_a_typed_pool(self, cas: CasStore) -> None:
        data = b"legacy bytes"
        self.tamper(cas, "legacy", sha(data), data)
        ref = cas.retain(CasObjectRef(hash=sha(data), size=len(data)), pool="data", media_type="text/plain")
        assert ref == CasRef(pool="data", digest=f"sha256:{sha(data)}", size=len(data), media_type="text/plain")
        assert cas.locate(ref) == "data"
        assert cas.read(ref) == data

    def test_retain_from_the_other_pool_and_of_an_object_already_there(self, cas: CasStore) -> None:
        typed = cas.put(b"state", pool="agent-state")
        moved = cas.retain(typed.object_ref(), pool="data")
        assert moved.pool == "data" and cas.read(moved) == b"state"
        again = cas.retain(moved.object_ref(), pool="data")
        assert again == moved

    @pytest.mark.parametrize("fault", ["wrong-size", "corrupt", "longer"])
    def test_retain_checks_size_and_hash_before_publishing(self, cas: CasStore, fault: str) -> None:
        data = b"legacy bytes"
        stored = {"wrong-size": data, "corrupt": b"LEGACY BYTES", "longer": data + b"!"}[fault]
        size = len(data) - 1 if fault == "wrong-size" else len(data)
        self.tamper(cas, "legacy", sha(data), stored)
        with pytest.raises(CorruptObjectError):
            cas.retain(CasObjectRef(hash=sha(data), size=size), pool="data")
        assert cas.locate(CasRef(pool="data", digest=f"sha256:{sha(data)}", size=len(data))) is None
        assert cas.locate(CasRef(pool="data", digest=f"sha256:{sha(stored)}", size=len(stored))) is None
        assert self.leftover_staging(cas) == []

    def test_retain_of_a_missing_object_or_a_typed_ref_is_refused(self, cas: CasStore) -> None:
        with pytest.raises(ObjectNotFoundError):
            cas.retain(CasObjectRef(hash="cd" * 32, size=1), pool="data")
        typed = cas.put(b"x")
        with pytest.raises(InvalidInputError):
            cas.retain(typed, pool="data")  # type: ignore[arg-type]

    # --- properties -----------------------------------------------------------------------
    def test_any_bytes_round_trip(self) -> None:
        @self.property_settings()
        @given(st.lists(st.binary(max_size=300), max_size=8))
        def check(items: list[bytes]) -> None:
            cas = self.make_cas()  # a fresh store per example
            refs = cas.put_many(items)
            for item, ref in zip(items, refs, strict=True):
                assert cas.read(ref) == item and ref.size == len(item)
            assert sorted(n for _, n in cas.iter_objects()) == sorted({sha(i) for i in items})

        check()

    def test_stored_size_and_byte_callbacks_count_every_byte(self) -> None:
        @self.property_settings()
        @given(st.binary(max_size=4096))
        def check(data: bytes) -> None:
            cas = self.make_cas()  # a fresh store per example
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

        check()
