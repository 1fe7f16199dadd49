"""The Anthropic Messages API."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from reviewtrail.errors import BackendUnavailableError, ConfigError
from reviewtrail.models._completion import Completion, check_messages, check_settings
from reviewtrail.models._http import Clock, HttpBackend, Sleep
from reviewtrail.models._retry import RetryPolicy

if TYPE_CHECKING:
    import httpx

__all__ = ["ANTHROPIC_VERSION", "DEFAULT_MAX_TOKENS", "AnthropicBackend"]

ANTHROPIC_VERSION = "2023-06-01"
# The Messages API requires max_tokens; this is sent (and recorded) when settings omit it.
DEFAULT_MAX_TOKENS = 1024
_RESERVED = frozenset({"model", "messages", "system", "stream"})


class AnthropicBackend(HttpBackend):
    """``POST {base_url}/v1/messages`` with ``x-api-key`` and ``anthropic-version`` headers.

    The system prompt is the top-level ``system`` field; ``settings`` go into the body
    unchanged, with ``max_tokens`` defaulting to :data:`DEFAULT_MAX_TOKENS`. Usage, the
    5-minute and 1-hour cache writes included, is read with ``genai-prices``' extractor.
    ``retry``, ``sleep`` and ``clock``: see :class:`~reviewtrail.models._http.HttpBackend`.
    """

    label = "Anthropic endpoint"
    provider = "anthropic"

    def __init__(
        self,
        api_key: str,
        model: str,
        base_url: str = "https://api.anthropic.com",
        *,
        timeout: float = 120.0,
        client: httpx.Client | None = None,
        retry: RetryPolicy | None = None,
        sleep: Sleep | None = None,
        clock: Clock | None = None,
    ) -> None:
        if not api_key:
            raise ConfigError("an Anthropic API key is required", field="api_key")
        super().__init__(
            base_url, model, api_key=api_key, timeout=timeout, client=client, retry=retry, sleep=sleep, clock=clock
        )

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        system: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> Completion:
        plain = check_messages(messages)
        sent = {"max_tokens": DEFAULT_MAX_TOKENS, **check_settings(settings, _RESERVED)}
        body: dict[str, Any] = {"model": self.model, "messages": plain, **sent}
        if system is not None:
            body["system"] = system
        headers = {
            "content-type": "application/json",
            "accept": "application/json",
            "x-api-key": self._api_key or "",
            "anthropic-version": ANTHROPIC_VERSION,
        }
        url = f"{self.base_url}/v1/messages"
        data, attempts = self._post(url, headers, body)
        blocks = data.get("content")
        if not isinstance(blocks, list):
            raise BackendUnavailableError(f"{self.label} at {url} answered without a content list")
        text = "".join(_block_text(b) for b in blocks)
        return self._completion(
            data, text, response_format="anthropic", finish_reason=data.get("stop_reason"), attempts=attempts,
            settings=sent,
        )  # fmt: skip


def _block_text(block: Any) -> str:
    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
        return str(block["text"])
    return ""
