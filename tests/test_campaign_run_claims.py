"""One model call per needed run, even with two ``campaign run``s at once: each process claims
(agent, trigger) before the call, and a claim dies with the process that held it.

The processes are real (``python -m reviewtrail campaign run``) and every agent is an
OpenAI-compatible backend on a local HTTP server that counts the calls it receives."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reviewtrail.app import init_store, open_store
from reviewtrail.config import Settings
from reviewtrail.human_review.reads import prompt_ref, run_facts, runs_over
from reviewtrail.human_review.records import RESPONSE, RUN
from reviewtrail.human_review.rules import pairable_runs
from reviewtrail.store import Store
from support.fake_llm_server import Canned, FakeLLMServer, Received
from support.human_review import prompt_entry

AGENTS = ("agent-a", "agent-b")
PROMPTS = 5
NEEDED = PROMPTS * len(AGENTS)


class SlowServer(FakeLLMServer):
    """Every answer takes ``delay`` seconds, so two runners overlap."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay

    def _default(self, req: Received) -> Canned:
        return dataclasses.replace(super()._default(req), delay=self.delay)

    def prompts_called(self) -> Counter[tuple[str, str]]:
        return Counter((r.json()["model"], r.json()["messages"][0]["content"]) for r in self.received)


@pytest.fixture
def server() -> Iterator[SlowServer]:
    srv = SlowServer(0.25)
    srv.start()
    yield srv
    srv.stop()


def settings_for(root: Path, database_url: str | None) -> Settings:
    return Settings(store=root, database_url=database_url or f"sqlite:///{root / 'ledger.sqlite'}")


def make_campaign(tmp_path: Path, server: SlowServer, database_url: str | None, *, prompts: int = PROMPTS) -> Path:
    """A store at ``tmp_path/store`` with ``prompts`` prompts imported, and ``agents.yaml`` whose
    agents call ``server``."""
    root = tmp_path / "store"
    init_store(settings_for(root, database_url)).close()
    lines = "".join(json.dumps(prompt_entry(agents=AGENTS)) + "\n" for _ in range(prompts))
    (tmp_path / "prompts.jsonl").write_text(lines, encoding="utf-8")
    (tmp_path / "agents.yaml").write_text(agents_yaml(server), encoding="utf-8")
    code, _, err = cli(tmp_path, root, database_url, "campaign", "import", "prompts.jsonl")
    assert code == 0, err
    return root


def agents_yaml(server: FakeLLMServer) -> str:
    return "agents:\n" + "".join(
        f"  - id: {a}\n    model: model-{a}\n    provider: local\n    executionAdapter: chat-completions@1\n"
        f"    catalogGeneration: gen-1\n    backend: {{kind: openai, endpoint: '{server.url}/v1', timeout: 30}}\n"
        for a in AGENTS
    )


def env_for(root: Path, database_url: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVIEWTRAIL_")}
    env["REVIEWTRAIL_STORE"] = str(root)
    if database_url is not None:
        env["REVIEWTRAIL_DATABASE_URL"] = database_url
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


RUN_ARGS = ("campaign", "run", "camp", "--version", "1", "--agents", "agents.yaml", "--json", "--no-progress")


def spawn(cwd: Path, root: Path, database_url: str | None, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "reviewtrail", *args],
        cwd=cwd,
        env=env_for(root, database_url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def cli(cwd: Path, root: Path, database_url: str | None, *args: str, timeout: float = 120) -> tuple[int, str, str]:
    proc = spawn(cwd, root, database_url, *args)
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def runs_by_need(store: Store) -> dict[tuple[str, str], list[str]]:
    """Per (prompt, agent), the run ids recorded over it."""
    found: dict[tuple[str, str], list[str]] = {}
    for env in store.ledger.tail(100_000, type=RUN):
        run = env.payload_value
        found.setdefault((run["triggerEventId"], run["agent"]["id"]), []).append(run["runId"])
    return found


def prompt_ids(store: Store) -> list[str]:
    return [row["record_id"] for row in store.ledger.rows("hr_prompts", campaign_id="camp", campaign_version=1)]


def assert_every_need_recorded_once(store: Store, prompts: int = PROMPTS) -> None:
    ids = prompt_ids(store)
    assert len(ids) == prompts
    found = runs_by_need(store)
    assert sorted(found) == sorted((p, a) for p in ids for a in AGENTS)
    assert all(len(runs) == 1 for runs in found.values()), found
    assert len(store.ledger.tail(100_000, type=RESPONSE)) == prompts * len(AGENTS)
    for prompt in ids:
        ref, _ = prompt_ref(store.ledger, prompt)
        facts = [f for f in (run_facts(store.ledger, r) for r in runs_over(store.ledger, prompt)) if f]
        pairable, excluded = pairable_runs(facts, ref)
        assert sorted(pairable) == list(AGENTS) and not excluded


def race(tmp_path: Path, roots: tuple[Path, Path], database_url: str | None) -> list[dict[str, Any]]:
    """Two ``campaign run``s started at once (one per root), both waited for; their reports."""
    procs = [spawn(tmp_path, root, database_url, *RUN_ARGS) for root in roots]
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err
        reports.append(json.loads(out))
    return reports


def check_race(server: SlowServer, reports: list[dict[str, Any]], store: Store) -> None:
    assert len(server.received) == NEEDED, f"{len(server.received)} model calls for {NEEDED} needed runs"
    assert all(n == 1 for n in server.prompts_called().values())
    assert_every_need_recorded_once(store)
    recorded = [r for report in reports for r in report["runs"] if r["status"] == "recorded"]
    assert len(recorded) == NEEDED  # each run reported recorded by the one process that made it
    for report in reports:  # and the other process reports it as present, with the same run id
        assert report["counts"]["recorded"] + report["counts"]["already-present"] == NEEDED
    by_need = {(r["promptEventId"], r["agentId"]): r["runId"] for r in recorded}
    for report in reports:
        for r in report["runs"]:
            assert r["runId"] == by_need[(r["promptEventId"], r["agentId"])]


def test_two_campaign_runs_at_once_make_one_call_per_needed_run_on_sqlite(tmp_path: Path, server: SlowServer) -> None:
    root = make_campaign(tmp_path, server, None)
    reports = race(tmp_path, (root, root), None)
    with open_store(settings_for(root, None)) as store:
        check_race(server, reports, store)


def test_two_campaign_runs_at_once_make_one_call_per_needed_run_on_postgresql(
    tmp_path: Path, server: SlowServer, pg_url: str
) -> None:
    root = make_campaign(tmp_path, server, pg_url)
    reports = race(tmp_path, (root, root), pg_url)
    with open_store(settings_for(root, pg_url)) as store:
        check_race(server, reports, store)


def test_two_store_folders_sharing_one_postgresql_ledger_make_one_call_per_needed_run(
    tmp_path: Path, server: SlowServer, pg_url: str
) -> None:
    """Two folders (as on two machines) sharing the database: no file lock is common to them,
    the database's claim is."""
    root = make_campaign(tmp_path, server, pg_url)
    other = tmp_path / "other-store"
    init_store(settings_for(other, pg_url)).close()  # adopts the ledger's identity
    reports = race(tmp_path, (root, other), pg_url)
    with open_store(settings_for(root, pg_url)) as store:
        check_race(server, reports, store)


def wait_for(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_claim_left_by_a_killed_campaign_run_does_not_block_a_later_run(
    tmp_path: Path, server: SlowServer, backend: str, request: pytest.FixtureRequest
) -> None:
    database_url = request.getfixturevalue("pg_url") if backend == "postgresql" else None
    root = make_campaign(tmp_path, server, database_url, prompts=1)
    server.delay = 60.0  # the first call never answers in time: its process holds the claim
    first = spawn(tmp_path, root, database_url, *RUN_ARGS)
    try:
        wait_for(lambda: len(server.received) == 1, 30, "the first model call")
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
    server.delay = 0.0
    started = time.monotonic()
    code, out, err = cli(tmp_path, root, database_url, *RUN_ARGS, timeout=60)
    assert code == 0, err
    assert time.monotonic() - started < 30
    assert json.loads(out)["counts"]["recorded"] == 2
    # the killed process's call was made but never recorded; the later run makes its own
    assert len(server.received) == 3
    with open_store(settings_for(root, database_url)) as store:
        assert_every_need_recorded_once(store, prompts=1)
