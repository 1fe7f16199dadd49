"""The end-to-end workflow of every package in both configurations a store runs in: ``embedded``
(the SQLite ledger and the store folder's files) and ``postgres+s3`` (the ledger in PostgreSQL, the
objects in an S3 bucket), given by the ``store_backend`` fixture (tests/contracts/store_backend.py).

Every workflow checks its real outputs, ends with ``reviewtrail verify`` passing, and checks that
each object the chain references is where the configuration keeps it (in the bucket, and nothing
in the store's folder, for ``postgres+s3``). The workflows of this file drive the real
``reviewtrail`` executable, one process per command; the others run the commands in process:

==============  ===========================================================================
package         workflow
==============  ===========================================================================
cas             tests/test_cli.py::test_put_cat_verify_round_trip
ledger          tests/test_cli.py::test_ledger_append_tail_show_and_verify
provenance      tests/test_provenance_cli.py::test_session_run_declare_diff_provenance
evidence        tests/test_review_cli.py::test_claims_evidence_review_flow (claims, evidence, links)
reviewer        tests/test_review_cli.py::test_claims_evidence_review_flow (a Quick review)
tracing         :func:`test_tracing_saves_into_the_store_and_checks_the_files_against_it`
human_review    :func:`test_human_review_from_campaign_to_verified_export`
web             :func:`test_the_inspector_reads_the_store`
==============  ===========================================================================
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from conftest import need
from contracts.store_backend import StoreBackend
from support.web import announcing

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
REVIEWTRAIL = Path(sys.executable).parent / "reviewtrail"
DEMO_DATA = ROOT / "scripts" / "demo_data"
CAMPAIGN = ("support-triage", "--version", "1")
PRIVATE_PROMPT = "Dana Whitfield"  # the campaign's private prompt names a customer


class Cli:
    """The ``reviewtrail`` executable in ``cwd``, with the environment of one store configuration."""

    def __init__(self, backend: StoreBackend, cwd: Path) -> None:
        need(REVIEWTRAIL.is_file(), f"the reviewtrail console script is not installed beside {sys.executable}")
        self.backend = backend
        self.cwd = cwd
        cwd.mkdir(parents=True, exist_ok=True)
        self.env = backend.process_env(
            PATH=f"{REVIEWTRAIL.parent}:/usr/local/bin:/usr/bin:/bin", REVIEWTRAIL_REVIEWER_ID="rev-e2e", COLUMNS="200"
        )

    def run(self, *args: str, code: int = 0, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(REVIEWTRAIL), *args],
            cwd=self.cwd,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == code, (
            f"reviewtrail {' '.join(args)} on {self.backend.name}: exit {done.returncode}, not {code}\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
        return done

    def json(self, *args: str, code: int = 0, env: dict[str, str] | None = None) -> Any:
        return json.loads(self.run(*args, "--json", code=code, env=env).stdout)

    def verify(self, *args: str) -> dict[str, Any]:
        """``reviewtrail verify`` passes; its report."""
        report: dict[str, Any] = self.json("verify", *args)
        assert report["ok"] is True, report
        return report

    def referenced_digests(self) -> set[str]:
        """Every CAS address the ledger's records reference (typed refs ``{pool, digest, ...}``)."""
        found: set[str] = set()

        def walk(value: Any) -> None:
            if isinstance(value, dict):
                if isinstance(value.get("digest"), str) and "pool" in value:
                    found.add(value["digest"])
                for inner in value.values():
                    walk(inner)
            elif isinstance(value, list):
                for inner in value:
                    walk(inner)

        for record in self.json("ledger", "tail", "-n", "100000"):
            walk(record["payload"])
        return found


@pytest.fixture
def cli(store_backend: StoreBackend, tmp_path: Path) -> Cli:
    """A new store in the fixture's configuration (``reviewtrail init``), commands run in ``tmp_path/work``."""
    cli = Cli(store_backend, tmp_path / "work")
    info = cli.json("init")
    assert info["records"] == 1 and info["databaseUrl"] == store_backend.settings().database_url
    return cli


def _check_objects(cli: Cli) -> set[str]:
    """Every object the chain references is where the configuration keeps it; their addresses."""
    referenced = cli.referenced_digests()
    assert referenced, "the workflow referenced no object"
    cli.backend.check_objects(*referenced)
    return referenced


# --- tracing ----------------------------------------------------------------------------------------


def _save_round(cli: Cli, helper: str, n: int, verdict: str) -> None:
    """Round ``n`` of an auto-review loop through the ``save_trace.sh`` drop-in, into the store."""
    (cli.cwd / f"prompt-{n}.txt").write_text(f"Review the method section (round {n}).\n")
    (cli.cwd / f"response-{n}.md").write_text(f"Score: {5 + n}/10\n\nRound {n} notes.\n\nVerdict: {verdict}\n")
    done = subprocess.run(
        ["bash", helper, "--skill", "auto-review-loop", "--purpose", f"round-{n}-review", "--backend", "claude",
         "--tool", "mcp__claude__review", "--executor", "codex", "--executor-model", "gpt-5",
         "--requested-reviewer-model", "claude-opus-4", "--reported-reviewer-model", "claude-opus-4-1",
         "--thread-id", "loop-1", "--prompt-file", f"prompt-{n}.txt", "--response-file", f"response-{n}.md",
         "--status", "ok", "--verdict", verdict, "--review-completed"],
        cwd=cli.cwd, env=cli.env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_tracing_saves_into_the_store_and_checks_the_files_against_it(cli: Cli) -> None:
    need(shutil.which("git") is not None, "git is not installed")
    project = str(cli.cwd)
    subprocess.run(["git", "init", "-q", project], check=True, timeout=60)  # the project root is the git top level
    cli.run("trace", "install-helper", "--project-dir", project)
    helper = cli.run("trace", "resolve-helper", "--project-dir", project).stdout.strip()
    _save_round(cli, helper, 1, "not ready")
    _save_round(cli, helper, 2, "almost")

    [run] = cli.json("trace", "ls", "--project-dir", project)
    assert run["skill"] == "auto-review-loop" and run["calls"] == 2 and run["verdicts"] == ["not ready", "almost"]
    records = cli.json("ledger", "tail", "--type", "trace.review-call")
    assert [r["payload"]["meta"]["purpose"] for r in records] == ["round-1-review", "round-2-review"]
    responses = [r["payload"]["response"]["digest"] for r in records]
    assert cli.run("cas", "cat", responses[1]).stdout == (cli.cwd / "response-2.md").read_text()
    assert "match the ledger" in cli.run("trace", "verify", project).stdout
    cli.verify("--project-dir", project)
    assert set(responses) <= _check_objects(cli)

    # The files are checked against the records in this configuration's ledger: an edited response
    # is reported by both checks, naming its record; put back, everything passes again.
    [saved] = (cli.cwd / ".aris" / "traces" / "auto-review-loop").glob("*/002-round-2-review.response.md")
    original = saved.read_bytes()
    saved.chmod(0o644)
    saved.write_bytes(original + b"An added line.\n")
    out = cli.run("trace", "verify", project, code=4).stdout
    assert f"differs from ledger record {records[1]['id']}" in out
    report = cli.json("verify", "--project-dir", project, code=4)
    assert saved.name in json.dumps(report["problems"]), report
    saved.write_bytes(original)
    cli.verify("--project-dir", project)


# --- human review -----------------------------------------------------------------------------------


def _card(cards: list[dict[str, Any]], prompt: str, response: str | None = None) -> tuple[str, str | None]:
    """The item over the prompt holding ``prompt``, and the position of the candidate whose response
    holds ``response``."""
    [card] = [c for c in cards if prompt in c["prompt"]]
    positions = [c["position"] for c in card["candidates"] if response is not None and response in c["response"]]
    return card["itemId"], (positions[0] if positions else None)


def test_human_review_from_campaign_to_verified_export(cli: Cli) -> None:
    imported = cli.json("campaign", "import", str(DEMO_DATA / "campaign.yaml"))
    assert imported["imported"] == 5
    ran = cli.json("campaign", "run", *CAMPAIGN, "--agents", str(DEMO_DATA / "agents.yaml"))
    assert ran["counts"]["recorded"] == 10 and ran["counts"]["failed"] == 0
    assert cli.json("campaign", "materialize", *CAMPAIGN)["created"] == 5
    assert cli.json("campaign", "settings", *CAMPAIGN, "--training")["trainingEnabled"] is True

    queue = cli.run("review", "queue", *CAMPAIGN, "--json").stdout
    cards = json.loads(queue)
    assert len(cards) == 5 and not any(c["decided"] for c in cards)
    assert "agent-a" not in queue and "scripted-careful" not in queue  # blinded: no agent or model named
    late, late_pos = _card(cards, "40 days after purchase", "store credit since")
    game, _ = _card(cards, "opened game")
    damaged, damaged_pos = _card(cards, "damaged parcel", "a replacement ships")
    assert late_pos is not None and damaged_pos is not None

    decide = ("review", "decide", "--use-for-training")
    first = cli.json(*decide, late, "--prefer", late_pos, "--strength", "slight", "--reason", "wrong-policy")
    second = cli.json(*decide, late, "--prefer", late_pos, "--strength", "strong", "--reason", "wrong-policy",
                      "--supersedes", first["decisionId"])  # fmt: skip
    assert second["active"] is True and second["superseded"] == 1
    cli.json("review", "decide", game, "--tie")
    assert cli.json(*decide, damaged, "--prefer", damaged_pos, "--strength", "slight")["privacy"] == "private"
    history = cli.run("review", "history", late).stdout
    assert second["decisionId"] in history and "agent-a" in history  # provenance, once decided

    report = cli.json("review", "export", *CAMPAIGN, "--out", "datasets")
    assert report["exported"] == 1
    v4 = next(f for f in report["files"] if f["schemaVersion"] == "thoughtstream.training-example.v4")
    [row] = [json.loads(line) for line in (cli.cwd / "datasets" / v4["name"]).read_text().splitlines()]
    assert "40 days after purchase" in row["prompt"] and "store credit since" in row["chosen"]["response"]
    assert row["judgment"] == {"disposition": "prefer", "reasonCodes": ["wrong-policy"], "responseTags": [],
                               "strength": "strong"}  # fmt: skip
    for file in (cli.cwd / "datasets").iterdir():  # neither the private prompt nor the tie leaves the store
        assert PRIVATE_PROMPT not in file.read_text() and "opened game" not in file.read_text(), file.name
    assert cli.json("review", "export-verify", "datasets")["ok"] is True

    cli.verify()
    _check_objects(cli)


# --- the inspector ----------------------------------------------------------------------------------


@pytest.fixture
def inspector(cli: Cli) -> Iterator[str]:
    """``report.md`` in two versions written by two sandbox runs, then ``reviewtrail serve`` over
    the store; its URL."""
    need(shutil.which("bwrap") is not None, "bubblewrap (bwrap) is not installed")
    session = cli.run("session", "new", "--project", "demo").stdout.strip()
    write = "open('report.md', 'w').write('line 1\\nline 2\\n')"
    cli.run("run", "--session", session, "--env", "SEED=7", "-c", write)
    cli.run("artifact", "declare", "report.md", "--session", session, "--path", "report.md")
    cli.run("run", "--session", session, "--lang", "bash", "-c", "printf 'line 3\\n' >> report.md")
    cli.run("artifact", "declare", "report.md", "--session", session, "--path", "report.md")
    command = [str(REVIEWTRAIL), "serve", "--port", "0", "--json"]
    with announcing(command, cli.env, cli.cwd, "the inspector") as (_, announced, _output):
        assert announced["readOnly"] is True
        yield str(announced["url"])


def test_the_inspector_reads_the_store(cli: Cli, inspector: str) -> None:
    head = cli.json("ledger", "tail", "-n", "1")[-1]
    with httpx.Client(base_url=inspector, timeout=60) as client:
        [artifact] = client.get("api/artifacts", params={"project": "demo"}).raise_for_status().json()
        assert (artifact["name"], artifact["version"]) == ("report.md", 2)
        diff = client.get(
            "api/diff", params={"old": "report.md@1", "new": "report.md@2", "project": "demo"}
        ).raise_for_status()
        # the two versions' bytes, read from where the configuration keeps objects
        assert diff.json()["lines"] == [{"op": "added", "oldLine": None, "newLine": 3, "text": "line 3"}]
        assert (diff.json()["oldLines"], diff.json()["newLines"]) == (2, 3)
        provenance = client.get(f"api/provenance/{quote('report.md@2')}", params={"project": "demo"})
        logs = provenance.raise_for_status().json()["executionLogs"]
        # each run's environment snapshot is an object in the CAS: the first run's holds SEED
        assert sorted(log["processEnvironment"]["variables"].get("SEED", "-") for log in logs) == ["-", "7"]
        page = client.get("diff", params={"old": "report.md@1", "new": "report.md@2", "project": "demo"})
        assert page.status_code == 200 and "line 3" in page.text
        health = client.get("api/health").raise_for_status().json()
        assert health["head"]["seq"] == head["seq"] and health["head"]["hash"] == head["hash"]
    assert cli.json("ledger", "tail", "-n", "1")[-1]["hash"] == head["hash"]  # the inspector appended nothing
    cli.verify()
    referenced = _check_objects(cli)
    assert artifact["content"]["digest"] in referenced
    assert {log["processEnvironment"]["digest"] for log in logs} <= referenced
