"""What ``campaign run`` does under its claims on (agent, trigger): a pair another process holds is
put aside and waited for after the free ones; a run another process recorded meanwhile is
reported, never called again; a released claim with nothing recorded is called as usual."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reviewtrail.app import open_store
from reviewtrail.config import Settings
from reviewtrail.human_review.campaigns import AgentConfig, RunReport, parse_agents_file, run_campaign
from reviewtrail.human_review.campaigns._run_claims import CLAIMS_FOLDER, RunClaims, claim_key
from reviewtrail.ledger import Envelope
from reviewtrail.models import ModelBackend, ScriptedBackend
from reviewtrail.store import Store
from reviewtrail.verify import verify_store
from support.human_review import add_prompt, add_run, new_store


def agents(*ids: str) -> list[AgentConfig]:
    entries = [
        {
            "id": a,
            "model": f"model-{a}",
            "provider": "openai",
            "executionAdapter": "chat-completions@1",
            "catalogGeneration": "gen-1",
            "backend": {"kind": "scripted", "template": "{agent} answers"},
        }
        for a in ids
    ]
    return parse_agents_file(json.dumps({"agents": entries}), "agents.json")


def other_process(tmp_path: Path) -> Store:
    """The same store opened again, as another process would."""
    root = tmp_path / "store"
    return open_store(Settings(store=root, database_url=f"sqlite:///{tmp_path / 'ledger.sqlite'}"))


class Calls:
    """Scripted backends that log (model, prompt) per call and may run a hook first."""

    def __init__(self, hook: Any = None) -> None:
        self.log: list[tuple[str, str]] = []
        self.hook = hook

    def backend_for(self, agent: AgentConfig) -> ModelBackend:
        def respond(messages: Sequence[Mapping[str, Any]], system: str | None) -> str:
            prompt = str(messages[0]["content"])
            self.log.append((agent.id, prompt))
            if self.hook is not None:
                self.hook(agent.id, prompt)
            return f"{agent.id} answers"

        return ScriptedBackend(respond, model=agent.model)


def test_a_run_another_process_recorded_meanwhile_is_reported_present_not_called(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    prompt = add_prompt(store)
    other = other_process(tmp_path)
    recorded: list[str] = []

    def meanwhile(agent_id: str, _prompt: str) -> None:
        if agent_id == "agent-a":  # while agent-a is called here, another process records agent-b
            recorded.append(add_run(other, prompt, "agent-b"))

    calls = Calls(meanwhile)
    report = run_campaign(store, "camp", 1, agents("agent-a", "agent-b"), backend_for=calls.backend_for)
    assert [agent for agent, _ in calls.log] == ["agent-a"]
    assert [(e.agent_id, e.status) for e in report.entries] == [("agent-a", "recorded"), ("agent-b", "already-present")]
    assert report.entries[1].run_id == recorded[0]
    other.close()


def test_a_failed_run_another_process_recorded_meanwhile_is_reported_not_retried(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    prompt = add_prompt(store)
    other = other_process(tmp_path)
    recorded: list[str] = []

    def meanwhile(agent_id: str, _prompt: str) -> None:
        if agent_id == "agent-a":
            recorded.append(add_run(other, prompt, "agent-b", error="BackendUnavailableError: down"))

    calls = Calls(meanwhile)
    report = run_campaign(store, "camp", 1, agents("agent-a", "agent-b"), backend_for=calls.backend_for)
    assert [agent for agent, _ in calls.log] == ["agent-a"]
    entry = report.entries[1]
    assert (entry.agent_id, entry.status, entry.run_id) == ("agent-b", "failed", recorded[0])
    assert entry.problem == "BackendUnavailableError: down"
    # a later campaign run retries it, as after any failed run
    again = Calls()
    second = run_campaign(store, "camp", 1, agents("agent-a", "agent-b"), backend_for=again.backend_for)
    assert [agent for agent, _ in again.log] == ["agent-b"]
    assert second.entries[1].status == "recorded" and second.entries[1].retry_of == recorded[0]
    other.close()


HOLDER = """
import sys
from pathlib import Path
from reviewtrail.app import open_store
from reviewtrail.config import Settings
from reviewtrail.human_review.campaigns._run_claims import RunClaims

store = open_store(Settings(store=Path(sys.argv[1]), database_url=sys.argv[2]))
with RunClaims(store) as claims, claims.take(sys.argv[3], sys.argv[4], wait=False) as held:
    print("held" if held else "busy", flush=True)
    sys.stdin.read()
"""


def hold_claim(tmp_path: Path, prompt: Envelope, agent_id: str) -> subprocess.Popen[str]:
    args = [str(tmp_path / "store"), f"sqlite:///{tmp_path / 'ledger.sqlite'}", prompt.id, agent_id]
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_a_pair_another_process_holds_is_put_aside_then_waited_for(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    first, second = add_prompt(store), add_prompt(store)
    holder = hold_claim(tmp_path, first, "agent-a")
    calls = Calls()
    done: list[RunReport] = []
    progress: list[tuple[int, int]] = []
    runner = threading.Thread(
        target=lambda: done.append(
            run_campaign(
                store,
                "camp",
                1,
                agents("agent-a", "agent-b"),
                backend_for=calls.backend_for,
                progress=lambda n, total, _e: progress.append((n, total)),
            )
        )
    )
    try:
        runner.start()
        deadline = time.monotonic() + 30
        while len(calls.log) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)
        assert len(calls.log) == 3 and runner.is_alive()  # the free pairs are done; the held one waits
    finally:
        assert holder.stdin is not None
        holder.stdin.close()  # the holder ends, its claim with it
        holder.wait(timeout=30)
    runner.join(timeout=30)
    assert not runner.is_alive()
    texts = {first.id: first.payload_value["prompt"], second.id: second.payload_value["prompt"]}
    assert calls.log[-1] == ("agent-a", texts[first.id])  # nothing was recorded meanwhile: called now
    assert sorted(calls.log) == sorted((a, t) for a in ("agent-a", "agent-b") for t in texts.values())
    [report] = done
    assert report.count("recorded") == 4
    assert [(e.prompt_event_id, e.agent_id) for e in report.entries] == [
        (p.id, a) for p in (first, second) for a in ("agent-a", "agent-b")
    ]  # the report keeps prompt order
    assert progress == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_claims_are_files_in_the_store_folder_and_record_nothing(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    prompt = add_prompt(store)
    head = store.ledger.head()
    with RunClaims(store) as claims, claims.take(prompt.id, "agent-a", wait=False) as held:
        assert held
        with RunClaims(store) as again, again.take(prompt.id, "agent-a", wait=False) as second:
            assert not second  # a second holder, even in the same process, is refused
        with RunClaims(store) as again, again.take(prompt.id, "agent-b", wait=False) as other:
            assert other  # another agent over the same prompt is another claim
    assert store.ledger.head() == head
    lock = tmp_path / "store" / CLAIMS_FOLDER / f"{claim_key(prompt.id, 'agent-a').hex()}.lock"
    assert lock.is_file() and lock.stat().st_size == 0 and oct(lock.stat().st_mode & 0o777) == "0o600"
    with RunClaims(store) as claims, claims.take(prompt.id, "agent-a", wait=False) as held:
        assert held  # released when its holder left


def test_a_read_only_store_takes_no_claim(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    prompt = add_prompt(store)
    store.close()
    root = tmp_path / "store"
    reader = open_store(Settings(store=root, database_url=f"sqlite:///{tmp_path / 'ledger.sqlite'}"), read_only=True)
    with RunClaims(reader) as claims, claims.take(prompt.id, "agent-a", wait=False) as held:
        assert held
    assert not (root / CLAIMS_FOLDER).exists()
    reader.close()
    assert os.access(root, os.W_OK)


def test_a_claims_folder_replaced_by_a_symlink_is_reported(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    try:
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (tmp_path / "store" / CLAIMS_FOLDER).symlink_to(elsewhere)
        problems = verify_store(store).problems
    finally:
        store.close()
    assert any(p.startswith(f"{CLAIMS_FOLDER} is not a plain folder") for p in problems), problems
