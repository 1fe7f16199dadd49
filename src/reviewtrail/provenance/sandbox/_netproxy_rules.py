"""The allowlist's rules, without I/O: which (host, port) a sandbox may reach, and at which address.

An ``--allow`` entry is ``host`` or ``host:port`` (``[v6]:port`` for an IPv6 literal); a
bare host allows ports 80 and 443 (:data:`DEFAULT_PORTS`). ``*.example.org`` allows every
subdomain of example.org (not example.org itself). Names compare case-insensitively,
without a trailing dot. A request naming an IP address is allowed only when that very
literal is listed.

Addresses: a listed *name* is resolved by the host proxy, which then connects only to an
address it checked (no second lookup the code could race). Loopback, private, link-local,
shared (100.64/10), multicast, reserved and unspecified addresses, and every address of the
host's own interfaces, are refused, so a listed name that resolves to them (by accident or
by DNS rebinding) reaches nothing. Two explicit exceptions: an entry that is an IP literal
(the user named the address), and a name pinned with ``--allow-resolve host=IP`` (the user
named the address; the proxy connects there without any lookup). Tests use the latter to
serve an allowlisted name from a loopback alias such as 127.0.0.2.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from reviewtrail.errors import InvalidInputError

__all__ = [
    "DEFAULT_PORTS",
    "AllowEntry",
    "IPAddress",
    "NetPolicy",
    "address_refusal",
    "parse_allow_entry",
    "parse_target",
]

DEFAULT_PORTS = (80, 443)
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_SHARED = ipaddress.ip_network("100.64.0.0/10")


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _name(host: str, field: str) -> str:
    host = host.strip().rstrip(".").lower()
    if _literal(host) is not None:
        return host
    label_ok = all(p and len(p) <= 63 and p.replace("-", "").replace("_", "").isalnum() for p in host.split("."))
    if not host or len(host) > 253 or not host.isascii() or not label_ok:
        raise InvalidInputError(f"{host!r} is not a host name or IP address", field=field)
    return host


def _port(text: str, field: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise InvalidInputError(f"{text!r} is not a port (1-65535)", field=field)
    return int(text)


def parse_target(text: str, field: str = "allow") -> tuple[str, int | None]:
    """``host``, ``host:port``, ``[v6]`` or ``[v6]:port`` -> (normalized host, port or None)."""
    text = text.strip()
    if text.startswith("["):
        inner, sep, rest = text[1:].partition("]")
        if not sep or _literal(inner) is None or (rest and not rest.startswith(":")):
            raise InvalidInputError(f"{text!r} is not [IPv6] or [IPv6]:port", field=field)
        return str(ipaddress.ip_address(inner)), (_port(rest[1:], field) if rest else None)
    if text.count(":") > 1:  # a bare IPv6 literal
        if _literal(text) is None:
            raise InvalidInputError(f"{text!r} is not a host, host:port or [IPv6]:port", field=field)
        return str(ipaddress.ip_address(text)), None
    host, sep, port = text.partition(":")
    return _name(host, field), (_port(port, field) if sep else None)


@dataclass(frozen=True)
class AllowEntry:
    """One ``--allow`` entry: a name, ``*.suffix`` or an IP literal, and its ports."""

    text: str
    host: str
    ports: tuple[int, ...]
    wildcard: bool = False

    @property
    def literal(self) -> bool:
        return _literal(self.host) is not None

    def matches(self, host: str, port: int) -> bool:
        if port not in self.ports:
            return False
        if self.wildcard:
            return host.endswith("." + self.host)
        return host == self.host


def parse_allow_entry(text: str) -> AllowEntry:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInputError("an --allow entry must be host or host:port", field="allow")
    wildcard = text.strip().startswith("*.")
    host, port = parse_target(text.strip()[2:] if wildcard else text)
    if wildcard and _literal(host) is not None:
        raise InvalidInputError(f"{text!r}: a wildcard needs a domain name", field="allow")
    return AllowEntry(text.strip(), host, (port,) if port else DEFAULT_PORTS, wildcard)


def address_refusal(ip: IPAddress, host_addresses: Iterable[IPAddress] = ()) -> str | None:
    """Why the proxy must not connect to ``ip`` (None when it may)."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    kinds = [
        ("loopback", ip.is_loopback),
        ("unspecified", ip.is_unspecified),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("shared (carrier-grade NAT)", isinstance(ip, ipaddress.IPv4Address) and ip in _SHARED),
        ("reserved", ip.is_reserved),
        ("private", ip.is_private),
        ("non-global", not ip.is_global),
    ]
    for kind, hit in kinds:
        if hit:
            return f"{ip} is a {kind} address"
    if ip in set(host_addresses):
        return f"{ip} is an address of this host"
    return None


@dataclass(frozen=True)
class NetPolicy:
    """The allowlist of one run, and the pinned addresses (``--allow-resolve``)."""

    entries: tuple[AllowEntry, ...]
    pins: Mapping[str, IPAddress] = field(default_factory=dict)

    @classmethod
    def parse(cls, allowlist: Iterable[str], resolve: Mapping[str, str] | None = None) -> NetPolicy:
        entries = tuple(parse_allow_entry(e) for e in allowlist)
        pins: dict[str, IPAddress] = {}
        for name, address in (resolve or {}).items():
            host, port = parse_target(name, "allow_resolve")
            ip = _literal(address.strip()) if isinstance(address, str) else None
            if port is not None or _literal(host) is not None:
                raise InvalidInputError(f"{name!r}: pin a host name, without a port", field="allow_resolve")
            if ip is None:
                raise InvalidInputError(f"{address!r} (for {name}) is not an IP address", field="allow_resolve")
            if not any(not e.wildcard and not e.literal and e.host == host for e in entries):
                raise InvalidInputError(f"{host} is not in the allowlist (add --allow {host})", field="allow_resolve")
            pins[host] = ip
        return cls(entries, pins)

    @property
    def texts(self) -> list[str]:
        return [e.text for e in self.entries]

    def pins_json(self) -> dict[str, str]:
        return {host: str(ip) for host, ip in sorted(self.pins.items())}

    def check(self, host: str, port: int) -> tuple[AllowEntry | None, str]:
        """The entry that allows ``host:port`` and why, or None and why not."""
        try:
            host, _ = parse_target(host, "host")
        except InvalidInputError:
            return None, f"{host!r} is not a host name or IP address"
        for entry in self.entries:
            if entry.matches(host, port):
                return entry, f"listed as {entry.text}"
        if any(e.matches(host, p) for e in self.entries for p in e.ports):
            return None, f"port {port} of {host} is not listed"
        return None, f"{host} is not in the allowlist"

    def addresses(
        self, entry: AllowEntry, host: str, resolved: Iterable[IPAddress], host_addresses: Iterable[IPAddress]
    ) -> tuple[list[IPAddress], str | None]:
        """The addresses the proxy may connect to for ``host`` (matched by ``entry``), or why none."""
        host, _ = parse_target(host, "host")
        if entry.literal:
            return [ipaddress.ip_address(host)], None
        if host in self.pins:
            return [self.pins[host]], None
        local = list(host_addresses)
        ok: list[IPAddress] = []
        refusals: list[str] = []
        for ip in resolved:
            why = address_refusal(ip, local)
            if why is None:
                ok.append(ip)
            else:
                refusals.append(why)
        if ok:
            return ok, None
        if not refusals:
            return [], f"{host} did not resolve"
        return [], f"{host} resolves only to refused addresses ({'; '.join(sorted(set(refusals)))})"
