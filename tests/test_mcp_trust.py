"""The MCP server keeps the core's promises toward agents (docs/agents/claude-code.md, "Paths",
"Privacy", "Bounded calls"): a path an agent names resolves inside the project or an
``--allow-path`` folder and never onto a secret; private prompts and responses are withheld
unless the server serves them; every argument is named, typed and capped; results are bounded;
malformed messages are answered; a read-only server writes nothing.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import threading
import typing
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from conftest import need
from reviewtrail.agents import TOOL_NAMES, ServerOptions, build_server
from reviewtrail.agents._signature import ITEMS_MAX, STRING_MAX, TEXT_ARGUMENTS, TEXT_MAX
from reviewtrail.agents._start import serving
from reviewtrail.agents._stdio import MESSAGE_MAX, checked_line
from reviewtrail.app import open_store
from reviewtrail.audit import VERIFY_STATUS_FILE
from reviewtrail.errors import ReviewtrailError
from support.human_review import add_item, add_prompt, add_run
from support.mcp_agents import CLI, InProcess, env_for, error_of, head_seq, new_store, ok, run

SECRET = "s3cr3t-line-that-must-never-show"
CALL = {"skill": "research-review", "purpose": "initial-review", "response": "Score 7.", "status": "ok"}


@pytest.fixture
def mcp(tmp_path: Path) -> typing.Iterator[InProcess]:
    root = tmp_path / "project"
    root.mkdir()
    store, settings = new_store(root)
    try:
        yield InProcess(store, settings)
    finally:
        store.close()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the project, holding a secret line."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    path = folder / "shadow"
    path.write_text(f"{SECRET}\n")
    return path


def project(mcp: InProcess) -> Path:
    return mcp.settings.store.parent


def refused_path(result: Any, field: str) -> None:
    """A path refusal: exit 2 naming the argument, and no byte of the secret anywhere in it."""
    error = error_of(result)
    assert (error["field"], error["exitCode"]) == (field, 2), error
    assert "not a path this server may use" in error["message"] or "does not exist" in error["message"]
    assert SECRET not in json.dumps(result.structured_content)
    assert all(SECRET not in c.text for c in result.content if c.type == "text")


# --- paths -------------------------------------------------------------------------------------
def test_run_code_never_reads_a_file_outside_the_project(mcp: InProcess, outside: Path) -> None:
    link = project(mcp) / "link.py"
    link.symlink_to(outside)
    for given in (str(outside), str(link), "/proc/self/environ", "../elsewhere/shadow", "/etc/shadow"):
        before = head_seq(mcp.store)
        refused_path(mcp.call("run_code", {"file": given}), "file")
        assert head_seq(mcp.store) == before


def test_run_code_never_reads_the_store_or_the_signing_key(mcp: InProcess) -> None:
    root = project(mcp)
    key = root / "keys" / "host.pem"
    key.parent.mkdir()
    key.write_text(SECRET)
    mcp.settings = mcp.settings.replace(signing_key=key)
    hard = root / "innocent.py"
    os.link(key, hard)  # a hard link is the same file
    for given in (str(key), str(hard), str(mcp.settings.store / "ledger.sqlite"), ".reviewtrail-missing/../store/x"):
        refused_path(mcp.call("run_code", {"file": given}), "file")


def test_save_trace_reads_files_and_writes_traces_only_inside_the_project(
    mcp: InProcess, outside: Path, tmp_path: Path
) -> None:
    before = head_seq(mcp.store)
    for name in ("prompt_file", "response_file"):
        arguments = {k: v for k, v in CALL.items() if not (name == "response_file" and k == "response")}
        refused_path(mcp.call("save_trace", {**arguments, name: str(outside)}), name)
        refused_path(mcp.call("save_trace", {**arguments, name: "/proc/self/environ"}), name)
    refused_path(mcp.call("save_trace", {**CALL, "native_evidence": str(outside)}), "native_evidence")
    refused_path(mcp.call("save_trace", {**CALL, "project_dir": str(outside.parent)}), "project_dir")
    assert head_seq(mcp.store) == before
    assert not (outside.parent / ".aris").exists()
    inside = project(mcp) / "prompt.md"
    inside.write_text("Review section 3.")
    doc = ok(mcp.call("save_trace", {**CALL, "prompt_file": "prompt.md"}))  # relative to the project
    assert doc["call_number"] == 1 and (project(mcp) / ".aris" / "traces").is_dir()


def test_an_allowed_folder_is_a_root_too(mcp: InProcess, outside: Path) -> None:
    mcp.more = {"allowed_paths": (outside.parent,)}
    doc = ok(mcp.call("save_trace", {**CALL, "prompt_file": str(outside)}))
    assert doc["call_number"] == 1


def test_provenance_never_signs_with_the_store_key_and_verify_reads_no_outside_file(
    mcp: InProcess, outside: Path
) -> None:
    refused_path(mcp.call("provenance", {"spec": "x", "format": "in-toto", "sign_key": str(outside)}), "sign-key")
    for name in ("trusted_keys", "since"):
        refused_path(mcp.call("verify", {name: str(outside)}, writes=False), name)
    refused_path(mcp.call("verify", {"checkpoints": [str(outside)]}, writes=False), "checkpoints")


# --- privacy toward agents ---------------------------------------------------------------------
def _private_campaign(mcp: InProcess) -> str:
    prompt = add_prompt(mcp.store, text=f"Private: {SECRET}", privacy="private")
    runs = [add_run(mcp.store, prompt, "agent-a", response="A says."), add_run(mcp.store, prompt, "agent-b")]
    return add_item(mcp.store, prompt, *runs).item_id


def test_the_queue_withholds_a_private_prompt_with_a_count_and_the_reason(mcp: InProcess) -> None:
    public = add_prompt(mcp.store, text="Public question.")
    add_item(mcp.store, public, add_run(mcp.store, public, "agent-a"), add_run(mcp.store, public, "agent-b"))
    private_item = _private_campaign(mcp)
    result = mcp.call("review_queue", {}, writes=False)
    served = ok(result)
    shown = json.dumps(served) + "".join(c.text for c in result.content if c.type == "text")
    assert SECRET not in shown and "A says." not in shown
    resource = json.dumps(mcp.resource("reviewtrail://review-queue"))
    assert SECRET not in resource and "A says." not in resource
    assert served["withheld"]["count"] == 1 and "--serve-private" in served["withheld"]["reason"]
    [card] = [c for c in served["cards"] if c["itemId"] == private_item]
    assert card["prompt"] is None and [c["response"] for c in card["candidates"]] == [None, None]
    assert "private" in card["withheld"]
    [public_card] = [c for c in served["cards"] if c["itemId"] != private_item]
    assert public_card["prompt"] == "Public question." and "withheld" not in public_card
    decided = ok(mcp.call("review_decide", {"item": private_item, "disposition": "tie"}))
    assert SECRET not in json.dumps(decided) and decided["promptLabel"] is None and "private" in decided["withheld"]
    mcp.more = {"serve_private": True}
    opened = ok(mcp.call("review_queue", {}, writes=False))
    assert SECRET in json.dumps(opened) and opened["withheld"]["count"] == 0


def test_a_sensitive_run_withholds_the_card(mcp: InProcess) -> None:
    prompt = add_prompt(mcp.store, text="Public prompt, sensitive run.")
    runs = [add_run(mcp.store, prompt, "agent-a", privacy="sensitive"), add_run(mcp.store, prompt, "agent-b")]
    add_item(mcp.store, prompt, *runs)
    served = ok(mcp.call("review_queue", {}, writes=False))
    assert served["withheld"]["count"] == 1 and served["cards"][0]["prompt"] is None


# --- strict tool calls -------------------------------------------------------------------------
def test_an_unknown_argument_is_refused_naming_it_and_nothing_is_written(mcp: InProcess) -> None:
    before = head_seq(mcp.store)
    result = mcp.call("save_trace", {**CALL, "prompt": "p", "review_postive": True})
    error = error_of(result)
    assert (error["field"], error["exitCode"]) == ("review_postive", 2)
    assert "not an argument" in error["message"]
    assert head_seq(mcp.store) == before and not (project(mcp) / ".aris").exists()


def test_every_input_schema_states_nulls_caps_and_no_other_argument(mcp: InProcess) -> None:
    async def listed(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = mcp.session(listed)
    assert [t.name for t in tools] == list(TOOL_NAMES)

    def types_of(schema: dict[str, Any]) -> list[dict[str, Any]]:
        return schema.get("anyOf", [schema])

    for tool in tools:
        schema = tool.input_schema
        assert schema["additionalProperties"] is False, tool.name
        for name, prop in schema["properties"].items():
            kinds = types_of(prop)
            if "default" in prop and prop["default"] is None:
                assert {"type": "null"} in kinds, (tool.name, name)
            for kind in kinds:
                if kind.get("type") == "string" and "enum" not in kind:  # an enum is bounded by its values
                    assert kind["maxLength"] == (TEXT_MAX if name in TEXT_ARGUMENTS else STRING_MAX), (tool.name, name)
                if kind.get("type") in ("array", "object"):
                    assert kind["maxItems" if kind["type"] == "array" else "maxProperties"] == ITEMS_MAX, (
                        tool.name,
                        name,
                    )
                    items = kind.get("items", {})
                    if items.get("type") == "string":
                        assert items["maxLength"] == STRING_MAX


def test_run_code_takes_an_explicit_null_project(mcp: InProcess) -> None:
    result = mcp.call("run_code", {"code": "print(1)", "project": None, "timeout": -1})
    assert error_of(result)["field"] != "project"  # null is accepted; the bad timeout is what is refused


def test_a_text_argument_past_its_cap_is_refused_even_on_a_dry_run(mcp: InProcess) -> None:
    result = mcp.call("record_claims", {"text": "x" * (TEXT_MAX + 1), "dry_run": True}, writes=False)
    assert (error_of(result)["field"], error_of(result)["exitCode"]) == ("text", 2)
    long_name = mcp.call("review_queue", {"campaign": "c" * (STRING_MAX + 1)}, writes=False)
    assert error_of(long_name)["field"] == "campaign"
    many = mcp.call("verify", {"checkpoints": ["a"] * (ITEMS_MAX + 1)}, writes=False)
    assert error_of(many)["field"] == "checkpoints"


def test_a_call_waits_at_most_its_limit_for_another(mcp: InProcess) -> None:
    options = ServerOptions(project_dir=project(mcp), call_wait=0.2)
    built = build_server(mcp.store, mcp.settings, options)
    held = threading.Event()
    release = threading.Event()

    def heavy() -> None:
        with built.toolbox.lock:
            held.set()
            release.wait(30)

    thread = threading.Thread(target=heavy)
    thread.start()
    held.wait(10)
    try:

        async def call() -> Any:
            async with Client(built.server) as client:
                return await client.call_tool("review_queue", {})

        async def read() -> str:
            async with Client(built.server) as client:
                try:
                    await client.read_resource("reviewtrail://review-queue")
                except Exception as exc:  # the SDK raises the resource error it was answered with
                    return str(exc)
                return "served"

        result = run(call)
        resource = run(read)
    finally:
        release.set()
        thread.join()
        built.close()
    error = error_of(result)
    assert (error["field"], error["exitCode"]) == ("store", 5)
    assert error["message"] == (
        "store: another call has held the store for 0.2 s; review_queue was not started (nothing was read or "
        "written): call it again"
    )
    assert "another call has held the store for 0.2 s" in resource and "exit code 5" in resource


def test_verify_reads_read_data_and_a_read_only_server_writes_no_status_file(mcp: InProcess) -> None:
    ok(mcp.call("save_trace", {**CALL, "prompt": "Review it."}))
    blob = next(p for p in (mcp.settings.store / "versioning").rglob("blobs/sha256/*") if p.is_file())
    blob.chmod(0o600)
    data = bytearray(blob.read_bytes())
    data[0] ^= 1
    blob.write_bytes(bytes(data))  # same size, other bytes: only a read finds it
    status = mcp.settings.store / VERIFY_STATUS_FILE
    listed = mcp.call("verify", {"read_data": False}, writes=False)
    assert not listed.is_error, listed.structured_content
    read = mcp.call("verify", {"read_data": True}, writes=False)
    assert read.is_error and read.structured_content is not None
    assert any(blob.name in problem for problem in read.structured_content["problems"])
    assert not status.exists()
    mcp.call("verify", {}, writes=True)
    assert status.exists()


def test_a_read_only_server_opens_the_store_read_only(mcp: InProcess) -> None:
    read_only = ServerOptions(project_dir=project(mcp))
    with serving(mcp.settings, read_only) as built, pytest.raises(ReviewtrailError):
        add_prompt(built.toolbox.store, text="written through a read-only server")
    with open_store(mcp.settings) as store:
        assert store.ledger.head() == mcp.store.ledger.head()
    before = head_seq(mcp.store)
    with serving(mcp.settings, ServerOptions(project_dir=project(mcp), allow_writes=True)) as built:
        add_prompt(built.toolbox.store, text="written through a server that allows writes")
    with open_store(mcp.settings) as store:
        assert head_seq(store) > before


# --- messages ----------------------------------------------------------------------------------
def test_a_line_that_is_not_unicode_or_not_json_rpc_is_answered_by_its_id() -> None:
    surrogate = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"a":"\\ud800"}}}'
    refused = json.loads(checked_line(surrogate))
    assert refused["id"] == 7 and refused["params"]["code"] == -32602
    broken = b'{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"name":"x","arguments":{"a":"\xff"}}}'
    assert json.loads(checked_line(broken))["id"] == "q"
    good = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    assert checked_line(good) == good.decode()


def test_over_stdio_every_malformed_request_gets_an_error_and_the_server_goes_on(tmp_path: Path) -> None:
    need(shutil.which("git") is not None, "git is missing")
    new_store(tmp_path)[0].close()
    proc = subprocess.Popen(
        [*CLI, "mcp"], cwd=tmp_path, env=env_for(tmp_path), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None

    def send(raw: bytes) -> None:
        assert proc.stdin is not None
        proc.stdin.write(raw + b"\n")
        proc.stdin.flush()

    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}).encode())
        assert json.loads(proc.stdout.readline())["id"] == 1
        send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        call = '{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"review_queue","arguments":ARGS}}'
        send(call.replace("ID", "2").replace("ARGS", '{"campaign":"\\ud800"}').encode())
        send(call.replace("ID", "3").replace("ARGS", '{"campaign":"').encode() + b'\xff"}}}')
        send(b"x" * (MESSAGE_MAX + 10))  # no id to answer: refused on stderr
        send(b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"a":' + b"x" * (MESSAGE_MAX + 10))
        send(b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"a":' + b"[" * 5000 + b"]" * 5000 + b"}}")
        send(b'{"jsonrpc":"2.0","id":7,"method":')  # cut short
        send(b'\xef\xbb\xbf{"jsonrpc":"2.0","id":8,"method":"ping"}')  # a byte order mark first
        send(call.replace("ID", "4").replace("ARGS", "{}").encode())
        answers = [json.loads(proc.stdout.readline()) for _ in range(7)]
    finally:
        proc.stdin.close()
        proc.wait(30)
    assert [a["id"] for a in answers] == [2, 3, 5, 6, 7, 8, 4]
    assert answers[0]["error"]["code"] == -32602 and "surrogate" in answers[0]["error"]["message"]
    assert answers[1]["error"]["code"] == -32700 and "UTF-8" in answers[1]["error"]["message"]
    assert answers[2]["error"]["code"] == -32700 and "larger than 16,777,216 bytes" in answers[2]["error"]["message"]
    assert answers[3]["error"]["code"] == -32700 and answers[4]["error"]["code"] == -32700
    assert answers[5]["result"] == {}
    assert answers[6]["result"]["structuredContent"]["cards"] == []


# --- bounded results ---------------------------------------------------------------------------
def test_a_run_result_is_bounded_and_carries_its_output_once(mcp: InProcess) -> None:
    need(shutil.which("bwrap") is not None, "bubblewrap (bwrap) is not installed")
    code = "import sys\nsys.stdout.write('a' * 300000 + 'END')"
    result = mcp.call("run_code", {"code": code})
    doc = ok(result)
    out = doc["output"]["stdout"]
    assert doc["outputBytes"]["stdout"] == 300003 and doc["outputTruncated"] is True
    assert len(out) < 70_000 and out.endswith("END") and "bytes not shown" in out
    texts = [c.text for c in result.content if c.type == "text"]
    assert texts and all("aaaa" not in t for t in texts)  # the output is in the structured content only
    assert len(json.dumps(result.model_dump(mode="json"))) < 200_000


def test_over_http_a_message_that_is_not_unicode_gets_a_parse_error(tmp_path: Path) -> None:
    import httpx2

    from support.mcp_agents import start_http, stop

    new_store(tmp_path)[0].close()
    proc, info = start_http(tmp_path)
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    try:
        with httpx2.Client(timeout=60) as http:
            opened = http.post(
                info["url"], headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
            )
            headers["mcp-session-id"] = opened.headers["mcp-session-id"]
            call = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"review_queue","arguments":{"a":"'
            answers = [
                http.post(info["url"], headers=headers, content=call + bad + b'"}}}') for bad in (b"\\ud800", b"\xff")
            ]
    finally:
        stop(proc)
    for answer in answers:
        assert answer.status_code == 400
        assert answer.json()["error"]["code"] == -32700


def test_the_secrets_of_a_server_are_its_store_ledger_cas_key_and_user_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewtrail.agents._toolbox import server_paths
    from reviewtrail.cli.serve._mcp import _options
    from reviewtrail.config import Settings

    root = tmp_path / "project"
    for folder in ("store", "objects", "conf/reviewtrail", "db", "keys"):
        (root / folder).mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "conf"))
    monkeypatch.setenv("REVIEWTRAIL_REVIEW_CAPABILITY_FILE", str(root / "cap.key"))
    monkeypatch.setenv("REVIEWTRAIL_REVIEW_NONCE_FILE", str(root / "nonces.sqlite"))
    settings = Settings(
        store=root / "store",
        database_url=f"sqlite:///{root / 'db' / 'ledger.sqlite'}",
        cas_url=f"file://{root / 'objects'}",
        signing_key=root / "keys" / "host.pem",
    )
    options = _options(False, False, (), False)  # as the command line starts it: the edge reads the environment
    rule = server_paths(settings, dataclasses.replace(options, project_dir=root))
    secrets = ("store/x", "objects/blobs", "conf/reviewtrail/config.toml", "db/ledger.sqlite", "keys/host.pem")
    for secret in (*secrets, "cap.key", "nonces.sqlite"):
        with pytest.raises(ReviewtrailError, match="not a path this server may use"):
            rule.resolve(secret, field="f")
    assert rule.resolve("db/other.txt", field="f") == (root / "db" / "other.txt").resolve()
    assert rule.resolve("keys/other.pem", field="f") == (root / "keys" / "other.pem").resolve()
    s3 = Settings(store=root / "store", database_url="memory:", cas_url="s3://bucket/prefix")
    assert server_paths(s3, ServerOptions(project_dir=root)).resolve("s3:", field="f") == (root / "s3:").resolve()
    for name in ("XDG_CONFIG_HOME", "HOME", "REVIEWTRAIL_REVIEW_CAPABILITY_FILE", "REVIEWTRAIL_REVIEW_NONCE_FILE"):
        monkeypatch.delenv(name, raising=False)  # no user configuration at all
    assert _options(False, False, (), False).secret_paths == ()


def test_the_gate_names_the_tool_and_the_option_that_allows_it(mcp: InProcess) -> None:
    write = error_of(mcp.call("save_trace", {**CALL, "prompt": "p"}, writes=False))
    assert write["message"] == (
        "allow-writes: this call of save_trace writes to the store, and this server was started read-only; start it "
        "with 'reviewtrail mcp --allow-writes' to allow writes (nothing was written)"
    )
    run_refused = error_of(mcp.call("run_code", {"code": "print(1)"}, writes=True, runs=False))
    assert run_refused["message"] == (
        "allow-run: run_code runs code in the sandbox, and this server was started without --allow-run; start it "
        "with 'reviewtrail mcp --allow-writes --allow-run' to allow runs (nothing was run or written)"
    )


def test_each_tool_is_described_by_its_docstring_and_annotated_by_what_it_does(mcp: InProcess) -> None:
    from reviewtrail.agents import WRITE_TOOLS

    async def listed(client: Client) -> Any:
        return (await client.list_tools()).tools

    idempotent = {"review_summary", "review_queue", "provenance", "verify", "link_evidence"}
    for tool in mcp.session(listed):
        assert tool.description and tool.description == tool.description.strip()
        assert tool.description.startswith(tool.name + ":")
        hints = tool.annotations
        assert hints is not None
        assert hints.read_only_hint is (tool.name not in WRITE_TOOLS and tool.name != "verify"), tool.name
        assert hints.destructive_hint is False
        assert hints.idempotent_hint is (tool.name in idempotent), tool.name
        assert hints.open_world_hint is (tool.name == "run_code"), tool.name


# --- writer trust ------------------------------------------------------------------------------
def test_over_mcp_no_tool_serves_or_appends_what_verify_rejects(tmp_path: Path) -> None:
    """A store whose writers must sign: a decision forged at the tail (no signature) is refused by
    the queue and by a decision on its item, by name as verify names it; an agent whose server
    signs with a key the store never declared appends nothing."""
    from support.signed import decision, forge_tail, make_keys, signed_store

    shop = signed_store(tmp_path)
    forged = forge_tail(shop, decision(shop.items[1]))
    with shop.open(shop.key) as store:
        served = InProcess(store, shop.settings(shop.key))
        before = head_seq(store)
        queue = error_of(served.call("review_queue", {}, writes=False))
        decided = error_of(served.call("review_decide", {"item": shop.items[1].item_id, "disposition": "tie"}))
        assert head_seq(store) == before
    for refused in (queue, decided):
        assert refused["exitCode"] == 4 and f"ledger seq {forged.seq}" in refused["message"], refused
    stranger = make_keys(tmp_path / "keys", "stranger")
    with shop.open(stranger) as store:
        served = InProcess(store, shop.settings(stranger))
        before = head_seq(store)
        appended = error_of(served.call("save_trace", {**CALL, "prompt": "p"}))
        assert head_seq(store) == before
    assert appended["exitCode"] == 4 and stranger.key_id in appended["message"], appended


def test_verify_reads_a_checkpoint_of_the_project_through_the_descriptor_it_checked(mcp: InProcess) -> None:
    root = project(mcp)
    ok(mcp.call("save_trace", {**CALL, "prompt": "Review it."}))
    made = subprocess.run(
        [*CLI, "ledger", "checkpoint", "--out", "cp.json"],
        cwd=root,
        env=env_for(root),
        capture_output=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    whole = ok(mcp.call("verify", {"checkpoints": ["cp.json"]}, writes=False))
    since = ok(mcp.call("verify", {"since": "cp.json"}, writes=False))
    assert whole["ok"] and since["ok"] and since["since"] is not None
    (root / "cp-link.json").hardlink_to(root / "cp.json")
    refused = error_of(mcp.call("verify", {"since": "cp.json"}, writes=False))
    assert (refused["field"], refused["exitCode"]) == ("since", 2) and "hard links" in refused["message"]


def test_save_trace_never_writes_through_a_link_out_of_the_project(mcp: InProcess, outside: Path) -> None:
    root = project(mcp)
    (root / ".aris").symlink_to(mcp.settings.store, target_is_directory=True)  # into the store
    before = sorted(p.name for p in mcp.settings.store.iterdir())
    refused_path(mcp.call("save_trace", {**CALL, "prompt": "p"}), "project_dir")
    assert sorted(p.name for p in mcp.settings.store.iterdir()) == before
    (root / ".aris").unlink()
    (root / ".aris").mkdir()
    (root / ".aris" / "traces").symlink_to(outside.parent, target_is_directory=True)
    refused_path(mcp.call("save_trace", {**CALL, "prompt": "p"}), "project_dir")
    assert sorted(p.name for p in outside.parent.iterdir()) == ["shadow"]
