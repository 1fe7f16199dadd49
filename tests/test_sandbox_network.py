"""``--network allowlist``: the sandbox's own network namespace, egress only through the host's filtering proxy.

Real bubblewrap, real sockets: the host's loopback services, abstract Unix sockets and the
PostgreSQL ledger server are unreachable; an allowlisted name served on a loopback alias is
reachable only through the proxy, and every decision is recorded.
"""

from __future__ import annotations

import http.server
import ipaddress
import json
import socket
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import need, use_store
from reviewtrail.app import init_store
from reviewtrail.cli._app import app
from reviewtrail.config import Settings
from reviewtrail.errors import InvalidInputError
from reviewtrail.provenance.runs import create_session, run_code
from reviewtrail.provenance.sandbox._bwrap import bwrap_available
from reviewtrail.provenance.sandbox._netproxy import host_addresses
from reviewtrail.provenance.sandbox._netproxy_rules import NetPolicy, address_refusal, parse_allow_entry
from reviewtrail.provenance.sandbox._plan import SandboxRequest, SandboxResult
from reviewtrail.provenance.sandbox._sandbox import run_sandboxed
from reviewtrail.store import Store
from support.pgserver import PgServer


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    need(bwrap_available(), "bubblewrap (bwrap) is not installed")
    path = tmp_path / "ws"
    path.mkdir()
    return path


def run(ws: Path, code: str, lang: str = "python", **kw: Any) -> SandboxResult:
    kw.setdefault("env", {})
    kw.setdefault("timeout", 30.0)
    kw.setdefault("network", "allowlist")
    return run_sandboxed(SandboxRequest(code=code, lang=lang, workspace=ws, **kw))  # type: ignore[arg-type]


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"hello {self.path} host={self.headers.get('Host')}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def web() -> Iterator[int]:
    """An HTTP server on the loopback alias 127.0.0.2 (a stand-in for an allowlisted internet host)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.2", 0), _Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def host_services() -> Iterator[dict[str, Any]]:
    """A TCP listener on the host's 127.0.0.1 and a listener on a host abstract Unix socket."""
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(8)
    tcp.setblocking(False)
    name = f"\0rt-test-{uuid.uuid4().hex}"
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind(name)
    abstract.listen(8)
    abstract.setblocking(False)
    yield {"tcp": tcp, "port": tcp.getsockname()[1], "abstract": abstract, "name": name}
    tcp.close()
    abstract.close()


def accepted(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


PROBE = """\
import json, os, socket
out = {{}}
def attempt(label, family, address):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect(address)
        out[label] = "connected"
    except OSError as exc:
        out[label] = type(exc).__name__
    finally:
        s.close()
attempt("loopback", socket.AF_INET, ("127.0.0.1", {port}))
attempt("abstract", socket.AF_UNIX, {name!r})
attempt("postgres", socket.AF_INET, ("127.0.0.1", {pg_port}))
attempt("postgres-socket", socket.AF_UNIX, {pg_socket!r})
def via_proxy(target):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
    s.sendall(("CONNECT " + target + " HTTP/1.1\\r\\nHost: " + target + "\\r\\n\\r\\n").encode())
    reply = s.recv(4096).decode(errors="replace")
    s.close()
    return reply.split("\\r\\n")[0]
out["proxy-loopback"] = via_proxy("127.0.0.1:{port}")
out["proxy-postgres-by-name"] = via_proxy("localhost:{pg_port}")
print(json.dumps(out))
"""


def test_host_loopback_abstract_sockets_and_postgres_are_unreachable(
    ws: Path, host_services: dict[str, Any], pg_server: PgServer
) -> None:
    pg_socket = str(Path(pg_server.tmp) / f".s.PGSQL.{pg_server.port}")
    assert Path(pg_socket).exists()
    code = PROBE.format(port=host_services["port"], name=host_services["name"], pg_port=pg_server.port,
                        pg_socket=pg_socket)  # fmt: skip
    r = run(ws, code, allowlist=(f"localhost:{pg_server.port}",))
    assert r.status == "succeeded", r.stderr
    seen = json.loads(r.stdout)
    for label in ("loopback", "abstract", "postgres", "postgres-socket"):
        assert seen[label] != "connected", (label, seen)
    assert seen["proxy-loopback"].startswith("HTTP/1.1 403"), seen
    assert seen["proxy-postgres-by-name"].startswith("HTTP/1.1 403"), seen  # listed, but it is loopback
    assert not accepted(host_services["tcp"]) and not accepted(host_services["abstract"])
    assert "--share-net" not in r.argv
    denied = {(d["host"], d["port"]): d for d in r.network_decisions}
    assert denied[("127.0.0.1", host_services["port"])]["decision"] == "denied"
    by_name = denied[("localhost", pg_server.port)]
    assert by_name["decision"] == "denied" and "loopback" in str(by_name["reason"])


FETCH = """\
import json, socket, urllib.request
out = {{}}
try:
    socket.create_connection(("127.0.0.2", {port}), timeout=3).close()
    out["direct"] = "connected"
except OSError as exc:
    out["direct"] = type(exc).__name__
out["proxied"] = urllib.request.urlopen("http://web.test.invalid:{port}/page?q=1", timeout=10).read().decode()
try:
    urllib.request.urlopen("http://other.test.invalid:{port}/", timeout=10)
    out["other"] = "fetched"
except Exception as exc:
    out["other"] = str(exc)
s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
s.sendall(b"CONNECT web.test.invalid:{port} HTTP/1.1\\r\\n\\r\\n")
head = s.recv(4096)
s.sendall(b"GET /tunnel HTTP/1.0\\r\\nHost: web\\r\\n\\r\\n")
body = b""
while chunk := s.recv(4096):
    body += chunk
out["tunnel"] = [head.split(b"\\r\\n")[0].decode(), body.split(b"\\r\\n\\r\\n", 1)[1].decode()]
print(json.dumps(out))
"""


def test_allowlisted_host_is_reachable_only_through_the_proxy(ws: Path, web: int) -> None:
    r = run(ws, FETCH.format(port=web), allowlist=(f"web.test.invalid:{web}",),
            resolve={"web.test.invalid": "127.0.0.2"})  # fmt: skip
    assert r.status == "succeeded", r.stderr
    seen = json.loads(r.stdout)
    assert seen["direct"] != "connected"  # 127.0.0.2 inside is the sandbox's own loopback
    assert seen["proxied"] == f"hello /page?q=1 host=web.test.invalid:{web}"
    assert "403" in seen["other"]
    assert seen["tunnel"] == ["HTTP/1.1 200 Connection Established", "hello /tunnel host=web"]
    decisions = [(d["host"], d["decision"], d.get("address")) for d in r.network_decisions]
    assert decisions == [
        ("web.test.invalid", "allowed", "127.0.0.2"),
        ("other.test.invalid", "denied", None),
        ("web.test.invalid", "allowed", "127.0.0.2"),
    ]
    assert all(d["port"] == web and d["time"].endswith("Z") for d in r.network_decisions)
    assert r.env is not None and r.env["HTTPS_PROXY"] == "http://127.0.0.1:3128"


def test_mode_none_has_no_proxy(ws: Path, web: int) -> None:
    r = run(ws, "import os; print(os.path.exists('/run/rt-proxy'), 'HTTP_PROXY' in os.environ)", network="none")
    assert r.stdout == b"False False\n" and r.network_decisions == []


def test_the_allowlist_needs_allowlist_mode() -> None:
    for kw in ({"allowlist": ("example.org",)}, {"resolve": {"example.org": "127.0.0.2"}}):
        with pytest.raises(InvalidInputError) as err:
            SandboxRequest(code="", lang="python", workspace=Path("."), env={}, timeout=1, **kw)  # type: ignore[arg-type]
        assert err.value.field == "allow"


# --- the rules ------------------------------------------------------------------------------------
def test_allow_entries_and_default_ports() -> None:
    assert parse_allow_entry("Example.ORG.").host == "example.org"
    assert parse_allow_entry("example.org").ports == (80, 443)
    assert parse_allow_entry("example.org:8443").ports == (8443,)
    assert parse_allow_entry("[2001:db8::1]:443").host == "2001:db8::1"
    assert parse_allow_entry("*.example.org").wildcard
    for bad in ("", "exa mple.org", "example.org:0", "example.org:x", "*.10.0.0.1", "[::1", "a:b:c"):
        with pytest.raises(InvalidInputError):
            parse_allow_entry(bad)
    policy = NetPolicy.parse(["example.org", "api.test:8443", "*.cdn.test"])
    assert policy.check("EXAMPLE.org", 443)[0] is not None
    assert policy.check("example.org", 22) == (None, "port 22 of example.org is not listed")
    assert policy.check("x.cdn.test", 80)[0] is not None and policy.check("cdn.test", 80)[0] is None
    assert policy.check("api.test", 443)[0] is None and policy.check("api.test", 8443)[0] is not None
    assert policy.check("93.184.216.34", 443)[0] is None  # an address is allowed only if listed as such


def test_pins_must_name_a_listed_host() -> None:
    assert NetPolicy.parse(["a.test:81"], {"a.test": "127.0.0.2"}).pins_json() == {"a.test": "127.0.0.2"}
    for resolve in ({"b.test": "127.0.0.2"}, {"a.test": "nope"}, {"a.test:81": "127.0.0.2"}):
        with pytest.raises(InvalidInputError) as err:
            NetPolicy.parse(["a.test:81"], resolve)
        assert err.value.field == "allow_resolve"


@pytest.mark.parametrize(
    "address, kind",
    [("127.0.0.1", "loopback"), ("10.1.2.3", "private"), ("192.168.0.1", "private"), ("172.16.5.5", "private"),
     ("169.254.169.254", "link-local"), ("100.64.0.1", "shared"), ("0.0.0.0", "unspecified"), ("::1", "loopback"),
     ("::ffff:127.0.0.1", "loopback"), ("fe80::1", "link-local"), ("fd00::1", "private"), ("224.0.0.1", "multicast"),
     ("240.0.0.1", "reserved")],
)  # fmt: skip
def test_internal_addresses_are_refused(address: str, kind: str) -> None:
    why = address_refusal(ipaddress.ip_address(address))
    assert why is not None and kind in why


def test_the_hosts_own_addresses_are_refused() -> None:
    assert address_refusal(ipaddress.ip_address("93.184.216.34")) is None
    assert "this host" in str(
        address_refusal(ipaddress.ip_address("93.184.216.34"), [ipaddress.ip_address("93.184.216.34")])
    )
    assert ipaddress.ip_address("127.0.0.1") in host_addresses()


def test_a_listed_name_that_resolves_inside_is_refused_but_an_ip_literal_or_pin_is_not() -> None:
    policy = NetPolicy.parse(["a.test:80", "127.0.0.2:80", "b.test:80"], {"b.test": "127.0.0.3"})
    loop = [ipaddress.ip_address("127.0.0.1")]
    entry = policy.check("a.test", 80)[0]
    assert entry is not None
    assert policy.addresses(entry, "a.test", loop, [])[0] == []
    literal = policy.check("127.0.0.2", 80)[0]
    assert literal is not None and policy.addresses(literal, "127.0.0.2", [], []) == (
        [ipaddress.ip_address("127.0.0.2")],
        None,
    )
    pinned = policy.check("b.test", 80)[0]
    assert pinned is not None and policy.addresses(pinned, "b.test", loop, []) == (
        [ipaddress.ip_address("127.0.0.3")],
        None,
    )


# --- recorded runs and the CLI ----------------------------------------------------------------------
@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    need(bwrap_available(), "bubblewrap (bwrap) is not installed")
    s = init_store(Settings(store=tmp_path / "store", database_url=f"sqlite:///{tmp_path / 'store' / 'l.sqlite'}"))
    yield s
    s.close()


def test_the_run_records_the_allowlist_and_every_decision(store: Store, web: int) -> None:
    session = create_session(store)
    code = (f"import urllib.request\nprint(urllib.request.urlopen('http://web.test.invalid:{web}/').read())\n"
            f"try:\n    urllib.request.urlopen('http://nope.test.invalid:{web}/')\n"
            "except Exception as e:\n    print(e)")  # fmt: skip
    out = run_code(store, session_id=session.session_id, code=code, lang="python", network="allowlist",
                   allowlist=[f"web.test.invalid:{web}"], resolve={"web.test.invalid": "127.0.0.2"})  # fmt: skip
    doc = store.ledger.get(out.envelope.id).payload_value
    assert doc["status"] == "succeeded"
    assert doc["networkPolicy"] == "allowlist" and doc["networkAllowlist"] == [f"web.test.invalid:{web}"]
    assert doc["networkResolve"] == {"web.test.invalid": "127.0.0.2"}
    assert [(d["host"], d["decision"]) for d in doc["networkDecisions"]] == [
        ("web.test.invalid", "allowed"),
        ("nope.test.invalid", "denied"),
    ]
    assert doc["networkDecisions"][1]["reason"] == "nope.test.invalid is not in the allowlist"


def test_cli_allow_needs_allowlist_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need(bwrap_available(), "bubblewrap (bwrap) is not installed")
    use_store(tmp_path, monkeypatch)
    runner = CliRunner()
    assert runner.invoke(app, ["init"]).exit_code == 0
    r = runner.invoke(app, ["run", "-c", "pass", "--allow", "example.org"])
    assert r.exit_code == 2 and "--network allowlist" in r.stderr, r.stderr
    r = runner.invoke(app, ["run", "-c", "pass", "--network", "allowlist", "--allow", "a.test",
                            "--allow-resolve", "b.test=127.0.0.2"])  # fmt: skip
    assert r.exit_code == 2 and "allow_resolve" in r.stderr, r.stderr
    r = runner.invoke(app, ["run", "-c", "pass", "--network", "allowlist", "--allow", "bad host"])
    assert r.exit_code == 2, r.stderr


def test_kernels_in_allowlist_mode_use_the_proxy_too(ws: Path, web: int, host_services: dict[str, Any]) -> None:
    from reviewtrail.provenance.kernels._kernels import PythonKernel

    with PythonKernel(ws, network="allowlist", allowlist=[f"web.test.invalid:{web}"],
                      resolve={"web.test.invalid": "127.0.0.2"}) as k:  # fmt: skip
        first = k.evaluate(
            f"import urllib.request\nprint(urllib.request.urlopen('http://web.test.invalid:{web}/k').read())", 30
        )
        assert first.stdout == f"b'hello /k host=web.test.invalid:{web}'\n".encode(), first.stderr
        assert [d["decision"] for d in first.network_decisions] == ["allowed"]
        port = host_services["port"]
        probe = (f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
                 "    print('connected')\nexcept OSError:\n    print('blocked')")  # fmt: skip
        second = k.evaluate(probe, 30)
        assert second.stdout == b"blocked\n" and second.network_decisions == []  # each evaluation has its own
    assert not accepted(host_services["tcp"])
