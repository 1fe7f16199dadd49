"""Token counts of a response body, read with ``genai-prices``' own usage extraction.

The response *format* decides how usage is read (the Anthropic Messages format, the OpenAI
chat-completions format that many servers speak, or the OpenAI Responses format); the *provider*
decides the price, later and separately, so a model no price list knows still has its tokens counted.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["RESPONSE_FORMATS", "ResponseFormat", "Tokens", "extract_tokens"]

ResponseFormat = Literal["anthropic", "openai-chat", "openai-responses"]
# response format -> (genai-prices provider whose extractor reads it, its API flavor)
_EXTRACTORS: dict[str, tuple[str, str]] = {
    "anthropic": ("anthropic", "default"),
    "openai-chat": ("openai", "chat"),
    "openai-responses": ("openai", "responses"),
}
RESPONSE_FORMATS: tuple[ResponseFormat, ...] = ("anthropic", "openai-chat", "openai-responses")


@dataclass(frozen=True)
class Tokens:
    """Counts read from one response; ``None`` where the response did not report them.

    ``input_tokens`` counts every input token, cached ones included (Anthropic reports its
    uncached input apart; the extraction adds the cache reads and writes back in).
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    cache_write_5m_tokens: int | None = None
    cache_write_1h_tokens: int | None = None


def extract_tokens(body: Any, response_format: ResponseFormat) -> Tokens:
    """The token counts of a decoded response ``body`` of the given format.

    Uses the usage extractor that ``genai-prices`` ships for that format (the one
    ``genai_prices.extract_usage`` runs), without its model lookup. A body whose usage is
    missing or malformed (a count that is not a non-negative whole number) yields all
    ``None``: counts are never guessed.
    """
    if response_format not in _EXTRACTORS:
        raise ValueError(f"{response_format!r} is not a known response format ({', '.join(RESPONSE_FORMATS)})")
    provider_id, flavor = _EXTRACTORS[response_format]
    provider = _provider(provider_id)
    try:
        _, usage = provider.extract_usage(body, api_flavor=flavor)
    except (ValueError, TypeError, LookupError):
        return Tokens()
    reported = usage._reported_values()  # what the body said, nothing inferred
    counts = {key: _whole(value) for key, value in reported.items()}
    if any(value is None for value in counts.values()):
        return Tokens()
    return Tokens(
        input_tokens=counts.get("input_tokens"),
        output_tokens=counts.get("output_tokens"),
        cache_read_tokens=counts.get("cache_read_tokens"),
        cache_write_tokens=counts.get("cache_write_tokens"),
        cache_write_5m_tokens=counts.get("cache_write_5m_tokens"),
        cache_write_1h_tokens=counts.get("cache_write_1h_tokens"),
    )


@functools.cache
def _provider(provider_id: str) -> Any:
    """The bundled snapshot's provider (looked up once: the lookup matches every provider's patterns)."""
    from genai_prices import data_snapshot

    return data_snapshot.get_snapshot().find_provider(None, provider_id, None)


def _whole(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    return None
