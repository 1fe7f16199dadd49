"""Each session's reads through ``reviewtrail proxy`` (a real process, before a recording stand-in
for the inspector) are limited by a token bucket: beyond it, 429 with ``Retry-After``, and nothing
reaches the inspector; other sessions and the free reads go on. The bucket's rules and the
settings' parsing are checked in process."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.errors import InvalidInputError
from support.oidc import running_oidc_mock
from support.proxy import Recorder, basic_header, login, recording, running_proxy, write_secret

PASSWORD = "correct horse battery staple"
DEEP = "/api/review/camp/1/cards/999"
READ_RATE = "REVIEWTRAIL_PROXY_READ_RATE"
READ_BURST = "REVIEWTRAIL_PROXY_READ_BURST"


@pytest.fixture(scope="module")
def stand_in() -> Iterator[Recorder]:
    with recording() as inspector:
        yield inspector


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory, stand_in: Recorder) -> Iterator[str]:
    """A proxy whose sessions may read 3 at once, then one every 1,000 s: within a test, a
    session's fourth counted read is refused whatever the machine's speed."""
    from argon2 import PasswordHasher

    root = tmp_path_factory.mktemp("proxy-rate")
    users = root / "users"
    hashed = PasswordHasher().hash(PASSWORD)
    users.write_text("".join(f"{name}:{hashed}\n" for name in ("bob", "carol", "dan", "erin")))
    with running_oidc_mock() as provider:
        env = {
            "REVIEWTRAIL_PROXY_OIDC_ISSUER": provider,
            "REVIEWTRAIL_PROXY_OIDC_CLIENT_ID": "reviewtrail-proxy",
            "REVIEWTRAIL_PROXY_OIDC_CLIENT_SECRET": "client-secret-value",
            "REVIEWTRAIL_PROXY_BASIC_USERS_FILE": str(users),
            "REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": str(write_secret(root / "secret", b"s" * 48)),
            READ_RATE: "0.001",
            READ_BURST: "3",
        }
        with running_proxy(stand_in.url, env, root) as running:
            yield running.url


def _as(user: str) -> dict[str, str]:
    return {"authorization": basic_header(user, PASSWORD)}


def test_a_session_past_its_reads_is_refused_429_and_nothing_reaches_the_inspector(
    proxy: str, stand_in: Recorder
) -> None:
    stand_in.clear()
    for _ in range(3):
        assert httpx.get(proxy + DEEP, headers=_as("bob")).status_code == 200
    refused = httpx.get(proxy + DEEP, headers=_as("bob"))
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["retry-after"]) <= 1000
    for path in ("/review/camp/1?card=999", "/api/coverage/camp/1", "/items/x/history", "/provenance/a.md"):
        assert httpx.get(proxy + path, headers=_as("bob")).status_code == 429, path
    assert [r.path for r in stand_in.received()] == [DEEP] * 3
    # Another user's session has its own bucket; the free reads are not counted.
    assert httpx.get(proxy + DEEP, headers=_as("carol")).status_code == 200
    for path in ("/static/review.js", "/api/health", "/api/campaigns", "/api/review/camp/1/progress", "/"):
        assert httpx.get(proxy + path, headers=_as("bob")).status_code == 200, path


def test_a_path_that_could_name_another_route_is_counted(proxy: str, stand_in: Recorder) -> None:
    for _ in range(3):
        assert httpx.get(proxy + DEEP, headers=_as("dan")).status_code == 200
    stand_in.clear()
    for path in ("/static/../api/coverage/camp/1", "/static/%2e%2e/api/coverage/camp/1", "//api/coverage/camp/1"):
        response = httpx.get(proxy + path, headers=_as("dan"))
        assert response.status_code == 429, path
    assert stand_in.received() == []


def test_each_oidc_session_has_its_own_bucket(proxy: str, stand_in: Recorder) -> None:
    with login(proxy, "alice") as first, login(proxy, "alice") as second:
        for _ in range(3):
            assert first.get(proxy + DEEP).status_code == 200
        assert first.get(proxy + DEEP).status_code == 429
        assert second.get(proxy + DEEP).status_code == 200


def test_the_read_limit_defaults_and_its_settings_are_checked_naming_the_variable() -> None:
    from reviewtrail.web._rate_limit import ReadLimit, read_limit

    assert read_limit({}) == ReadLimit(rate=5.0, burst=30)
    assert read_limit({READ_RATE: "0.5", READ_BURST: "7"}) == ReadLimit(rate=0.5, burst=7)
    for name, value in ((READ_RATE, "0"), (READ_RATE, "-1"), (READ_RATE, "1e3"), (READ_RATE, "2000"),
                        (READ_BURST, "0"), (READ_BURST, "1.5"), (READ_BURST, "10001"), (READ_BURST, "٣")):  # fmt: skip
        with pytest.raises(InvalidInputError) as err:
            read_limit({name: value})
        assert err.value.field == name


def test_free_reads_are_the_few_cheap_paths_written_plainly() -> None:
    from reviewtrail.web._rate_limit import counted

    for path in ("/", "/health", "/api/health", "/api/campaigns", "/openapi.json", "/static/review.js",
                 "/api/review/camp/1/progress"):  # fmt: skip
        assert not counted(path), path
    plain = ("/review/camp/1", "/api/review/camp/1/cards/2", "/coverage", "/api/items/i/history")
    tricks = ("/static/../api/diff", "/static/%2E%2E/x", "/static//x", "/api/health/..", "/static\\..\\x")
    for path in plain + tricks:
        assert counted(path), path


@given(
    rate=st.floats(0.01, 100),
    burst=st.integers(1, 50),
    steps=st.lists(st.tuples(st.floats(0, 5), st.integers(1, 5)), max_size=40),
)
def test_a_bucket_grants_at_most_its_burst_plus_its_rate_and_says_when_to_come_back(
    rate: float, burst: int, steps: list[tuple[float, int]]
) -> None:
    from reviewtrail.web._rate_limit import ReadBuckets, ReadLimit

    now = [0.0]
    buckets = ReadBuckets(ReadLimit(rate, burst), clock=lambda: now[0])
    granted = 0
    for advance, takes in steps:
        now[0] += advance
        for _ in range(takes):
            wait = buckets.take("s")
            if wait == 0:
                granted += 1
            else:
                assert wait <= 1 / rate + 1e-9
                later = ReadBuckets(ReadLimit(rate, burst), clock=lambda: now[0])
                assert later.take("other") == 0  # another session is not held back
        assert granted <= burst + rate * now[0] + 1e-6
    now[0] += 1 / rate + 1e-6
    assert buckets.take("s") == 0  # after the wait it said, a read is granted
