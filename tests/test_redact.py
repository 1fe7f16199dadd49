from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from reviewtrail._redact import redact_text, redact_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://alice:S3cret@db/rt", "postgresql://alice:***@db/rt"),
        ("postgresq://alice:S3cret@db.example/rt", "postgresq://alice:***@db.example/rt"),
        ("postgresql://alice:S3cret@[::1/rt", "postgresql://alice:***@[::1/rt"),
        ("http://127.0.0.1:1/v1/traces?api_key=SECRET", "http://127.0.0.1:1/v1/traces?***"),
        ("postgresql://postgres@127.0.0.1:5/x", "postgresql://postgres@127.0.0.1:5/x"),
    ],
)
def test_urls_lose_passwords_and_queries(url: str, shown: str) -> None:
    assert redact_url(url) == shown


@given(st.text(alphabet=st.characters(min_codepoint=48, max_codepoint=122), min_size=6, max_size=20))
def test_a_password_never_survives(password: str) -> None:
    # A password that is part of the text around it (say "postgr") is there whatever is redacted.
    assume(password not in "could not connect to postgresql://user:***@host:5432/db: *** rejected")
    url = f"postgresql://user:{password}@host:5432/db"
    assert password not in redact_url(url)
    assert password not in redact_text(f"could not connect to {url}: {password} rejected", url)
