"""The allowlist proxy serves a bounded number of connections at once: idle connections the code
opens wait in the backlog instead of growing the recording process by a thread each."""

from __future__ import annotations

import errno
import socket
import threading
import time
from pathlib import Path
from typing import Any

from conftest import need
from reviewtrail.provenance.sandbox import ResourceLimits
from reviewtrail.provenance.sandbox._bwrap import bwrap_available
from reviewtrail.provenance.sandbox._cgroup import cgroup_support
from reviewtrail.provenance.sandbox._netproxy import MAX_CONNECTIONS, NetProxy
from reviewtrail.provenance.sandbox._netproxy_rules import NetPolicy, parse_allow_entry
from reviewtrail.provenance.sandbox._plan import SandboxRequest
from reviewtrail.provenance.sandbox._sandbox import run_sandboxed

# Threads one proxy may hold: its accept loop and, per connection served, the serving thread and
# the downstream pump.
BOUND = 1 + 2 * MAX_CONNECTIONS
IDLE = 1_500


def policy() -> NetPolicy:
    return NetPolicy((parse_allow_entry("example.org"),), {})


def _open_idle(path: Path, count: int) -> list[socket.socket]:
    """``count`` connections that never send a byte (non-blocking: one the backlog cannot take is
    dropped, as a client giving up would be)."""
    held = []
    for _ in range(count):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(str(path))
        except BlockingIOError:
            pass
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.ECONNREFUSED):
                raise
            s.close()
            continue
        held.append(s)
    return held


def test_1500_idle_connections_hold_a_bounded_number_of_threads() -> None:
    before = threading.active_count()
    with NetProxy(policy()) as proxy:
        idle = _open_idle(proxy.socket_path, IDLE)
        try:
            time.sleep(0.5)  # the accept loop takes what it may
            held = threading.active_count() - before
            assert held <= BOUND, f"{held} threads for {IDLE} idle connections"
            # A served connection ends (its client goes): the next waiting one is taken.
            for s in idle[:10]:
                s.close()
            time.sleep(0.3)
            assert threading.active_count() - before <= BOUND
        finally:
            for s in idle:
                s.close()
        # With the idle ones gone, a request is served again.
        deadline = time.monotonic() + 35
        reply = b""
        while time.monotonic() < deadline and not reply:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
                c.settimeout(5)
                c.connect(str(proxy.socket_path))
                c.sendall(b"CONNECT denied.example.net:443 HTTP/1.1\r\n\r\n")
                try:
                    reply = c.recv(200)
                except TimeoutError:
                    continue
        assert reply.startswith(b"HTTP/1.1 403"), reply
    assert threading.active_count() - before <= BOUND  # closing ends what it served


def _sample_threads(stop: threading.Event, seen: list[int]) -> None:
    while not stop.is_set():
        seen.append(threading.active_count())
        time.sleep(0.02)


def test_idle_connections_from_the_sandbox_do_not_grow_the_host(tmp_path: Path) -> None:
    need(bwrap_available(), "bubblewrap (bwrap) is not installed")
    need(cgroup_support() is None, f"no control group can be made here: {cgroup_support()}")
    ws = tmp_path / "ws"
    ws.mkdir()
    code = (
        "import socket, time\n"
        "held = []\n"
        f"for _ in range({IDLE}):\n"
        "    s = socket.socket(); s.setblocking(False)\n"
        "    try:\n"
        "        s.connect(('127.0.0.1', 3128))\n"
        "    except BlockingIOError:\n"
        "        pass\n"
        "    held.append(s)\n"
        "time.sleep(3)\n"
        "print(len(held))\n"
    )
    before = threading.active_count()
    stop, seen = threading.Event(), [before]
    sampler = threading.Thread(target=_sample_threads, args=(stop, seen), daemon=True)
    sampler.start()
    kw: dict[str, Any] = {"env": {}, "timeout": 60.0, "network": "allowlist", "allowlist": ("example.org",)}
    try:
        r = run_sandboxed(
            SandboxRequest(code=code, lang="python", workspace=ws, limits=ResourceLimits(max_procs=4000), **kw)
        )
    finally:
        stop.set()
        sampler.join()
    assert r.stdout.strip() == str(IDLE).encode(), (r.stdout, r.stderr, r.error)
    assert max(seen) - before <= BOUND + 1, f"the host grew by {max(seen) - before} threads"  # +1: the sampler
