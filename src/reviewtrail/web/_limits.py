"""How long and how many connections the inspector and the proxy hold, and how much one client
may log (docs/human-review.md, "Timeouts and connection limits"). Pure rules: the server side is
:mod:`._limits_server`.

Read once from the environment, each a whole number:

- ``REVIEWTRAIL_WEB_HEADER_TIMEOUT``: seconds a request's headers may take, from the
  connection's start or a request's first byte (default 10): then 408 and closed;
- ``REVIEWTRAIL_WEB_IDLE_TIMEOUT``: seconds a kept-alive connection may sit idle (default 5);
- ``REVIEWTRAIL_WEB_BODY_TIMEOUT``: seconds a request's body may take after its headers
  (default 30): then 408 and closed;
- ``REVIEWTRAIL_WEB_MAX_CONNECTIONS_PER_CLIENT``: connections held at once for one client
  address (an IPv6 client's /64) (default 128);
- ``REVIEWTRAIL_WEB_MAX_CONNECTIONS``: connections held at once in all (default: the process's
  descriptor limit less an eighth of it, at least 64, kept for the store, the logs and the
  upstream). A connection past either cap is answered 503 with ``Retry-After`` and closed.

A malformed value is an :class:`~reviewtrail.errors.InvalidInputError` (exit 2) naming its
variable.
"""

from __future__ import annotations

import ipaddress
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

from reviewtrail.errors import InvalidInputError

__all__ = [
    "ConnectionBook",
    "Limits",
    "LogBudget",
    "client_key",
    "descriptor_cap",
    "limits_from_env",
]

HEADER_TIMEOUT = "REVIEWTRAIL_WEB_HEADER_TIMEOUT"
IDLE_TIMEOUT = "REVIEWTRAIL_WEB_IDLE_TIMEOUT"
BODY_TIMEOUT = "REVIEWTRAIL_WEB_BODY_TIMEOUT"
MAX_CONNECTIONS = "REVIEWTRAIL_WEB_MAX_CONNECTIONS"
MAX_PER_CLIENT = "REVIEWTRAIL_WEB_MAX_CONNECTIONS_PER_CLIENT"

_WHOLE = re.compile(r"[0-9]{1,9}", re.ASCII)
_MAX_SECONDS = 3600
UNLIMITED_DESCRIPTORS = 65536  # what an unlimited RLIMIT_NOFILE is taken as


@dataclass(frozen=True)
class Limits:
    """The timeouts (seconds) and connection caps of one server process."""

    max_connections: int
    header_timeout: int = 10
    idle_timeout: int = 5
    body_timeout: int = 30
    max_per_client: int = 128
    max_header_bytes: int = 65536  # an unfinished request head past this is answered 431
    retry_after: int = 5  # seconds, in the 503 of a connection past a cap

    @property
    def lingering(self) -> int:
        """Refused connections kept open a moment so their 503 is read, beyond the cap."""
        return max(16, self.max_connections // 16)


def descriptor_cap(soft_limit: int) -> int:
    """The default global connection cap under a descriptor limit of ``soft_limit`` (negative:
    unlimited): the limit less an eighth of it, and never less than 64 kept back."""
    limit = UNLIMITED_DESCRIPTORS if soft_limit < 0 else soft_limit
    return max(1, limit - max(64, limit // 8))


def _whole(env: Mapping[str, str], name: str, default: int, most: int) -> int:
    text = (env.get(name) or "").strip()
    if not text:
        return default
    if not _WHOLE.fullmatch(text) or not 1 <= int(text) <= most:
        raise InvalidInputError(f"must be a whole number from 1 to {most}, got {text!r}", field=name)
    return int(text)


def limits_from_env(env: Mapping[str, str], soft_limit: int) -> Limits:
    """The limits the environment ``env`` sets, for a process whose descriptor limit is
    ``soft_limit``. The global cap may not exceed the default one (:func:`descriptor_cap`)."""
    cap = descriptor_cap(soft_limit)
    return Limits(
        max_connections=_whole(env, MAX_CONNECTIONS, cap, cap),
        header_timeout=_whole(env, HEADER_TIMEOUT, Limits.header_timeout, _MAX_SECONDS),
        idle_timeout=_whole(env, IDLE_TIMEOUT, Limits.idle_timeout, _MAX_SECONDS),
        body_timeout=_whole(env, BODY_TIMEOUT, Limits.body_timeout, _MAX_SECONDS),
        max_per_client=_whole(env, MAX_PER_CLIENT, Limits.max_per_client, cap),
    )


def client_key(address: str | None) -> str:
    """Whose connection this is, for the caps and the log budget: the IPv4 address, an IPv6
    address's /64 (one host is often given a whole /64), ``-`` when there is none."""
    if not address:
        return "-"
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class ConnectionBook:
    """The connections held, in all and per client: :meth:`admit` one if both caps allow."""

    def __init__(self, total: int, per_client: int) -> None:
        self.total = total
        self.per_client = per_client
        self.held = 0
        self.by_client: dict[str, int] = {}

    def admit(self, client: str) -> bool:
        count = self.by_client.get(client, 0)
        if self.held >= self.total or count >= self.per_client:
            return False
        self.held += 1
        self.by_client[client] = count + 1
        return True

    def release(self, client: str) -> None:
        count = self.by_client.get(client, 0)
        if count <= 0:
            return
        self.held -= 1
        if count == 1:
            del self.by_client[client]
        else:
            self.by_client[client] = count - 1


class LogBudget:
    """Log lines per client: a burst of ``burst`` lines, then one every ``every`` seconds; the
    rest are dropped and counted, and the count is told with the client's next line. At most
    ``clients`` clients are remembered (the longest quiet forgotten first)."""

    def __init__(self, burst: int = 20, every: float = 10.0, clients: int = 4096) -> None:
        self.burst = burst
        self.every = every
        self.clients = clients
        self._state: OrderedDict[str, tuple[float, float, int]] = OrderedDict()  # tokens, when, dropped

    def allow(self, client: str, now: float) -> tuple[bool, int]:
        """Whether ``client`` may log a line at ``now`` (seconds, never decreasing), and how many
        of its lines were dropped since its last one."""
        tokens, then, dropped = self._state.pop(client, (float(self.burst), now, 0))
        tokens = min(float(self.burst), tokens + max(0.0, now - then) / self.every)
        if tokens >= 1.0:
            self._remember(client, (tokens - 1.0, now, 0))
            return True, dropped
        self._remember(client, (tokens, now, dropped + 1))
        return False, 0

    def _remember(self, client: str, state: tuple[float, float, int]) -> None:
        self._state[client] = state
        while len(self._state) > self.clients:
            self._state.popitem(last=False)
