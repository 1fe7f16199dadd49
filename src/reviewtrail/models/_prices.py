"""Prices from the ``genai-prices`` snapshot bundled with that package; unknown stays unknown."""

from __future__ import annotations

from datetime import datetime

from reviewtrail.models._records import Cost, PromptManifest, TokenUsage

__all__ = ["price", "price_usage", "reprice", "split_adds_up"]


def split_adds_up(total: int | None, five_minute: int | None, one_hour: int | None) -> bool:
    """Whether the 5-minute and 1-hour cache writes fit the total: never more than it, and
    exactly it when both are given."""
    if total is None:
        return True
    if five_minute is not None and one_hour is not None:
        return five_minute + one_hour == total
    return (five_minute or 0) + (one_hour or 0) <= total


def price(
    provider: str | None,
    model: str | None,
    input_tokens: int | None,
    output_tokens: int | None,
    *,
    cache_read_tokens: int | None = None,
    cache_write_tokens: int | None = None,
    cache_write_5m_tokens: int | None = None,
    cache_write_1h_tokens: int | None = None,
    at: datetime | None = None,
) -> Cost:
    """The USD cost of one call, from the prices bundled with ``genai-prices``.

    ``input_tokens`` counts every input token, cached ones included (the cache counts say
    how many of them were read from or written to a prompt cache; 5-minute and 1-hour
    writes have their own rates, 1.25x and 2x base input at Anthropic). Returns
    ``Cost(amount=None, source="unknown")`` when the provider is not given or not known,
    the model is not priced, a token count is missing, or the counts contradict each
    other: a price is never guessed from the model name alone. ``at`` picks the price in
    force at that moment (default: now). Works offline: the bundled snapshot is used,
    never a download.
    """
    if not provider or not model or input_tokens is None or output_tokens is None:
        return Cost.unknown()
    if not split_adds_up(cache_write_tokens, cache_write_5m_tokens, cache_write_1h_tokens):
        return Cost.unknown()
    from genai_prices import Usage, calc_price

    try:
        usage = Usage(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=cache_read_tokens,
            cache_write_tokens=cache_write_tokens,
            cache_write_5m_tokens=cache_write_5m_tokens,
            cache_write_1h_tokens=cache_write_1h_tokens,
        )
        calc = calc_price(usage, model, provider_id=provider, genai_request_timestamp=at)
    except (LookupError, ValueError, ArithmeticError):
        return Cost.unknown()
    if calc.total_price < 0 or not calc.total_price.is_finite():
        return Cost.unknown()
    return Cost(amount=format(calc.total_price.normalize(), "f"), source="genai-prices")


def price_usage(provider: str | None, model: str | None, usage: TokenUsage, *, at: datetime | None = None) -> Cost:
    """:func:`price` of the counts a record holds."""
    return price(
        provider,
        model,
        usage.input_tokens,
        usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        cache_write_5m_tokens=usage.cache_write_5m_tokens,
        cache_write_1h_tokens=usage.cache_write_1h_tokens,
        at=at,
    )


def reprice(manifest: PromptManifest, *, at: datetime | None = None) -> Cost:
    """The cost of a recorded call, priced again from what its manifest holds.

    Uses the recorded provider, the model that answered and the token counts (cache split
    included), at the moment the call started unless ``at`` says otherwise. A manifest
    without a provider (written before providers were recorded, or of a scripted or
    unpriced endpoint) is priced as unknown.
    """
    return price_usage(
        manifest.provider,
        manifest.reported_model or manifest.model,
        manifest.usage,
        at=at or manifest.started_at,
    )
