"""An object's state and its verified stream (``reviewtrail cas verify`` and ``cas cat``)."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.cas import MemoryCas, locate_object, object_state, verified_chunks
from reviewtrail.cas._protocol import CHUNK
from reviewtrail.cas._verified import state_of
from reviewtrail.errors import CorruptObjectError, InvalidInputError, ObjectNotFoundError


def _stored(data: bytes, pool: str = "data") -> tuple[MemoryCas, str]:
    cas = MemoryCas()
    ref = cas.put(data, pool=pool)  # type: ignore[arg-type]
    return cas, ref.hash


def test_the_state_rule() -> None:
    assert state_of(None, False) == "missing"
    assert state_of(None, True) == "missing"
    assert state_of("data", True) == "intact"
    assert state_of("legacy", False) == "corrupt"


def test_a_stored_object_is_located_sized_and_intact() -> None:
    cas, hexdigest = _stored(b"hello", pool="agent-state")
    found = locate_object(cas, f"sha256:{hexdigest}")
    assert (found.hexdigest, found.location, found.size) == (hexdigest, "agent-state", 5)
    assert found.digest == f"sha256:{hexdigest}"
    counted: list[int] = []
    assert object_state(cas, found, on_bytes=counted.append) == "intact"
    assert sum(counted) == 5


def test_a_missing_object_is_missing_without_a_size() -> None:
    cas = MemoryCas()
    found = locate_object(cas, "a" * 64)
    assert (found.location, found.size) == (None, None)
    assert object_state(cas, found) == "missing"


def test_a_tampered_object_is_corrupt() -> None:
    cas, hexdigest = _stored(b"hello")
    cas.tamper("data", hexdigest, b"HELLO")
    found = locate_object(cas, hexdigest)
    assert found.location == "data" and found.size == 5  # located and sized, not yet hashed
    assert object_state(cas, found) == "corrupt"


@pytest.mark.parametrize("address", ["../../etc/passwd", "A" * 64, "a" * 63, "sha256:" + "g" * 64])
def test_an_address_that_is_no_address_is_refused(address: str) -> None:
    with pytest.raises(InvalidInputError):
        locate_object(MemoryCas(), address)


@given(st.binary(max_size=3 * 1024))
def test_verified_chunks_give_back_the_bytes_counting_both_passes(data: bytes) -> None:
    cas, hexdigest = _stored(data)
    counted: list[int] = []
    assert b"".join(verified_chunks(cas, hexdigest, on_bytes=counted.append)) == data
    assert sum(counted) == 2 * len(data)


def test_a_large_object_streams_in_chunks() -> None:
    data = b"x" * (CHUNK + 1)
    cas, hexdigest = _stored(data)
    assert [len(c) for c in verified_chunks(cas, hexdigest)] == [CHUNK, 1]


def test_a_corrupt_object_yields_nothing_and_raises_before_returning() -> None:
    cas, hexdigest = _stored(b"hello")
    cas.tamper("data", hexdigest, b"HELLO")
    with pytest.raises(CorruptObjectError):
        verified_chunks(cas, hexdigest)  # raises on the call itself: no iterator is handed out


def test_a_missing_object_raises_not_found() -> None:
    with pytest.raises(ObjectNotFoundError):
        verified_chunks(MemoryCas(), hashlib.sha256(b"never stored").hexdigest())
