"""Prices from the ``genai-prices`` snapshot bundled with that package; unknown stays unknown."""

from __future__ import annotations

from datetime import datetime

from reviewtrail.models._records import Cost

__all__ = ["price"]


def price(
    provider: str | None,
    model: str | None,
    input_tokens: int | None,
    output_tokens: int | None,
    *,
    cache_read_tokens: int | None = None,
    cache_write_tokens: int | None = None,
    at: datetime | None = None,
) -> Cost:
    """The USD cost of one call, from the prices bundled with ``genai-prices``.

    ``input_tokens`` counts every input token, cached ones included (the cache counts say
    how many of them were read from or written to a prompt cache). Returns
    ``Cost(amount=None, source="unknown")`` when the provider is not given or not known,
    the model is not priced, or a token count is missing: a price is never guessed from
    the model name alone. ``at`` picks the price in force at that moment (default: now).
    Works offline: the bundled snapshot is used, never a download.
    """
    if not provider or not model or input_tokens is None or output_tokens is None:
        return Cost.unknown()
    from genai_prices import Usage, calc_price

    try:
        usage = Usage(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=cache_read_tokens,
            cache_write_tokens=cache_write_tokens,
        )
        calc = calc_price(usage, model, provider_id=provider, genai_request_timestamp=at)
    except (LookupError, ValueError):
        return Cost.unknown()
    if calc.total_price < 0 or not calc.total_price.is_finite():
        return Cost.unknown()
    return Cost(amount=format(calc.total_price.normalize(), "f"), source="genai-prices")
