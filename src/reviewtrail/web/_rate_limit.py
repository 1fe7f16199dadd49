"""The public proxy's read limit (docs/human-review.md, "The public proxy"): each signed-in
session (an OIDC session, or a Basic user) has a token bucket for the inspector's reads, ``burst``
requests at once and ``rate`` a second after that; a read beyond it is answered 429 with
``Retry-After`` and never reaches the inspector, after a pause of up to :data:`REFUSAL_PAUSE`
seconds (the time until the next read would be granted), so that a client looping on refusals
sends a few a second on each connection. Static files, the OpenAPI description, the
campaign list, a campaign's progress and the store's health cost little and are not counted.

- ``REVIEWTRAIL_PROXY_READ_RATE``: reads a second per session (default 5);
- ``REVIEWTRAIL_PROXY_READ_BURST``: reads at once per session (default 30).

The rules are pure: the clock is given (:class:`ReadBuckets` takes one).
"""

from __future__ import annotations

import math
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from reviewtrail.errors import InvalidInputError

__all__ = [
    "READ_BURST",
    "READ_RATE",
    "REFUSAL_PAUSE",
    "ReadBuckets",
    "ReadLimit",
    "counted",
    "read_limit",
    "retry_after",
]

READ_RATE = "REVIEWTRAIL_PROXY_READ_RATE"
READ_BURST = "REVIEWTRAIL_PROXY_READ_BURST"
REFUSAL_PAUSE = 1.0  # seconds, at most, before a refusal is answered
_MOST_SESSIONS = 10_000  # buckets kept; the one used longest ago goes first (and starts full again)
_NUMBER = re.compile(r"[0-9]{1,6}(\.[0-9]{1,6})?", re.ASCII)
# Reads that cost little: counted by no bucket.
_FREE = re.compile(r"/(|health|api/health|api/campaigns|openapi\.json|api/review/[^/]+/[^/]+/progress|static/.*)")


@dataclass(frozen=True)
class ReadLimit:
    """``rate`` reads a second per session once ``burst`` reads at once are spent."""

    rate: float = 5.0
    burst: int = 30


def read_limit(env: Mapping[str, str]) -> ReadLimit:
    """The read limit of environment-style ``env``: a rate from 0.001 to 1000 reads a second and
    a burst from 1 to 10000 (exit 2 naming the variable otherwise)."""
    limit = ReadLimit()
    rate_text = (env.get(READ_RATE) or "").strip()
    burst_text = (env.get(READ_BURST) or "").strip()
    rate, burst = limit.rate, limit.burst
    if rate_text:
        if not _NUMBER.fullmatch(rate_text) or not 0.001 <= float(rate_text) <= 1000:
            raise InvalidInputError(
                f"{rate_text!r} is not a number of reads a second from 0.001 to 1000", field=READ_RATE
            )
        rate = float(rate_text)
    if burst_text:
        if not burst_text.isascii() or not burst_text.isdigit() or not 1 <= int(burst_text) <= 10_000:
            raise InvalidInputError(f"{burst_text!r} is not a whole number of reads from 1 to 10000", field=READ_BURST)
        burst = int(burst_text)
    return ReadLimit(rate, burst)


def counted(raw_path: str) -> bool:
    """Whether a read of ``raw_path`` (the request's path as sent, no query) is counted by the
    session's bucket: every path but the few free ones, written plainly (no percent-escape, no
    ``.`` or ``..`` segment, no empty segment, no backslash, which could name another route)."""
    segments = raw_path.split("/")[1:]
    plain = not ("%" in raw_path or "\\" in raw_path or any(s in {"", ".", ".."} for s in segments[:-1]))
    plain = plain and segments[-1:] not in ([".."], ["."])
    return not (plain and _FREE.fullmatch(raw_path))


def retry_after(wait: float) -> str:
    """``Retry-After`` delta-seconds for a wait of ``wait`` seconds: whole seconds, at least 1."""
    return str(max(1, math.ceil(wait)))


class ReadBuckets:
    """One token bucket per session key, under ``limit``, on ``clock`` (seconds, monotonic)."""

    def __init__(self, limit: ReadLimit, clock: Callable[[], float] = time.monotonic, most: int = _MOST_SESSIONS):
        self._limit = limit
        self._clock = clock
        self._most = most
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key -> (tokens, at)

    def take(self, key: str) -> float:
        """Spend one read of ``key``'s bucket: 0 when there was one, else the seconds until there is
        (nothing is spent)."""
        now = self._clock()
        tokens, at = self._buckets.pop(key, (float(self._limit.burst), now))
        tokens = min(float(self._limit.burst), tokens + max(0.0, now - at) * self._limit.rate)
        wait = 0.0
        if tokens >= 1:
            tokens -= 1
        else:
            wait = (1 - tokens) / self._limit.rate
        self._buckets[key] = (tokens, now)
        while len(self._buckets) > self._most:
            self._buckets.popitem(last=False)
        return wait
