"""The campaign's bad inputs to the human-review commands: each must exit with its documented code,
name the field on stderr, append nothing and write nothing.

They run on a copy of the populated template with two more campaigns, their one prompt private:
``third`` imported only, ``second`` run, materialized and decided (:func:`prepare_review_inputs`),
so a case can aim at a decision of another item, a private prompt and a candidate's output.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from support.campaign import HUMAN_REVIEW_ENTRY, Facts, Project, Result
from support.campaign_input_cases import UNKNOWN, BadInput, _case

__all__ = ["prepare_review_inputs", "review_input_cases"]

PROMPT_TYPE = "stream.thought.source.review.prompt@1"
CANARY = ("canary", "--version", "1")
SECOND = {**HUMAN_REVIEW_ENTRY, "campaign": {"id": "second", "version": 1, "label": "Second"}}
SECOND.update(privacy="private", externalExportEligible=False, prompt="Explain the recall figure.")


def _ok(result: Result, what: str) -> Result:
    if result.code != 0:
        raise AssertionError(f"preparing the human-review bad inputs: {what}: {result.describe()}")
    return result


def _records(p: Project, type_: str) -> list[tuple[str, dict[str, Any], str, str, str | None]]:
    with closing(sqlite3.connect(f"file:{p.db}?mode=ro", uri=True)) as conn:
        rows = conn.execute(
            "SELECT id, payload, payload_hash, privacy, subject FROM rt_records WHERE type = ? ORDER BY seq", (type_,)
        ).fetchall()
    return [(rid, json.loads(payload), phash, privacy, subject) for rid, payload, phash, privacy, subject in rows]


def prepare_review_inputs(template: Project, work: Path) -> tuple[Project, Facts]:
    """Once: the template with the campaign ``second`` decided; its facts (``f.extra``) name the ids."""
    base, done = work / "hr-inputs-base", work / "hr-inputs-facts.json"
    if done.exists():
        return Project(base), Facts(extra=json.loads(done.read_text()))
    p = template.clone(work / "hr-inputs-build")
    (p.root / "second.jsonl").write_text(json.dumps(SECOND) + "\n")
    _ok(p.cli("campaign", "import", "second.jsonl"), "campaign import")
    (p.root / "third.jsonl").write_text(json.dumps({**SECOND, "campaign": {"id": "third", "version": 1, "label": "T"}}))
    _ok(p.cli("campaign", "import", "third.jsonl"), "campaign import")  # no runs: a run calls its agents
    (p.root / "third.jsonl").unlink()
    second = ("second", "--version", "1")
    _ok(p.cli("campaign", "run", *second, "--agents", "agents.json"), "campaign run")
    _ok(p.cli("campaign", "materialize", *second), "campaign materialize")
    [card] = _ok(p.cli("review", "queue", *second, "--json"), "review queue").json()
    decided = _ok(p.cli("review", "decide", card["itemId"], "--tie", "--json"), "review decide").json()
    (p.root / "second.jsonl").unlink()
    prompts = {
        payload["campaign"]["id"]: (rid, payload, phash) for rid, payload, phash, _, _ in _records(p, PROMPT_TYPE)
    }
    outputs = _records(p, "stream.thought.output.review-response@1")
    extra = {
        "canary_item": card["itemId"],
        "second_item": card["itemId"],
        "second_decision": decided["decisionId"],
        "second_submission": decided["submissionId"],
        "second_prompt": prompts["second"][0],
        "second_prompt_hash": prompts["second"][2],
        "second_prompt_text": prompts["second"][1]["prompt"],
        "output": outputs[0][0],
        "output_response": outputs[0][1]["response"],
    }
    [canary] = _ok(p.cli("review", "queue", *CANARY, "--json"), "review queue").json()
    extra["canary_item"] = canary["itemId"]
    p.root.rename(base)
    done.write_text(json.dumps(extra))
    return Project(base), Facts(extra=extra)


def _run_line(x: dict[str, str], **changes: Any) -> dict[str, Any]:
    """An import line of a completed run over the private prompt of ``second``."""
    run = {
        "runId": "ext-bad-run-1",
        "campaign": {"id": "second", "version": 1},
        "triggerEventId": x["second_prompt"],
        "agent": {"id": "agent-a", "model": "m", "provider": "openai", "executionAdapter": "chat@1",
                  "learnedAdapter": None, "catalogGeneration": "g1"},
        "status": "completed",
        "startedAt": "2026-11-30T10:00:00Z",
        "endedAt": "2026-11-30T10:00:02Z",
        "promptHash": "sha256:" + hashlib.sha256(x["second_prompt_text"].encode()).hexdigest(),
    }  # fmt: skip
    run.update(changes.pop("run", {}))
    receipt = {
        "runId": run["runId"],
        "inputs": [{"eventId": x["second_prompt"], "payloadHash": x["second_prompt_hash"], "inclusion": "whole"}],
        "toolEvidence": [],
        "externalActionAuthority": False,
    }
    receipt.update(changes.pop("receipt", {}))
    line = {"run": run, "receipt": receipt, "outputs": [{"response": "An imported answer."}], "privacy": "private"}
    line.update(changes)
    return line


def _jsonl(*lines: dict[str, Any]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def _entry(**changes: Any) -> bytes:
    return _jsonl({**HUMAN_REVIEW_ENTRY, "campaign": {"id": "fresh", "version": 1, "label": "Fresh"}, **changes})


def _agent(**changes: Any) -> dict[str, Any]:
    agent = {"id": "agent-a", "model": "m", "provider": "scripted", "executionAdapter": "scripted@1",
             "catalogGeneration": "g", "backend": {"kind": "scripted", "responses": ["an answer"]}}  # fmt: skip
    return {**agent, **changes}


def _agents(*agents: dict[str, Any]) -> bytes:
    return json.dumps({"agents": list(agents)}).encode()


def _import_cases() -> list[BadInput]:
    imp = ("campaign", "import")
    alias = b"- &e\n  campaign: {id: fresh, version: 1, label: F}\n- *e\n"
    long_prompt = _entry(prompt="p" * 32_769)
    return [
        _case("campaign import: bad YAML", {2}, *imp, "p.yaml", files={"p.yaml": b"- campaign: {id: x\n"},
              field="line 2: file"),
        _case("campaign import: YAML alias", {2}, *imp, "p.yaml", files={"p.yaml": alias}, field="line 1: file"),
        _case("campaign import: externalExportEligible on a private prompt", {2}, *imp, "p.jsonl",
              files={"p.jsonl": _entry(privacy="private")}, field="line 1: externalExportEligible"),
        _case("campaign import: over-long prompt", {2}, *imp, "p.jsonl", files={"p.jsonl": long_prompt},
              field="line 1: prompt"),
        _case("campaign import: a candidate agent twice", {2}, *imp, "p.jsonl",
              files={"p.jsonl": _entry(candidateAgentIds=["agent-a", "agent-a"])}, field="line 1: candidateAgentIds"),
        _case("campaign import: an unknown field", {2}, *imp, "p.jsonl", files={"p.jsonl": _entry(colour="red")},
              field="line 1: colour"),
        _case("campaign import: no privacy", {2}, *imp, "p.jsonl",
              files={"p.jsonl": _jsonl({k: v for k, v in HUMAN_REVIEW_ENTRY.items() if k != "privacy"})},
              field="line 1: privacy"),
        _case("campaign import: campaign version 0", {2}, *imp, "p.jsonl",
              files={"p.jsonl": _entry(campaign={"id": "fresh", "version": 0, "label": "F"})},
              field="line 1: campaign.version"),
        _case("campaign import: an empty file", {2}, *imp, "p.jsonl", files={"p.jsonl": b"\n"}, field="file"),
        _case("campaign import: a line that is a list", {2}, *imp, "p.jsonl", files={"p.jsonl": b"[1, 2]\n"},
              field="line 1: entry"),
        _case("campaign import: missing file", {2, 3}, *imp, "missing.jsonl", field="file"),
    ]  # fmt: skip


def _run_cases() -> list[BadInput]:
    run = ("campaign", "run", *CANARY, "--agents", "a.json")
    third = ("campaign", "run", "third", "--version", "1", "--agents", "a.json")
    no_model = {k: v for k, v in _agent().items() if k != "model"}
    anthropic = _agent(backend={"kind": "anthropic", "apiKeyEnv": "RT_CAMPAIGN_NO_SUCH_KEY"})
    return [
        _case("campaign run: an agent without a model", {2}, *run, files={"a.json": _agents(no_model)},
              field="agents[0].model"),
        _case("campaign run: unknown backend kind", {2}, *run,
              files={"a.json": _agents(_agent(backend={"kind": "telepathy"}))}, field="agents[0].backend.kind"),
        _case("campaign run: apiKeyEnv variable missing", {5}, *third, files={"a.json": _agents(anthropic)},
              field="backend.apiKeyEnv"),
        _case("campaign run: an agent id twice", {2}, *run, files={"a.json": _agents(_agent(), _agent())},
              field="agents[1].id"),
        _case("campaign run: no agents", {2}, *run, files={"a.json": _agents()}, field="agents"),
        _case("campaign run: YAML alias in the agents file", {2}, "campaign", "run", *CANARY, "--agents", "a.yaml",
              files={"a.yaml": b"agents:\n  - &a {id: agent-a}\n  - *a\n"}, field="line 2: file"),
        _case("campaign run: unknown campaign", {3}, "campaign", "run", "nope", "--version", "1", "--agents",
              "agents.json", field="campaign"),
    ]  # fmt: skip


def _import_runs_cases(x: dict[str, str]) -> list[BadInput]:
    imp = ("campaign", "import-runs", "r.jsonl")
    other = _run_line(x, receipt={"runId": "another-run"})
    bad_output = _run_line(x, outputs=[{"text": "no response field"}])
    return [
        _case("campaign import-runs: a line that is not JSON", {2}, *imp, files={"r.jsonl": b"{not json\n"},
              field="line 1: line"),
        _case("campaign import-runs: unknown trigger", {2, 3}, *imp,
              files={"r.jsonl": _jsonl(_run_line(x, run={"triggerEventId": UNKNOWN}))},
              field="line 1: run.triggerEventId"),
        _case("campaign import-runs: privacy more open than the prompt", {2}, *imp,
              files={"r.jsonl": _jsonl(_run_line(x, privacy="public-source"))}, field="line 1: privacy"),
        _case("campaign import-runs: a run id twice", {2}, *imp,
              files={"r.jsonl": _jsonl(_run_line(x), _run_line(x))}, field="line 2: run.runId"),
        _case("campaign import-runs: a receipt naming another run", {2}, *imp, files={"r.jsonl": _jsonl(other)},
              field="line 1: receipt.runId"),
        _case("campaign import-runs: an output without a response", {2}, *imp, files={"r.jsonl": _jsonl(bad_output)},
              field="line 1: outputs.0.text"),  # the unknown field is named first
        _case("campaign import-runs: an unknown status", {2}, *imp,
              files={"r.jsonl": _jsonl(_run_line(x, run={"status": "finished"}))}, field="line 1: run.status"),
    ]  # fmt: skip


def _decide_cases(x: dict[str, str]) -> list[BadInput]:
    item = x["canary_item"]
    dec = ("review", "decide", item)
    return [
        _case("review decide: two dispositions", {2}, *dec, "--tie", "--skip", field="disposition"),
        _case("review decide: no disposition", {2}, *dec, "--reason", "x", field="disposition"),
        _case("review decide: --prefer C", {2}, *dec, "--prefer", "C", "--strength", "slight", field="preferred"),
        _case("review decide: --strength without --prefer", {2}, *dec, "--tie", "--strength", "slight",
              field="strength"),
        _case("review decide: unknown reason code", {2}, *dec, "--tie", "--reason", "not-allowed",
              field="reasonCodes"),
        _case("review decide: three tags", {2}, *dec, "--tie", "--tag", "a", "--tag", "b", "--tag", "c",
              field="responseTags"),
        _case("review decide: confidence 2", {2}, *dec, "--tie", "--confidence", "2", field="confidence"),
        _case("review decide: a note too long", {2}, *dec, "--tie", "--note", "n" * 2001, field="note"),
        _case("review decide: --supersedes a decision of another item", {2}, *dec, "--tie", "--supersedes",
              x["second_decision"], field="supersedes"),
        _case("review decide: unknown item", {3}, "review", "decide", UNKNOWN, "--tie", field="item"),
        _case("review decide: --correct an empty file", {2}, *dec, "--correct", "empty.txt",
              files={"empty.txt": b""}, field="replacement"),
        _case("review decide: a submission id of another item", {6}, *dec, "--tie", "--submission-id",
              x["second_submission"], field="submissionId"),
        _case("review decide: no reviewer id", {5}, *dec, "--tie", env={"REVIEWTRAIL_REVIEWER_ID": ""},
              field="reviewer"),
        _case("review decide: a reviewer id with a space", {2}, *dec, "--tie", "--reviewer", "ann smith",
              field="reviewer"),
        _case("review decide: a decided item without --supersedes", {6}, "review", "decide", x["second_item"],
              "--tie", field="supersedes"),
        _case("review session: no reviewer id", {5}, "review", "session", "canary", "--version", "1",
              env={"REVIEWTRAIL_REVIEWER_ID": ""}, field="reviewer"),
    ]  # fmt: skip


def _other_cases(x: dict[str, str]) -> list[BadInput]:
    receipt = ("campaign", "receipt", *CANARY, "--checkpoint", "c")
    return [
        _case("review export: --out a file", {2}, "review", "export", *CANARY, "--out", "up.csv", field="out"),
        _case("review export: unknown campaign", {3}, "review", "export", "nope", "--version", "1", "--out", "new-out",
              field="campaign"),
        _case("review export: unknown campaign version", {3}, "review", "export", "canary", "--version", "9",
              "--out", "datasets", field="campaign"),
        _case("campaign reclassify: more open privacy", {2}, "campaign", "reclassify", x["second_prompt"],
              "--privacy", "public-source", "--reason", "r", field="privacy"),
        _case("campaign reclassify: the privacy in force", {2}, "campaign", "reclassify", x["second_prompt"],
              "--privacy", "private", "--reason", "r", field="privacy"),
        _case("campaign reclassify: a decision record", {2}, "campaign", "reclassify", x["second_decision"],
              "--privacy", "sensitive", "--reason", "r", field="record"),
        _case("campaign reclassify: unknown record", {3}, "campaign", "reclassify", UNKNOWN,
              "--privacy", "sensitive", "--reason", "r", field="record"),
        _case("campaign correct-output: empty response file", {2}, "campaign", "correct-output", x["output"],
              "--response-file", "empty.txt", files={"empty.txt": b""}, field="response"),
        _case("campaign correct-output: the response in force", {2}, "campaign", "correct-output", x["output"],
              "--response-file", "same.txt", files={"same.txt": x["output_response"].encode()}, field="response"),
        _case("campaign receipt: eval not an object", {2}, *receipt, "--export-manifest", "datasets/manifest.json",
              "--eval", "e.json", files={"e.json": b"[0.9]"}, field="eval"),
        _case("campaign receipt: manifest missing", {2, 3}, *receipt, "--export-manifest", "missing.json",
              "--eval", "eval.json", field="export-manifest"),
        _case("campaign standings: --rounds -1", {2}, "campaign", "standings", *CANARY, "--rounds", "-1",
              field="rounds"),
        _case("campaign standings: --rounds 10001", {2}, "campaign", "standings", *CANARY, "--rounds", "10001",
              field="rounds"),
        _case("review queue: --limit 0", {2}, "review", "queue", "--limit", "0", field="limit"),
        _case("review history: unknown item", {3}, "review", "history", UNKNOWN, field="item"),
    ]  # fmt: skip


def review_input_cases(f: Facts) -> list[list[BadInput]]:
    """The human-review cases, in groups that share one ``verify``."""
    x = f.extra
    return [_import_cases() + _run_cases(), _import_runs_cases(x) + _other_cases(x), _decide_cases(x)]
