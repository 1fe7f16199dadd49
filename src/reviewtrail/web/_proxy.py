"""The public proxy's application: the one face of the inspector for other machines
(docs/human-review.md, "The public proxy").

- ``/auth/login``, ``/auth/callback``, ``/auth/logout``: OIDC login and logout (which ends the
  session in the session book, so a copy of its cookie is refused too); ``/auth/session``
  says who the browser is, whether it may write, and (to a write session only) its CSRF token.
- Any other GET or HEAD, from a signed-in browser (an OIDC session, or HTTP Basic), is forwarded
  to the inspector with an allowlist of headers: never a cookie, an Authorization header or a
  token. For a session that may write, the proxy adds the session's pseudonymous reviewer,
  signed with the review capability (:mod:`._reviewer_header`), so the Review page can lease the
  reviewer their next card. The inspector's response comes back without its hop-by-hop headers and cookies. Each
  session's reads are limited (:mod:`._rate_limit`): beyond its bucket, 429 with ``Retry-After``,
  answered after a pause of up to a second.
- ``POST /api/review/decisions``, exactly, from a write session with its CSRF token in
  ``X-CSRF-Token``: a bounded body checked against the decision schema, the session's
  pseudonymous reviewer added, signed with the review capability and forwarded. Without a
  capability the route is answered 405, like every other method and path
  (:class:`ProxyGuard`, before any route runs).
- Every response carries the security headers of :mod:`._guard`. OpenAPI at ``/openapi.json``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Annotated, Any
from urllib.parse import quote

import httpx
from fastapi import FastAPI, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response

from reviewtrail._version import __version__
from reviewtrail.web._capability import DECISION_ROUTE
from reviewtrail.web._guard import SECURITY_HEADERS, Receive, Scope, Send, bounded_body, plain_response, with_headers
from reviewtrail.web._proxy_auth import BasicAuth, LoginFailed, OidcLogin, Session, Sessions
from reviewtrail.web._proxy_rules import (
    BODY_LIMIT,
    RefusedBody,
    csrf_matches,
    decision_body,
    forwarded_request_headers,
    forwarded_response_headers,
)
from reviewtrail.web._proxy_settings import ProxySettings
from reviewtrail.web._rate_limit import REFUSAL_PAUSE, ReadBuckets, counted, retry_after

__all__ = ["CSRF_HEADER", "ProxyGuard", "Signer", "create_proxy_app"]

CSRF_HEADER = "x-csrf-token"
Signer = Callable[[str, bytes], Mapping[str, str]]  # (url, body) -> the signature's headers
ReaderSigner = Callable[[str, str, str], Mapping[str, str]]  # (method, url, reviewer) -> its headers
ASGIApp = Callable[[Scope, Receive, Send], Any]
_WRITE = DECISION_ROUTE.encode()


def _no_cookies() -> CookieJar:
    return CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))


class ProxyGuard:
    """ASGI middleware: security headers on every response; GET and HEAD anywhere, POST on the
    decision route exactly (no query) when the proxy can write, anything else 405 unread."""

    def __init__(self, app: ASGIApp, *, writable: bool, https: bool) -> None:
        self.app = app
        self.writable = writable
        extra = (("strict-transport-security", "max-age=31536000"),) if https else ()
        self.headers = [(k.encode(), v.encode()) for k, v in (*SECURITY_HEADERS, *extra)]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        send_with_headers = with_headers(send, self.headers)

        method = scope["method"]
        write = method == "POST" and scope.get("raw_path", b"") == _WRITE and not scope.get("query_string")
        if method not in {"GET", "HEAD"} and not (write and self.writable):
            allow = b"GET, HEAD, POST" if write or (self.writable and method != "POST") else b"GET, HEAD"
            text = (
                f"the proxy accepts GET and HEAD, and POST on {DECISION_ROUTE} only"
                if self.writable
                else "read-only: no review capability is configured, so the proxy accepts GET and HEAD only"
            )
            await plain_response(send_with_headers, 405, text, [(b"allow", allow)])
            return
        await self.app(scope, receive, send_with_headers)


def create_proxy_app(
    settings: ProxySettings,
    *,
    public_url: str,
    sign: Signer | None,
    transport: httpx.AsyncBaseTransport | None = None,
    clock: Callable[[], float] = time.time,
    sign_reader: ReaderSigner | None = None,
) -> Any:
    """The proxy for ``settings``, reached by browsers at ``public_url``; ``sign`` signs a
    decision for the inspector (None: read-only); ``sign_reader`` vouches for a write session's
    reviewer on the GET and HEAD it forwards; ``clock`` times the sessions. An ASGI
    application."""
    https = public_url.startswith("https://")
    sessions = Sessions.of(settings, secure=https, clock=clock)
    basic = BasicAuth(settings.basic_users, settings.session_secret)
    oidc = (
        OidcLogin(settings.oidc, public_url.rstrip("/") + "/auth/callback", transport=transport)
        if settings.oidc
        else None
    )
    reads = ReadBuckets(settings.read_limit)
    upstream = httpx.AsyncClient(
        base_url=settings.inspector,
        cookies=_no_cookies(),  # a cookie the inspector sets is never kept, so never sent back
        transport=transport,
        timeout=30,
        follow_redirects=False,
        headers={"user-agent": f"reviewtrail-proxy/{__version__}", "accept-encoding": "identity"},
    )
    app = FastAPI(
        title="reviewtrail proxy",
        version=__version__,
        description="The public face of a reviewtrail inspector: OIDC login, read-only HTTP Basic, "
        "GET/HEAD forwarded, and one signed write route for review decisions.",
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",
    )

    def who(request: Request) -> Session | None:
        header = request.headers.get("authorization")
        if header is not None:
            return basic.check(header)  # credentials given are the ones used, right or wrong
        return sessions.read(request.cookies.get(sessions.cookie))

    def unauthenticated(request: Request) -> Response:
        if oidc is not None and "text/html" in request.headers.get("accept", "") and request.method == "GET":
            target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return RedirectResponse("/auth/login?next=" + quote(target, safe=""), status_code=303)
        ways = ["GET /auth/login (OIDC)"] if oidc is not None else []
        ways += ["HTTP Basic (read-only)"] if basic else []
        headers = {"www-authenticate": 'Basic realm="reviewtrail", charset="UTF-8"'} if basic else {}
        return PlainTextResponse(f"sign in first: {' or '.join(ways)}\n", status_code=401, headers=headers)

    @app.get("/auth/login", summary="Start an OIDC login", response_class=RedirectResponse, status_code=303)
    async def login(next_path: Annotated[str | None, Query(alias="next")] = None) -> Response:
        if oidc is None:
            return PlainTextResponse("no OIDC provider is configured\n", status_code=404)
        try:
            url, kept = await oidc.begin(next_path)
        except LoginFailed as exc:
            return PlainTextResponse(f"login failed: {exc}\n", status_code=502)
        response = RedirectResponse(url, status_code=303)
        response.set_cookie(sessions.login_cookie, sessions.login_state(kept), **sessions.cookie_options(600))
        return response

    @app.get("/auth/callback", summary="Where the OIDC provider sends the browser back")
    async def callback(request: Request, code: str = "", state: str = "", error: str | None = None) -> Response:
        kept = sessions.read_login_state(request.cookies.get(sessions.login_cookie))
        if oidc is None or kept is None:
            return PlainTextResponse("no login in progress in this browser\n", status_code=400)
        if error is not None:
            return PlainTextResponse("the provider refused the login\n", status_code=403)
        try:
            identity = await oidc.finish(code, state, kept)
        except LoginFailed as exc:
            return PlainTextResponse(f"login failed: {exc}\n", status_code=400)
        _, value = sessions.new(identity)
        response = RedirectResponse(kept.get("next", "/"), status_code=303)
        response.delete_cookie(sessions.login_cookie, path="/", secure=https, httponly=True, samesite="lax")
        response.set_cookie(sessions.cookie, value, **sessions.cookie_options(settings.session_max_age))
        return response

    @app.get("/auth/logout", summary="End this browser's session")
    async def logout(request: Request) -> Response:
        sessions.end(request.cookies.get(sessions.cookie))  # a copy of the cookie ends with it
        response = PlainTextResponse("signed out\n")
        response.delete_cookie(sessions.cookie, path="/", secure=https, httponly=True, samesite="lax")
        return response

    @app.get("/auth/session", summary="Who this browser is, and its CSRF token if it may write")
    async def session_info(request: Request) -> dict[str, Any]:
        session = who(request)
        return {
            "authenticated": session is not None,
            "method": session.method if session else None,
            "actor": session.actor if session else None,
            "write": bool(sessions.csrf(session, writable=sign is not None)),
            "csrfToken": sessions.csrf(session, writable=sign is not None),
        }

    @app.post(DECISION_ROUTE, summary="Record a review decision (signed and forwarded to the inspector)")
    async def post_decision(request: Request) -> Response:
        session = who(request)
        if session is None:
            return unauthenticated(request)
        if sign is None or sessions.csrf(session, writable=True) is None:
            return _refused(403, "session", "this session may not record decisions (read-only)")
        if not csrf_matches(settings.session_secret, session.session_id, request.headers.get(CSRF_HEADER)):
            return _refused(403, "X-CSRF-Token", "missing or not this session's CSRF token")
        if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            return _refused(415, "content-type", "must be application/json")
        raw = await bounded_body(request, BODY_LIMIT)
        if raw is None:
            return _refused(413, "body", f"a decision body is at most {BODY_LIMIT} bytes")
        try:
            body = decision_body(raw, session.actor)
        except RefusedBody as exc:
            return _refused(exc.status, exc.field, str(exc))
        url = settings.inspector + DECISION_ROUTE
        try:
            response = await upstream.post(DECISION_ROUTE, content=body, headers=dict(sign(url, body)))
        except httpx.HTTPError:
            return _refused(502, "inspector", "the inspector is not reachable")
        return _passed_back(response, head=False)

    @app.api_route("/{path:path}", methods=["GET", "HEAD"], summary="Forwarded to the inspector (GET and HEAD)")
    async def forward(request: Request, path: str) -> Response:
        session = who(request)
        if session is None:
            return unauthenticated(request)
        raw_path = request.scope.get("raw_path") or request.url.path.encode()
        if counted(raw_path.decode("latin-1")):
            wait = reads.take(f"{session.method}:{session.session_id or session.actor}")
            if wait:
                # Answered after a pause (no work meanwhile): a client that loops on refusals
                # costs the proxy a few answers a second per connection, not as many as it can send.
                await asyncio.sleep(min(wait, REFUSAL_PAUSE))
                text = "too many reads from this session; try again later\n"
                return PlainTextResponse(text, status_code=429, headers={"retry-after": retry_after(wait)})
        target = raw_path.decode("latin-1") + (f"?{request.url.query}" if request.url.query else "")
        headers = forwarded_request_headers(request.headers.items())
        if sign_reader is not None and sign is not None and sessions.csrf(session, writable=True) is not None:
            headers |= sign_reader(request.method, settings.inspector + target, session.actor)
        try:
            response = await upstream.request(request.method, target, headers=headers)
        except httpx.HTTPError:
            return PlainTextResponse("the inspector is not reachable\n", status_code=502)
        return _passed_back(response, head=request.method == "HEAD")

    return ProxyGuard(app, writable=sign is not None, https=https)


def _refused(status: int, field: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"field": field, "message": message}}, status_code=status)


def _passed_back(response: httpx.Response, *, head: bool) -> Response:
    headers = forwarded_response_headers(response.headers.multi_items())
    if head and "content-length" in response.headers:
        headers.append(("content-length", response.headers["content-length"]))
    out = Response(content=b"" if head else response.content, status_code=response.status_code)
    if head:
        del out.headers["content-length"]
    for name, value in headers:
        out.headers.append(name, value)
    return out
