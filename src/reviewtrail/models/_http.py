"""Shared plumbing of the HTTP backends: one POST, every failure as BackendUnavailableError."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Self

from reviewtrail._retry_after import parse_retry_after
from reviewtrail.errors import BackendUnavailableError, ConfigError
from reviewtrail.models._completion import Completion, text_or_none
from reviewtrail.models._records import HttpAttempt
from reviewtrail.models._retry import RetryPolicy, retry_wait, retryable
from reviewtrail.models._usage import ResponseFormat, extract_tokens

if TYPE_CHECKING:
    import httpx

__all__ = ["Clock", "HttpBackend", "Sleep", "endpoint_parts"]

_SNIPPET = 300
_RETRY_AFTER_KEPT = 200  # characters of a Retry-After value kept on the record

Sleep = Callable[[float], None]
Clock = Callable[[], datetime]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def endpoint_parts(base_url: str) -> tuple[str, str]:
    """``(base URL without trailing slash, host[:port])`` of an http(s) URL without credentials. The
    port is left out only when it is HTTPS's 443 (so ``http://host`` is ``host:80``)."""
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
    port = url.port if url.port is not None else (443 if url.scheme == "https" else 80)
    if (url.scheme, port) != ("https", 443):
        host = f"{host}:{port}"
    return str(url).rstrip("/"), host


class HttpBackend:
    """Owns an ``httpx.Client`` (created on first use unless one is passed), the retries and
    the error mapping, for ``model`` at ``base_url`` (checked by :func:`endpoint_parts`).

    An answer of HTTP 429 or 5xx is retried as ``retry`` says (:class:`RetryPolicy`), waiting
    with ``sleep`` and reading HTTP-date ``Retry-After`` values against ``clock``; both are
    arguments so that callers (and tests) decide how time passes. Messages name the endpoint
    and the failure, never the API key: any echo of the key in a server's error body is masked.
    """

    label = "model endpoint"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None,
        timeout: float,
        client: httpx.Client | None,
        retry: RetryPolicy | None = None,
        sleep: Sleep | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.base_url, self.endpoint_host = endpoint_parts(base_url)
        self.model = model
        self._api_key = api_key
        self._timeout = timeout
        self._client = client
        self._owns_client = client is None
        self.retry = retry if retry is not None else RetryPolicy()
        self._sleep: Sleep = sleep if sleep is not None else time.sleep
        self._clock: Clock = clock if clock is not None else _utc_now

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, model={self.model!r})"

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

    def _post(
        self, url: str, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[dict[str, Any], tuple[HttpAttempt, ...]]:
        """The decoded JSON object answered to ``body``, and every attempt it took."""
        where = f"{self.label} at {url}"
        attempts: list[HttpAttempt] = []
        while True:
            response = self._send(url, headers, body, where)
            status = response.status_code
            if not retryable(status) or len(attempts) + 1 >= self.retry.max_attempts:
                attempts.append(HttpAttempt(status=status))
                break
            retry_after = response.headers.get("retry-after")
            now = self._clock()
            wait = retry_wait(self.retry, len(attempts) + 1, retry_after, now=now, u=random.random())  # noqa: S311
            kept = None if retry_after is None else retry_after[:_RETRY_AFTER_KEPT]
            if wait is None:  # the server asked for more than the longest wait allowed
                asked = parse_retry_after(retry_after or "", now=now)
                raise BackendUnavailableError(
                    f"{where} answered HTTP {status}: {self._error_detail(response)}; it asked to wait "
                    f"{asked:.0f} s, more than the {self.retry.max_delay:g} s allowed"
                )
            wait_ms = round(wait * 1000)
            attempts.append(HttpAttempt(status=status, retry_after=kept, wait_ms=wait_ms))
            self._sleep(wait_ms / 1000)
        if status >= 400:
            tries = f" ({len(attempts)} attempts)" if len(attempts) > 1 else ""
            raise BackendUnavailableError(f"{where} answered HTTP {status}: {self._error_detail(response)}{tries}")
        try:
            data = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise BackendUnavailableError(f"{where} answered with a body that is not JSON") from exc
        if not isinstance(data, dict):
            raise BackendUnavailableError(f"{where} answered with JSON that is not an object")
        return data, tuple(attempts)

    def _completion(
        self,
        data: dict[str, Any],
        text: str,
        *,
        response_format: ResponseFormat,
        finish_reason: object,
        attempts: tuple[HttpAttempt, ...],
        settings: dict[str, Any],
    ) -> Completion:
        """The answer ``text`` of the body ``data``, with the model, id and token counts it reports."""
        tokens = extract_tokens(data, response_format)
        return Completion(
            text=text,
            model_reported=text_or_none(data.get("model")),
            input_tokens=tokens.input_tokens,
            output_tokens=tokens.output_tokens,
            cache_read_tokens=tokens.cache_read_tokens,
            cache_write_tokens=tokens.cache_write_tokens,
            cache_write_5m_tokens=tokens.cache_write_5m_tokens,
            cache_write_1h_tokens=tokens.cache_write_1h_tokens,
            response_id=text_or_none(data.get("id")),
            finish_reason=text_or_none(finish_reason),
            attempts=attempts,
            raw=data,
            settings=settings,
        )

    def _send(self, url: str, headers: dict[str, str], body: dict[str, Any], where: str) -> httpx.Response:
        import httpx

        try:
            return self._http().post(url, headers=headers, json=body)
        except httpx.TimeoutException as exc:
            raise BackendUnavailableError(f"{where} did not answer within {self._timeout:g} s") from exc
        except httpx.HTTPError as exc:
            detail = self._mask(str(exc)) or type(exc).__name__
            raise BackendUnavailableError(f"cannot reach {where}: {detail}") from exc

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
