"""The proxy's sessions end (web/_proxy_sessions.py, web/_proxy_auth.py): kept server-side in the
session book, so a logout ends every copy of the cookie; idle and absolute expiry, shown with an
injected clock (no waits); expired rows pruned; only a hash of the session id at rest; and the
``Secure``, ``__Host-`` cookies end to end behind real TLS (uvicorn serving a certificate made
here). The login runs through the in-process provider (support/fake_oidc.py), the decisions
reach a stand-in inspector that counts them."""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import ipaddress
import json
import socket
import sqlite3
import ssl
import threading
import time
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewtrail.errors import BackendUnavailableError, InvalidInputError
from reviewtrail.web._proxy import create_proxy_app
from reviewtrail.web._proxy_auth import Identity, Sessions
from reviewtrail.web._proxy_sessions import SessionBook, alive, session_key, touch_every
from reviewtrail.web._proxy_settings import OidcSettings, ProxySettings, proxy_settings
from support.fake_oidc import ISSUER, FakeProvider

SECRET = b"proxy-session-secret-" + b"t" * 32
ROUTE = "/api/review/decisions"
START = 1_800_000_000.0
ALICE = Identity(ISSUER, "alice", "alice@example.org", True)
T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


class Clock:
    """The sessions' clock, moved by the test."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


class Upstream(httpx.AsyncBaseTransport):
    """Where the proxy's own requests go: the provider's host to the provider, anything else to
    a stand-in inspector that answers a decision 201 and keeps it."""

    def __init__(self, provider: FakeProvider) -> None:
        self.idp = provider.transport()
        self.decisions: list[bytes] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host == urlsplit(ISSUER).hostname:
            return await self.idp.handle_async_request(request)
        if request.method == "POST":
            self.decisions.append(await request.aread())
            return httpx.Response(201, json={"recorded": True})
        return httpx.Response(200, json={"inspector": True, "path": request.url.path})


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> FakeProvider:
    fake = FakeProvider()
    fake.install(monkeypatch)
    return fake


def settings_for(book: Path, **extra: Any) -> ProxySettings:
    return ProxySettings(
        inspector="http://inspector.test",
        session_secret=SECRET,
        oidc=OidcSettings(ISSUER, "reviewtrail-proxy", "client-secret-value"),
        allow=("alice",),
        session_file=book,
        **extra,
    )


def stand_in_signer(url: str, body: bytes) -> dict[str, str]:
    return {"signature": "stand-in"}


DECISION = json.dumps(
    {
        "itemId": "item-1",
        "campaignId": "camp",
        "campaignVersion": 1,
        "submissionId": "sub-0123456789abcdef",
        "disposition": "prefer",
        "preferred": "A",
        "strength": "slight",
        "reasonCodes": ["clearer"],
    }
).encode()


async def sign_in(browser: httpx.AsyncClient, provider: FakeProvider) -> httpx.Response:
    """The OIDC login, as a browser makes it; the callback's answer (it sets the session cookie)."""
    start = await browser.get("/auth/login", params={"next": "/"})
    assert start.status_code == 303, start.text
    location = start.headers["location"]
    state = parse_qs(urlsplit(location).query)["state"][0]
    back = await browser.get("/auth/callback", params={"code": provider.authorize(location), "state": state})
    assert back.status_code == 303, back.text
    return back


async def write(browser: httpx.AsyncClient, token: str | None) -> httpx.Response:
    headers = {"content-type": "application/json"} | ({"x-csrf-token": token} if token else {})
    return await browser.post(ROUTE, content=DECISION, headers=headers)


async def who(browser: httpx.AsyncClient) -> dict[str, Any]:
    answer = await browser.get("/auth/session")
    assert answer.status_code == 200
    return dict(answer.json())


def rows(path: Path) -> int:
    with sqlite3.connect(path) as db:
        (count,) = db.execute("SELECT count(*) FROM proxy_sessions").fetchone()
    return int(count)


# --- logout ends every copy ---------------------------------------------------------------------


def test_a_cookie_copied_before_logout_is_refused_after_it(provider: FakeProvider, tmp_path: Path) -> None:
    upstream = Upstream(provider)
    app = create_proxy_app(
        settings_for(tmp_path / "sessions.sqlite"),
        public_url="https://proxy.example",
        sign=stand_in_signer,
        transport=upstream,
    )

    async def scenario() -> None:
        base = "https://proxy.example"
        async with (
            httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url=base) as browser,
            httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url=base) as copy,
        ):
            await sign_in(browser, provider)
            token = (await who(browser))["csrfToken"]
            copy.cookies.set("__Host-reviewtrail_session", browser.cookies["__Host-reviewtrail_session"])
            assert (await write(copy, token)).status_code == 201  # the copy writes while the session lasts
            assert (await browser.get("/auth/logout")).status_code == 200
            assert "__Host-reviewtrail_session" not in browser.cookies
            refused = await write(copy, token)
            assert refused.status_code == 401, refused.text
            assert (await who(copy))["authenticated"] is False
            assert (await copy.get("/api/campaigns", headers={"accept": "application/json"})).status_code == 401

    run(scenario())
    assert len(upstream.decisions) == 1  # the refused write reached nothing
    assert rows(tmp_path / "sessions.sqlite") == 0


def test_only_the_hash_of_a_session_id_is_at_rest(provider: FakeProvider, tmp_path: Path) -> None:
    book = tmp_path / "sessions.sqlite"
    app = create_proxy_app(
        settings_for(book), public_url="https://proxy.example", sign=None, transport=Upstream(provider)
    )

    async def scenario() -> str:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="https://proxy.example") as browser:
            await sign_in(browser, provider)
            assert (await who(browser))["authenticated"] is True
            return str(browser.cookies["__Host-reviewtrail_session"])

    value = run(scenario())
    at_rest = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("sessions.sqlite"))
    assert value.encode() not in at_rest
    assert session_key(value) == hashlib.sha256(value.encode()).hexdigest()
    assert session_key(value).encode() in at_rest
    assert book.stat().st_mode & 0o077 == 0


# --- idle and absolute expiry, on an injected clock ---------------------------------------------


def test_a_session_idle_past_the_idle_limit_is_refused_and_pruned(provider: FakeProvider, tmp_path: Path) -> None:
    clock, upstream = Clock(), Upstream(provider)
    book = tmp_path / "sessions.sqlite"
    settings = settings_for(book, session_idle=600, session_max_age=3600)
    app = create_proxy_app(
        settings, public_url="https://proxy.example", sign=stand_in_signer, transport=upstream, clock=clock
    )

    async def scenario() -> None:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="https://proxy.example") as browser:
            await sign_in(browser, provider)
            token = (await who(browser))["csrfToken"]
            clock.now += 599  # one second short of the idle limit: used, so it lasts another 600 s
            assert (await write(browser, token)).status_code == 201
            clock.now += 599
            assert (await who(browser))["write"] is True
            clock.now += 600  # idle for the whole limit
            refused = await write(browser, token)
            assert refused.status_code == 401, refused.text
            assert (await who(browser))["authenticated"] is False

    run(scenario())
    assert len(upstream.decisions) == 1
    assert rows(book) == 0  # the expired row was deleted when it was refused


def test_a_session_kept_busy_is_refused_past_the_absolute_limit(provider: FakeProvider, tmp_path: Path) -> None:
    clock, upstream = Clock(), Upstream(provider)
    book = tmp_path / "sessions.sqlite"
    settings = settings_for(book, session_idle=600, session_max_age=3600)
    app = create_proxy_app(
        settings, public_url="https://proxy.example", sign=stand_in_signer, transport=upstream, clock=clock
    )

    async def scenario() -> None:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="https://proxy.example") as browser:
            await sign_in(browser, provider)
            token = (await who(browser))["csrfToken"]
            for _ in range(11):  # used every 5 minutes: 3300 s after the login
                clock.now += 300
                assert (await who(browser))["write"] is True
            clock.now += 299  # 3599 s: still within the limit
            assert (await write(browser, token)).status_code == 201
            clock.now += 1  # 3600 s, used a second ago, and over
            refused = await write(browser, token)
            assert refused.status_code == 401, refused.text
            assert (await who(browser))["authenticated"] is False

    run(scenario())
    assert len(upstream.decisions) == 1
    assert rows(book) == 0


def test_expired_sessions_are_pruned_as_the_book_is_written(tmp_path: Path) -> None:
    clock = Clock()
    book = SessionBook(tmp_path / "sessions.sqlite")
    sessions = Sessions(SECRET, secure=True, max_age=3600, allow=("alice",), idle=600, book=book, clock=clock)
    values = [sessions.new(ALICE)[1] for _ in range(3)]
    clock.now += 300
    kept = sessions.new(ALICE)[1]
    assert len(book) == 4
    clock.now += 300  # the first three are idle 600 s: the next login deletes them, unread
    sessions.new(ALICE)
    assert len(book) == 2
    assert [sessions.read(v) for v in values] == [None, None, None] and sessions.read(kept) is not None
    assert sessions.end(kept) is True and sessions.end(kept) is False  # ended once
    clock.now += 300
    other = sessions.new(ALICE)[1]
    clock.now += 300  # the login before it is idle past the limit: ending another session deletes it too
    assert len(book) == 2 and sessions.end(other) is True and len(book) == 0
    for _ in range(2):
        sessions.new(ALICE)
    clock.now += 3600
    book.prune(now=clock())
    assert len(book) == 0


def test_a_touch_moves_the_idle_end_and_deletes_what_expired(tmp_path: Path) -> None:
    clock = Clock()
    book = SessionBook(None)
    sessions = Sessions(SECRET, secure=True, max_age=3600, allow=(), idle=600, book=book, clock=clock)
    busy, idle_one = sessions.new(ALICE)[1], sessions.new(ALICE)[1]
    clock.now += 600 - 1
    assert sessions.read(busy) is not None  # touched: its idle end moves on, and the idle one is not
    assert len(book) == 2
    clock.now += 1
    assert sessions.read(busy) is not None  # read without a touch (a second later), unchanged
    assert len(book) == 2
    clock.now = START + 599 + touch_every(600)
    assert sessions.read(busy) is not None  # touched again: the idle one, expired, is deleted
    assert len(book) == 1 and sessions.read(idle_one) is None
    assert (touch_every(600), touch_every(6000), touch_every(300), touch_every(60)) == (60, 60, 30, 6)


def test_a_book_without_a_file_writes_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    sessions = Sessions(SECRET, secure=True, max_age=3600, allow=())  # a book in memory
    value = sessions.new(ALICE)[1]
    assert sessions.read(value) is not None and len(sessions.book) == 1
    assert list(tmp_path.iterdir()) == []
    assert SessionBook(None).get(session_key(value)) is None  # another process's memory: not shared


def test_a_session_book_that_fails_is_a_backend_error_naming_its_file(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite"
    book = SessionBook(path)
    sessions = Sessions(SECRET, secure=True, max_age=3600, allow=(), book=book)
    value = sessions.new(ALICE)[1]
    with sqlite3.connect(path) as other:
        other.execute("DROP TABLE proxy_sessions")
    for action, verb in ((lambda: sessions.read(value), "read"), (lambda: sessions.new(ALICE), "write")):
        with pytest.raises(BackendUnavailableError) as failed:
            action()
        assert failed.value.field == "REVIEWTRAIL_PROXY_SESSION_FILE"
        assert str(failed.value) == (
            f"REVIEWTRAIL_PROXY_SESSION_FILE: {path}: cannot {verb} the session book (no such table: proxy_sessions)"
        )
    memory = SessionBook(None)
    memory._db.execute("DROP TABLE proxy_sessions")
    with pytest.raises(BackendUnavailableError, match=r"^REVIEWTRAIL_PROXY_SESSION_FILE: memory: cannot read the"):
        memory.get(session_key(value))
    with pytest.raises(
        BackendUnavailableError, match=r"^REVIEWTRAIL_PROXY_SESSION_FILE: memory: cannot write the session book"
    ):
        memory.prune(now=START)
    assert not memory._db.in_transaction  # rolled back


@settings(max_examples=60, deadline=None)
@given(
    idle=st.integers(60, 3600),
    extra=st.integers(0, 7200),
    gaps=st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=60),
)
def test_a_session_used_often_enough_lives_exactly_until_its_absolute_end(
    idle: int, extra: int, gaps: list[float]
) -> None:
    """Used at gaps of at most the idle limit less the touch interval, a session is read back
    every time before its absolute end and never at or after it."""
    max_age = idle + extra
    clock = Clock()
    with_book = SessionBook(None)
    sessions = Sessions(SECRET, secure=False, max_age=max_age, allow=(), idle=idle, book=with_book, clock=clock)
    made, value = sessions.new(ALICE)
    longest = idle - touch_every(idle)
    for gap in gaps:
        clock.now += gap * longest
        read = sessions.read(value)
        assert (read == made) is (clock.now < START + max_age), (clock.now - START, max_age)
    clock.now = max(clock.now, START + max_age)
    assert sessions.read(value) is None
    with_book.close()


@given(created=st.floats(0, 1e9), seen=st.floats(0, 1e9), now=st.floats(0, 2e9), idle=st.integers(60, 10**6))
def test_the_expiry_rule(created: float, seen: float, now: float, idle: int) -> None:
    max_age = idle * 4
    assert alive(created, seen, now, idle=idle, max_age=max_age) is (now - created < max_age and now - seen < idle)
    assert not alive(created, seen, max(now, created + max_age), idle=idle, max_age=max_age)
    assert not alive(created, seen, max(now, seen + idle), idle=idle, max_age=max_age)
    assert 0 < touch_every(idle) <= min(60, idle / 10)


# --- one book for proxies restarted or side by side ---------------------------------------------


def test_proxies_sharing_a_book_share_sessions_and_their_end(provider: FakeProvider, tmp_path: Path) -> None:
    book = tmp_path / "sessions.sqlite"
    upstream = Upstream(provider)

    def proxy() -> Any:
        return create_proxy_app(
            settings_for(book), public_url="https://proxy.example", sign=stand_in_signer, transport=upstream
        )

    first, second = proxy(), proxy()

    async def scenario() -> None:
        base = "https://proxy.example"
        async with (
            httpx.AsyncClient(transport=httpx.ASGITransport(first), base_url=base) as on_first,
            httpx.AsyncClient(transport=httpx.ASGITransport(second), base_url=base) as on_second,
        ):
            await sign_in(on_first, provider)
            on_second.cookies.set("__Host-reviewtrail_session", on_first.cookies["__Host-reviewtrail_session"])
            token = (await who(on_second))["csrfToken"]
            assert token == (await who(on_first))["csrfToken"]
            assert (await write(on_second, token)).status_code == 201
            restarted = proxy()  # a proxy started afterwards reads the same book
            async with httpx.AsyncClient(transport=httpx.ASGITransport(restarted), base_url=base) as on_restarted:
                on_restarted.cookies.set("__Host-reviewtrail_session", on_first.cookies["__Host-reviewtrail_session"])
                assert (await who(on_restarted))["write"] is True
                assert (await on_restarted.get("/auth/logout")).status_code == 200
            assert (await write(on_first, token)).status_code == 401
            assert (await write(on_second, token)).status_code == 401

    run(scenario())
    assert len(upstream.decisions) == 1


def test_two_books_on_one_file_change_it_side_by_side(tmp_path: Path) -> None:
    """Two connections, as two proxies have, logging in, reading and logging out at once: every
    change lands, none is lost or refused as busy."""
    path = tmp_path / "sessions.sqlite"
    books = [SessionBook(path), SessionBook(path)]
    kept: list[list[str]] = [[], []]
    failures: list[BaseException] = []

    def work(index: int) -> None:
        sessions = Sessions(SECRET, secure=True, max_age=3600, allow=("alice",), book=books[index])
        try:
            for n in range(60):
                session, value = sessions.new(ALICE)
                assert sessions.read(value) == session
                if n % 3 == 0:
                    assert sessions.end(value) is True
                else:
                    kept[index].append(value)
        except BaseException as exc:  # reported by the test thread
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(books[0]) == len(books[1]) == 80
    other = Sessions(SECRET, secure=True, max_age=3600, allow=("alice",), book=books[1])
    assert all(other.read(value) is not None for value in kept[0])  # each sees the other's sessions


# --- settings -----------------------------------------------------------------------------------


def test_session_settings_and_their_defaults(tmp_path: Path) -> None:
    secret = tmp_path / "conf" / "proxy.secret"
    secret.parent.mkdir()
    secret.write_bytes(SECRET)
    secret.chmod(0o600)
    env = {
        "REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": str(secret),
        "REVIEWTRAIL_PROXY_OIDC_ISSUER": ISSUER,
        "REVIEWTRAIL_PROXY_OIDC_CLIENT_ID": "reviewtrail-proxy",
    }
    default = proxy_settings("http://127.0.0.1:8765", env)
    assert (default.session_idle, default.session_max_age) == (1800, 28800)
    assert default.session_file == tmp_path / "conf" / "reviewtrail-proxy-sessions.sqlite"
    short = proxy_settings("http://127.0.0.1:8765", env | {"REVIEWTRAIL_PROXY_SESSION_MAX_AGE": "900"})
    assert (short.session_idle, short.session_max_age) == (900, 900)  # idle is at most the maximum age
    given_ = proxy_settings(
        "http://127.0.0.1:8765",
        env | {"REVIEWTRAIL_PROXY_SESSION_IDLE": "120", "REVIEWTRAIL_PROXY_SESSION_FILE": str(tmp_path / "b.sqlite")},
    )
    assert (given_.session_idle, given_.session_file) == (120, tmp_path / "b.sqlite")
    for value in ("soon", "59", "-1", "28801", " 1e3"):
        with pytest.raises(InvalidInputError) as refused:
            proxy_settings("http://127.0.0.1:8765", env | {"REVIEWTRAIL_PROXY_SESSION_IDLE": value})
        assert refused.value.field == "REVIEWTRAIL_PROXY_SESSION_IDLE", value
    with pytest.raises(BackendUnavailableError) as unopened:
        SessionBook(tmp_path / "missing" / "sessions.sqlite")
    assert unopened.value.field == "REVIEWTRAIL_PROXY_SESSION_FILE"
    assert "missing/sessions.sqlite" in str(unopened.value)


# --- Secure, __Host- cookies behind real TLS ----------------------------------------------------


def certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (PEM files in ``folder``)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "reviewtrail proxy test")])
    now = datetime.datetime.now(datetime.UTC)
    public = key.public_key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "proxy.pem", folder / "proxy.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    key_path.chmod(0o600)
    return cert_path, key_path


@contextmanager
def served_over_tls(make_app: Any, folder: Path) -> Iterator[tuple[str, ssl.SSLContext]]:
    """The app ``make_app(public_url)`` under uvicorn with a certificate made here, on a free port
    of 127.0.0.1; its https URL and a client context that trusts that certificate (only)."""
    import uvicorn

    cert_path, key_path = certificate(folder)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    url = f"https://127.0.0.1:{sock.getsockname()[1]}"
    config = uvicorn.Config(
        make_app(url),
        ssl_certfile=str(cert_path),
        ssl_keyfile=str(key_path),
        log_level="warning",
        access_log=False,
        lifespan="off",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            assert thread.is_alive(), "uvicorn stopped before it started"
            time.sleep(0.01)
        yield url, ssl.create_default_context(cafile=str(cert_path))
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def cookie_attributes(answer: httpx.Response, name: str) -> dict[str, str]:
    header = next(v for k, v in answer.headers.multi_items() if k == "set-cookie" and v.startswith(name + "="))
    first, *rest = [part.strip() for part in header.split(";")]
    attributes = {"value": first.split("=", 1)[1]}
    attributes |= {part.split("=", 1)[0].lower(): [*part.split("=", 1), ""][1] for part in rest}
    return attributes


def test_behind_tls_the_session_cookie_is_host_prefixed_secure_sent_back_and_ended(
    provider: FakeProvider, tmp_path: Path
) -> None:
    upstream = Upstream(provider)

    def make_app(public_url: str) -> Any:
        settings = settings_for(tmp_path / "sessions.sqlite")
        return create_proxy_app(settings, public_url=public_url, sign=stand_in_signer, transport=upstream)

    with (
        served_over_tls(make_app, tmp_path) as (url, trusted),
        httpx.Client(base_url=url, verify=trusted, timeout=30) as browser,
        httpx.Client(base_url=url, verify=trusted, timeout=30) as copy,
    ):
        start = browser.get("/auth/login", params={"next": "/"})
        assert start.status_code == 303 and start.url.scheme == "https"
        login = cookie_attributes(start, "__Host-reviewtrail_login")
        assert {"secure", "httponly"} <= login.keys() and login["path"] == "/" and "domain" not in login
        location = start.headers["location"]
        state = parse_qs(urlsplit(location).query)["state"][0]
        back = browser.get("/auth/callback", params={"code": provider.authorize(location), "state": state})
        assert back.status_code == 303
        session = cookie_attributes(back, "__Host-reviewtrail_session")
        assert {"secure", "httponly"} <= session.keys() and "domain" not in session
        assert session["path"] == "/" and session["samesite"].lower() == "lax" and session["max-age"] == "28800"
        assert back.headers["strict-transport-security"].startswith("max-age=")
        # The browser sends it back over https: the proxy knows the session.
        info = browser.get("/auth/session").json()
        assert info["authenticated"] is True and info["write"] is True
        copy.cookies.set("__Host-reviewtrail_session", session["value"])
        headers = {"content-type": "application/json", "x-csrf-token": info["csrfToken"]}
        assert copy.post(ROUTE, content=DECISION, headers=headers).status_code == 201
        ended = browser.get("/auth/logout")
        assert ended.status_code == 200
        gone = cookie_attributes(ended, "__Host-reviewtrail_session")
        assert gone["max-age"] == "0" and "secure" in gone and gone["path"] == "/"
        assert browser.get("/auth/session").json()["authenticated"] is False
        refused = copy.post(ROUTE, content=DECISION, headers=headers)
        assert refused.status_code == 401, refused.text
        assert copy.get("/auth/session").json()["authenticated"] is False
    assert len(upstream.decisions) == 1
