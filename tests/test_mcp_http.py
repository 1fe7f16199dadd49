"""``reviewtrail mcp --transport http``: a real server process on a free loopback port, driven
with the SDK's streamable HTTP client (``streamable_http_client`` over an ``httpx2.AsyncClient``).

It listens on loopback only (any other address is exit 2, field ``host``, before the store is
opened), announces the address it bound, answers only requests whose ``Host`` and ``Origin`` are
loopback names (DNS-rebinding protection), and keeps the stdio server's rules: writes refused
unless ``--allow-writes``.
"""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from reviewtrail.agents import TOOL_NAMES
from reviewtrail.app import open_store
from support.mcp_agents import CLI, env_for, error_of, new_store, ok, run, settings_for, start_http, stop

CALL = {
    "skill": "auto-review-loop",
    "purpose": "round-1-review",
    "executor_model": "gpt-5",
    "reported_reviewer_model": "claude-opus-4",
    "prompt": "Review the method.",
    "response": "Score 6. Verdict: almost.",
    "verdict": "almost",
    "review_completed": True,
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    new_store(tmp_path)[0].close()
    return tmp_path


def test_the_http_server_serves_the_tools_and_records_what_they_write(project: Path) -> None:
    proc, info = start_http(project, "--host", "localhost", "--allow-writes")
    try:
        assert (info["host"], info["transport"], info["allowWrites"]) == ("127.0.0.1", "http", True)
        assert info["url"] == f"http://127.0.0.1:{info['port']}/mcp" and info["port"] > 0

        async def session() -> tuple[Any, ...]:
            async with (
                httpx2.AsyncClient(timeout=60) as http,
                Client(streamable_http_client(info["url"], http_client=http)) as client,
            ):
                tools = (await client.list_tools()).tools
                saved = await client.call_tool("save_trace", {**CALL, "project_dir": str(project)})
                bad = await client.call_tool("save_trace", {**CALL, "duration_ms": -1})
                queue = await client.read_resource("reviewtrail://review-queue")
                verified = await client.call_tool("verify", {"project_dir": str(project)})
                return tools, saved, bad, queue, verified

        tools, saved, bad, queue, verified = run(session)
    finally:
        stop(proc)
    assert [t.name for t in tools] == list(TOOL_NAMES)
    doc = ok(saved)
    assert doc["acceptance_status"] == "provisional" and doc["call_number"] == 1
    assert (error_of(bad)["field"], error_of(bad)["exitCode"]) == ("duration_ms", 2)
    assert json.loads(queue.contents[0].text) == {"cards": [], "withheld": {"count": 0, "reason": None}}
    assert ok(verified)["ok"] is True
    with open_store(settings_for(project)) as store:
        record = store.ledger.get(doc["ledger_record_id"])
    assert record.type == "trace.review-call@1"
    assert record.payload_value["meta"]["reported_reviewer_model"] == "claude-opus-4"


def test_a_read_only_http_server_refuses_writes(project: Path) -> None:
    with open_store(settings_for(project)) as store:
        head = store.ledger.head()
    proc, info = start_http(project)
    try:
        assert info["allowWrites"] is False

        async def session() -> Any:
            async with Client(info["url"]) as client:
                return await client.call_tool("save_trace", {**CALL, "project_dir": str(project)})

        refused = run(session)
    finally:
        stop(proc)
    error = error_of(refused)
    assert (error["field"], error["exitCode"]) == ("allow-writes", 5)
    with open_store(settings_for(project)) as store:
        assert store.ledger.head() == head
    assert not (project / ".aris").exists()


def test_requests_naming_another_host_or_origin_are_refused(project: Path) -> None:
    proc, info = start_http(project, "--allow-writes")
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    try:
        with httpx2.Client(timeout=30) as http:
            rebound = http.post(info["url"], json=hello, headers={**headers, "Host": "attacker.example"})
            cross = http.post(info["url"], json=hello, headers={**headers, "Origin": "http://attacker.example"})
            fine = http.post(info["url"], json=hello, headers=headers)
    finally:
        stop(proc)
    assert rebound.status_code == 421
    assert cross.status_code == 403
    assert fine.status_code == 200


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.7", "::", "example.org", "10.0.0.1"])
def test_a_non_loopback_host_is_refused_before_anything_is_opened(tmp_path: Path, host: str) -> None:
    # no store here: the address is refused (exit 2) before the store would be found missing (exit 5)
    done = subprocess.run(
        [*CLI, "mcp", "--transport", "http", "--host", host, "--json"],
        cwd=tmp_path,
        env=env_for(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert error["field"] == "host" and repr(host) in error["message"]
    assert not (tmp_path / "store").exists()


def test_a_port_in_use_is_exit_5_naming_it(project: Path) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        port = taken.getsockname()[1]
        done = subprocess.run(
            [*CLI, "mcp", "--transport", "http", "--port", str(port), "--json"],
            cwd=project,
            env=env_for(project),
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        taken.close()
    assert done.returncode == 5
    error = json.loads(done.stdout)["error"]
    assert error["field"] == "port" and str(port) in error["message"]
