"""Hostile clients against ``reviewtrail serve`` and ``reviewtrail proxy`` as real processes:
thousands of idle and slowloris connections from one address are closed by the server (those past
the per-client cap answered 503 with ``Retry-After``) while a reviewer from another address keeps
working; a process's descriptor limit caps what it holds in all; a client that goes away mid-body
is one log line, never a traceback, and no client can log without bound. The timeouts are set to
two seconds here, so a test takes seconds; no test measures time (bench
web_hostile_connections does)."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.errors import InvalidInputError
from reviewtrail.web._capability import (
    CAPABILITY_FILE_ENV,
    DECISION_ROUTE,
    load_capability,
    new_capability,
    sign_decision,
)
from reviewtrail.web._limits import (
    BODY_TIMEOUT,
    HEADER_TIMEOUT,
    IDLE_TIMEOUT,
    MAX_CONNECTIONS,
    MAX_PER_CLIENT,
    ConnectionBook,
    Limits,
    LogBudget,
    client_key,
    descriptor_cap,
    limits_from_env,
)
from support.hostile import Crowd
from support.human_review import new_store
from support.oidc import running_oidc_mock
from support.proxy import basic_header, login, recording, running_proxy, write_secret
from support.web import ServerOutput, announcing, planted_campaign, running_inspector, store_env

FAST = {HEADER_TIMEOUT: "2", IDLE_TIMEOUT: "2", BODY_TIMEOUT: "2", MAX_PER_CLIENT: "100"}
REVIEWER = "127.0.0.2"
PASSWORD = "correct horse battery staple"


# --- the rules ----------------------------------------------------------------------------------


def test_the_defaults_are_safe_and_the_global_cap_stays_under_the_descriptor_limit() -> None:
    limits = limits_from_env({}, 1024)
    assert limits == Limits(max_connections=896)
    assert (limits.header_timeout, limits.idle_timeout, limits.body_timeout, limits.max_per_client) == (10, 5, 30, 128)
    assert descriptor_cap(1024) == 896 and descriptor_cap(20000) == 17500 and descriptor_cap(-1) == 57344
    assert limits_from_env({MAX_CONNECTIONS: "100", HEADER_TIMEOUT: " 3 "}, 1024).max_connections == 100
    assert limits_from_env({HEADER_TIMEOUT: " 3 "}, 1024).header_timeout == 3


@pytest.mark.parametrize(
    ("name", "value"),
    [
        (HEADER_TIMEOUT, "0"),
        (IDLE_TIMEOUT, "1.5"),
        (BODY_TIMEOUT, "-1"),
        (HEADER_TIMEOUT, "3601"),
        (MAX_PER_CLIENT, "ten"),
        (MAX_CONNECTIONS, "897"),  # above the cap the descriptor limit allows
        (MAX_CONNECTIONS, "0"),
    ],
)
def test_a_malformed_limit_is_refused_naming_its_variable(name: str, value: str) -> None:
    with pytest.raises(InvalidInputError) as refused:
        limits_from_env({name: value}, 1024)
    assert refused.value.field == name and refused.value.exit_code == 2 and repr(value) in str(refused.value)


@pytest.mark.parametrize("command", ["serve", "proxy"])
def test_both_commands_refuse_a_malformed_limit_before_listening(command: str, tmp_path: Path) -> None:
    new_store(tmp_path).close()
    args = [sys.executable, "-m", "reviewtrail", command, "--port", "0"]
    if command == "proxy":
        args += ["--inspector", "http://127.0.0.1:9"]
        secret = write_secret(tmp_path / "secret", b"s" * 48)
        env = {"REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": str(secret), "REVIEWTRAIL_PROXY_BASIC_USERS_FILE": "/dev/null"}
    else:
        env = {}
    env = store_env(tmp_path) | env | {BODY_TIMEOUT: "soon"}
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and BODY_TIMEOUT in done.stderr and "'soon'" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_client_is_its_address_or_its_ipv6_64() -> None:
    assert client_key("192.0.2.7") == "192.0.2.7"
    assert client_key("2001:db8:1:2:aaaa::1") == client_key("2001:db8:1:2:bbbb::9") == "2001:db8:1:2::/64"
    assert client_key("2001:db8:1:3::1") != client_key("2001:db8:1:2::1")
    assert client_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert client_key(None) == "-"


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 4)), max_size=200), st.integers(1, 6), st.integers(1, 4))
def test_the_book_never_holds_past_either_cap(steps: list[tuple[bool, int]], total: int, per_client: int) -> None:
    book, held = ConnectionBook(total, per_client), [0] * 5
    for opening, client in steps:
        if opening:
            admitted = book.admit(str(client))
            assert admitted == (sum(held) < total and held[client] < per_client)
            held[client] += admitted
        elif held[client]:
            book.release(str(client))
            held[client] -= 1
        assert book.held == sum(held) <= total and all(count <= per_client for count in held)


@given(st.lists(st.floats(0, 100), min_size=1, max_size=300), st.integers(1, 10), st.floats(0.5, 20))
def test_a_client_logs_at_most_its_burst_and_its_rate(gaps: list[float], burst: int, every: float) -> None:
    budget, now, logged, told = LogBudget(burst=burst, every=every), 0.0, 0, 0
    for gap in gaps:
        now += gap
        allowed, dropped = budget.allow("client", now)
        logged += allowed
        told += dropped
        assert logged <= burst + now / every + 1e-9
    assert budget.allow("other", now) == (True, 0)  # one client's flood leaves another's budget alone
    assert told <= len(gaps) - logged  # every line dropped is told at most once


# --- hostile connections against real servers ---------------------------------------------------


def reviewer_loop(url: str, headers: dict[str, str], stop: threading.Event, out: list[Any]) -> None:
    """GET ``url`` from 127.0.0.2 again and again until ``stop``: each status, or the error."""
    transport = httpx.HTTPTransport(local_address=REVIEWER)
    with httpx.Client(transport=transport, timeout=30, headers=headers) as client:
        while not stop.is_set():
            try:
                out.append(client.get(url).status_code)
            except httpx.HTTPError as exc:
                out.append(repr(exc))


@contextmanager
def server(kind: str, tmp_path: Path, env: dict[str, str]) -> Iterator[tuple[str, dict[str, str], ServerOutput]]:
    """The inspector, or the proxy in front of a stand-in, with ``env``: its URL, the headers a
    reviewer sends (HTTP Basic at the proxy) and its standard error."""
    if kind == "inspector":
        new_store(tmp_path).close()
        with running_inspector(tmp_path, env=env) as inspector:
            yield inspector.url, {}, inspector.output
        return
    from argon2 import PasswordHasher

    users = tmp_path / "users"
    users.write_text(f"bob:{PasswordHasher().hash(PASSWORD)}\n")
    secret = write_secret(tmp_path / "secret", b"s" * 48)
    settings = {"REVIEWTRAIL_PROXY_BASIC_USERS_FILE": str(users), "REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": str(secret)}
    with recording() as stand_in, running_proxy(stand_in.url, settings | env, tmp_path) as proxy:
        yield proxy.url + "/", {"authorization": basic_header("bob", PASSWORD)}, proxy.output


@pytest.mark.parametrize("kind", ["inspector", "proxy"])
def test_idle_and_slowloris_crowds_are_closed_while_a_reviewer_keeps_working(kind: str, tmp_path: Path) -> None:
    with server(kind, tmp_path, FAST) as (url, headers, output):
        port = int(url.rsplit(":", 1)[1].strip("/"))
        stop, statuses = threading.Event(), []
        reviewer = threading.Thread(target=reviewer_loop, args=(url, headers, stop, statuses))
        reviewer.start()
        idle, slow = Crowd(port, "127.0.0.3"), Crowd(port, "127.0.0.4")
        try:
            idle.open(2000, slow=False)
            slow.open(2000, slow=True)
            all_closed = idle.hold(60) and slow.hold(60)
        finally:
            stop.set()
            reviewer.join(60)
            idle.close()
            slow.close()
        assert all_closed, "the server kept idle or slowloris connections open"
        for crowd in (idle, slow):
            admitted = [one for one in crowd.held if not one.refused_busy]
            assert len(admitted) <= 100  # the per-client cap; every other one was told 503 and when to retry
            assert all(not one.received for one in admitted if not one.slow)  # idle: closed, nothing said
            assert all(one.received.startswith(b"HTTP/1.1 408") for one in admitted if one.slow and one.received)
        assert statuses and set(statuses) == {200}, statuses[:20]
        assert "Traceback" not in output.text()


def test_the_global_cap_follows_the_descriptor_limit_and_answers_503(tmp_path: Path) -> None:
    """Under a limit of 300 descriptors the inspector holds at most 236 connections: 2,000 idle
    ones from 20 clients get 503 with Retry-After past that, none a reset or a silent hang, and
    once the held ones time out the reviewer is served again."""
    new_store(tmp_path).close()
    command = ["prlimit", "--nofile=300:300", sys.executable, "-m", "reviewtrail", "serve", "--port", "0", "--json"]
    with announcing(command, store_env(tmp_path) | FAST, tmp_path, "the inspector") as (_, announced, output):
        crowds = [Crowd(announced["port"], f"127.0.1.{i}") for i in range(1, 21)]
        try:
            for crowd in crowds:
                crowd.open(100, slow=False)
            closed = all(crowd.hold(60) for crowd in crowds)
        finally:
            for crowd in crowds:
                crowd.close()
        held = [one for crowd in crowds for one in crowd.held]
        assert closed
        admitted = [one for one in held if not one.refused_busy]
        assert all(one.received == b"" for one in admitted)
        assert len(admitted) <= descriptor_cap(300) and len(held) - len(admitted) >= 2000 - descriptor_cap(300)
        transport = httpx.HTTPTransport(local_address=REVIEWER)
        with httpx.Client(transport=transport, timeout=30) as client:
            assert client.get(announced["url"]).status_code == 200
        assert "Traceback" not in output.text() and "out of system resource" not in output.text()


def trickle(port: int, head: bytes, drip: bytes, limit: float = 60) -> bytes:
    """Send ``head``, then ``drip`` every 0.2 s until the server closes the connection (or
    ``limit`` seconds pass): everything the server answered."""
    received = b""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head)
        sock.settimeout(0.2)
        for _ in range(int(limit / 0.2)):
            try:
                data = sock.recv(65536)
            except TimeoutError:
                with contextlib.suppress(OSError):
                    sock.sendall(drip)
                continue
            except OSError:
                return received
            if not data:
                return received
            received += data
    raise AssertionError(f"the server kept the connection open, after answering {received[:200]!r}")


def test_a_trickled_body_and_an_endless_head_are_cut_off(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    items, _ = planted_campaign(store, n=1)
    store.close()
    key = tmp_path / "capability.key"
    new_capability(key)
    capability = load_capability(key)
    with running_inspector(tmp_path, env=FAST | {CAPABILITY_FILE_ENV: str(key)}) as inspector:
        url = inspector.url.rstrip("/") + DECISION_ROUTE
        port = int(inspector.url.rsplit(":", 1)[1].strip("/"))
        body = json.dumps({"itemId": items[0].item_id, "campaignId": "camp", "padding": "x" * 500}).encode()
        signed = "".join(f"{name}: {value}\r\n" for name, value in sign_decision(capability, url, body).items())
        head = f"POST {DECISION_ROUTE} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {len(body)}\r\n"
        answered = trickle(port, (head + signed + "\r\n").encode() + body[:1], b" ")
        assert answered.startswith(b"HTTP/1.1 408 "), answered[:200]
        endless = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Padding: " + b"x" * 70_000
        answered = trickle(port, endless, b"x" * 1000)
        assert answered.startswith(b"HTTP/1.1 431 "), answered[:200]
        assert httpx.get(inspector.url, timeout=30).status_code == 200
        assert "Traceback" not in inspector.output.text()


# --- clean logs ---------------------------------------------------------------------------------


def aborted_post(url: str, headers: dict[str, str], body: bytes) -> None:
    """POST ``body``'s first half to ``url`` with ``headers``, then go away."""
    host, port = url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)
    head = f"POST {DECISION_ROUTE} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Length: {len(body)}\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers.items()) + "\r\n"
    with socket.create_connection((host.strip("[]"), int(port)), timeout=30) as sock:
        sock.sendall(head.encode() + body[: len(body) // 2])
        sock.settimeout(0.05)
        with contextlib.suppress(TimeoutError):  # the server reads what was sent before the client leaves
            sock.recv(1)


def test_aborted_bodies_log_no_traceback_and_a_bounded_number_of_lines(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    items, _ = planted_campaign(store, n=1)
    store.close()
    key = tmp_path / "capability.key"
    new_capability(key)
    capability = load_capability(key)
    with running_inspector(tmp_path, env={CAPABILITY_FILE_ENV: str(key)}) as inspector:
        url = inspector.url.rstrip("/") + DECISION_ROUTE

        def body(n: int) -> bytes:
            fields = {"itemId": items[0].item_id, "campaignId": "camp", "campaignVersion": 1}
            fields |= {"submissionId": f"sub-{n:016d}", "reviewer": "proxy-7f3a9c", "disposition": "prefer"}
            fields |= {"preferred": "A", "strength": "slight"}
            return json.dumps(fields).encode()

        for n in range(200):
            aborted_post(url, sign_decision(capability, url, body(n)), body(n))
        last = body(999)
        answer = httpx.post(url, content=last, headers=sign_decision(capability, url, last), timeout=30)
        assert answer.status_code == 201, answer.text
        text = inspector.output.text()
    assert "Traceback" not in text and "Exception in ASGI application" not in text
    lines = text.splitlines()
    assert any("went away" in line for line in lines)
    assert len(lines) <= 25, lines[:40]  # the client's burst of lines, then a rate of lines; 200 aborts
    assert len(text) < 200 * 100


def test_aborted_bodies_at_the_proxy_log_no_traceback(tmp_path: Path) -> None:
    """A write session's decision bodies cut off mid-way at the proxy: no traceback, a bounded
    number of lines, and the proxy still answers the session's next one."""
    key = tmp_path / "capability.key"
    new_capability(key)
    env = {
        "REVIEWTRAIL_PROXY_OIDC_CLIENT_ID": "reviewtrail-proxy",
        "REVIEWTRAIL_PROXY_OIDC_CLIENT_SECRET": "client-secret-value",
        "REVIEWTRAIL_PROXY_ALLOW": "alice",
        "REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": str(write_secret(tmp_path / "secret", b"s" * 48)),
        CAPABILITY_FILE_ENV: str(key),
    }
    with (
        running_oidc_mock() as mock,
        recording(target=mock) as provider,
        recording() as stand_in,
        running_proxy(stand_in.url, env | {"REVIEWTRAIL_PROXY_OIDC_ISSUER": provider.url}, tmp_path) as proxy,
        login(proxy.url, "alice") as browser,
    ):
        token = browser.get(f"{proxy.url}/auth/session").json()["csrfToken"]
        cookie = "; ".join(f"{name}={value}" for name, value in browser.cookies.items())
        headers = {"cookie": cookie, "x-csrf-token": token, "content-type": "application/json"}
        body = json.dumps({"itemId": "item-1", "campaignId": "camp", "campaignVersion": 1}).encode()
        for _ in range(200):
            aborted_post(proxy.url, headers, body)
        stand_in.clear()
        answer = browser.post(f"{proxy.url}{DECISION_ROUTE}", content=body, headers=headers)
        assert answer.status_code == 422 and not stand_in.requests  # checked at the proxy, nothing forwarded
        text = proxy.output.text()
    assert "Traceback" not in text and "Exception in ASGI application" not in text
    assert any("went away" in line for line in text.splitlines()) and len(text.splitlines()) <= 25


def test_a_flood_of_malformed_requests_logs_a_bounded_number_of_lines(tmp_path: Path) -> None:
    new_store(tmp_path).close()
    with running_inspector(tmp_path) as inspector:
        port = int(inspector.url.rsplit(":", 1)[1].strip("/"))
        for _ in range(300):
            with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
                sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
                assert sock.recv(100).startswith(b"HTTP/1.1 400 ")
        assert httpx.get(inspector.url, timeout=30).status_code == 200
        lines = inspector.output.text().splitlines()
    assert 1 <= len(lines) <= 25, lines[:40]


def test_the_harness_keeps_a_server_that_writes_megabytes_to_stderr_running(tmp_path: Path) -> None:
    """A server that writes 4 MiB to stderr after it listens is not blocked by the harness, and
    what it wrote is there to read."""
    done = tmp_path / "done"
    script = (
        "import sys, pathlib\n"
        'print("{"); print(\'"url": "http://127.0.0.1:1/"\'); print("}", flush=True)\n'
        "for i in range(4096): sys.stderr.write(f'line {i:05d} ' + 'x' * 1000 + '\\n')\n"
        "sys.stderr.flush()\n"
        f"pathlib.Path({str(done)!r}).write_text('written')\n"
        "import time; time.sleep(60)\n"
    )
    with announcing([sys.executable, "-c", script], {}, tmp_path, "the writer") as (process, _, output):
        for _ in range(600):
            if done.exists() or process.poll() is not None:
                break
            threading.Event().wait(0.1)
        assert done.exists(), "the writer was blocked on its standard error"
        assert "line 04095 " in output.text() and len(output.text()) > 4_000_000
