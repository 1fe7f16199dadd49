"""The host side of ``--network allowlist``: a filtering HTTP proxy on a Unix socket.

The sandbox has its own network namespace (only its own loopback). Its one way out is the
Unix socket of this proxy, bound read-only into the sandbox at ``/run/rt-proxy/proxy.sock``
and bridged to ``127.0.0.1:3128`` inside (``HTTP_PROXY``, ``HTTPS_PROXY``, ``http_proxy``,
``https_proxy`` and ``ALL_PROXY`` point there). The proxy runs on threads of the recording
process and speaks:

* ``CONNECT host:port`` (HTTPS and any other TCP): on success ``200``, then bytes both ways;
* plain HTTP with an absolute URI (``GET http://host[:port]/path``): the request is sent on
  with an origin-form target, its ``Proxy-*`` headers dropped and ``Connection: close``.

At most :data:`MAX_CONNECTIONS` connections are served at once (each holds one or two threads of
the recording process); the next is not accepted until one ends, so it waits in the socket's
backlog (then in the sandbox's bridge): connections the code opens never grow the host process
past ``1 + 2 * MAX_CONNECTIONS`` threads per run.

Anything else gets ``400``; a refusal gets ``403`` with the reason. Which hosts and addresses
are allowed is :mod:`._netproxy_rules`. Every decision (host, port, allowed or denied, reason,
time, and the address used or the connection error) is kept, up to :data:`MAX_DECISIONS`;
the run records them.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import shutil
import socket
import tempfile
import threading
import urllib.parse
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reviewtrail.provenance.sandbox._netproxy_rules import IPAddress, NetPolicy, parse_target

__all__ = ["MAX_CONNECTIONS", "MAX_DECISIONS", "NetProxy", "host_addresses"]

MAX_DECISIONS = 1000
#: Connections one run's proxy serves at once.
MAX_CONNECTIONS = 64
_HEAD_LIMIT = 64 * 1024
_HEAD_TIMEOUT = 30.0
_CONNECT_TIMEOUT = 10.0
_DROP = ("proxy-connection", "proxy-authorization", "connection", "keep-alive")


def host_addresses() -> list[IPAddress]:
    """Every address of this host's interfaces (IPv4 from /proc/net/fib_trie, IPv6 from if_inet6)."""
    found: set[IPAddress] = set()
    with contextlib.suppress(OSError):
        last = ""
        for line in Path("/proc/net/fib_trie").read_text().splitlines():
            text = line.strip()
            if text.startswith("|--"):
                last = text[3:].strip()
            elif text == "/32 host LOCAL" and last:
                with contextlib.suppress(ValueError):
                    found.add(ipaddress.ip_address(last))
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/if_inet6").read_text().splitlines():
            raw = line.split()[0]
            with contextlib.suppress(ValueError, IndexError):
                found.add(ipaddress.ip_address(":".join(raw[i : i + 4] for i in range(0, 32, 4))))
    return sorted(found, key=lambda ip: (ip.version, int(ip)))


def _reply(conn: socket.socket, status: str, text: str) -> None:
    body = f"reviewtrail sandbox proxy: {text}\n".encode()
    head = f"HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    with contextlib.suppress(OSError):
        conn.sendall(head.encode() + body)


def _pump(src: socket.socket, dst: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := src.recv(1 << 16):
            dst.sendall(data)
    for s in (dst, src):
        with contextlib.suppress(OSError):
            s.shutdown(socket.SHUT_RDWR)


class NetProxy:
    """One run's proxy: ``start()``, point the sandbox at :attr:`directory`, ``close()``."""

    def __init__(self, policy: NetPolicy) -> None:
        self.policy = policy
        self.directory = Path(tempfile.mkdtemp(prefix="rt-proxy-"))
        self.socket_path = self.directory / "proxy.sock"
        self._decisions: list[dict[str, Any]] = []
        self.dropped = 0
        self._lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._host_addresses = host_addresses()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._closed = False
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)

    def start(self) -> NetProxy:
        os.chmod(self.directory, 0o755)  # noqa: S103 - the sandbox's user must traverse it; it holds only the socket
        self._server.bind(str(self.socket_path))
        os.chmod(self.socket_path, 0o666)  # noqa: S103 - a socket in a private folder, for the sandbox's user
        self._server.listen(128)
        threading.Thread(target=self._accept, name="rt-proxy", daemon=True).start()
        return self

    def close(self) -> None:
        with self._lock:
            self._closed = True
            conns, self._conns = list(self._conns), set()
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        self._server.close()
        for c in conns:
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)
            c.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> NetProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def take_decisions(self) -> tuple[list[dict[str, Any]], int]:
        """The decisions so far and how many were not kept; both reset."""
        with self._lock:
            out, dropped = self._decisions, self.dropped
            self._decisions, self.dropped = [], 0
        return out, dropped

    # --- internals ------------------------------------------------------------------------------
    def _note(self, host: str, port: int, allowed: bool, reason: str, **extra: Any) -> None:
        entry = {
            "host": host,
            "port": port,
            "decision": "allowed" if allowed else "denied",
            "reason": reason,
            "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            **extra,
        }
        with self._lock:
            if len(self._decisions) < MAX_DECISIONS:
                self._decisions.append(entry)
            else:
                self.dropped += 1

    def _track(self, s: socket.socket) -> bool:
        with self._lock:
            if self._closed:
                return False
            self._conns.add(s)
            return True

    def _accept(self) -> None:
        while True:
            self._slots.acquire()  # a free slot first: the next connection waits in the backlog
            try:
                conn, _ = self._server.accept()
            except OSError:
                self._slots.release()
                return
            if not self._track(conn):
                conn.close()
                self._slots.release()
                return
            try:
                threading.Thread(target=self._serve_in_slot, args=(conn,), name="rt-proxy-conn", daemon=True).start()
            except RuntimeError:  # no thread to be had: this connection is refused
                with self._lock:
                    self._conns.discard(conn)
                conn.close()
                self._slots.release()

    def _serve_in_slot(self, conn: socket.socket) -> None:
        try:
            self._serve(conn)
        finally:
            self._slots.release()

    def _serve(self, conn: socket.socket) -> None:
        upstream: socket.socket | None = None
        try:
            conn.settimeout(_HEAD_TIMEOUT)
            head, rest = self._read_head(conn)
            if head is None:
                return _reply(conn, "400 Bad Request", "no complete request head")
            conn.settimeout(None)
            lines = head.decode("latin-1").split("\r\n")
            method, _, rest_line = lines[0].partition(" ")
            target, _, version = rest_line.partition(" ")
            if method.upper() == "CONNECT":
                host, port = parse_target(target, "target")
                if port is None:
                    raise ValueError("CONNECT needs host:port")
                upstream = self._open(conn, host, port, "CONNECT")
                if upstream is None:
                    return None
                conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                payload = rest
            else:
                url = urllib.parse.urlsplit(target)
                if url.scheme.lower() != "http" or not url.hostname:
                    return _reply(conn, "400 Bad Request", "use CONNECT, or plain HTTP with an absolute http:// URI")
                host, port = url.hostname, url.port or 80
                upstream = self._open(conn, host, port, method.upper())
                if upstream is None:
                    return None
                path = urllib.parse.urlunsplit(("", "", url.path or "/", url.query, ""))
                kept = [h for h in lines[1:] if h and h.split(":", 1)[0].strip().lower() not in _DROP]
                payload = (f"{method} {path} {version}\r\n" + "".join(h + "\r\n" for h in kept)).encode("latin-1")
                payload += b"Connection: close\r\n\r\n" + rest
            if payload:
                upstream.sendall(payload)
            up = upstream
            t = threading.Thread(target=_pump, args=(up, conn), name="rt-proxy-down", daemon=True)
            t.start()
            _pump(conn, up)
            t.join()
        except (OSError, ValueError, UnicodeError) as exc:
            _reply(conn, "400 Bad Request", str(exc) or type(exc).__name__)
        finally:
            for s in (conn, upstream):
                if s is not None:
                    with self._lock:
                        self._conns.discard(s)
                    s.close()
        return None

    @staticmethod
    def _read_head(conn: socket.socket) -> tuple[bytes | None, bytes]:
        buf = b""
        while b"\r\n\r\n" not in buf:
            if len(buf) > _HEAD_LIMIT:
                return None, b""
            chunk = conn.recv(8192)
            if not chunk:
                return None, b""
            buf += chunk
        head, _, rest = buf.partition(b"\r\n\r\n")
        return head, rest

    def _open(self, conn: socket.socket, host: str, port: int, method: str) -> socket.socket | None:
        """Decide; connect when allowed. None (with the reply sent) when refused or unreachable."""
        entry, why = self.policy.check(host, port)
        if entry is None:
            self._note(host, port, False, why, method=method)
            _reply(conn, "403 Forbidden", why)
            return None
        resolved: list[IPAddress] = []
        if not entry.literal and host.rstrip(".").lower() not in self.policy.pins:
            with contextlib.suppress(OSError):
                infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
                resolved = [ipaddress.ip_address(str(i[4][0]).split("%")[0]) for i in infos]
        addresses, refusal = self.policy.addresses(entry, host, resolved, self._host_addresses)
        if refusal is not None:
            self._note(host, port, False, refusal, method=method)
            _reply(conn, "403 Forbidden", refusal)
            return None
        errors = []
        for ip in addresses:
            try:
                s = socket.create_connection((str(ip), port), timeout=_CONNECT_TIMEOUT)
            except OSError as exc:
                errors.append(f"{ip}: {exc.strerror or exc}")
                continue
            s.settimeout(None)
            if not self._track(s):
                s.close()
                return None
            self._note(host, port, True, why, method=method, address=str(ip))
            return s
        self._note(host, port, True, why, method=method, error="; ".join(errors))
        _reply(conn, "502 Bad Gateway", f"cannot connect to {host}:{port} ({'; '.join(errors)})")
        return None
