"""An OIDC provider inside the test process: discovery, JWKS, and a token endpoint that answers
every code it issued with an ID token signed by its own key. The proxy reads discovery and JWKS
with httpx (given :meth:`FakeProvider.transport`) and exchanges the code with Authlib, which uses
httpx2: :meth:`FakeProvider.install` routes httpx2's requests here for one test.

Like many real providers it does not enforce PKCE: it records the requests it gets, so a test
sees what the proxy sent, and whatever the proxy refuses is refused by the proxy's own checks.
Every part a login depends on can be changed by a test: the discovery document, the ID token's
claims, the key that signs it, the status of each endpoint.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey, KeySet

__all__ = ["ISSUER", "FakeProvider"]

ISSUER = "https://idp.example"
_KEY = ECKey.generate_key("P-256", parameters={"kid": "provider-key"})


@dataclass
class FakeProvider:
    """The provider; ``document`` replaces its discovery document (any JSON value), ``claims``
    is merged into each ID token (a None value removes that claim), ``signing_key`` signs them,
    ``status`` maps a path to the status it answers with instead, ``redirects`` a path to where it
    sends the client instead."""

    client_id: str = "reviewtrail-proxy"
    issuer: str = ISSUER  # what it names itself in its discovery document and ID tokens
    subject: str = "alice"
    document: Any = None
    claims: dict[str, Any] = field(default_factory=dict)
    signing_key: ECKey = field(default_factory=lambda: _KEY)
    id_token: bool = True
    status: dict[str, int] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    requests: list[Any] = field(default_factory=list)
    _nonces: dict[str, str] = field(default_factory=dict)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(lambda request: self._handle(request, httpx))

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Answer every request httpx2 sends (Authlib's token request) until the test ends."""
        mock = httpx2.MockTransport(lambda request: self._handle(request, httpx2))

        async def handle(_transport: Any, request: httpx2.Request) -> httpx2.Response:
            return await mock.handle_async_request(request)

        monkeypatch.setattr(httpx2.AsyncHTTPTransport, "handle_async_request", handle)

    def discovery(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": ISSUER + "/authorize",
            "token_endpoint": ISSUER + "/token",
            "jwks_uri": ISSUER + "/jwks",
        }

    def authorize(self, url: str) -> str:
        """The code the provider sends the browser back with, after it followed ``url``."""
        query = parse_qs(urlsplit(url).query)
        code = secrets.token_urlsafe(16)
        self._nonces[code] = query["nonce"][0]
        return code

    def paths(self) -> list[str]:
        return [request.url.path for request in self.requests]

    def token_form(self) -> dict[str, list[str]]:
        """The form of the last token request."""
        request = next(r for r in reversed(self.requests) if r.url.path == "/token")
        return parse_qs(request.content.decode())

    def _handle(self, request: Any, http: Any) -> Any:
        self.requests.append(request)
        path = request.url.path
        if path in self.redirects:
            return http.Response(302, headers={"location": self.redirects[path]})
        if path in self.status:
            return http.Response(self.status[path], json={"error": "server_error"})
        if path in ("/.well-known/openid-configuration", "/elsewhere/.well-known/openid-configuration"):
            return http.Response(200, json=self.discovery() if self.document is None else self.document)
        if path == "/jwks":
            return http.Response(200, json=KeySet([_KEY]).as_dict(private=False))
        if path == "/token":
            code = parse_qs(request.content.decode()).get("code", [""])[0]
            if code not in self._nonces:
                return http.Response(400, json={"error": "invalid_grant"})
            now = int(time.time())
            claims = {
                "iss": self.issuer,
                "aud": self.client_id,
                "sub": self.subject,
                "nonce": self._nonces.pop(code),
                "iat": now,
                "exp": now + 300,
                "email": "alice@example.org",
                "email_verified": True,
            } | self.claims
            token = jwt.encode(
                {"alg": "ES256", "kid": "provider-key"},
                {k: v for k, v in claims.items() if v is not None},
                self.signing_key,
            )
            body = {"access_token": "access-" + code, "token_type": "Bearer", "expires_in": 300}
            return http.Response(200, json=body | ({"id_token": token} if self.id_token else {}))
        return http.Response(404, content=json.dumps({"error": "not_found"}).encode())
