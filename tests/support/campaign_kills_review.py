"""The campaign's kills of human-review commands: SIGKILL mid-command, then ``verify --repair``,
``verify``, and the same command again, which must complete and leave what an uninterrupted run
leaves.

The bases are built once (:func:`prepare_review_kills`) from the populated template: a campaign
``bulk`` of ``PROMPTS`` prompts over two scripted agents, imported with training enabled; then
with its runs; then materialized and every item decided (``prefer A``, for training) through a
scripted ``review session``. A reference export and the item ids of an uninterrupted
materialize are kept beside them, to compare end states with.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
import uuid
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.campaign import Facts, Project, Result
from support.campaign_kills import KillCase, _kill, _settle, _until

__all__ = ["prepare_review_kills", "review_kill_cases"]

Outcome = tuple[str, bool, str]
PROMPTS = 200
BULK = ("bulk", "--version", "1")
PROMPT_TYPE = "stream.thought.source.review.prompt@1"
RUN_TYPE = "human-review.candidate-run@1"


def _entry(i: int, campaign: str = "bulk") -> dict[str, Any]:
    return {
        "campaign": {"id": campaign, "version": 1, "label": "Bulk"},
        "scenarioFamily": f"family-{i % 4}",
        "prompt": f"Prompt {i}: explain the figure. " + "Context line. " * 400,
        "criterion": {"id": "faithful", "version": 1, "label": "Faithful", "instructions": "Prefer the faithful one."},
        "candidateAgentIds": ["agent-a", "agent-b"],
        "externalExportEligible": True,
        "privacy": "public-source",
    }


def prompts_file(campaign: str = "bulk", n: int = PROMPTS) -> bytes:
    return "".join(json.dumps(_entry(i, campaign)) + "\n" for i in range(n)).encode()


AGENTS = {
    "agents": [
        {
            "id": agent_id,
            "model": f"scripted-{agent_id}",
            "provider": "scripted",
            "executionAdapter": "scripted@1",
            "catalogGeneration": "gen-0",
            "backend": {"kind": "scripted", "template": "{agent} answers: {prompt}"},
        }
        for agent_id in ("agent-a", "agent-b")
    ]
}


@dataclass(frozen=True)
class Bases:
    imported: Path  # prompts imported, training on, no runs; bulk-runs.jsonl beside it
    ran: Path  # with every run
    decided: Path  # materialized, every item decided
    items: list[str]  # the item ids an uninterrupted materialize records
    decision: tuple[str, str]  # an item and its decision (for decide kills)
    export: list[str]  # the sha256 of the three files of an uninterrupted export


def _ok(result: Result, what: str) -> Result:
    if result.code != 0:
        raise AssertionError(f"preparing the human-review kills: {what}: {result.describe()}")
    return result


def _runs_file(p: Project) -> bytes:
    """One import line per prompt and agent of ``bulk``: a completed run, its receipt, one output."""
    with closing(sqlite3.connect(f"file:{p.db}?mode=ro", uri=True)) as conn:
        rows = conn.execute("SELECT id, payload, payload_hash, privacy FROM rt_records WHERE type = ?", (PROMPT_TYPE,))
        prompts = [(rid, json.loads(payload), phash, privacy) for rid, payload, phash, privacy in rows]
    lines = []
    for rid, payload, phash, privacy in prompts:
        if payload["campaign"]["id"] != "bulk":
            continue
        for agent_id in ("agent-a", "agent-b"):
            run_id = f"ext-{agent_id}-{rid}"
            run = {
                "runId": run_id,
                "campaign": {"id": "bulk", "version": 1},
                "triggerEventId": rid,
                "agent": {"id": agent_id, "model": f"model-{agent_id}", "provider": "openai",
                          "executionAdapter": "chat-completions@1", "learnedAdapter": None, "catalogGeneration": "g1"},
                "status": "completed",
                "startedAt": "2026-11-30T10:00:00Z",
                "endedAt": "2026-11-30T10:00:02Z",
                "promptHash": "sha256:" + hashlib.sha256(payload["prompt"].encode()).hexdigest(),
            }  # fmt: skip
            receipt = {
                "runId": run_id,
                "inputs": [{"eventId": rid, "payloadHash": phash, "inclusion": "whole"}],
                "toolEvidence": [],
                "externalActionAuthority": False,
            }
            answer = {"response": f"{agent_id} answers {rid}: " + "An imported answer. " * 300}
            lines.append({"run": run, "receipt": receipt, "outputs": [answer], "privacy": privacy})
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def prepare_review_kills(template: Project, work: Path) -> Bases:
    """Once: the bases of the human-review kills (see the module's docstring)."""
    done = work / "hr-kill-bases.json"
    if done.exists():
        doc = json.loads(done.read_text())
        return Bases(**{k: Path(v) if k in ("imported", "ran", "decided") else v for k, v in doc.items()})
    p = template.clone(work / "hr-kill-imported")
    (p.root / "bulk-prompts.jsonl").write_bytes(prompts_file())
    (p.root / "bulk-agents.json").write_text(json.dumps(AGENTS))
    _ok(p.cli("campaign", "import", "bulk-prompts.jsonl"), "campaign import")
    _ok(p.cli("campaign", "settings", *BULK, "--training"), "campaign settings")
    (p.root / "bulk-runs.jsonl").write_bytes(_runs_file(p))
    ran = p.clone(work / "hr-kill-ran")
    _ok(ran.cli("campaign", "run", *BULK, "--agents", "bulk-agents.json"), "campaign run")
    decided = ran.clone(work / "hr-kill-decided")
    report = _ok(decided.cli("campaign", "materialize", *BULK, "--json"), "campaign materialize").json()
    items = sorted(i for prompt in report["prompts"] for i in prompt["created"])
    keys = ("y\na\n1\n\n" * len(items) + "q\n").encode()
    session = _ok(decided.cli("review", "session", *BULK, "--json", stdin=keys), "review session").json()
    if len(session["decisions"]) != len(items):
        raise AssertionError(f"preparing: the session decided {len(session['decisions'])} of {len(items)} items")
    first = session["decisions"][0]
    reference = decided.clone(work / "hr-kill-export-reference")
    exported = _ok(reference.cli("review", "export", *BULK, "--out", "kill-out", "--json"), "review export").json()
    bases = Bases(
        p.root, ran.root, decided.root, items, (first["itemId"], first["decisionId"]),
        [entry["sha256"] for entry in exported["files"]],
    )  # fmt: skip
    doc = {k: str(v) if isinstance(v, Path) else v for k, v in bases.__dict__.items()}
    done.write_text(json.dumps(doc))
    return bases


def _again(p: Project, args: tuple[str, ...], how: str) -> tuple[Result | None, str]:
    """The same command again after the kill and the repair: it must complete (exit 0)."""
    again = p.cli(*args, "--json")
    if again.code != 0 or "Traceback" in again.err:
        return None, f"{how}; the same command again: {again.describe()}"
    return again, ""


def _materialized(p: Project, bases: Bases, how: str) -> str:
    """Every prompt has exactly its one item of one pairable run per agent, nothing excluded."""
    report = p.cli("campaign", "materialize", *BULK, "--json")
    if report.code != 0:
        return f"{how}; materialize afterwards: {report.describe()}"
    doc = report.json()
    items = [i for prompt in doc["prompts"] for i in (*prompt["created"], *prompt["alreadyPresent"])]
    if doc["excludedRuns"] or len(items) != PROMPTS or len(set(items)) != PROMPTS:
        return f"{how}; afterwards {len(set(items))} items of {PROMPTS}, {doc['excludedRuns']} run(s) excluded"
    return ""


def _half_appended(p: Project, before: int) -> str:
    """A run without its receipt or output, or a part without its run (nothing is half-appended)."""
    with closing(sqlite3.connect(f"file:{p.db}?mode=ro", uri=True)) as conn:
        rows = conn.execute("SELECT type, subject FROM rt_records WHERE seq > ?", (before,)).fetchall()
    kinds: dict[str, set[str]] = {}
    for type_, subject in rows:
        kinds.setdefault(subject or "", set()).add(type_)
    whole = {
        "human-review.candidate-run@1",
        "human-review.context-receipt@1",
        "stream.thought.output.review-response@1",
    }
    for subject, types in kinds.items():
        if types & whole and types & whole != whole:
            return f"run {subject} has only {sorted(types & whole)}"
    return ""


def kill_campaign_run(records: int) -> tuple[str, KillCase]:
    name = f"campaign run killed after {records} new records, then run again"

    def case(template: Project, f: Facts, work: Path) -> Outcome:
        bases = prepare_review_kills(template, work)
        p = Project(bases.imported).clone(work / f"kill-hr-run-{uuid.uuid4().hex[:8]}")
        head = p.head_seq() or 0
        proc = p.popen("campaign", "run", *BULK, "--agents", "bulk-agents.json")
        _until(lambda: (p.head_seq() or 0) >= head + records, proc)
        how = _kill(proc)
        outcome = _settle(name, p, how)
        if not outcome[1]:
            return outcome
        if half := _half_appended(p, head):
            return name, False, f"{how}; half-appended: {half}"
        again, why = _again(p, ("campaign", "run", *BULK, "--agents", "bulk-agents.json"), how)
        if again is None:
            return name, False, why
        third = p.cli("campaign", "run", *BULK, "--agents", "bulk-agents.json", "--json")
        counts = third.json()["counts"] if third.code == 0 else {}
        if counts.get("already-present") != 2 * PROMPTS:
            return name, False, f"{how}; a third run is not all already-present: {third.describe()}"
        return name, not (why := _materialized(p, bases, how)), why or how

    return name, case


def kill_import_runs(delay: float) -> tuple[str, KillCase]:
    name = f"campaign import-runs killed {delay:.2f}s after start, then imported again"

    def case(template: Project, f: Facts, work: Path) -> Outcome:
        bases = prepare_review_kills(template, work)
        p = Project(bases.imported).clone(work / f"kill-hr-import-runs-{uuid.uuid4().hex[:8]}")
        head = p.head_seq() or 0
        proc = p.popen("campaign", "import-runs", "bulk-runs.jsonl")
        time.sleep(delay)
        how = _kill(proc)
        outcome = _settle(name, p, how)
        if not outcome[1]:
            return outcome
        if half := _half_appended(p, head):
            return name, False, f"{how}; half-appended: {half}"
        again, why = _again(p, ("campaign", "import-runs", "bulk-runs.jsonl"), how)
        if again is None:
            return name, False, why
        third = p.cli("campaign", "import-runs", "bulk-runs.jsonl", "--json")
        if third.code != 0 or third.json()["imported"] != 0 or third.json()["alreadyPresent"] != 2 * PROMPTS:
            return name, False, f"{how}; a third import is not all already present: {third.describe()}"
        return name, not (why := _materialized(p, bases, how)), why or how

    return name, case


def kill_campaign_import(delay: float) -> tuple[str, KillCase]:
    name = f"campaign import killed {delay:.2f}s after start, then imported again"

    def case(template: Project, f: Facts, work: Path) -> Outcome:
        p = template.clone(work / f"kill-hr-import-{uuid.uuid4().hex[:8]}")
        (p.root / "more.jsonl").write_bytes(prompts_file("bulk-import"))
        proc = p.popen("campaign", "import", "more.jsonl")
        time.sleep(delay)
        how = _kill(proc)
        outcome = _settle(name, p, how)
        if not outcome[1]:
            return outcome
        again, why = _again(p, ("campaign", "import", "more.jsonl"), how)
        if again is None:
            return name, False, why
        doc = again.json()
        if doc["imported"] + doc["alreadyPresent"] != PROMPTS:
            return name, False, f"{how}; imported again: {doc['imported']} + {doc['alreadyPresent']} of {PROMPTS}"
        third = p.cli("campaign", "import", "more.jsonl", "--json")
        if third.code != 0 or third.json()["alreadyPresent"] != PROMPTS:
            return name, False, f"{how}; a third import: {third.describe()}"
        return name, True, how

    return name, case


def kill_materialize(delay: float) -> tuple[str, KillCase]:
    name = f"campaign materialize killed {delay:.2f}s after start, then materialized again"

    def case(template: Project, f: Facts, work: Path) -> Outcome:
        bases = prepare_review_kills(template, work)
        p = Project(bases.ran).clone(work / f"kill-hr-materialize-{uuid.uuid4().hex[:8]}")
        proc = p.popen("campaign", "materialize", *BULK)
        time.sleep(delay)
        how = _kill(proc)
        outcome = _settle(name, p, how)
        if not outcome[1]:
            return outcome
        again, why = _again(p, ("campaign", "materialize", *BULK), how)
        if again is None:
            return name, False, why
        doc = again.json()
        items = sorted(i for prompt in doc["prompts"] for i in (*prompt["created"], *prompt["alreadyPresent"]))
        if items != bases.items:
            return name, False, f"{how}; materialized again: {len(items)} items, not the {len(bases.items)} expected"
        third = p.cli("campaign", "materialize", *BULK, "--json")
        if third.code != 0 or third.json()["created"] != 0:
            return name, False, f"{how}; a third materialize created items: {third.describe()}"
        return name, True, how

    return name, case


def kill_decide(delay: float) -> tuple[str, KillCase]:
    name = f"review decide killed {delay:.2f}s after start, then resubmitted"

    def case(template: Project, f: Facts, work: Path) -> Outcome:
        bases = prepare_review_kills(template, work)
        p = Project(bases.decided).clone(work / f"kill-hr-decide-{uuid.uuid4().hex[:8]}")
        item, decision = bases.decision
        args = ("review", "decide", item, "--tie", "--supersedes", decision, "--submission-id", "kill-submission")
        proc = p.popen(*args)
        time.sleep(delay)
        how = _kill(proc)
        outcome = _settle(name, p, how)
        if not outcome[1]:
            return outcome
        again, why = _again(p, args, how)
        if again is None:
            return name, False, why
        history = p.cli("review", "history", item, "--json")
        doc = history.json() if history.code == 0 else {}
        decisions = doc.get("decisions", [])
        active = [d for d in decisions if d.get("active")]
        if len(decisions) != 2 or len(active) != 1 or active[0]["disposition"] != "tie":
            return name, False, f"{how}; the item's history afterwards: {history.describe()}"
        return name, True, how

    return name, case


def _export_problem(folder: Path) -> str:
    """A manifest entry whose file is missing or differs from what it lists (bytes, sha256)."""
    manifest = folder / "manifest.json"
    if not manifest.exists():
        return ""
    try:
        entries = json.loads(manifest.read_text())["files"]
    except (ValueError, KeyError) as exc:
        return f"manifest.json is not a whole manifest: {exc}"
    for entry in entries:
        path = folder / entry["name"]
        if not path.is_file():
            return f"the manifest lists {entry['name']}, which is missing"
        data = path.read_bytes()
        if len(data) != entry["bytes"] or hashlib.sha256(data).hexdigest() != entry["sha256"]:
            return f"the manifest lists {entry['name']} with {entry['bytes']} bytes, the file holds {len(data)}"
    return ""


def _listed(folder: Path) -> list[dict[str, Any]]:
    manifest = folder / "manifest.json"
    return list(json.loads(manifest.read_text())["files"]) if manifest.exists() else []


def _export_end_state(folder: Path, bases: Bases, exports: int) -> str:
    """What ``exports`` uninterrupted exports into an empty folder leave: a manifest listing the
    three files of the reference export for each, and no other file."""
    entries = _listed(folder)
    if sorted(e["sha256"] for e in entries) != sorted(bases.export * exports):
        return f"the manifest lists {[e['name'] for e in entries]}, not the three files of {exports} export(s)"
    extra = sorted({p.name for p in folder.iterdir()} - {"manifest.json", *(e["name"] for e in entries)})
    return f"files the manifest does not list are left in the folder: {extra}" if extra else ""


def kill_export(point: str, delay: float = 0.0) -> tuple[str, KillCase]:
    """Points: ``delay``, or a file appearing in the export folder (the process is stopped then)."""
    name = "review export killed " + (f"{delay:.2f}s after start" if point == "delay" else f"when {point}")

    def case(template: Project, f: Facts, work: Path) -> Outcome:
        bases = prepare_review_kills(template, work)
        p = Project(bases.decided).clone(work / f"kill-hr-export-{uuid.uuid4().hex[:8]}")
        out = p.root / "kill-out"
        ready = {
            "its first file appears": lambda: any(out.glob("*.jsonl")),
            "its manifest appears": lambda: (out / "manifest.json").exists(),
            "its second file appears": lambda: len(list(out.glob("*.jsonl"))) >= 2,
            "a temporary file appears": lambda: any(out.glob(".*.tmp")),
        }
        proc = p.popen("review", "export", *BULK, "--out", "kill-out")
        if point in ready:
            _until(lambda: out.is_dir() and ready[point](), proc)
        else:
            time.sleep(delay)
        how = _kill(proc)
        if problem := _export_problem(out):
            return name, False, f"{how}; {problem}"
        finished = 1 if out.is_dir() and len(_listed(out)) == 3 else 0  # the kill came after the manifest
        outcome = _settle(name, p, how)
        if not outcome[1]:
            return outcome
        again, why = _again(p, ("review", "export", *BULK, "--out", "kill-out"), how)
        if again is None:
            return name, False, why
        if problem := _export_problem(out) or _export_end_state(out, bases, 1 + finished):
            return name, False, f"{how}; exported again: {problem}"
        return name, True, how

    return name, case


def review_kill_cases(d: Any) -> list[tuple[str, KillCase]]:
    """The human-review kills; ``d(lo, hi)`` draws a seeded delay."""
    cases = [kill_campaign_run(records) for records in (5, 200, 600)]
    cases += [kill_campaign_import(d(0.5, 1.2)) for _ in range(2)]
    cases += [kill_import_runs(d(0.6, 1.6)) for _ in range(2)]
    cases += [kill_materialize(d(0.5, 1.5)) for _ in range(3)]
    cases += [kill_decide(d(0.4, 1.0)) for _ in range(2)]
    points = ("its first file appears", "its second file appears", "its manifest appears", "a temporary file appears")
    cases += [kill_export(point) for point in points]
    cases += [kill_export("delay", d(0.5, 1.5)) for _ in range(2)]
    return cases
