"""Who is asking the public proxy (docs/human-review.md, "The public proxy").

- **Sessions** are kept server-side, in the session book (:mod:`._proxy_sessions`): the cookie
  carries only a random session id (HttpOnly, SameSite=Lax, ``Secure`` and ``__Host-`` named when
  the public URL is https), and the book keeps its hash, with an idle and an absolute expiry
  checked on every request. An unknown, logged-out or expired id is no session.
- **OIDC login** (Authlib's OAuth 2 client, joserfc for the ID token): the authorization code
  flow with PKCE S256. The proxy checks its own side of PKCE, since a provider may not: the
  authorization URL must carry the S256 challenge of the verifier it keeps, and the token
  request must carry that verifier. The ID token's signature (the provider's JWKS), issuer,
  audience, expiry and nonce are checked before its subject is used. A login on the allowlist
  gets write state; any other login is read-only.
- **HTTP Basic**: users from a file of argon2 hashes, read-only, never a CSRF token.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

import httpx
from itsdangerous import BadSignature, URLSafeTimedSerializer

from reviewtrail.web._proxy_rules import actor_id, allowlisted, csrf_token, local_path
from reviewtrail.web._proxy_sessions import SessionBook, SessionRow, alive, session_key, touch_every
from reviewtrail.web._proxy_settings import DEFAULT_SESSION_IDLE, BasicUsers, OidcSettings, ProxySettings

__all__ = ["BasicAuth", "Identity", "LoginFailed", "OidcLogin", "Session", "Sessions"]

LOGIN_MAX_AGE = 600  # seconds between leaving for the provider and coming back
_BASIC_CACHE = 256
_SESSION_ID_BYTES = 32
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{43}")  # what secrets.token_urlsafe(32) gives


@dataclass(frozen=True)
class Session:
    """A signed-in browser: its session's key in the session book (the hash of the random id its
    cookie carries), how it signed in, the pseudonymous actor it writes as, and whether it may
    write."""

    session_id: str
    method: Literal["oidc", "basic"]
    actor: str
    write: bool


@dataclass(frozen=True)
class Identity:
    """A login the provider vouched for (held only while the session is made)."""

    issuer: str
    subject: str
    email: str | None
    email_verified: bool


class LoginFailed(Exception):
    """An OIDC login that did not complete; the message is safe to show (no token in it)."""


class Sessions:
    """Making, reading and ending sessions (kept in a :class:`SessionBook`), and the login cookie.
    ``clock`` gives the time in seconds (the tests give their own)."""

    def __init__(
        self,
        secret: bytes,
        *,
        secure: bool,
        max_age: int,
        allow: tuple[str, ...],
        idle: int = DEFAULT_SESSION_IDLE,
        book: SessionBook | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.secret = secret
        self.secure = secure
        self.max_age = max_age
        self.idle = idle
        self.allow = allow
        self.book = book if book is not None else SessionBook(None)
        self.clock = clock
        prefix = "__Host-" if secure else ""
        self.cookie = prefix + "reviewtrail_session"
        self.login_cookie = prefix + "reviewtrail_login"
        self._logins = URLSafeTimedSerializer(secret, salt="reviewtrail-proxy-login")
        # A write session names the allowlist it was granted under: a changed allowlist ends it.
        self._allow_digest = hashlib.sha256("\n".join(sorted(allow)).encode()).hexdigest()[:16]

    @classmethod
    def of(cls, settings: ProxySettings, *, secure: bool, clock: Callable[[], float] = time.time) -> Sessions:
        """The sessions of a proxy with ``settings``, in the session book it names."""
        return cls(
            settings.session_secret,
            secure=secure,
            max_age=settings.session_max_age,
            allow=settings.allow,
            idle=settings.session_idle,
            book=SessionBook(settings.session_file),
            clock=clock,
        )

    def new(self, identity: Identity) -> tuple[Session, str]:
        """A fresh session for ``identity``, kept in the book, and its cookie value (the random
        session id, which the book does not keep)."""
        write = allowlisted(self.allow, identity.subject, identity.email, identity.email_verified)
        session_id = secrets.token_urlsafe(_SESSION_ID_BYTES)
        now = self.clock()
        row = SessionRow(
            session_key(session_id),
            actor_id(self.secret, identity.issuer, identity.subject),
            write,
            self._allow_digest,
            now,
            now,
        )
        self.book.add(row, idle=self.idle, max_age=self.max_age, now=now)
        return Session(row.key, "oidc", row.actor, write), session_id

    def read(self, value: str | None) -> Session | None:
        """The session of cookie ``value``; None for a missing, unknown, ended or expired one."""
        if not value or not _SESSION_ID.fullmatch(value):
            return None
        row = self.book.get(session_key(value))
        if row is None:
            return None
        now = self.clock()
        if not alive(row.created, row.seen, now, idle=self.idle, max_age=self.max_age):
            self.book.prune(now=now)
            return None
        if now - row.seen >= touch_every(self.idle) and not self.book.touch(
            row, idle=self.idle, max_age=self.max_age, now=now
        ):
            return None  # ended meanwhile (a logout elsewhere)
        return Session(row.key, "oidc", row.actor, row.write and row.allow == self._allow_digest)

    def end(self, value: str | None) -> bool:
        """End the session of cookie ``value`` (a logout); whether there was one."""
        if not value or not _SESSION_ID.fullmatch(value):
            return False
        return self.book.remove(session_key(value), now=self.clock())

    def csrf(self, session: Session | None, *, writable: bool) -> str | None:
        """The CSRF token a session is given: only an OIDC session with write state, and only
        when the proxy can write at all."""
        if session is None or not writable or session.method != "oidc" or not session.write:
            return None
        return csrf_token(self.secret, session.session_id)

    def login_state(self, state: dict[str, str]) -> str:
        return self._logins.dumps(state)

    def read_login_state(self, value: str | None) -> dict[str, str] | None:
        if not value:
            return None
        try:
            data = self._logins.loads(value, max_age=LOGIN_MAX_AGE)
        except BadSignature:
            return None
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            return None
        return {str(k): v for k, v in data.items()}

    def cookie_options(self, max_age: int) -> dict[str, Any]:
        return {"max_age": max_age, "path": "/", "secure": self.secure, "httponly": True, "samesite": "lax"}


class BasicAuth:
    """Read-only users checked against argon2 hashes; a verified header is remembered (by an HMAC
    of it) so a page's requests do not each pay for argon2."""

    def __init__(self, users: BasicUsers, secret: bytes) -> None:
        from argon2 import PasswordHasher

        self.users = dict(users)
        self.secret = secret
        self._hasher = PasswordHasher()
        self._dummy = self._hasher.hash(secrets.token_urlsafe(16))
        self._known: OrderedDict[str, str] = OrderedDict()

    def __bool__(self) -> bool:
        return bool(self.users)

    def check(self, header: str | None) -> Session | None:
        """The read-only session of an ``Authorization: Basic`` header with a known user and
        the right password; None otherwise."""
        from argon2.exceptions import Argon2Error, InvalidHashError

        if not header or not self.users or header[:6].lower() != "basic ":
            return None
        key = hmac.new(self.secret, header.encode("utf-8", "replace"), hashlib.sha256).hexdigest()
        name = self._known.get(key)
        if name is None:
            try:
                name, _, password = base64.b64decode(header[6:].strip(), validate=True).decode().partition(":")
            except ValueError:  # not base64 (binascii.Error), not ASCII, not UTF-8 (UnicodeDecodeError)
                return None
            hashed = self.users.get(name)
            try:
                self._hasher.verify(hashed or self._dummy, password)
            except (Argon2Error, InvalidHashError):
                return None
            if hashed is None:
                return None
            self._known[key] = name
            while len(self._known) > _BASIC_CACHE:
                self._known.popitem(last=False)
        return Session("", "basic", "basic-" + name, False)


class OidcLogin:
    """The authorization code flow with PKCE S256 against one provider."""

    def __init__(self, settings: OidcSettings, redirect_uri: str, *, transport: httpx.AsyncBaseTransport | None = None):
        self.settings = settings
        self.redirect_uri = redirect_uri
        self._transport = transport
        self._metadata: dict[str, Any] | None = None

    def _http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=self._transport, timeout=15, follow_redirects=False)

    async def metadata(self) -> dict[str, Any]:
        """The provider's discovery document (fetched once); its issuer must be the one configured."""
        if self._metadata is None:
            url = self.settings.issuer.rstrip("/") + "/.well-known/openid-configuration"
            try:
                async with self._http() as http:
                    response = await http.get(url)
                    response.raise_for_status()
                    data = response.json()
            except (httpx.HTTPError, ValueError) as exc:
                raise LoginFailed(f"cannot read the provider's configuration at {url}: {exc}") from exc
            if not isinstance(data, dict) or data.get("issuer") != self.settings.issuer:
                raise LoginFailed(f"the provider at {url} names another issuer than {self.settings.issuer}")
            self._metadata = data
        return self._metadata

    def _client(self, metadata: dict[str, Any]) -> Any:
        from authlib.integrations.httpx_client import AsyncOAuth2Client  # type: ignore[import-untyped]

        return AsyncOAuth2Client(
            client_id=self.settings.client_id,
            client_secret=self.settings.client_secret,
            token_endpoint_auth_method="client_secret_basic" if self.settings.client_secret else "none",
            scope="openid email",
            redirect_uri=self.redirect_uri,
            code_challenge_method="S256",
            token_endpoint=metadata.get("token_endpoint"),
            timeout=15,
        )

    async def begin(self, next_path: str | None) -> tuple[str, dict[str, str]]:
        """The provider's authorization URL to send the browser to, and the state to keep in the
        login cookie until it comes back."""
        from authlib.common.security import generate_token  # type: ignore[import-untyped]
        from authlib.oauth2.rfc7636 import create_s256_code_challenge  # type: ignore[import-untyped]

        metadata = await self.metadata()
        verifier, nonce = generate_token(64), generate_token(32)
        client = self._client(metadata)
        try:
            url, state = client.create_authorization_url(
                metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce
            )
        finally:
            await client.aclose()
        query = parse_qs(urlsplit(url).query)
        if query.get("code_challenge_method") != ["S256"] or query.get("code_challenge") != [
            create_s256_code_challenge(verifier)
        ]:
            raise LoginFailed("the authorization request does not carry the S256 PKCE challenge")
        return url, {"state": state, "verifier": verifier, "nonce": nonce, "next": local_path(next_path)}

    async def finish(self, code: str, state: str, kept: dict[str, str]) -> Identity:
        """The identity of a login that came back with ``code`` and ``state``, given the state
        kept when it began."""
        if not code or not hmac.compare_digest(state.encode(), kept.get("state", "").encode()):
            raise LoginFailed("the login's state does not match the one this browser started with")
        metadata = await self.metadata()
        verifier = kept["verifier"]

        def carries_verifier(response: Any) -> Any:
            form = parse_qs(response.request.content.decode("ascii", "replace"))
            if form.get("code_verifier") != [verifier] or form.get("grant_type") != ["authorization_code"]:
                raise LoginFailed("the token request does not carry the login's PKCE verifier")
            return response

        client = self._client(metadata)
        client.register_compliance_hook("access_token_response", carries_verifier)
        try:
            token = await client.fetch_token(
                metadata["token_endpoint"], code=code, code_verifier=verifier, grant_type="authorization_code"
            )
        except LoginFailed:
            raise
        except Exception as exc:  # Authlib's errors and httpx's: the login did not complete
            raise LoginFailed(f"the provider refused the code: {type(exc).__name__}") from exc
        finally:
            await client.aclose()
        return await self._identity(metadata, token.get("id_token"), kept["nonce"])

    async def _identity(self, metadata: dict[str, Any], id_token: Any, nonce: str) -> Identity:
        from joserfc import jwt
        from joserfc.errors import JoseError
        from joserfc.jwk import KeySet

        if not isinstance(id_token, str):
            raise LoginFailed("the provider gave no ID token")
        try:
            async with self._http() as http:
                response = await http.get(metadata["jwks_uri"])
                response.raise_for_status()
                keys = KeySet.import_key_set(response.json())
            claims = jwt.decode(id_token, keys).claims
            jwt.JWTClaimsRegistry(
                iss={"essential": True, "value": self.settings.issuer},
                aud={"essential": True, "value": self.settings.client_id},
                nonce={"essential": True, "value": nonce},
                sub={"essential": True},
                exp={"essential": True},
            ).validate(claims)
        except (httpx.HTTPError, ValueError, KeyError, JoseError) as exc:
            raise LoginFailed(f"the ID token is not valid: {type(exc).__name__}") from exc
        subject, email = claims.get("sub"), claims.get("email")
        if not isinstance(subject, str) or not subject:
            raise LoginFailed("the ID token names no subject")
        return Identity(
            self.settings.issuer,
            subject,
            email if isinstance(email, str) else None,
            claims.get("email_verified") is True,
        )
