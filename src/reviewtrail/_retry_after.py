"""The HTTP ``Retry-After`` header (RFC 9110 §10.2.3), read the same way by every client here."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

__all__ = ["parse_retry_after"]

_DELTA_SECONDS = re.compile(r"[0-9]+", re.ASCII)
_DIGITS_LIMIT = 15  # longer delta-seconds are "forever" (and would not fit a float exactly)


def parse_retry_after(value: str, *, now: datetime) -> float | None:
    """Seconds to wait from a ``Retry-After`` value, or ``None`` when it is neither form.

    Delta-seconds are ASCII digits only (``"1.5"`` or ``"-1"`` are not); an HTTP-date (IMF
    fixdate, RFC 850 or asctime form, taken as UTC) gives the time left until it, 0 when it
    has passed. An absurdly long delta is ``math.inf``. ``now`` must be timezone-aware.
    """
    text = value.strip()
    if _DELTA_SECONDS.fullmatch(text):
        return float(int(text)) if len(text) <= _DIGITS_LIMIT else math.inf
    try:
        moment = parsedate_to_datetime(text)
    except (ValueError, TypeError, IndexError, OverflowError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max((moment - now).total_seconds(), 0.0)
