"""The verified download in parts (``S3Cas.open_verified`` of a large object), as a rule over any
source of ranges: every byte once, in order, hashed; a short, long or wrong part is refused."""

from __future__ import annotations

import hashlib
import io
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewtrail.cas._s3_download import download_in_parts
from reviewtrail.errors import CorruptObjectError


def _ranges(data: bytes, asked: list[tuple[int, int]], lock: threading.Lock):  # type: ignore[no-untyped-def]
    def get(first: int, last: int) -> bytes:
        with lock:
            asked.append((first, last))
        return data[first : last + 1]

    return get


@settings(max_examples=60, deadline=None)
@given(data=st.binary(min_size=1, max_size=600), part=st.integers(1, 97), window=st.integers(1, 6))
def test_every_byte_is_fetched_once_and_written_in_order(data: bytes, part: int, window: int) -> None:
    asked: list[tuple[int, int]] = []
    out = io.BytesIO()
    counted: list[int] = []
    get = _ranges(data, asked, threading.Lock())
    download_in_parts(
        get, len(data), hashlib.sha256(data).hexdigest(), "o", out, part=part, window=window, on_bytes=counted.append
    )
    assert out.getvalue() == data
    assert sorted(asked) == [(s, min(len(data), s + part) - 1) for s in range(0, len(data), part)]
    assert sum(counted) == len(data)


@settings(max_examples=60, deadline=None)
@given(data=st.binary(min_size=2, max_size=400), part=st.integers(1, 50), flip=st.integers(0, 10_000))
def test_a_changed_byte_is_refused(data: bytes, part: int, flip: int) -> None:
    at = flip % len(data)
    changed = data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :]
    get = _ranges(changed, [], threading.Lock())
    with pytest.raises(CorruptObjectError, match="does not hash"):
        download_in_parts(get, len(data), hashlib.sha256(data).hexdigest(), "o", io.BytesIO(), part=part, window=3)


def test_a_short_part_is_refused_naming_its_offset() -> None:
    data = b"x" * 100
    with pytest.raises(CorruptObjectError, match="at offset 40"):
        download_in_parts(
            lambda first, last: data[first : last + 1] if first != 40 else b"x",
            len(data),
            hashlib.sha256(data).hexdigest(),
            "o",
            io.BytesIO(),
            part=20,
            window=2,
        )


def test_a_failed_part_fails_the_download() -> None:
    def get(first: int, last: int) -> bytes:
        if first == 20:
            raise OSError("connection reset")
        return b"x" * (last - first + 1)

    with pytest.raises(OSError, match="connection reset"):
        download_in_parts(get, 100, "0" * 64, "o", io.BytesIO(), part=20, window=3)


@settings(max_examples=30, deadline=None)
@given(data=st.binary(min_size=1, max_size=600), part=st.integers(1, 97), window=st.integers(1, 6))
def test_into_a_file_each_part_is_written_at_its_place_after_what_was_there(
    data: bytes, part: int, window: int
) -> None:
    import tempfile

    with tempfile.TemporaryFile() as out:
        out.write(b"head:")
        get = _ranges(data, [], threading.Lock())
        download_in_parts(get, len(data), hashlib.sha256(data).hexdigest(), "o", out, part=part, window=window)
        out.write(b":tail")
        out.seek(0)
        assert out.read() == b"head:" + data + b":tail"
