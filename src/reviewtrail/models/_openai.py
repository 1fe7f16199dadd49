"""Any endpoint that speaks the OpenAI chat-completions format (OpenAI, vLLM, llama.cpp, OpenRouter...)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from reviewtrail.errors import BackendUnavailableError
from reviewtrail.models._completion import Completion, check_messages, check_settings
from reviewtrail.models._http import Clock, HttpBackend, Sleep
from reviewtrail.models._retry import RetryPolicy

if TYPE_CHECKING:
    import httpx

__all__ = ["OpenAICompatibleBackend"]

_RESERVED = frozenset({"model", "messages", "stream"})
# Hosts whose prices genai-prices knows under a provider id; any other host is priced only
# when the caller names the provider (a local server running "gpt-4o" is not OpenAI).
_KNOWN_HOSTS = {"api.openai.com": "openai"}


class OpenAICompatibleBackend(HttpBackend):
    """``POST {base_url}/chat/completions`` with a bearer key (omitted when ``api_key`` is ``None``).

    ``settings`` (temperature, max_tokens, ...) go into the request body unchanged. The
    system prompt is sent as a leading ``system`` message. ``provider`` is the
    ``genai-prices`` provider id for pricing; by default it is ``"openai"`` for
    ``api.openai.com`` and unknown for any other host.
    Usage is read with ``genai-prices``' chat-completions extractor. ``retry``, ``sleep``
    and ``clock``: see :class:`~reviewtrail.models._http.HttpBackend`.
    """

    label = "OpenAI-compatible endpoint"

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        model: str,
        *,
        provider: str | None = None,
        timeout: float = 120.0,
        client: httpx.Client | None = None,
        retry: RetryPolicy | None = None,
        sleep: Sleep | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(
            base_url, model, api_key=api_key, timeout=timeout, client=client, retry=retry, sleep=sleep, clock=clock
        )
        self.provider = provider if provider is not None else _KNOWN_HOSTS.get(self.endpoint_host)

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        system: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> Completion:
        plain = check_messages(messages)
        sent = check_settings(settings, _RESERVED)
        if system is not None:
            plain = [{"role": "system", "content": system}, *plain]
        headers = {"content-type": "application/json", "accept": "application/json"}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        url = f"{self.base_url}/chat/completions"
        data, attempts = self._post(url, headers, {"model": self.model, "messages": plain, **sent})
        text = _text(data, f"{self.label} at {url}")
        finish_reason = data["choices"][0].get("finish_reason")
        return self._completion(
            data, text, response_format="openai-chat", finish_reason=finish_reason, attempts=attempts, settings=sent
        )


def _text(data: dict[str, Any], where: str) -> str:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise BackendUnavailableError(f"{where} answered without choices[0]")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise BackendUnavailableError(f"{where} answered without choices[0].message")
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    raise BackendUnavailableError(f"{where} answered with choices[0].message.content of an unknown shape")
