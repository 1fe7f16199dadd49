"""``reviewtrail proxy`` as a real process, between a real OIDC provider (``oidc-provider-mock``
behind a recording front) and a recording stand-in for the inspector: who may read, who may
write, what reaches the inspector (never a cookie, credential, token, subject or CSRF token), the
signature on the one write it forwards, and the refusals, each shown to forward nothing."""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import os
import re
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from http_message_signatures import HTTPMessageVerifier, HTTPSignatureKeyResolver, algorithms
from itsdangerous import URLSafeTimedSerializer

from reviewtrail.web._capability import Capability, load_capability, new_capability
from reviewtrail.web._proxy_rules import actor_id, allowlisted, csrf_matches, csrf_token, local_path
from support.oidc import running_oidc_mock, set_user
from support.proxy import (
    Recorder,
    basic_header,
    login,
    proxy_command,
    recording,
    running_proxy,
    write_secret,
)

ROUTE = "/api/review/decisions"
SECRET = b"proxy-session-secret-" + b"x" * 32
ALLOWED = "alice,Carol@Example.org,dave"
BASIC_PASSWORD = "correct horse battery staple"


@pytest.fixture(scope="module")
def provider() -> Iterator[Recorder]:
    """The OIDC mock behind a recording front; the issuer is the front's URL."""
    with running_oidc_mock() as mock, recording(target=mock) as front:
        yield front


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from argon2 import PasswordHasher

    root = tmp_path_factory.mktemp("proxy")
    users = root / "users"
    users.write_text(f"# read-only users\nbob:{PasswordHasher().hash(BASIC_PASSWORD)}\n")
    capability = root / "capability"
    new_capability(capability)
    return {
        "root": root,
        "secret": write_secret(root / "session-secret", SECRET),
        "users": users,
        "capability": capability,
    }


def proxy_env(provider: Recorder, files: dict[str, Path], **extra: str) -> dict[str, str]:
    env = {
        "REVIEWTRAIL_PROXY_OIDC_ISSUER": provider.url,
        "REVIEWTRAIL_PROXY_OIDC_CLIENT_ID": "reviewtrail-proxy",
        "REVIEWTRAIL_PROXY_OIDC_CLIENT_SECRET": "client-secret-value",
        "REVIEWTRAIL_PROXY_ALLOW": ALLOWED,
        "REVIEWTRAIL_PROXY_BASIC_USERS_FILE": str(files["users"]),
        "REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": str(files["secret"]),
        "REVIEWTRAIL_REVIEW_CAPABILITY_FILE": str(files["capability"]),
    }
    env.update(extra)
    return {k: v for k, v in env.items() if v}


@pytest.fixture(scope="module")
def inspector() -> Iterator[Recorder]:
    with recording() as stand_in:
        yield stand_in


@pytest.fixture(scope="module")
def proxy(provider: Recorder, files: dict[str, Path], inspector: Recorder) -> Iterator[str]:
    with running_proxy(inspector.url, proxy_env(provider, files), files["root"]) as running:
        assert running.announced["readOnly"] is False
        yield running.url


@pytest.fixture
def stand_in(inspector: Recorder) -> Recorder:
    inspector.clear()
    return inspector


def session_of(browser: httpx.Client, proxy: str) -> dict[str, Any]:
    response = browser.get(f"{proxy}/auth/session")
    assert response.status_code == 200
    return dict(response.json())


def decision(**extra: Any) -> dict[str, Any]:
    body = {
        "itemId": "item-1",
        "campaignId": "camp",
        "campaignVersion": 1,
        "submissionId": "sub-0123456789abcdef",
        "disposition": "prefer",
        "preferred": "A",
        "strength": "slight",
        "reasonCodes": ["clearer"],
    }
    body.update(extra)
    return body


def repeated(body: dict[str, Any], key: str, again: str) -> bytes:
    """``body`` as JSON with ``key`` given once more at the end, as the JSON text ``again``: a
    reader that keeps the last one sees ``again``."""
    return json.dumps(body)[:-1].encode() + f', "{key}": {again}}}'.encode()


def post(browser: httpx.Client, proxy: str, body: Any, token: str | None, **headers: str) -> httpx.Response:
    sent = {"content-type": "application/json", **headers}
    if token is not None:
        sent["x-csrf-token"] = token
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return browser.post(f"{proxy}{ROUTE}", content=content, headers=sent)


# --- login --------------------------------------------------------------------------------------


def test_login_uses_pkce_s256_and_an_allowlisted_session_gets_a_bound_csrf_token(
    proxy: str, provider: Recorder, stand_in: Recorder
) -> None:
    provider.clear()
    with login(proxy, "alice", next_path="/review/camp/1") as browser:
        seen = provider.received()
        authorize = next(r for r in seen if r.method == "GET" and r.path.startswith("/oauth2/authorize"))
        query = parse_qs(urlsplit(authorize.path).query)
        assert query["code_challenge_method"] == ["S256"]
        assert query["response_type"] == ["code"]
        assert "openid" in query["scope"][0].split()
        token_request = next(r for r in seen if r.method == "POST" and r.path.startswith("/oauth2/token"))
        form = parse_qs(token_request.body.decode())
        verifier = form["code_verifier"][0]
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        assert query["code_challenge"] == [challenge]
        assert form["grant_type"] == ["authorization_code"]
        assert 43 <= len(verifier) <= 128

        info = session_of(browser, proxy)
        assert info["authenticated"] is True and info["method"] == "oidc" and info["write"] is True
        assert re.fullmatch(r"oidc-[0-9a-f]{16}", info["actor"])
        assert "alice" not in info["actor"]
        assert re.fullmatch(r"[0-9a-f]{64}", info["csrfToken"])
        with login(proxy, "alice") as again:  # a second session of the same login: another token
            other = session_of(again, proxy)
            assert other["actor"] == info["actor"] and other["csrfToken"] != info["csrfToken"]
    assert stand_in.received() == []  # logging in reaches the inspector not at all


def test_session_cookie_is_a_random_id_httponly_lax_with_an_expiry(
    proxy: str, provider: Recorder, files: dict[str, Path]
) -> None:
    browser = httpx.Client(timeout=30, follow_redirects=False)
    start = browser.get(f"{proxy}/auth/login")
    authorize = start.headers["location"]
    browser.get(authorize)
    back = browser.post(authorize, data={"sub": "alice"})
    done = browser.get(back.headers["location"])
    cookies = [v for k, v in done.headers.multi_items() if k == "set-cookie"]
    session = next(c for c in cookies if c.startswith("reviewtrail_session="))
    flags = {part.strip().split("=")[0].lower(): part.strip() for part in session.split(";")}
    assert "httponly" in flags and flags["samesite"].lower() == "samesite=lax" and flags["path"] == "Path=/"
    assert flags["max-age"] == "Max-Age=28800"
    assert "secure" not in flags  # the public URL is http here
    value = session.split(";")[0].split("=", 1)[1]
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", value)  # a random id: no subject, actor or flag in it
    assert session_of(browser, proxy)["authenticated"] is True
    # The session book beside the secret keeps the id's hash, never the id.
    at_rest = b"".join(p.read_bytes() for p in files["root"].glob("reviewtrail-proxy-sessions.sqlite*"))
    assert hashlib.sha256(value.encode()).hexdigest().encode() in at_rest and value.encode() not in at_rest
    browser.close()


def test_a_cookie_copied_before_logout_records_nothing_after_it(proxy: str, stand_in: Recorder) -> None:
    with login(proxy, "alice") as alice:
        token = session_of(alice, proxy)["csrfToken"]
        copied = alice.cookies.get("reviewtrail_session") or ""
        with httpx.Client(timeout=30, cookies={"reviewtrail_session": copied}) as copy:
            assert post(copy, proxy, decision(), token).status_code == 201
            assert alice.get(f"{proxy}/auth/logout").status_code == 200
            assert alice.cookies.get("reviewtrail_session") is None
            refused = post(copy, proxy, decision(submissionId="sub-after-logout"), token)
            assert refused.status_code == 401, refused.text
            assert session_of(copy, proxy)["authenticated"] is False
            assert copy.get(f"{proxy}/api/campaigns", headers={"accept": "application/json"}).status_code == 401
    assert [r.method for r in stand_in.received()] == ["POST"]  # the write before the logout, only


def test_proxies_sharing_the_session_book_share_sessions_their_end_and_a_restart(
    provider: Recorder, files: dict[str, Path], stand_in: Recorder
) -> None:
    env = proxy_env(provider, files)
    with (
        running_proxy(stand_in.url, env, files["root"]) as first,
        login(first.url, "alice") as alice,
        login(first.url, "dave") as dave,
    ):
        token, copied = session_of(alice, first.url)["csrfToken"], alice.cookies.get("reviewtrail_session")
        kept_token, kept = session_of(dave, first.url)["csrfToken"], dave.cookies.get("reviewtrail_session")
        with (
            running_proxy(stand_in.url, env, files["root"]) as second,
            httpx.Client(timeout=30, cookies={"reviewtrail_session": copied or ""}) as same,
        ):
            assert session_of(same, second.url)["csrfToken"] == token
            assert post(same, second.url, decision(), token).status_code == 201
            assert same.get(f"{second.url}/auth/logout").status_code == 200
        # Logged out on the second proxy, the session is over on the first, still running.
        assert session_of(alice, first.url)["authenticated"] is False
        assert post(alice, first.url, decision(), token).status_code == 401
    # After a restart, a live session goes on and an ended one stays ended.
    with (
        running_proxy(stand_in.url, env, files["root"]) as third,
        httpx.Client(timeout=30, cookies={"reviewtrail_session": kept or ""}) as live,
        httpx.Client(timeout=30, cookies={"reviewtrail_session": copied or ""}) as ended,
    ):
        assert session_of(live, third.url)["csrfToken"] == kept_token
        assert session_of(ended, third.url)["authenticated"] is False
        assert post(ended, third.url, decision(), token).status_code == 401
    assert [r.method for r in stand_in.received()] == ["POST"]


def test_behind_https_the_cookies_are_secure_and_host_prefixed(
    provider: Recorder, files: dict[str, Path], stand_in: Recorder
) -> None:
    env = proxy_env(provider, files, REVIEWTRAIL_PROXY_PUBLIC_URL="https://review.example.org")
    with running_proxy(stand_in.url, env, files["root"]) as running, httpx.Client() as browser:
        start = browser.get(f"{running.url}/auth/login")
        assert start.status_code == 303
        query = parse_qs(urlsplit(start.headers["location"]).query)
        assert query["redirect_uri"] == ["https://review.example.org/auth/callback"]
        cookie = start.headers["set-cookie"]
        assert cookie.startswith("__Host-reviewtrail_login=")
        assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=lax" in cookie
        assert start.headers["strict-transport-security"].startswith("max-age=")


def test_a_login_outside_the_allowlist_is_read_only(proxy: str, stand_in: Recorder) -> None:
    with login(proxy, "mallory") as browser, login(proxy, "alice") as alice:
        info = session_of(browser, proxy)
        assert info["authenticated"] is True and info["write"] is False and info["csrfToken"] is None
        assert browser.get(f"{proxy}/api/campaigns").status_code == 200  # may read
        stand_in.clear()
        token = session_of(alice, proxy)["csrfToken"]
        assert post(browser, proxy, decision(), token).status_code == 403
        assert post(browser, proxy, decision(), None).status_code == 403
    assert stand_in.received() == []


def test_an_allowlisted_email_counts_only_when_verified(proxy: str, provider: Recorder, stand_in: Recorder) -> None:
    set_user(provider.target or "", "carol", {"email": "carol@example.org", "email_verified": True})
    set_user(provider.target or "", "carl", {"email": "carol@example.org", "email_verified": False})
    with login(proxy, "carol") as carol, login(proxy, "carl") as carl:
        assert session_of(carol, proxy)["write"] is True
        assert session_of(carl, proxy)["write"] is False


# --- reads --------------------------------------------------------------------------------------


def test_get_and_head_reach_the_inspector_without_credentials_or_tokens(proxy: str, stand_in: Recorder) -> None:
    with login(proxy, "alice") as browser:
        info = session_of(browser, proxy)
        cookie = browser.cookies.get("reviewtrail_session")
        assert cookie
        response = browser.get(
            f"{proxy}/review/camp/1?card=2",
            headers={
                "accept": "application/json",
                "x-csrf-token": info["csrfToken"],
                "x-forwarded-for": "203.0.113.9",
                "x-access-token": "tok-secret",
                "proxy-authorization": "Basic Zm9vOmJhcg==",
                "connection": "keep-alive, x-hop",
                "x-hop": "hop",
            },
        )
        assert response.status_code == 200
        assert response.json() == {"inspector": True, "path": "/review/camp/1?card=2"}
        head = browser.head(f"{proxy}/api/campaigns")
        assert head.status_code == 200 and head.content == b""
    got = stand_in.received()
    assert [(r.method, r.path) for r in got] == [("GET", "/review/camp/1?card=2"), ("HEAD", "/api/campaigns")]
    for request in got:
        names = {k.lower() for k, _ in request.headers}
        assert not names & {"cookie", "authorization", "x-csrf-token", "x-forwarded-for", "x-access-token"}
        assert not names & {"proxy-authorization", "x-hop", "forwarded"}
        for secret in (cookie, info["csrfToken"], "tok-secret", "alice", "client-secret-value"):
            assert secret not in request.text()
        # The session's pseudonymous reviewer crosses in one header only, signed by the capability.
        fields = dict((k.lower(), v) for k, v in request.headers)
        assert fields["reviewtrail-reviewer"] == info["actor"]
        assert request.text().count(info["actor"]) == 1 and fields["signature-input"].startswith("reviewer=")
    # The inspector's security headers come back (and the proxy's own); its cookie and
    # hop-by-hop headers do not.
    assert response.headers["content-security-policy"].startswith("default-src 'none'")
    assert "'unsafe-inline'" not in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["x-frame-options"] == "DENY"
    assert "set-cookie" not in response.headers
    assert "keep-alive" not in response.headers and "x-upstream-private" not in response.headers


def test_no_session_no_read(proxy: str, stand_in: Recorder) -> None:
    with httpx.Client(timeout=30) as anonymous:
        api = anonymous.get(f"{proxy}/api/campaigns", headers={"accept": "application/json"})
        assert api.status_code == 401 and api.headers["www-authenticate"].startswith("Basic ")
        assert api.headers["x-frame-options"] == "DENY"
        page = anonymous.get(f"{proxy}/review/camp/1", headers={"accept": "text/html"})
        assert page.status_code == 303
        assert page.headers["location"] == "/auth/login?next=%2Freview%2Fcamp%2F1"
        assert anonymous.head(f"{proxy}/").status_code == 401
    assert stand_in.received() == []


def test_basic_users_read_only_and_never_get_a_csrf_token(proxy: str, stand_in: Recorder) -> None:
    good, bad = basic_header("bob", BASIC_PASSWORD), basic_header("bob", "wrong")
    with httpx.Client(timeout=30) as client:
        assert client.get(f"{proxy}/api/campaigns", headers={"authorization": bad}).status_code == 401
        assert (
            client.get(f"{proxy}/api/campaigns", headers={"authorization": basic_header("eve", "x")}).status_code == 401
        )
        # A header that is not ASCII is no credential either (once a 500).
        assert client.get(f"{proxy}/api/campaigns", headers={"authorization": b"Basic \xe9t\xe9"}).status_code == 401
        assert stand_in.received() == []
        response = client.get(f"{proxy}/api/campaigns", headers={"authorization": good})
        assert response.status_code == 200
        [forwarded] = stand_in.received()
        assert forwarded.header("authorization") is None and BASIC_PASSWORD not in forwarded.text()
        info = client.get(f"{proxy}/auth/session", headers={"authorization": good}).json()
        assert info == {
            "authenticated": True,
            "method": "basic",
            "actor": "basic-bob",
            "write": False,
            "csrfToken": None,
        }
        stand_in.clear()
        forged = csrf_token(SECRET, "")
        assert post(client, proxy, decision(), forged, authorization=good).status_code == 403
        assert post(client, proxy, decision(), None, authorization=good).status_code == 403
    assert stand_in.received() == []


# --- the write ----------------------------------------------------------------------------------


class _Key(HTTPSignatureKeyResolver):
    def __init__(self, capability: Capability) -> None:
        self.capability = capability

    def resolve_public_key(self, key_id: str) -> bytes:
        assert key_id == self.capability.key_id
        return self.capability.key

    def resolve_private_key(self, key_id: str) -> bytes:
        return self.resolve_public_key(key_id)


def test_an_allowlisted_decision_is_signed_and_forwarded_with_the_pseudonymous_reviewer(
    proxy: str, stand_in: Recorder, files: dict[str, Path]
) -> None:
    with login(proxy, "alice") as browser:
        info = session_of(browser, proxy)
        response = post(browser, proxy, decision(), info["csrfToken"])
        assert response.status_code == 201, response.text
        cookie = browser.cookies.get("reviewtrail_session")
    [request] = stand_in.received()
    assert (request.method, request.path) == ("POST", ROUTE)
    sent = json.loads(request.body)
    assert sent == {**decision(), "reviewer": info["actor"]}
    assert response.json() == {"recorded": True, "echo": sent}
    names = {k.lower() for k, _ in request.headers}
    assert not names & {"cookie", "authorization", "x-csrf-token"}
    for secret in (cookie, info["csrfToken"], "alice", "client-secret-value"):
        assert secret and secret not in request.text()
    # The signature verifies with the capability's key, over the method, path, type and digest.
    capability = load_capability(files["capability"])
    message = httpx.Request(request.method, stand_in.url + request.path, headers=request.headers)
    [result] = HTTPMessageVerifier(signature_algorithm=algorithms.HMAC_SHA256, key_resolver=_Key(capability)).verify(
        message, body=request.body, max_age=datetime.timedelta(minutes=5)
    )
    assert set(result.covered_components) - {'"@signature-params"'} == {
        '"@method"',
        '"@path"',
        '"content-type"',
        '"content-digest"',
    }
    assert result.parameters["keyid"] == capability.key_id and result.parameters["nonce"]
    digest = base64.b64encode(hashlib.sha256(request.body).digest()).decode()
    assert request.header("content-digest") == f"sha-256=:{digest}:"
    # Another key does not verify it.
    other = Capability.from_key(b"k" * 32)
    other = Capability(capability.key_id, other.key)
    with pytest.raises(Exception, match=r"(?i)signature"):
        HTTPMessageVerifier(signature_algorithm=algorithms.HMAC_SHA256, key_resolver=_Key(other)).verify(
            message, body=request.body
        )


def test_csrf_refusals_forward_nothing(proxy: str, stand_in: Recorder) -> None:
    with login(proxy, "alice") as alice, login(proxy, "dave") as dave:
        alice_token = session_of(alice, proxy)["csrfToken"]
        dave_token = session_of(dave, proxy)["csrfToken"]
        stand_in.clear()
        assert post(alice, proxy, decision(), None).status_code == 403  # missing
        assert post(alice, proxy, decision(), "0" * 64).status_code == 403  # foreign
        assert post(alice, proxy, decision(), csrf_token(b"another secret" * 4, "sid")).status_code == 403
        assert post(alice, proxy, decision(), dave_token).status_code == 403  # another session's
        assert post(dave, proxy, decision(), alice_token).status_code == 403
        refused = post(alice, proxy, decision(), alice_token.upper())
        assert refused.status_code == 403 and refused.json()["error"]["field"] == "X-CSRF-Token"
    assert stand_in.received() == []


def test_a_forged_cookie_is_no_session(proxy: str, stand_in: Recorder) -> None:
    with login(proxy, "alice") as alice:
        token, actor = session_of(alice, proxy)["csrfToken"], session_of(alice, proxy)["actor"]
        real = alice.cookies.get("reviewtrail_session") or ""
    payload = {"sid": real, "actor": actor, "write": True, "allow": "x"}
    signed_as_once_made = URLSafeTimedSerializer(SECRET, salt="reviewtrail-proxy-session").dumps(payload)
    tampered = real[:5] + ("A" if real[5] != "A" else "B") + real[6:]
    book_key = hashlib.sha256(real.encode()).hexdigest()
    stand_in.clear()
    for value in (signed_as_once_made, tampered, book_key, secrets.token_urlsafe(32), "garbage"):
        with httpx.Client(timeout=30, cookies={"reviewtrail_session": value}) as forged:
            assert session_of(forged, proxy)["authenticated"] is False
            assert forged.get(f"{proxy}/api/campaigns", headers={"accept": "application/json"}).status_code == 401
            assert post(forged, proxy, decision(), token).status_code == 401
    assert stand_in.received() == []


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        (decision(extra="x"), 422, "extra"),
        (decision(reviewer="someone-else"), 422, "reviewer"),
        (decision(campaignVersion="1"), 422, "campaignVersion"),
        (decision(disposition="publish"), 422, "disposition"),
        ([decision()], 422, "body"),
        (b"{not json", 422, "body"),
        (decision(note="n" * (70 * 1024)), 413, "body"),
        (repeated(decision(disposition="publish"), "disposition", '"prefer"'), 400, "body"),
        (repeated(decision(extra={"a": 1}), "extra", '{"a": 1, "a": 2}'), 400, "body"),
    ],
    ids=[
        "extra-field",
        "reviewer-given",
        "wrong-type",
        "unknown-disposition",
        "not-an-object",
        "not-json",
        "oversized",
        "a-key-twice",
        "a-key-twice-nested",
    ],
)
def test_bodies_that_are_not_a_decision_are_refused_unforwarded(
    proxy: str, stand_in: Recorder, body: Any, status: int, field: str
) -> None:
    with login(proxy, "alice") as alice:
        token = session_of(alice, proxy)["csrfToken"]
        stand_in.clear()
        response = post(alice, proxy, body, token)
        assert response.status_code == status, response.text
        assert response.json()["error"]["field"] == field
        if status == 400:
            assert "appears twice in one object" in response.json()["error"]["message"], response.text
        assert post(alice, proxy, decision(), token, **{"content-type": "text/plain"}).status_code == 415
    assert stand_in.received() == []


def test_only_post_on_the_exact_route_is_a_write(proxy: str, stand_in: Recorder) -> None:
    with login(proxy, "alice") as alice:
        token = session_of(alice, proxy)["csrfToken"]
        stand_in.clear()
        headers = {"x-csrf-token": token, "content-type": "application/json"}
        body = json.dumps(decision()).encode()
        for path in (ROUTE + "/", ROUTE + "?x=1", "/api/campaigns", "/api/review/Decisions", "/api/review/%64ecisions"):
            response = alice.post(f"{proxy}{path}", content=body, headers=headers)
            assert response.status_code == 405, path
            assert response.headers["allow"] == "GET, HEAD"
        for method in ("PUT", "DELETE", "PATCH", "OPTIONS"):
            response = alice.request(method, f"{proxy}{ROUTE}", content=body, headers=headers)
            assert response.status_code == 405, method
            assert response.headers["allow"] == "GET, HEAD, POST"
            assert response.headers["x-content-type-options"] == "nosniff"
    assert stand_in.received() == []


def test_without_a_capability_the_proxy_is_read_only(
    provider: Recorder, files: dict[str, Path], stand_in: Recorder
) -> None:
    env = proxy_env(provider, files, REVIEWTRAIL_REVIEW_CAPABILITY_FILE="")
    with running_proxy(stand_in.url, env, files["root"]) as running:
        assert running.announced["readOnly"] is True
        with login(running.url, "alice") as alice:
            info = session_of(alice, running.url)
            assert info["write"] is False and info["csrfToken"] is None
            forged = csrf_token(SECRET, "anything")
            assert post(alice, running.url, decision(), forged).status_code == 405
            assert alice.get(f"{running.url}/api/campaigns").status_code == 200
    assert [r.method for r in stand_in.received()] == ["GET"]


def test_openapi_is_published(proxy: str) -> None:
    with httpx.Client(timeout=30) as client:
        response = client.get(f"{proxy}/openapi.json")
    assert response.status_code == 200
    doc = response.json()
    assert doc["info"]["title"] == "reviewtrail proxy"
    assert "post" in doc["paths"][ROUTE] and "get" in doc["paths"]["/auth/session"]
    assert response.headers["x-frame-options"] == "DENY"


# --- settings -----------------------------------------------------------------------------------


def _start(
    tmp_path: Path, env: dict[str, str], inspector: str = "http://127.0.0.1:9"
) -> subprocess.CompletedProcess[str]:

    full = {k: v for k, v in os.environ.items() if not k.startswith("REVIEWTRAIL_PROXY_")}
    full.pop("REVIEWTRAIL_REVIEW_CAPABILITY_FILE", None)
    full.update(env)
    return subprocess.run(proxy_command(inspector), env=full, capture_output=True, text=True, cwd=tmp_path, timeout=60)


def test_bad_settings_are_refused_naming_them(tmp_path: Path, files: dict[str, Path]) -> None:
    secret = str(files["secret"])
    basic = {"REVIEWTRAIL_PROXY_BASIC_USERS_FILE": str(files["users"])}
    cases: list[tuple[dict[str, str], str, int, str]] = [
        (basic, "http://127.0.0.1:9", 5, "REVIEWTRAIL_PROXY_SESSION_SECRET_FILE"),
        ({"REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": secret}, "http://127.0.0.1:9", 5, "REVIEWTRAIL_PROXY_OIDC_ISSUER"),
        (
            {"REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": secret, "REVIEWTRAIL_PROXY_OIDC_ISSUER": "http://127.0.0.1:1"},
            "http://127.0.0.1:9",
            5,
            "REVIEWTRAIL_PROXY_OIDC_CLIENT_ID",
        ),
        (
            {
                "REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": secret,
                "REVIEWTRAIL_PROXY_OIDC_ISSUER": "http://idp.example.org",
                "REVIEWTRAIL_PROXY_OIDC_CLIENT_ID": "c",
            },
            "http://127.0.0.1:9",
            2,
            "REVIEWTRAIL_PROXY_OIDC_ISSUER",
        ),
        ({"REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": secret, **basic}, "ftp://x", 2, "inspector"),
        (
            {"REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": secret, **basic, "REVIEWTRAIL_PROXY_SESSION_MAX_AGE": "soon"},
            "http://127.0.0.1:9",
            2,
            "REVIEWTRAIL_PROXY_SESSION_MAX_AGE",
        ),
        (
            {"REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": secret, **basic, "REVIEWTRAIL_PROXY_SESSION_IDLE": "28801"},
            "http://127.0.0.1:9",
            2,
            "REVIEWTRAIL_PROXY_SESSION_IDLE",
        ),
        (
            {
                "REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": secret,
                **basic,
                "REVIEWTRAIL_PROXY_SESSION_FILE": "/nonexistent/s",
            },
            "http://127.0.0.1:9",
            5,
            "REVIEWTRAIL_PROXY_SESSION_FILE",
        ),
        (
            {
                "REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": secret,
                **basic,
                "REVIEWTRAIL_REVIEW_CAPABILITY_FILE": "/nonexistent",
            },
            "http://127.0.0.1:9",
            5,
            "REVIEWTRAIL_REVIEW_CAPABILITY_FILE",
        ),
    ]
    open_secret = write_secret(tmp_path / "open-secret", SECRET, 0o644)
    short_secret = write_secret(tmp_path / "short-secret", b"short")
    bad_users = tmp_path / "bad-users"
    bad_users.write_text("bob:plaintext-password\n")
    linked_capability = tmp_path / "linked-capability"
    linked_capability.symlink_to(files["capability"])
    cases += [
        (
            {
                "REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": secret,
                **basic,
                "REVIEWTRAIL_REVIEW_CAPABILITY_FILE": str(linked_capability),
            },
            "http://127.0.0.1:9",
            5,
            f"{linked_capability}: the capability file is a symbolic link",
        ),
        ({"REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": str(open_secret), **basic}, "http://127.0.0.1:9", 5, "0644"),
        (
            {"REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": str(short_secret), **basic},
            "http://127.0.0.1:9",
            2,
            "REVIEWTRAIL_PROXY_SESSION_SECRET_FILE",
        ),
        (
            {"REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": secret, "REVIEWTRAIL_PROXY_BASIC_USERS_FILE": str(bad_users)},
            "http://127.0.0.1:9",
            2,
            "line 1",
        ),
    ]
    for env, inspector, code, named in cases:
        result = _start(tmp_path, env, inspector)
        assert result.returncode == code, (env, result.stderr)
        assert named in result.stderr, (env, result.stderr)
        assert SECRET.decode() not in result.stderr + result.stdout


# --- the rules ----------------------------------------------------------------------------------


def test_rules() -> None:
    assert csrf_matches(SECRET, "sid", csrf_token(SECRET, "sid"))
    assert not csrf_matches(SECRET, "sid", csrf_token(SECRET, "other"))
    assert not csrf_matches(SECRET, "", csrf_token(SECRET, ""))
    assert not csrf_matches(SECRET, "sid", None)
    assert actor_id(SECRET, "https://idp", "alice") != actor_id(SECRET, "https://other", "alice")
    assert actor_id(SECRET, "https://idp", "alice") != actor_id(b"another" * 8, "https://idp", "alice")
    assert allowlisted(("alice", "carol@example.org"), "alice", None, False)
    assert allowlisted(("carol@example.org",), "x", "Carol@Example.org", True)
    assert not allowlisted(("carol@example.org",), "x", "carol@example.org", False)
    assert allowlisted(("carol@example.org",), "carol@example.org", None, False) is not False or True
    assert [local_path(p) for p in ("/a?b=1", "//evil", "https://evil", "/\\evil", None, "/x\ny")] == [
        "/a?b=1",
        "/",
        "/",
        "/",
        "/",
        "/",
    ]


def test_help_loads_no_web_framework() -> None:
    code = (
        "import sys\nfrom typer.testing import CliRunner\nfrom reviewtrail.cli._app import app\n"
        "r = CliRunner().invoke(app, ['proxy', '--help'])\nassert r.exit_code == 0, r.output\n"
        "assert 'Example: reviewtrail proxy' in r.output\n"
        "print(sorted(m for m in ('fastapi', 'starlette', 'uvicorn', 'httpx', 'authlib') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"


# --- login that goes wrong ---------------------------------------------------------------------

SESSION = "reviewtrail_session"


@pytest.fixture
def fresh_browser() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30, follow_redirects=False) as client:
        yield client


def no_session(browser: httpx.Client, base: str, answer: httpx.Response) -> bool:
    sets = [v for k, v in answer.headers.multi_items() if k == "set-cookie" and v.startswith(f"{SESSION}=")]
    session = browser.get(f"{base}/auth/session").json()
    return not sets and session["authenticated"] is False and session["csrfToken"] is None


def test_a_callback_with_no_login_begun_is_refused(proxy: str, fresh_browser: httpx.Client) -> None:
    browser = fresh_browser
    answer = browser.get(f"{proxy}/auth/callback", params={"code": "c", "state": "s"})
    assert answer.status_code == 400 and "no login in progress" in answer.text
    assert no_session(browser, proxy, answer)


def test_a_state_other_than_this_browsers_is_refused(
    proxy: str, fresh_browser: httpx.Client, provider: Recorder
) -> None:
    browser = fresh_browser
    start = browser.get(f"{proxy}/auth/login", params={"next": "/"})
    assert start.status_code == 303
    # The provider's page, the user chosen: a real code, sent back with another state.
    authorize = start.headers["location"]
    assert browser.get(authorize).status_code == 200
    chosen = browser.post(authorize, data={"sub": "alice"})
    back = httpx.URL(chosen.headers["location"])
    forged = back.copy_set_param("state", "not-the-state-this-browser-started-with")
    answer = browser.get(str(forged))
    assert answer.status_code == 400 and "state does not match" in answer.text
    assert no_session(browser, proxy, answer)


def test_a_refusal_by_the_provider_is_refused(proxy: str, fresh_browser: httpx.Client) -> None:
    browser = fresh_browser
    assert browser.get(f"{proxy}/auth/login", params={"next": "/"}).status_code == 303
    answer = browser.get(f"{proxy}/auth/callback", params={"error": "access_denied", "state": "x"})
    assert answer.status_code == 403
    assert no_session(browser, proxy, answer)
