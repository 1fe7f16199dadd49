"""The hostile campaign's tools: a project driven through the real ``reviewtrail`` executable.

A :class:`Project` is a folder holding a store (``.reviewtrail``) and trace files (``.aris``);
every command runs as a subprocess with the store in its environment and the folder as cwd.
:func:`populate` fills one with a record of every kind the CLI writes, so that each query
table has rows; the campaign then copies it once per case (:meth:`Project.clone`).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.pdf import minimal_pdf

__all__ = [
    "EXE",
    "Attack",
    "Facts",
    "Project",
    "Result",
    "Uncaught",
    "checkpoint_wal",
    "populate",
    "remove_ledger",
    "unguarded",
    "write_over",
]

EXE = str(Path(sys.executable).parent / "reviewtrail")
SKILL = "campaign-review"


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)

    def describe(self) -> str:
        return f"exit {self.code}; stderr: {self.err.strip()[-400:]!r}; stdout: {self.out.strip()[-300:]!r}"


@dataclass
class Facts:
    """Ids the cases aim at, collected while populating."""

    session: str = ""
    run_record: str = ""
    run_id: str = ""
    first_generic: str = ""
    claim: str = ""
    evidence: str = ""
    trace_run: str = ""
    extra: dict[str, str] = field(default_factory=dict)


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def store(self) -> Path:
        return self.root / ".reviewtrail"

    @property
    def db(self) -> Path:
        return self.store / "ledger.sqlite"

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWTRAIL_", "ARIS_"))}
        env.update(
            REVIEWTRAIL_STORE=str(self.store),
            REVIEWTRAIL_DATABASE_URL=f"sqlite:///{self.db}",
            REVIEWTRAIL_REVIEWER_ID="campaign-reviewer",
            COLUMNS="200",
            NO_COLOR="1",
        )
        env.update(extra or {})
        return env

    def cli(self, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> Result:
        proc = subprocess.run(
            [EXE, *args], cwd=self.root, env=self.env(env), input=stdin, capture_output=True, timeout=180, check=False
        )
        return Result(proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace"))

    def popen(self, *args: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [EXE, *args], cwd=self.root, env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )

    def verify(self, *extra: str) -> tuple[Result, dict[str, Any]]:
        result = self.cli("verify", "--json", "--project-dir", str(self.root), *extra)
        try:
            doc = result.json()
        except ValueError:
            doc = {}
        return result, doc if isinstance(doc, dict) else {}

    def clone(self, dest: Path) -> Project:
        shutil.copytree(self.root, dest, symlinks=True)
        return Project(dest)

    def connect(self) -> closing[sqlite3.Connection]:
        """An autocommit connection, closed when the ``with`` block ends."""
        return closing(sqlite3.connect(self.db, isolation_level=None))

    def empty_query_tables(self) -> list[str]:
        """The query tables (``rt_p_*``) that hold no row."""
        with self.connect() as conn:
            return [
                name
                for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'rt_p_%'")
                if conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] == 0
            ]

    def head_seq(self) -> int | None:
        """The head seq read straight from the file (read-only), None when unreadable."""
        try:
            with closing(sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)) as conn:
                row = conn.execute("SELECT max(seq) FROM rt_records").fetchone()
        except sqlite3.Error:
            return None
        return int(row[0]) if row and row[0] is not None else None

    def fingerprint(self) -> dict[str, Any]:
        """Head seq plus every blob, workspace file and trace file (locks and ingest temps aside)."""
        files: dict[str, Any] = {p.name: "top" for p in self.root.iterdir()}
        for base in (
            self.store / "versioning",
            self.store / "workspaces",
            self.store / "runs-pending",
            self.root / ".aris",
        ):
            for path in sorted(base.rglob("*")) if base.exists() else []:
                rel = str(path.relative_to(self.root))
                if "/.locks" in rel or "/ingest/" in rel:
                    continue
                files[rel] = path.stat().st_size if path.is_file() else "dir"
        return {"head": self.head_seq(), "files": files}


@contextmanager
def unguarded(project: Project) -> Iterator[sqlite3.Connection]:
    """A connection with the append-only triggers dropped; they are put back exactly as they were."""
    with project.connect() as conn:
        triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
        for name, _ in triggers:
            conn.execute(f'DROP TRIGGER "{name}"')
        try:
            yield conn
        finally:
            for _, sql in triggers:
                conn.execute(sql)


def _ok(result: Result, what: str) -> Result:
    if result.code != 0:
        raise AssertionError(f"populating: {what} failed: {result.describe()}")
    return result


def save_trace(project: Project, purpose: str, response: str, skill: str = SKILL) -> Result:
    return project.cli(
        "trace", "save", "--skill", skill, "--purpose", purpose, "--executor", "codex", "--backend", "claude",
        "--executor-model", "gpt-6-astra", "--requested-reviewer-model", "claude-opus-4", "--status", "ok",
        "--verdict", "almost", "--prompt", f"Please review ({purpose}).", "--response", response,
        "--project-dir", str(project.root), "--json",
    )  # fmt: skip


HUMAN_REVIEW_ENTRY = {
    "campaign": {"id": "canary", "version": 1, "label": "Canary"},
    "scenarioFamily": "numbers",
    "prompt": "Explain the accuracy figure.",
    "criterion": {"id": "faithful", "version": 1, "label": "Faithful", "instructions": "Prefer the faithful one."},
    "candidateAgentIds": ["agent-a", "agent-b"],
    "externalExportEligible": True,
    "privacy": "public-source",
}


def _scripted_agent(agent_id: str, answer: str) -> dict[str, Any]:
    return {
        "id": agent_id, "model": f"scripted-{agent_id}", "provider": "scripted", "executionAdapter": "scripted@1",
        "catalogGeneration": "gen-0", "backend": {"kind": "scripted", "responses": [answer]},
    }  # fmt: skip


HUMAN_REVIEW_AGENTS = {
    "agents": [
        _scripted_agent("agent-a", "Accuracy is 0.91 on the held-out split."),
        _scripted_agent("agent-b", "Accuracy is about 90%."),
    ]
}


def _human_review(p: Project, f: Facts) -> None:
    """A campaign taken through the whole workflow: run, materialize, decide, export, receipt."""
    root = p.root
    (root / "prompts.jsonl").write_text(json.dumps(HUMAN_REVIEW_ENTRY) + "\n")
    _ok(p.cli("campaign", "import", "prompts.jsonl"), "campaign import")
    _ok(p.cli("campaign", "settings", "canary", "--version", "1", "--training"), "campaign settings")
    (root / "agents.json").write_text(json.dumps(HUMAN_REVIEW_AGENTS))
    canary = ("canary", "--version", "1")
    _ok(p.cli("campaign", "run", *canary, "--agents", "agents.json"), "campaign run")
    _ok(p.cli("campaign", "materialize", *canary), "campaign materialize")
    [card] = _ok(p.cli("review", "queue", *canary, "--json"), "review queue").json()
    decided = ("review", "decide", card["itemId"], "--prefer", "A", "--strength", "slight", "--use-for-training")
    f.extra["review_item"] = card["itemId"]
    f.extra["review_decision"] = _ok(p.cli(*decided, "--json"), "review decide").json()["decisionId"]
    export = _ok(p.cli("review", "export", *canary, "--out", "datasets", "--json"), "review export").json()
    if export["exported"] != 1:
        raise AssertionError(f"populating: review export wrote {export['exported']} examples, expected 1")
    (root / "eval.json").write_text(json.dumps({"heldOut": 0.9}))
    receipt = ("--export-manifest", "datasets/manifest.json", "--checkpoint", "ckpt-1", "--eval", "eval.json")
    _ok(p.cli("campaign", "receipt", *canary, *receipt), "campaign receipt")


def populate(root: Path, make: Callable[[Path], Project] = Project) -> tuple[Project, Facts]:
    """A project whose store holds at least one row in every query table the CLI fills (``make``
    gives the project for ``root``: a subclass may put its ledger and objects elsewhere)."""
    root.mkdir(parents=True)
    p, f = make(root), Facts()
    _ok(p.cli("init"), "init")
    f.session = _ok(p.cli("session", "new", "--json"), "session new").json()["sessionId"]
    code = "open('out.md', 'w').write('# Result\\n\\nAccuracy is 0.91.\\n')"
    run = _ok(p.cli("run", "--session", f.session, "-c", code, "--json"), "run").json()
    f.run_record, f.run_id = run["recordId"], run["runId"]
    _ok(p.cli("artifact", "declare", "out.md", "--session", f.session, "--path", "out.md"), "artifact declare")
    (root / "up.csv").write_text("a,b\n1,2\n")
    _ok(p.cli("artifact", "upload", "data.csv", "up.csv"), "artifact upload")
    trace = _ok(save_trace(p, "round-1-review", "Score: 6/10\nVerdict: almost"), "trace save").json()
    _ok(save_trace(p, "round-2-review", "Score: 7/10\nVerdict: ready"), "trace save")
    f.trace_run = trace["run_path"]
    (root / "blob.txt").write_text("a generic object\n")
    ref = _ok(p.cli("cas", "put", "blob.txt", "--json"), "cas put").json()
    payload = json.dumps({"file": ref, "score": 0.91})
    first = _ok(p.cli("ledger", "append", "--type", "eval.result@1", "--actor", "alice", "--privacy", "private",
                      "--payload", payload, "--json"), "ledger append").json()  # fmt: skip
    f.first_generic = first["id"]
    fix = ("--payload", '{"score": 0.92}', "--supersedes", f.first_generic)
    _ok(p.cli("ledger", "append", "--type", "eval.result@1", "--actor", "alice", "--privacy", "private", *fix),
        "ledger append --supersedes")  # fmt: skip
    (root / "reply.md").write_text(f"The model scores 0.91 [run:{f.run_record}]. See [ev:missing] too.\n")
    claims = _ok(p.cli("claims", "extract", "reply.md", "--turn", "t1", "--json"), "claims extract").json()
    f.claim = claims["claims"][0]["claimId"]
    f.evidence = _ok(p.cli("evidence", "add", "--run", f.run_record, "--json"), "evidence add").json()["evidenceId"]
    _ok(p.cli("evidence", "link", f.claim, f.evidence), "evidence link")
    (root / "chips.md").write_text("The model scores 0.91 [ev1].\n")
    (root / "aliases.json").write_text(json.dumps({"ev1": f.evidence}))
    _ok(p.cli("claims", "extract", "chips.md", "--turn", "t2", "--aliases", "aliases.json"), "claims extract --aliases")
    (root / "paper.pdf").write_bytes(minimal_pdf("Scaling helps."))
    _ok(p.cli("evidence", "extract-pdf", "doi:10.1/campaign", "paper.pdf"), "evidence extract-pdf")
    _ok(p.cli("review", "run", "out.md", env={"REVIEWTRAIL_REVIEWER": "quick"}), "review run")
    _human_review(p, f)
    gone = _ok(p.cli("session", "new", "--json"), "session new").json()["sessionId"]
    _ok(p.cli("session", "rm", gone), "session rm")
    f.extra["deleted_session"] = gone
    result, _ = p.verify()
    if result.code != 0:
        raise AssertionError(f"populating: the new store does not verify: {result.describe()}")
    empty = p.empty_query_tables()
    if empty:
        raise AssertionError(f"populating: query tables left empty: {empty}")
    return p, f


# --- shared by the attack modules ----------------------------------------------------------------
Attack = Callable[[Project, Facts, Project], "list[str] | None"]  # returns extra verify arguments


class Uncaught(AssertionError):
    """A command accepted the damage (raised by attacks that also run a command)."""


def remove_ledger(p: Project) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{p.db}{suffix}").unlink(missing_ok=True)


def checkpoint_wal(p: Project) -> None:
    with p.connect() as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for suffix in ("-wal", "-shm"):
        Path(f"{p.db}{suffix}").unlink(missing_ok=True)


def write_over(path: Path, data: bytes) -> None:
    if path.exists():
        path.chmod(0o644)
    path.write_bytes(data)
