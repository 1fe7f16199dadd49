"""The public proxy's login in the test process (web/_proxy_auth.py): the OIDC code flow against
an in-process provider that does not enforce PKCE (support/fake_oidc.py), so every refusal here is
the proxy's own: its discovery issuer check, its PKCE checks on both legs, its ID token checks;
and the session cookies and HTTP Basic users, each shown to refuse what it must."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import re
import secrets
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import httpx
import pytest
from itsdangerous import TimestampSigner, URLSafeTimedSerializer
from joserfc.jwk import ECKey

from reviewtrail.web._proxy_auth import BasicAuth, Identity, LoginFailed, OidcLogin, Session, Sessions
from reviewtrail.web._proxy_rules import actor_id, csrf_token
from reviewtrail.web._proxy_sessions import SessionBook
from reviewtrail.web._proxy_settings import OidcSettings
from support.fake_oidc import ISSUER, FakeProvider

CALLBACK = "https://proxy.example/auth/callback"
SETTINGS = OidcSettings(ISSUER, "reviewtrail-proxy", "client-secret-value")
SECRET = b"proxy-session-secret-" + b"s" * 32
UNRESERVED = re.compile(r"[A-Za-z0-9._~-]{43,128}")  # RFC 7636 4.1
T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def s256(verifier: str) -> str:
    """RFC 7636 4.2: BASE64URL(SHA256(ASCII(verifier))), no padding."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> FakeProvider:
    fake = FakeProvider()
    fake.install(monkeypatch)
    return fake


def oidc(provider: FakeProvider, cls: type[OidcLogin] = OidcLogin, settings: OidcSettings = SETTINGS) -> OidcLogin:
    return cls(settings, CALLBACK, transport=provider.transport())


def log_in(provider: FakeProvider, login: OidcLogin | None = None) -> Identity:
    login = login or oidc(provider)
    url, kept = run(login.begin("/review/camp/1"))
    return run(login.finish(provider.authorize(url), kept["state"], kept))


# --- the flow that works ------------------------------------------------------------------------


def test_a_login_carries_the_s256_challenge_of_the_verifier_it_sends_back(provider: FakeProvider) -> None:
    login = oidc(provider)
    url, kept = run(login.begin("/review/camp/1"))
    query = parse_qs(urlsplit(url).query)
    assert url.startswith(ISSUER + "/authorize?")
    assert UNRESERVED.fullmatch(kept["verifier"]), kept["verifier"]
    assert query["code_challenge_method"] == ["S256"]
    assert query["code_challenge"] == [s256(kept["verifier"])] and "=" not in query["code_challenge"][0]
    assert query["state"] == [kept["state"]] and query["nonce"] == [kept["nonce"]]
    assert query["response_type"] == ["code"] and query["scope"] == ["openid email"]
    assert query["client_id"] == ["reviewtrail-proxy"] and query["redirect_uri"] == [CALLBACK]
    assert kept["next"] == "/review/camp/1"
    assert kept["verifier"] not in url

    identity = run(login.finish(provider.authorize(url), kept["state"], kept))
    assert identity == Identity(ISSUER, "alice", "alice@example.org", True)
    form = provider.token_form()
    assert form["code_verifier"] == [kept["verifier"]]
    assert form["grant_type"] == ["authorization_code"] and form["redirect_uri"] == [CALLBACK]
    token_request = next(r for r in provider.requests if r.url.path == "/token")
    basic = base64.b64encode(b"reviewtrail-proxy:client-secret-value").decode()
    assert token_request.headers["authorization"] == f"Basic {basic}"
    # The discovery document is read once for the whole login.
    assert provider.paths().count("/.well-known/openid-configuration") == 1


def test_each_login_has_its_own_verifier_state_and_nonce(provider: FakeProvider) -> None:
    login = oidc(provider)
    first, second = run(login.begin(None))[1], run(login.begin("//elsewhere.example"))[1]
    assert all(first[k] != second[k] for k in ("verifier", "state", "nonce"))
    assert first["next"] == second["next"] == "/"


def test_a_public_client_sends_its_id_and_no_secret(provider: FakeProvider) -> None:
    log_in(provider, oidc(provider, settings=OidcSettings(ISSUER, "reviewtrail-proxy")))
    token_request = next(r for r in provider.requests if r.url.path == "/token")
    assert "authorization" not in token_request.headers
    assert provider.token_form()["client_id"] == ["reviewtrail-proxy"]


# --- the discovery issuer -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "issuer",
    [ISSUER + "/", "https://IDP.example", "https://other.example", ISSUER + "/tenant", "", None],
    ids=["trailing-slash", "case", "other-host", "other-path", "empty", "missing"],
)
def test_a_discovery_document_naming_another_issuer_refuses_the_login(
    provider: FakeProvider, issuer: str | None
) -> None:
    document = provider.discovery() | {"issuer": issuer}
    provider.document = {k: v for k, v in document.items() if v is not None}
    login = oidc(provider)
    with pytest.raises(LoginFailed) as refused:
        run(login.begin("/"))
    assert str(refused.value) == (
        f"the provider at {ISSUER}/.well-known/openid-configuration names another issuer than {ISSUER}"
    )
    assert provider.paths() == ["/.well-known/openid-configuration"]  # no login began
    # Nothing of the refused document is kept: once the provider names the issuer, logins work.
    provider.document = None
    assert log_in(provider, login).subject == "alice"


def test_an_issuer_that_ends_in_a_slash_is_kept_and_logs_in(provider: FakeProvider) -> None:
    """Providers such as Auth0 name themselves with a trailing slash; the issuer is compared exactly,
    so the setting keeps it, and the discovery document is read from beside it."""
    from reviewtrail.web._proxy_settings import _oidc

    env = {"REVIEWTRAIL_PROXY_OIDC_ISSUER": ISSUER + "/", "REVIEWTRAIL_PROXY_OIDC_CLIENT_ID": "reviewtrail-proxy"}
    settings = _oidc(env)
    assert settings is not None and settings.issuer == ISSUER + "/"
    provider.issuer = ISSUER + "/"
    login = oidc(provider, settings=OidcSettings(ISSUER + "/", "reviewtrail-proxy", "client-secret-value"))
    assert log_in(provider, login).subject == "alice"
    assert provider.paths()[0] == "/.well-known/openid-configuration"


@pytest.mark.parametrize("document", [[ISSUER], ISSUER, 1])
def test_a_discovery_document_that_is_no_object_refuses_the_login(provider: FakeProvider, document: Any) -> None:
    provider.document = document
    with pytest.raises(LoginFailed, match=r"names another issuer than https://idp.example$"):
        run(oidc(provider).begin("/"))


@pytest.mark.parametrize("status", [404, 500])
def test_an_unreadable_discovery_document_refuses_the_login(provider: FakeProvider, status: int) -> None:
    provider.status = {"/.well-known/openid-configuration": status}
    with pytest.raises(LoginFailed, match=r"^cannot read the provider's configuration at https://idp\.example/\.well"):
        run(oidc(provider).begin("/"))


def test_a_redirected_discovery_request_is_not_followed(provider: FakeProvider) -> None:
    provider.redirects = {"/.well-known/openid-configuration": ISSUER + "/elsewhere/.well-known/openid-configuration"}
    with pytest.raises(LoginFailed, match=r"^cannot read the provider's configuration .*302"):
        run(oidc(provider).begin("/"))
    assert provider.paths() == ["/.well-known/openid-configuration"]


def test_a_discovery_document_that_is_not_json_refuses_the_login() -> None:
    login = OidcLogin(SETTINGS, CALLBACK, transport=httpx.MockTransport(lambda _: httpx.Response(200, text="<html>")))
    with pytest.raises(LoginFailed, match=r"^cannot read the provider's configuration"):
        run(login.begin("/"))


# --- PKCE: the authorization leg ----------------------------------------------------------------


def edited_query(url: str, edit: Callable[[dict[str, list[str]]], None]) -> str:
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    edit(query)
    return urlunsplit(parts._replace(query=urlencode(query, doseq=True)))


def _plain(q: dict[str, list[str]]) -> None:
    q["code_challenge_method"] = ["plain"]


def _no_method(q: dict[str, list[str]]) -> None:
    del q["code_challenge_method"]


def _no_challenge(q: dict[str, list[str]]) -> None:
    del q["code_challenge"]


def _padded(q: dict[str, list[str]]) -> None:
    q["code_challenge"] = [q["code_challenge"][0] + "="]


def _other_verifier(q: dict[str, list[str]]) -> None:
    q["code_challenge"] = [s256("another-verifier-" + "v" * 40)]


def _twice(q: dict[str, list[str]]) -> None:
    q["code_challenge"] = q["code_challenge"] * 2


def _hex_digest(q: dict[str, list[str]]) -> None:
    q["code_challenge"] = [hashlib.sha256(b"x").hexdigest()]


@pytest.mark.parametrize(
    "edit", [_plain, _no_method, _no_challenge, _padded, _other_verifier, _twice, _hex_digest], ids=lambda f: f.__name__
)
def test_an_authorization_url_without_the_s256_challenge_of_the_kept_verifier_is_refused(
    provider: FakeProvider, edit: Callable[[dict[str, list[str]]], None]
) -> None:
    """The client library builds the URL; the proxy checks it before sending a browser there."""

    class Library(OidcLogin):
        def _client(self, metadata: dict[str, Any]) -> Any:
            client = super()._client(metadata)
            build = client.create_authorization_url

            def create_authorization_url(url: str, **kwargs: Any) -> tuple[str, str]:
                made, state = build(url, **kwargs)
                return edited_query(made, edit), state

            client.create_authorization_url = create_authorization_url
            return client

    with pytest.raises(LoginFailed, match=r"^the authorization request does not carry the S256 PKCE challenge$"):
        run(oidc(provider, Library).begin("/"))


def test_an_edit_that_keeps_the_challenge_is_accepted(provider: FakeProvider) -> None:
    """The refusals above are for the challenge: the same library, changing another parameter."""

    class Library(OidcLogin):
        def _client(self, metadata: dict[str, Any]) -> Any:
            client = super()._client(metadata)
            build = client.create_authorization_url

            def create_authorization_url(url: str, **kwargs: Any) -> tuple[str, str]:
                made, state = build(url, **kwargs)
                return edited_query(made, lambda q: q.update(prompt=["login"])), state

            client.create_authorization_url = create_authorization_url
            return client

    assert log_in(provider, oidc(provider, Library)).subject == "alice"


# --- PKCE: the token leg ------------------------------------------------------------------------


def library_sending(**changed: Any) -> type[OidcLogin]:
    """A login whose client library sends ``changed`` in place of what the proxy asked for."""

    class Library(OidcLogin):
        def _client(self, metadata: dict[str, Any]) -> Any:
            client = super()._client(metadata)
            fetch = client.fetch_token

            async def fetch_token(url: str, **kwargs: Any) -> Any:
                for name, value in changed.items():
                    if value is None:
                        kwargs.pop(name, None)
                    else:
                        kwargs[name] = value
                return await fetch(url, **kwargs)

            client.fetch_token = fetch_token
            return client

    return Library


@pytest.mark.parametrize(
    "changed",
    [
        {"code_verifier": None},
        {"code_verifier": "another-verifier-" + "v" * 40},
        {"grant_type": "urn:example:grant"},
    ],
    ids=["no-verifier", "another-verifier", "another-grant"],
)
def test_a_token_request_without_the_logins_verifier_is_refused(
    provider: FakeProvider, changed: dict[str, Any]
) -> None:
    with pytest.raises(LoginFailed, match=r"^the token request does not carry the login's PKCE verifier$"):
        log_in(provider, oidc(provider, library_sending(**changed)))
    # The provider answered: the refusal is the proxy's own.
    assert "/token" in provider.paths() and "/jwks" not in provider.paths()


# --- state, the provider's answer and the ID token ----------------------------------------------


def test_a_state_or_code_other_than_the_logins_is_refused(provider: FakeProvider) -> None:
    login = oidc(provider)
    url, kept = run(login.begin("/"))
    code = provider.authorize(url)
    for given_code, state in ((code, kept["state"] + "x"), (code, ""), ("", kept["state"])):
        with pytest.raises(LoginFailed, match=r"^the login's state does not match"):
            run(login.finish(given_code, state, kept))
    assert "/token" not in provider.paths()
    assert run(login.finish(code, kept["state"], kept)).subject == "alice"


def test_a_code_the_provider_refuses_fails_the_login(provider: FakeProvider) -> None:
    login = oidc(provider)
    _, kept = run(login.begin("/"))
    with pytest.raises(LoginFailed, match=r"^the provider refused the code: OAuthError$"):
        run(login.finish("not-a-code-it-issued", kept["state"], kept))


@pytest.mark.parametrize(
    ("claims", "problem"),
    [
        ({"iss": "https://other.example"}, "not valid"),
        ({"iss": None}, "not valid"),
        ({"aud": "another-client"}, "not valid"),
        ({"aud": None}, "not valid"),
        ({"nonce": "another-nonce"}, "not valid"),
        ({"nonce": None}, "not valid"),
        ({"exp": int(time.time()) - 3600}, "not valid"),
        ({"exp": None}, "not valid"),
        ({"sub": None}, "not valid"),
        ({"sub": ""}, "not valid"),
        ({"sub": 7}, "not valid"),
    ],
)
def test_an_id_token_failing_a_check_fails_the_login(
    provider: FakeProvider, claims: dict[str, Any], problem: str
) -> None:
    provider.claims = claims
    with pytest.raises(LoginFailed, match=problem):
        log_in(provider)


def test_an_id_token_signed_by_another_key_fails_the_login(provider: FakeProvider) -> None:
    provider.signing_key = ECKey.generate_key("P-256", parameters={"kid": "provider-key"})
    with pytest.raises(LoginFailed, match=r"^the ID token is not valid: "):
        log_in(provider)


def test_no_id_token_or_no_keys_fails_the_login(provider: FakeProvider) -> None:
    provider.id_token = False
    with pytest.raises(LoginFailed, match=r"^the provider gave no ID token$"):
        log_in(provider)
    provider.id_token, provider.status = True, {"/jwks": 500}
    with pytest.raises(LoginFailed, match=r"^the ID token is not valid: HTTPStatusError$"):
        log_in(provider)


@pytest.mark.parametrize(
    ("claims", "email", "verified"),
    [
        ({}, "alice@example.org", True),
        ({"email_verified": False}, "alice@example.org", False),
        ({"email_verified": "true"}, "alice@example.org", False),
        ({"email_verified": None}, "alice@example.org", False),
        ({"email": None}, None, True),
        ({"email": ["alice@example.org"]}, None, True),
    ],
)
def test_the_email_counts_as_verified_only_when_the_provider_says_true(
    provider: FakeProvider, claims: dict[str, Any], email: str | None, verified: bool
) -> None:
    provider.claims = claims
    assert log_in(provider) == Identity(ISSUER, "alice", email, verified)


# --- sessions -----------------------------------------------------------------------------------

ALICE = Identity(ISSUER, "alice", "alice@example.org", True)


@pytest.fixture
def book() -> Iterator[SessionBook]:
    kept = SessionBook(None)
    yield kept
    kept.close()


def sessions(
    book: SessionBook, *, secure: bool = False, max_age: int = 3600, allow: tuple[str, ...] = ("alice", "dave")
) -> Sessions:
    return Sessions(SECRET, secure=secure, max_age=max_age, allow=allow, book=book)


def dumped(data: Any, *, salt: str = "reviewtrail-proxy-session", age: int = 0, secret: bytes = SECRET) -> str:
    class Aged(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(time.time()) - age

    return URLSafeTimedSerializer(secret, salt=salt, signer=Aged).dumps(data)


def test_a_session_reads_back_as_made_and_writes_as_the_pseudonymous_actor(book: SessionBook) -> None:
    made, value = sessions(book).new(ALICE)
    assert made.method == "oidc" and made.write is True
    assert made.actor == actor_id(SECRET, ISSUER, "alice")
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", value)  # 256 random bits, and nothing else
    assert made.session_id == hashlib.sha256(value.encode()).hexdigest()  # the book's key: the id's hash
    assert sessions(book).read(value) == made
    assert sessions(book).new(ALICE)[0].session_id != made.session_id
    reader, _ = sessions(book).new(Identity(ISSUER, "erin", "alice@example.org", False))
    assert reader.write is False
    # An allowlisted address counts when the provider says it is verified.
    carol = sessions(book, allow=("carol@example.org",))
    assert carol.new(Identity(ISSUER, "c-123", "Carol@Example.org", True))[0].write is True
    assert carol.new(Identity(ISSUER, "c-123", "Carol@Example.org", False))[0].write is False


@pytest.mark.parametrize(("secure", "prefix"), [(True, "__Host-"), (False, "")])
def test_cookie_names_and_options(book: SessionBook, secure: bool, prefix: str) -> None:
    made = sessions(book, secure=secure)
    assert (made.cookie, made.login_cookie) == (prefix + "reviewtrail_session", prefix + "reviewtrail_login")
    assert made.cookie_options(42) == {
        "max_age": 42,
        "path": "/",
        "secure": secure,
        "httponly": True,
        "samesite": "lax",
    }


def test_a_missing_unknown_altered_or_malformed_session_cookie_is_no_session(book: SessionBook) -> None:
    made, value = sessions(book).new(ALICE)
    other = "A" if value[5] != "A" else "B"
    good = {"sid": value, "actor": made.actor, "write": True, "allow": "x"}
    refused = {
        "none": None,
        "empty": "",
        "unknown": secrets.token_urlsafe(32),
        "altered": value[:5] + other + value[6:],
        "the book's key": made.session_id,
        "longer": value + "A",
        "shorter": value[:-1],
        "not base64url": value[:-1] + "=",
        "a signed cookie as the proxy once made": dumped(good),
    }
    for name, cookie in refused.items():
        assert sessions(book).read(cookie) is None, name
        assert sessions(book).end(cookie) is False, name
    assert sessions(book).read(value) == made  # none of them ended the real one


def test_a_write_session_keeps_write_only_under_the_allowlist_it_was_granted(book: SessionBook) -> None:
    _, value = sessions(book, allow=("alice", "dave")).new(ALICE)
    assert sessions(book, allow=("dave", "alice")).read(value).write is True  # type: ignore[union-attr]
    assert sessions(book, allow=("alice",)).read(value).write is False  # type: ignore[union-attr]
    assert sessions(book, allow=("alice", "dave", "erin")).read(value).write is False  # type: ignore[union-attr]


def test_only_an_oidc_write_session_of_a_writable_proxy_gets_a_csrf_token(book: SessionBook) -> None:
    made, _ = sessions(book).new(ALICE)
    assert sessions(book).csrf(made, writable=True) == csrf_token(SECRET, made.session_id)
    assert sessions(book).csrf(made, writable=False) is None
    assert sessions(book).csrf(None, writable=True) is None
    assert sessions(book).csrf(Session(made.session_id, "oidc", made.actor, False), writable=True) is None
    assert sessions(book).csrf(Session(made.session_id, "basic", made.actor, True), writable=True) is None


def test_the_login_state_reads_back_only_signed_fresh_and_textual(book: SessionBook) -> None:
    state = {"state": "st", "verifier": "v" * 43, "nonce": "n", "next": "/x"}
    assert sessions(book).read_login_state(sessions(book).login_state(state)) == state
    salt = "reviewtrail-proxy-login"
    assert sessions(book).read_login_state(dumped(state, salt=salt, age=500)) == state
    for cookie in (
        None,
        "",
        dumped(state, salt=salt, age=700),
        dumped(state),  # a session cookie is no login state
        dumped(state, salt=salt, secret=b"another secret" * 4),
        dumped(["st"], salt=salt),
        dumped(state | {"next": 1}, salt=salt),
    ):
        assert sessions(book).read_login_state(cookie) is None, cookie


# --- HTTP Basic ---------------------------------------------------------------------------------


def basic(user: str, password: str, scheme: str = "Basic") -> str:
    return f"{scheme} " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.fixture
def users() -> BasicAuth:
    from argon2 import PasswordHasher

    return BasicAuth({"bob": PasswordHasher(time_cost=1, memory_cost=8, parallelism=1).hash("right:password")}, SECRET)


def test_a_basic_user_with_the_right_password_reads_and_nothing_else_does(users: BasicAuth) -> None:
    bob = Session("", "basic", "basic-bob", False)
    assert users.check(basic("bob", "right:password")) == bob
    assert users.check(basic("bob", "right:password", "basic")) == bob
    assert users.check(basic("bob", "right:password", "BASIC")) == bob
    refused = {
        "no header": None,
        "empty": "",
        "another scheme": basic("bob", "right:password", "Bearer"),
        "wrong password": basic("bob", "right:passwore"),
        "unknown user": basic("carol", "right:password"),
        "not base64": "Basic bob:right:password",
        "base64 with a stray character": "Basic !" + basic("bob", "right:password")[6:],
        "not UTF-8": "Basic " + base64.b64encode(b"bob:\xff").decode(),
        "not ASCII": "Basic \xe9t\xe9",
        "a lone surrogate": "Basic \udc80",
    }
    for name, header in refused.items():
        assert users.check(header) is None, name
    assert bool(users) and not BasicAuth({}, SECRET)
    assert BasicAuth({}, SECRET).check(basic("bob", "right:password")) is None


def test_a_verified_header_is_remembered_for_the_last_256(users: BasicAuth, monkeypatch: pytest.MonkeyPatch) -> None:
    verified: list[str] = []

    class Counting:
        def __init__(self, hasher: Any) -> None:
            self.hasher = hasher

        def verify(self, hashed: str, password: str) -> bool:
            verified.append(password)
            return bool(self.hasher.verify(hashed, password))

    monkeypatch.setattr(users, "_hasher", Counting(users._hasher))
    # The same credentials, told apart by trailing blanks: 257 headers, each verified once.
    headers = [basic("bob", "right:password") + " " * n for n in range(257)]
    for header in headers:
        assert users.check(header) is not None
    bob = Session("", "basic", "basic-bob", False)
    assert users.check(headers[-1]) == bob and users.check(headers[1]) == bob
    assert len(verified) == 257
    assert users.check(headers[0]) is not None  # the oldest was forgotten: verified again
    assert len(verified) == 258
    assert users.check(basic("bob", "wrong")) is None and users.check(basic("bob", "wrong")) is None
    assert len(verified) == 260  # a refused header is never remembered


def test_the_proxy_refuses_a_login_when_the_provider_names_another_issuer(provider: FakeProvider) -> None:
    """What a browser sees: the login stops at the proxy with the reason, and no login cookie."""
    from reviewtrail.web._proxy import create_proxy_app
    from reviewtrail.web._proxy_settings import ProxySettings

    provider.document = provider.discovery() | {"issuer": "https://impostor.example"}
    settings = ProxySettings(inspector="http://127.0.0.1:9", session_secret=SECRET, oidc=SETTINGS)
    app = create_proxy_app(settings, public_url="https://proxy.example", sign=None, transport=provider.transport())

    async def start() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="https://proxy.example") as browser:
            return await browser.get("/auth/login", params={"next": "/"})

    answer = run(start())
    assert answer.status_code == 502
    assert answer.text == (
        f"login failed: the provider at {ISSUER}/.well-known/openid-configuration names another issuer than {ISSUER}\n"
    )
    assert "set-cookie" not in answer.headers and "/authorize" not in provider.paths()
