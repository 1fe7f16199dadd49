"""When and how long to wait before retrying a model call: pure rules, no I/O, no clock of their own.

A 429 or 5xx answer is retried. The wait is the server's ``Retry-After`` when it gives one
(delta-seconds or an HTTP-date), else exponential backoff with some jitter; no wait is longer
than the policy's ``max_delay``, and a server that asks for more is not retried at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from reviewtrail._retry_after import parse_retry_after
from reviewtrail.errors import ConfigError

# parse_retry_after (reviewtrail._retry_after's) is listed for the face alone, which re-exports its own modules.
__all__ = ["MAX_ATTEMPTS_LIMIT", "RetryPolicy", "parse_retry_after", "retry_wait", "retryable"]

MAX_ATTEMPTS_LIMIT = 20


@dataclass(frozen=True)
class RetryPolicy:
    """How a backend retries an answer of HTTP 429 or 5xx.

    ``max_attempts`` counts every request, the first included (1: never retry). Retry ``n``
    waits ``base_delay * 2**(n-1)`` seconds, capped at ``max_delay`` and shortened at random
    by up to ``jitter`` of itself, unless the server sent ``Retry-After``: then exactly that,
    provided it is at most ``max_delay`` (if not, the call fails without waiting).
    """

    max_attempts: int = 4
    base_delay: float = 1.0
    max_delay: float = 60.0
    jitter: float = 0.25

    def __post_init__(self) -> None:
        if isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int):
            raise ConfigError("must be a whole number", field="retry.max_attempts")
        if not 1 <= self.max_attempts <= MAX_ATTEMPTS_LIMIT:
            raise ConfigError(f"must be from 1 to {MAX_ATTEMPTS_LIMIT}", field="retry.max_attempts")
        for name in ("base_delay", "max_delay"):
            value = getattr(self, name)
            if not _finite(value) or value < 0:
                raise ConfigError("must be a finite number of seconds, 0 or more", field=f"retry.{name}")
        if self.max_delay < self.base_delay:
            raise ConfigError(f"must be at least base_delay ({self.base_delay:g} s)", field="retry.max_delay")
        if not _finite(self.jitter) or not 0 <= self.jitter <= 1:
            raise ConfigError("must be a fraction from 0 to 1", field="retry.jitter")


def retryable(status: int) -> bool:
    """Whether an answer of this HTTP status is worth another attempt: 429 and every 5xx."""
    return status == 429 or 500 <= status <= 599


def retry_wait(
    policy: RetryPolicy, retry_number: int, retry_after: str | None, *, now: datetime, u: float
) -> float | None:
    """Seconds to wait before retry ``retry_number`` (1 for the first retry), or ``None``:
    the server asked for a longer wait than ``policy.max_delay`` allows, so do not retry.

    ``u`` in [0, 1) draws the jitter of the backoff; a usable ``Retry-After`` is kept exactly.
    """
    if retry_after is not None:
        asked = parse_retry_after(retry_after, now=now)
        if asked is not None:
            return asked if asked <= policy.max_delay else None
    exponent = min(retry_number - 1, 64)  # 2**64 seconds is past any max_delay already
    ceiling = min(policy.base_delay * 2.0**exponent, policy.max_delay)
    return ceiling * (1.0 - policy.jitter * min(max(u, 0.0), 1.0))


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
