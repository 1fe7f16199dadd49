"""``reviewtrail mcp``: the MCP server for agents, driven with the SDK's own client.

Most cases talk to the server in process (``mcp.Client(server)``: the same protocol messages,
no subprocess); the stdio cases start the real ``reviewtrail mcp`` command. Every tool is called
with good input and with bad input (the error names the field, with the command's exit code);
write tools are refused without ``--allow-writes`` (``run_code`` without ``--allow-run``) with
nothing appended; the records the tools write are the records the commands write for the same
input (payloads compared apart from ids and times); the blinded queue never names who produced a
candidate before the decision.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import shutil
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from conftest import need, run_cli
from reviewtrail.agents import TOOL_NAMES, WRITE_TOOLS
from reviewtrail.app import open_store
from reviewtrail.audit import AuditOptions
from reviewtrail.human_review.rules import DecisionInput
from reviewtrail.provenance.artifacts import upload_artifact
from reviewtrail.provenance.runs import run_request
from reviewtrail.store import Store
from reviewtrail.tracing.commands import TraceSaveRequest
from support.human_review import add_item, add_prompt, add_run
from support.mcp_agents import (
    CLI,
    InProcess,
    appended,
    env_for,
    error_of,
    head_seq,
    new_store,
    ok,
    run,
    settings_for,
    shape,
    stdio_server,
)

REVIEW_CALL = {
    "skill": "research-review",
    "purpose": "initial-review",
    "backend": "grok",
    "tool": "mcp__grok__grok",
    "executor": "codex",
    "executor_model": "gpt-5",
    "requested_reviewer_model": "grok-4",
    "reported_reviewer_model": "grok-4",
    "prompt": "Review section 3 of the paper.",
    "response": "Score: 7/10. Verdict: ready.",
    "status": "ok",
    "verdict": "ready",
    "review_completed": True,
    "duration_ms": 1200,
    "files_referenced": ["paper/sections/3_method.tex"],
}


@pytest.fixture
def mcp(tmp_path: Path) -> typing.Iterator[InProcess]:
    store, settings = new_store(tmp_path, reviewer="quick")
    try:
        yield InProcess(store, settings)
    finally:
        store.close()


@pytest.fixture
def bwrap() -> None:
    need(shutil.which("bwrap") is not None, "bubblewrap (bwrap) is not installed")


def as_flags(call: dict[str, Any]) -> list[str]:
    """The ``trace save`` options of a save_trace call."""
    flags: list[str] = []
    for name, value in call.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            flags.append(flag)
        elif isinstance(value, list):
            for item in value:
                flags += [flag, str(item)]
        else:
            flags += [flag, str(value)]
    return flags


# --- the tools and their schemas ----------------------------------------------------------------
def test_the_tools_and_their_input_schemas_come_from_the_request_types(mcp: InProcess) -> None:
    async def listed(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {t.name: t for t in mcp.session(listed)}
    assert list(tools) == list(TOOL_NAMES)

    def properties(name: str) -> set[str]:
        return set(tools[name].input_schema["properties"])

    assert properties("save_trace") == set(TraceSaveRequest.__struct_fields__)
    assert sorted(tools["save_trace"].input_schema["required"]) == ["purpose", "skill"]
    assert properties("review_decide") == set(DecisionInput.__struct_fields__) | {
        "item",
        "reviewer",
        "submission_id",
    }
    disposition = tools["review_decide"].input_schema["properties"]["disposition"]
    assert disposition["enum"] == list(typing.get_args(typing.get_type_hints(DecisionInput)["disposition"]))
    assert properties("verify") == {f.name for f in dataclasses.fields(AuditOptions)} - {"keep_status"}
    keywords = {p.name for p in inspect.signature(run_request).parameters.values()}
    assert properties("run_code") == keywords | {"kernel"}
    reads = {name for name, t in tools.items() if t.annotations is not None and t.annotations.read_only_hint}
    assert reads == {"provenance", "review_summary", "review_queue"}
    assert set(TOOL_NAMES) - reads - {"verify"} == WRITE_TOOLS  # verify writes only with repair


def test_a_schema_refusal_names_the_argument_with_exit_2(mcp: InProcess) -> None:
    error = error_of(mcp.call("save_trace", {"skill": "s", "purpose": "p", "duration_ms": "soon"}))
    assert (error["type"], error["field"], error["exitCode"]) == ("InvalidInputError", "duration_ms", 2)
    error = error_of(mcp.call("save_trace", {"purpose": "p"}))
    assert error["field"] == "skill" and "required" in error["message"].lower()
    error = error_of(mcp.call("review_decide", {"item": "i", "disposition": "maybe"}))
    assert error["field"] == "disposition"
    assert head_seq(mcp.store) == 1  # only the store's identity


# --- save_trace --------------------------------------------------------------------------------
def test_save_trace_writes_the_call_and_records_it(mcp: InProcess, tmp_path: Path) -> None:
    before = head_seq(mcp.store)
    doc = ok(mcp.call("save_trace", {**REVIEW_CALL, "project_dir": str(tmp_path)}))
    assert doc["mode"] == "full" and doc["call_number"] == 1
    assert doc["review_independence"] == "cross-family"  # openai executor, xAI reviewer
    assert doc["acceptance_status"] == "provisional"  # not review_positive
    meta = json.loads(Path(doc["meta_path"]).read_text())
    assert meta["reported_reviewer_model"] == "grok-4" and meta["verdict"] == "ready"
    assert Path(doc["response_path"]).read_text() == REVIEW_CALL["response"]
    types = [r[0] for r in appended(mcp.store, before)]
    assert types == ["trace.save-begun@1", "trace.review-call@1"]
    assert mcp.store.ledger.get(doc["ledger_record_id"]).type == "trace.review-call@1"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"skill": ""}, "skill"),
        ({"purpose": "two words"}, "purpose"),
        ({"status": "o\nk"}, "status"),
        ({"score": 6}, "score"),  # read only with gate
        ({"gate": True, "score": 5, "review_positive": True}, "review-positive"),  # the gate does not grant it
        ({"duration_ms": -3}, "duration_ms"),
        ({"project_dir": "/nonexistent/project"}, "project_dir"),
    ],
)
def test_save_trace_refuses_bad_input_naming_the_field(
    mcp: InProcess, tmp_path: Path, change: dict[str, Any], field: str
) -> None:
    error = error_of(mcp.call("save_trace", {**REVIEW_CALL, "project_dir": str(tmp_path), **change}))
    assert (error["field"], error["exitCode"]) == (field, 2)
    assert head_seq(mcp.store) == 1
    assert not (tmp_path / ".aris").exists()


def test_save_trace_takes_an_empty_optional_value_as_not_given(mcp: InProcess, tmp_path: Path) -> None:
    doc = ok(mcp.call("save_trace", {**REVIEW_CALL, "thread_id": "", "effort": "", "project_dir": str(tmp_path)}))
    request = json.loads(Path(doc["request_path"]).read_text())
    assert request["effort"] is None


# --- run_code and declare_artifact ---------------------------------------------------------------
def test_run_code_records_the_run_and_declare_artifact_makes_a_version(mcp: InProcess, bwrap: None) -> None:
    run_doc = ok(
        mcp.call("run_code", {"code": "open('results.csv','w').write('model,score\\nA,0.81\\n'); print('hi')"})
    )
    assert run_doc["status"] == "succeeded" and run_doc["kernelMode"] != "persistent"
    assert run_doc["output"] == {"stdout": "hi\n", "stderr": ""}
    assert mcp.store.ledger.get(run_doc["recordId"]).type == "provenance.execution-run@1"
    session = run_doc["sessionId"]
    declared = ok(mcp.call("declare_artifact", {"name": "results.csv", "session": session, "path": "results.csv"}))
    assert (declared["name"], declared["version"], declared["origin"]) == ("results.csv", 1, "llm_declared")
    assert declared["derivationIds"] == run_doc["derivationIds"] and declared["warnings"] == []
    lineage = ok(mcp.call("provenance", {"spec": "results.csv@1"}))
    assert any(node["kind"] == "execution_run" for node in lineage["nodes"])
    assert mcp.resource("reviewtrail://artifacts/results.csv/1")["recordId"] == declared["recordId"]
    assert [v["version"] for v in mcp.resource("reviewtrail://artifacts/results.csv")] == [1]
    for change, field in [
        ({"path": "../outside.txt"}, "path"),
        ({"session": "not-a-session"}, "session"),
        ({"name": ""}, "name"),
    ]:
        error = error_of(
            mcp.call("declare_artifact", {"name": "results.csv", "session": session, "path": "results.csv", **change})
        )
        assert (error["field"], error["exitCode"]) == (field, 2)


def test_run_code_keeps_a_persistent_kernel_per_session(mcp: InProcess, bwrap: None) -> None:
    first = ok(mcp.call("run_code", {"code": "x = 41", "kernel": True}))
    session = first["sessionId"]

    async def twice(client: Client) -> list[Any]:  # one server: its kernel lives between calls
        a = await client.call_tool("run_code", {"code": "x = 41", "kernel": True, "session": session})
        b = await client.call_tool("run_code", {"code": "print(x + 1)", "kernel": True, "session": session})
        c = await client.call_tool("run_code", {"code": "1", "kernel": True, "session": session, "env": ["K=V"]})
        return [a, b, c]

    a, b, c = mcp.session(twice)
    assert ok(a)["kernelMode"] == "persistent" and ok(b)["kernelId"] == ok(a)["kernelId"]
    assert ok(b)["output"]["stdout"] == "42\n"
    error = error_of(c)
    assert (error["field"], error["exitCode"]) == ("kernel", 2)


def test_a_failed_run_is_recorded_and_reported_with_exit_7(mcp: InProcess, bwrap: None) -> None:
    result = mcp.call("run_code", {"code": "import sys; print('bad'); sys.exit(3)"})
    assert result.is_error
    assert (result.meta or {})["reviewtrail/exitCode"] == 7
    doc = result.structured_content or {}
    assert doc["status"] == "failed" and doc["exitCode"] == 3 and doc["output"]["stdout"] == "bad\n"
    assert mcp.store.ledger.get(doc["recordId"]).type == "provenance.execution-run@1"


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({}, "code"),
        ({"code": "1", "lang": "ruby"}, "lang"),
        ({"code": "1", "timeout": -1}, "timeout"),
        ({"code": "1", "env": ["NOEQUALS"]}, "env"),
        ({"code": "1", "allow": ["example.org"]}, "allow"),
        ({"code": "1", "max_memory": "lots"}, "max_memory"),
    ],
)
def test_run_code_refuses_bad_input_naming_the_field(mcp: InProcess, arguments: dict[str, Any], field: str) -> None:
    error = error_of(mcp.call("run_code", arguments))
    assert (error["field"], error["exitCode"]) == (field, 2)
    # nothing ran (a bad lang or timeout is found once the session exists, as 'reviewtrail run' finds it)
    assert "provenance.execution-run@1" not in [r[0] for r in appended(mcp.store, 1)]


# --- review_checkpoint, review_summary, provenance ---------------------------------------------
def _upload(mcp: InProcess, tmp_path: Path, text: str = "# Results\n\nAccuracy is 0.91.\n") -> None:
    report = tmp_path / "report.md"
    report.write_text(text)
    upload_artifact(mcp.store, name="report.md", file=report)


def test_review_checkpoint_records_a_review_and_review_summary_gives_it(mcp: InProcess, tmp_path: Path) -> None:
    _upload(mcp, tmp_path)
    error = error_of(mcp.call("review_summary", {"spec": "report.md"}))
    assert (error["field"], error["exitCode"]) == ("review", 3)
    review = ok(mcp.call("review_checkpoint", {"spec": "report.md@1"}))
    assert review["trigger"] == "review_checkpoint" and review["tier"] == "quick"
    assert any(f["code"] == "COMPUTATION_NUMERIC_CLAIM_UNSUPPORTED" for f in review["findings"])
    summary = ok(mcp.call("review_summary", {"spec": "report.md"}))
    assert summary["reviewRunId"] == review["reviewRunId"]
    assert summary["context"].startswith(review["summary"])


def test_review_checkpoint_refuses_bad_input(mcp: InProcess, tmp_path: Path) -> None:
    _upload(mcp, tmp_path)
    for arguments, field, code in [
        ({"spec": "missing.md"}, "name", 3),
        ({"spec": "report.md@x"}, "version", 2),
        ({"spec": "report.md@7"}, "version", 3),
    ]:
        error = error_of(mcp.call("review_checkpoint", arguments))
        assert (error["field"], error["exitCode"]) == (field, code), arguments
    off = InProcess(mcp.store, mcp.settings.replace(reviewer=mcp.settings.reviewer.replace(tier=None)))
    error = error_of(off.call("review_checkpoint", {"spec": "report.md"}))
    assert (error["type"], error["field"], error["exitCode"]) == ("ConfigError", "reviewer", 5)


def test_provenance_gives_each_format_and_refuses_a_bad_one(mcp: InProcess, tmp_path: Path) -> None:
    _upload(mcp, tmp_path)
    graph = ok(mcp.call("provenance", {"spec": "report.md"}))
    assert graph["root"].startswith("artifact_version:")
    statement = ok(mcp.call("provenance", {"spec": "report.md", "format": "in-toto"}))
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    error = error_of(mcp.call("provenance", {"spec": "report.md", "format": "xml"}))
    assert (error["field"], error["exitCode"]) == ("format", 2)
    error = error_of(
        mcp.call("provenance", {"spec": "report.md", "format": "json", "sign_key": str(tmp_path / "k.pem")})
    )
    assert (error["field"], error["exitCode"]) == ("sign-key", 2)


# --- claims and evidence -----------------------------------------------------------------------
def test_record_claims_and_link_evidence(mcp: InProcess) -> None:
    from reviewtrail.evidence import EvidenceRequest, record_evidence

    evidence, _ = record_evidence(mcp.store, EvidenceRequest(paper="doi:10.1000/xyz"))
    doc = ok(
        mcp.call(
            "record_claims",
            {"text": "Accuracy is 0.91 [ev1]. See [run:missing].", "turn": "t-1", "aliases": {"ev1": evidence}},
        )
    )
    assert len(doc["claims"]) == 2 and doc["aliasMap"]["aliases"] == {"ev1": evidence}
    assert doc["unresolved"] == [{"claimId": doc["claims"][1]["claimId"], "citation": "[run:missing]"}]
    claim = doc["claims"][0]["claimId"]
    link = ok(mcp.call("link_evidence", {"claim": claim, "evidence": evidence, "relation": "supports"}))
    again = ok(mcp.call("link_evidence", {"claim": claim, "evidence": evidence}))
    assert again["id"] == link["id"]  # never recorded twice
    for tool, arguments, field, code in [
        ("record_claims", {"text": "x [ev1].", "aliases": {"not a chip": evidence}}, "aliases.not a chip", 2),
        ("record_claims", {"text": "x [ev1].", "aliases": {"ev1": ""}}, "aliases.ev1", 2),
        ("record_claims", {"text": "x.", "artifact": "nothing@1"}, "name", 3),
        ("link_evidence", {"claim": claim, "evidence": evidence, "relation": "proves"}, "relation", 2),
        ("link_evidence", {"claim": "no-claim", "evidence": evidence}, "claim", 3),
        ("link_evidence", {"claim": claim, "evidence": "no-evidence"}, "evidence", 3),
    ]:
        error = error_of(mcp.call(tool, arguments))
        assert (error["field"], error["exitCode"]) == (field, code), arguments


def test_record_claims_dry_run_needs_no_writes(mcp: InProcess) -> None:
    doc = ok(mcp.call("record_claims", {"text": "Accuracy is 0.91 [run:r1].", "dry_run": True}, writes=False))
    assert len(doc["claims"]) == 1 and doc["claims"][0]["recordId"] is None
    assert head_seq(mcp.store) == 1


# --- human review: blinded queue, decisions ------------------------------------------------------
def _campaign(store: Store, *, text: str = "A customer asks for a refund after 40 days. Reply.") -> dict[str, Any]:
    """One prompt with two completed runs (agent-a, agent-b) and their item; what names them."""
    prompt = add_prompt(store, text=text)
    runs = [add_run(store, prompt, "agent-a", response="No refund."), add_run(store, prompt, "agent-b", response="Ok.")]
    item = add_item(store, prompt, *runs)
    return {"item": item.item_id, "names": [*runs, "agent-a", "agent-b", "model-agent-a", "model-agent-b", "openai"]}


def test_the_queue_and_a_refused_decision_never_name_who_produced_a_candidate(mcp: InProcess) -> None:
    made = _campaign(mcp.store)
    result = mcp.call("review_queue", {})
    cards = ok(result)["cards"]
    assert [c["itemId"] for c in cards] == [made["item"]]
    assert sorted(c["response"] for c in cards[0]["candidates"]) == ["No refund.", "Ok."]
    refused = mcp.call("review_decide", {"item": made["item"], "disposition": "prefer", "preferred": "A"})
    assert error_of(refused)["exitCode"] == 2  # a prefer needs its strength
    shown = [
        json.dumps(result.structured_content),
        *(c.text for c in result.content if c.type == "text"),
        json.dumps(refused.structured_content),
        *(c.text for c in refused.content if c.type == "text"),
        json.dumps(mcp.resource("reviewtrail://review-queue")),
        json.dumps(mcp.resource("reviewtrail://review-queue/camp/1")),
    ]
    for text in shown:
        for name in made["names"]:
            assert name not in text
    decided = ok(mcp.call("review_decide", {"item": made["item"], "disposition": "tie"}))
    revealed = json.dumps(decided["provenance"])
    assert "agent-a" in revealed and "agent-b" in revealed  # once decided, as the command shows it
    after = json.dumps(ok(mcp.call("review_queue", {})))
    assert all(name not in after for name in made["names"])


def test_review_decide_records_one_decision_as_the_reviewer(mcp: InProcess) -> None:
    made = _campaign(mcp.store)
    decision = {"item": made["item"], "disposition": "prefer", "preferred": "a", "strength": "slight"}
    first = ok(mcp.call("review_decide", {**decision, "reason_codes": ["wrong-policy"], "submission_id": "s-1"}))
    assert (first["reviewer"], first["disposition"], first["active"]) == ("rev-test", "prefer", True)
    again = ok(mcp.call("review_decide", {**decision, "reason_codes": ["wrong-policy"], "submission_id": "s-1"}))
    assert again["resubmitted"] and again["decisionId"] == first["decisionId"]
    for change, field, code in [
        ({"submission_id": "s-2"}, "supersedes", 6),  # an active decision is never replaced silently
        ({"item": "no-such-item"}, "item", 3),
        ({"reviewer": "bad id!"}, "reviewer", 2),
        ({"supersedes": "not-a-decision", "submission_id": "s-3"}, "supersedes", 2),
    ]:
        error = error_of(mcp.call("review_decide", {**decision, **change}))
        assert (error["field"], error["exitCode"]) == (field, code), change
    nobody = InProcess(mcp.store, mcp.settings, default_reviewer=None)
    error = error_of(nobody.call("review_decide", {**decision, "submission_id": "s-4"}))
    assert (error["type"], error["field"], error["exitCode"]) == ("ConfigError", "reviewer", 5)
    change = {"disposition": "tie", "supersedes": first["decisionId"], "reviewer": "rev-07"}
    later = ok(mcp.call("review_decide", {"item": made["item"], **change}))
    assert later["reviewer"] == "rev-07" and later["superseded"] == 1


def test_review_queue_refuses_bad_input(mcp: InProcess) -> None:
    for arguments, field in [({"limit": 0}, "limit"), ({"limit": 1001}, "limit"), ({"version": 1}, "version")]:
        error = error_of(mcp.call("review_queue", arguments))
        assert (error["field"], error["exitCode"]) == (field, 2)


# --- verify --------------------------------------------------------------------------------------
def test_verify_reports_an_intact_store_and_a_damaged_one(mcp: InProcess, tmp_path: Path) -> None:
    from reviewtrail.evidence import EvidenceRequest, record_evidence

    (tmp_path / "input.txt").write_bytes(b"evidence bytes\n")
    record_evidence(mcp.store, EvidenceRequest(user_input=tmp_path / "input.txt"))  # an object a record names
    ref = mcp.store.cas.put(b"evidence bytes\n")
    doc = ok(mcp.call("verify", {"project_dir": str(tmp_path)}))
    assert doc["ok"] and doc["problems"] == [] and doc["head"]["seq"] == head_seq(mcp.store)
    error = error_of(mcp.call("verify", {"project_dir": str(tmp_path / "nope")}))
    assert (error["field"], error["exitCode"]) == ("project_dir", 2)
    blob = next(p for p in (mcp.settings.store / "versioning").rglob(ref.digest.split(":")[1]))
    blob.chmod(0o644)
    blob.write_bytes(b"tampered bytes\n")
    damaged = mcp.call("verify", {"project_dir": str(tmp_path)})
    assert damaged.is_error and (damaged.meta or {})["reviewtrail/exitCode"] == 4
    report = damaged.structured_content or {}
    assert not report["ok"] and any(ref.digest.split(":")[1] in p for p in report["problems"])


# --- writes and runs refused unless allowed ------------------------------------------------------
WRITES = [
    ("save_trace", {**REVIEW_CALL}),
    ("declare_artifact", {"name": "a.txt", "session": "s", "path": "a.txt"}),
    ("review_checkpoint", {"spec": "report.md"}),
    ("record_claims", {"text": "Accuracy is 0.91 [run:r1]."}),
    ("link_evidence", {"claim": "c", "evidence": "e"}),
    ("review_decide", {"item": "i", "disposition": "tie"}),
    ("verify", {"repair": True}),
    ("run_code", {"code": "open('x','w').write('1')"}),
]


@pytest.mark.parametrize(("tool", "arguments"), WRITES, ids=[w[0] for w in WRITES])
def test_a_write_tool_is_refused_without_allow_writes_and_appends_nothing(
    mcp: InProcess, tmp_path: Path, tool: str, arguments: dict[str, Any]
) -> None:
    _upload(mcp, tmp_path)
    head = mcp.store.ledger.head()
    if tool == "save_trace":
        arguments = {**arguments, "project_dir": str(tmp_path)}
    error = error_of(mcp.call(tool, arguments, writes=False, runs=False))
    assert (error["type"], error["field"], error["exitCode"]) == ("WritesNotAllowedError", "allow-writes", 5)
    assert "--allow-writes" in error["message"]
    assert mcp.store.ledger.head() == head
    assert not (tmp_path / ".aris").exists()
    assert not (mcp.settings.store / "workspaces").exists() or not any((mcp.settings.store / "workspaces").iterdir())


def test_run_code_is_refused_without_allow_run(mcp: InProcess) -> None:
    head = mcp.store.ledger.head()
    error = error_of(mcp.call("run_code", {"code": "print(1)", "kernel": True}, writes=True, runs=False))
    assert (error["field"], error["exitCode"]) == ("allow-run", 5) and "--allow-run" in error["message"]
    assert mcp.store.ledger.head() == head


# --- the same records as the command line ---------------------------------------------------------
@pytest.fixture
def twin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> typing.Iterator[tuple[Path, InProcess]]:
    """A store for the command line (``cli/``, the environment points at it) and one for the MCP
    server (``mcp/``), both new."""
    cli_root, mcp_root = tmp_path / "cli", tmp_path / "mcp"
    cli_root.mkdir()
    mcp_root.mkdir()
    for name, value in env_for(cli_root).items():
        if name.startswith("REVIEWTRAIL_"):
            monkeypatch.setenv(name, value)
    monkeypatch.delenv("ARIS_TRACE_MODE", raising=False)
    monkeypatch.chdir(cli_root)
    code, _, err = run_cli("init")
    assert code == 0, err
    store, settings = new_store(mcp_root)
    try:
        yield cli_root, InProcess(store, settings)
    finally:
        store.close()


def cli_records(root: Path, after: int, *args: str) -> tuple[list[tuple[str, Any]], dict[str, Any]]:
    """Run ``reviewtrail ARGS --json`` on the store under ``root``: the records it appended after
    seq ``after`` and what it printed."""
    code, out, err = run_cli(*args, "--json")
    assert code == 0, err
    with open_store(settings_for(root)) as store:
        return appended(store, after), json.loads(out)


def cli_head(root: Path) -> int:
    with open_store(settings_for(root)) as store:
        return head_seq(store)


def test_save_trace_writes_what_trace_save_writes(twin: tuple[Path, InProcess]) -> None:
    cli_root, mcp = twin
    mcp_root = mcp.settings.store.parent
    records, printed = cli_records(cli_root, 1, "trace", "save", *as_flags(REVIEW_CALL), "--project-dir", str(cli_root))
    before = head_seq(mcp.store)
    doc = ok(mcp.call("save_trace", {**REVIEW_CALL, "project_dir": str(mcp_root)}))
    mine = appended(mcp.store, before)
    # the digests of the files written ("files", "event") cover their timestamps
    assert [shape(r, drop=("files", "event")) for r in mine] == [shape(r, drop=("files", "event")) for r in records]
    assert len(records) == 2
    for key in ("request_path", "meta_path"):
        theirs = json.loads(Path(printed[key]).read_text())
        ours = json.loads(Path(doc[key]).read_text())
        assert shape(ours, drop=("project_dir",)) == shape(theirs, drop=("project_dir",))
    assert Path(doc["response_path"]).read_bytes() == Path(printed["response_path"]).read_bytes()


def test_run_code_and_declare_artifact_write_what_run_and_artifact_declare_write(
    twin: tuple[Path, InProcess],
) -> None:
    cli_root, mcp = twin
    code = "open('out.csv','w').write('a,b\\n1,2\\n')"
    ran, run_doc = cli_records(cli_root, 1, "run", "-c", code)
    before = head_seq(mcp.store)
    mine = ok(mcp.call("run_code", {"code": code}))
    runs = appended(mcp.store, before)
    varying = ("startedAt", "endedAt", "enforcedBy")  # what the machine measured for this run
    assert [shape(r, drop=varying) for r in runs] == [shape(r, drop=varying) for r in ran]
    after = cli_head(cli_root)
    declared, _ = cli_records(
        cli_root, after, "artifact", "declare", "out.csv", "--session", run_doc["sessionId"], "--path", "out.csv"
    )
    before = head_seq(mcp.store)
    ok(mcp.call("declare_artifact", {"name": "out.csv", "session": mine["sessionId"], "path": "out.csv"}))
    assert [shape(r) for r in appended(mcp.store, before)] == [shape(r) for r in declared]
    assert [r[0] for r in declared] == ["provenance.artifact-version@1"]


def test_record_claims_and_link_evidence_write_what_claims_extract_and_evidence_link_write(
    twin: tuple[Path, InProcess],
) -> None:
    cli_root, mcp = twin
    reply = "The model scores 0.91 [ev1].\n\nIt beats the baseline [run:nothing].\n"
    (cli_root / "reply.md").write_text(reply)
    (cli_root / "aliases.json").write_text(json.dumps({"ev1": "ev-paper-1"}))
    claimed, printed = cli_records(
        cli_root, 1, "claims", "extract", "reply.md", "--turn", "t-7", "--aliases", "aliases.json"
    )
    before = head_seq(mcp.store)
    doc = ok(mcp.call("record_claims", {"text": reply, "turn": "t-7", "aliases": {"ev1": "ev-paper-1"}}))
    assert [shape(r) for r in appended(mcp.store, before)] == [shape(r) for r in claimed]
    assert [r[0] for r in claimed] == ["evidence.claim@1", "evidence.claim@1", "evidence.alias-map@1"]
    assert shape(doc) == shape(printed)
    after = cli_head(cli_root)
    added, evidence = cli_records(cli_root, after, "evidence", "add", "--paper", "doi:10.1000/xyz")
    claim = printed["claims"][0]["claimId"]
    linked, _ = cli_records(
        cli_root, after + len(added), "evidence", "link", claim, evidence["evidenceId"], "--relation", "context"
    )
    from reviewtrail.evidence import EvidenceRequest, record_evidence

    mine, _ = record_evidence(mcp.store, EvidenceRequest(paper="doi:10.1000/xyz"))
    before = head_seq(mcp.store)
    ok(mcp.call("link_evidence", {"claim": doc["claims"][0]["claimId"], "evidence": mine, "relation": "context"}))
    assert [shape(r) for r in appended(mcp.store, before)] == [shape(r) for r in linked]


def test_review_decide_writes_what_review_decide_writes(twin: tuple[Path, InProcess]) -> None:
    cli_root, mcp = twin
    with open_store(settings_for(cli_root)) as store:
        theirs = _campaign(store)["item"]
    ours = _campaign(mcp.store)["item"]
    after = cli_head(cli_root)
    flags = ["--prefer", "B", "--strength", "strong", "--reason", "wrong-policy", "--tag", "verbose"]
    decided, printed = cli_records(
        cli_root, after, "review", "decide", theirs, *flags, "--confidence", "0.8", "--submission-id", "sub-1"
    )
    before = head_seq(mcp.store)
    call = {"disposition": "prefer", "preferred": "B", "strength": "strong", "confidence": 0.8}
    call |= {"reason_codes": ["wrong-policy"], "response_tags": ["verbose"], "submission_id": "sub-1"}
    doc = ok(mcp.call("review_decide", {"item": ours, **call}))
    assert [shape(r) for r in appended(mcp.store, before)] == [shape(r) for r in decided]
    assert [r[0] for r in decided] == ["stream.thought.review.decision@1"]
    # Which agent sits at A is drawn from the item's id, which differs between the two stores: the
    # revealed provenance is compared as the set of candidates, everything else as printed.
    assert shape(doc, drop=("provenance",)) == shape(printed, drop=("provenance",))

    def revealed(answer: dict[str, Any]) -> list[str]:
        return sorted(json.dumps(shape(p, drop=("position",)), sort_keys=True) for p in answer["provenance"])

    assert revealed(doc) == revealed(printed) and len(doc["provenance"]) == 2


# --- the real command over stdio -----------------------------------------------------------------
def test_the_command_serves_over_stdio_and_records_a_trace(tmp_path: Path) -> None:
    store, _ = new_store(tmp_path)
    store.close()

    async def session() -> tuple[Any, ...]:
        async with Client(stdio_server(tmp_path, "--allow-writes")) as client:
            tools = (await client.list_tools()).tools
            saved = await client.call_tool("save_trace", {**REVIEW_CALL, "project_dir": str(tmp_path)})
            refused = await client.call_tool("run_code", {"code": "1"})
            bad = await client.call_tool("save_trace", {**REVIEW_CALL, "skill": "no spaces allowed"})
            traces = await client.read_resource("reviewtrail://traces")
            return tools, saved, refused, bad, traces

    tools, saved, refused, bad, traces = run(session)
    assert [t.name for t in tools] == list(TOOL_NAMES)
    doc = ok(saved)
    assert error_of(refused)["field"] == "allow-run"
    assert (error_of(bad)["field"], error_of(bad)["exitCode"]) == ("skill", 2)
    [listed] = json.loads(traces.contents[0].text)
    assert (listed["skill"], listed["run_id"]) == ("research-review", doc["run_id"])
    with open_store(settings_for(tmp_path)) as store:
        assert store.ledger.get(doc["ledger_record_id"]).type == "trace.review-call@1"


def test_the_command_refuses_writes_over_stdio_unless_allowed(tmp_path: Path) -> None:
    store, _ = new_store(tmp_path)
    head = store.ledger.head()
    store.close()

    async def session() -> tuple[Any, Any]:
        async with Client(stdio_server(tmp_path)) as client:
            refused = await client.call_tool("save_trace", {**REVIEW_CALL, "project_dir": str(tmp_path)})
            queue = await client.call_tool("review_queue", {})
            return refused, queue

    refused, queue = run(session)
    assert (error_of(refused)["field"], error_of(refused)["exitCode"]) == ("allow-writes", 5)
    assert ok(queue) == {"cards": [], "withheld": {"count": 0, "reason": None}}
    with open_store(settings_for(tmp_path)) as store:
        assert store.ledger.head() == head
    assert not (tmp_path / ".aris").exists()


def _mcp_process(tmp_path: Path, *args: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    code = "\n".join(
        [
            "import sys",
            prelude,
            "sys.argv = ['reviewtrail', 'mcp', *sys.argv[1:]]",
            "from reviewtrail.cli import main",
            "main()",
        ]
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=tmp_path,
        env=env_for(tmp_path),
        input="",
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_without_the_sdk_the_command_exits_5_naming_the_install(tmp_path: Path) -> None:
    new_store(tmp_path)[0].close()
    done = _mcp_process(tmp_path, "--json", prelude="sys.modules['mcp'] = None  # as if not installed")
    assert done.returncode == 5
    assert "pip install 'reviewtrail[mcp]'" in done.stderr
    assert json.loads(done.stdout)["error"]["field"] == "mcp"


def test_without_a_store_the_command_exits_5_before_serving(tmp_path: Path) -> None:
    done = _mcp_process(tmp_path, "--json")
    assert done.returncode == 5
    assert json.loads(done.stdout)["error"]["type"] == "StoreNotInitializedError"


def test_bad_options_are_refused_before_anything_starts(tmp_path: Path) -> None:
    for args, field in [
        (["--transport", "sse"], "transport"),
        (["--allow-run"], "allow-run"),
        (["--transport", "http", "--host", "0.0.0.0"], "host"),
        (["--allow-path", str(tmp_path / "missing")], "allow-path"),
    ]:
        code, out, _ = run_cli("mcp", *args, "--json")
        assert code == 2, args
        assert json.loads(out)["error"]["field"] == field


def test_the_command_is_documented_with_an_example() -> None:
    done = subprocess.run([*CLI, "mcp", "--help"], capture_output=True, text=True, timeout=60, check=True)
    assert "Example: claude mcp add reviewtrail -- reviewtrail mcp --allow-writes" in done.stdout
    for option in ("--transport", "--host", "--port", "--allow-writes", "--allow-run", "--json"):
        assert option in done.stdout
