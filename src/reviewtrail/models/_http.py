"""Shared plumbing of the HTTP backends: one POST, every failure as BackendUnavailableError."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Self

from reviewtrail.errors import BackendUnavailableError, ConfigError

if TYPE_CHECKING:
    import httpx

__all__ = ["HttpBackend", "endpoint_parts"]

_SNIPPET = 300


def endpoint_parts(base_url: str) -> tuple[str, str]:
    """``(base URL without trailing slash, host[:port])`` of an http(s) URL without credentials."""
    import httpx  # lazy: keeps ``import reviewtrail.models`` cheap for the CLI

    try:
        url = httpx.URL(base_url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise ConfigError("is not a URL", field="base_url") from exc
    if url.userinfo:
        raise ConfigError("must not hold credentials; pass api_key instead", field="base_url")
    if url.scheme not in ("http", "https") or not url.host:
        raise ConfigError(f"{base_url!r} is not an http:// or https:// URL with a host", field="base_url")
    if url.query or url.fragment:
        raise ConfigError("must not have a query or fragment", field="base_url")
    host = f"[{url.host}]" if ":" in url.host else url.host  # IPv6 literal
    if url.port is not None:
        host = f"{host}:{url.port}"
    return str(url).rstrip("/"), host


class HttpBackend:
    """Owns an ``httpx.Client`` (created on first use unless one is passed) and the error mapping.

    Messages name the endpoint and the failure, never the API key: any echo of the key
    in a server's error body is masked.
    """

    label = "model endpoint"

    def __init__(self, *, api_key: str | None, timeout: float, client: httpx.Client | None) -> None:
        self._api_key = api_key
        self._timeout = timeout
        self._client = client
        self._owns_client = client is None

    def _http(self) -> httpx.Client:
        if self._client is None:
            import httpx

            self._client = httpx.Client(timeout=self._timeout)
        return self._client

    def close(self) -> None:
        """Close the HTTP client this backend created (a client passed in is left open)."""
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _post(self, url: str, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
        import httpx

        where = f"{self.label} at {url}"
        try:
            response = self._http().post(url, headers=headers, json=body)
        except httpx.TimeoutException as exc:
            raise BackendUnavailableError(f"{where} did not answer within {self._timeout:g} s") from exc
        except httpx.HTTPError as exc:
            detail = self._mask(str(exc)) or type(exc).__name__
            raise BackendUnavailableError(f"cannot reach {where}: {detail}") from exc
        if response.status_code >= 400:
            raise BackendUnavailableError(
                f"{where} answered HTTP {response.status_code}: {self._error_detail(response)}"
            )
        try:
            data = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise BackendUnavailableError(f"{where} answered with a body that is not JSON") from exc
        if not isinstance(data, dict):
            raise BackendUnavailableError(f"{where} answered with JSON that is not an object")
        return data

    def _error_detail(self, response: httpx.Response) -> str:
        text = ""
        try:
            data = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            data = None
        if isinstance(data, dict):
            err = data.get("error")
            if isinstance(err, dict) and isinstance(err.get("message"), str):
                text = err["message"]
            elif isinstance(err, str):
                text = err
        if not text:
            text = response.text.strip()
        text = self._mask(" ".join(text.split()))
        if len(text) > _SNIPPET:
            text = text[:_SNIPPET] + "…"
        return text or response.reason_phrase or "no detail"

    def _mask(self, text: str) -> str:
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return text
