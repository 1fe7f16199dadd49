"""The array literal the PostgreSQL ledger sends as one text parameter reads back as the same strings."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewtrail.ledger.backends._postgres import text_array

# PostgreSQL text holds any character but NUL.
_TEXT = st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=40)


@pytest.fixture(scope="module")
def conn(pg_server: object) -> Iterator[object]:
    import psycopg

    with psycopg.connect(pg_server.url, autocommit=True) as c:  # type: ignore[attr-defined]
        yield c


@settings(max_examples=300, deadline=None)
@given(values=st.lists(_TEXT, max_size=30))
def test_any_strings_round_trip(conn: object, values: list[str]) -> None:
    row = conn.execute("SELECT %s::text[]", (text_array(values),)).fetchone()  # type: ignore[attr-defined]
    assert row[0] == values


def test_known_answers() -> None:
    assert text_array([]) == "{}"
    assert text_array(["a", 'b"c', "d\\e", "f,g", "{h}", "NULL", " "]) == (
        '{"a","b\\"c","d\\\\e","f,g","{h}","NULL"," "}'
    )
