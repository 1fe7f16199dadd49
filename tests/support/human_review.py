"""Building human-review stores for tests: prompts, candidate runs (as the run records a runner
appends), items. Every record goes through the library's own builders and a real store."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reviewtrail._struct import parse
from reviewtrail.app import init_store, open_store
from reviewtrail.config import Settings
from reviewtrail.human_review.campaigns import RunOutcome, import_campaign, item_record, run_records
from reviewtrail.human_review.reads import prompt_ref
from reviewtrail.human_review.records import AgentIdentity, ReviewItem
from reviewtrail.ledger import Envelope
from reviewtrail.store import Store

_counter = itertools.count(1)


def new_store(root: Path, database_url: str | None = None) -> Store:
    """A new store under ``root`` (SQLite unless ``database_url`` names another ledger)."""
    settings = Settings(store=root / "store", database_url=database_url or f"sqlite:///{root / 'ledger.sqlite'}")
    init_store(settings).close()
    return open_store(settings)


def prompt_entry(
    *,
    campaign: str = "camp",
    version: int = 1,
    family: str = "refunds",
    privacy: str = "public-source",
    eligible: bool | None = None,
    agents: Sequence[str] = ("agent-a", "agent-b"),
    text: str | None = None,
    evidence: str | None = "Policy: refunds within 30 days.",
    reasons: Sequence[str] = ("wrong-policy", "unsupported"),
    tags: Sequence[str] = ("verbose",),
) -> dict[str, Any]:
    """One campaign-file entry (wire names), unique unless ``text`` is given."""
    entry: dict[str, Any] = {
        "campaign": {"id": campaign, "version": version, "label": f"{campaign} label"},
        "scenarioFamily": family,
        "prompt": text or f"A customer asks question {next(_counter)}. Reply.",
        "criterion": {
            "id": "policy-faithful",
            "version": 1,
            "label": "Faithful to policy",
            "instructions": "Prefer the reply that applies the policy exactly.",
            "allowedReasonCodes": list(reasons),
            "allowedResponseTags": list(tags),
        },
        "candidateAgentIds": list(agents),
        "externalExportEligible": (privacy == "public-source") if eligible is None else eligible,
        "privacy": privacy,
    }
    if evidence is not None:
        entry["evidence"] = evidence
    return entry


def add_prompt(store: Store, **entry: Any) -> Envelope:
    """Import one prompt; its record."""
    import json

    result = import_campaign(store, json.dumps(prompt_entry(**entry)) + "\n", name="c.jsonl")
    [imported] = result.imported or result.already_present
    return store.ledger.get(imported.record_id)


def agent(agent_id: str, **changes: Any) -> AgentIdentity:
    wire: dict[str, Any] = {
        "id": agent_id,
        "model": f"model-{agent_id}",
        "provider": "openai",
        "executionAdapter": "chat-completions@1",
        "learnedAdapter": None,
        "catalogGeneration": "gen-1",
    }
    wire.update(changes)
    return parse(AgentIdentity, wire, field="payload")


def add_run(
    store: Store,
    prompt: Envelope,
    agent_id: str,
    *,
    response: str | None = None,
    error: str | None = None,
    privacy: str | None = None,
    retry_of: str | None = None,
    run_id: str | None = None,
    **agent_changes: Any,
) -> str:
    """Record one candidate run over ``prompt`` (completed with ``response``, or failed with
    ``error``) as the runner does; its run id. The default response names no agent, model or
    provider, so the item is not self-identifying."""
    ref, now = prompt_ref(store.ledger, prompt.id)
    outcome = RunOutcome(
        started_at="2026-11-30T10:00:00Z",
        ended_at="2026-11-30T10:00:01Z",
        response=None if error is not None else (response or f"Reply {next(_counter)} to {prompt.id}."),
        error=error,
    )
    records = run_records(
        ref,
        agent(agent_id, **agent_changes),
        outcome,
        privacy=privacy or now.privacy,  # type: ignore[arg-type]
        run_id=run_id,
        retry_of=retry_of,
    )
    store.append(records)
    return records[0].subject or ""


def add_item(store: Store, prompt: Envelope, run_a: str, run_b: str) -> ReviewItem:
    """Freeze the pair as materialize does; the item."""
    ref, now = prompt_ref(store.ledger, prompt.id)
    record = item_record(store.ledger, ref, now.privacy, run_a, run_b)
    store.append([record])
    return parse(ReviewItem, record.payload, field="payload")


def campaign_with_items(store: Store, n: int = 2, **entry: Any) -> list[ReviewItem]:
    """``n`` prompts, each with two completed runs (agent-a, agent-b) and their item."""
    items = []
    for _ in range(n):
        prompt = add_prompt(store, **entry)
        items.append(add_item(store, prompt, add_run(store, prompt, "agent-a"), add_run(store, prompt, "agent-b")))
    return items


def as_recorded_before_decision_links(root: Path, item_id: str) -> None:
    """Remove the ``hr_decision_links`` rows of ``item_id`` from the SQLite ledger :func:`new_store`
    made under ``root``, as a store recorded before that table held them: the next decision on the
    item may then supersede nothing, or a decision already superseded, as older versions allowed
    (a chain such stores hold, which every read must still answer). ``verify`` reports the table
    until it is rebuilt."""
    import sqlite3

    conn = sqlite3.connect(root / "ledger.sqlite")
    try:
        with conn:
            conn.execute("DELETE FROM rt_p_hr_decision_links WHERE item_id = ?", (item_id,))
    finally:
        conn.close()
