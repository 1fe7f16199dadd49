"""The blinding, crawled: over random campaigns with 2 to 5 candidate agents (some runs giving the
same exact text, on one prompt and across prompts), decisions recorded in a random order by three
reviewers (skips and changes of decision included) through the library, ``review decide``, the MCP
tool and ``review session``; then every inspector page and JSON twin of every item and campaign,
``review history`` (text and JSON) and the MCP queue are read. No open card may be unblindable:
no response an open card shows may be attributed to its producer from any of it, by run id or by
the same exact text (tests/support/blinding_crawl.py says how it counts). On SQLite and on
PostgreSQL."""

from __future__ import annotations

import json
import random
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from reviewtrail.config import Settings
from reviewtrail.human_review.rules import DecisionInput
from reviewtrail.store import Store
from support.blinding_crawl import (
    Crawl,
    Surface,
    Truth,
    build_campaign,
    cli_decide_args,
    decision_script,
    is_open,
    library_surface,
    open_items,
)
from support.human_review import new_store
from support.mcp_agents import InProcess, ok
from support.web import running_inspector

SEEDS = (3101, 3102)  # one store per seed, four campaigns in each


def _env(root: Path, url: str) -> dict[str, str]:
    return {"REVIEWTRAIL_STORE": str(root / "store"), "REVIEWTRAIL_DATABASE_URL": url}


def _surfaces(store: Store, env: dict[str, str], mcp: InProcess) -> dict[str, Surface]:
    def cli(as_json: bool) -> Surface:
        def record(item_id: str, reviewer: str, decision: DecisionInput) -> str:
            args = cli_decide_args(item_id, reviewer, decision) + (["--json"] if as_json else [])
            code, out, err = run_cli(*args, env={**env, "COLUMNS": "400"})
            assert code == 0, err
            return out

        return record

    def tool(item_id: str, reviewer: str, decision: DecisionInput) -> str:
        wire = {
            k: v for k, v in decision.to_wire().items() if k in ("disposition", "preferred", "strength", "supersedes")
        }
        arguments: dict[str, Any] = {"item": item_id, "reviewer": reviewer, **wire}
        return json.dumps(ok(mcp.call("review_decide", arguments)))

    return {"library": library_surface(store), "cli": cli(False), "cli-json": cli(True), "mcp": tool}


def _sessions(store: Store, rng: random.Random, truth: Truth, crawl: Crawl, env: dict[str, str]) -> None:
    """``review session`` over each campaign: one card skipped or tied, its reveal read."""
    for campaign in truth.campaigns:
        before = {r["record_id"] for r in store.ledger.rows("hr_decisions")}
        keys = rng.choice(("s\n\nq\n", "t\n\nq\n"))
        code, out, err = run_cli("review", "session", campaign, "--reviewer", "rev-4", input=keys, env=env)
        assert code == 0, err
        made = [r for r in store.ledger.rows("hr_decisions") if r["record_id"] not in before]
        crawl.moment += 1
        for row in made:
            crawl.observe(str(row["item_id"]), out, lambda other: is_open(store, other))


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return str(answer.read().decode())


def _final_crawl(root: Path, truth: Truth, crawl: Crawl, env: dict[str, str], mcp: InProcess, store: Store) -> None:
    """Every page and JSON twin, ``review history`` and the MCP queue, against the items open now."""
    crawl.moment += 1
    open_now = open_items(store, truth)
    secrets = truth.secrets()
    with running_inspector(root, env=env) as inspector:
        base = inspector.url
        for n, item_id in enumerate(truth.items):
            for path in (
                f"items/{item_id}/history",
                f"api/items/{item_id}/history",
                f"items/{item_id}/history?change=1",
            ):
                crawl.observe(item_id, _get(base + path), open_now)
            # ``review history``, as text for one item and as JSON for the next.
            as_json = ["--json"] if n % 2 else []
            code, out, err = run_cli("review", "history", item_id, *as_json, env={**env, "COLUMNS": "400"})
            assert code == 0, err
            crawl.observe(item_id, out, open_now)
        for campaign in truth.campaigns:
            cards = json.loads(_get(f"{base}api/review/{campaign}/1/progress"))["items"]
            for k in range(1, cards + 1):
                card = json.loads(_get(f"{base}api/review/{campaign}/1/cards/{k}"))["card"]
                crawl.observe(card["itemId"], json.dumps(card), open_now)
                page = _get(f"{base}review/{campaign}/1?card={k}")
                crawl.observe(card["itemId"], page, open_now)
            # Campaign-wide pages name no run and no agent at all.
            for path in (f"coverage/{campaign}/1", f"api/coverage/{campaign}/1", "", "api/campaigns", "coverage"):
                shown = _get(base + path)
                crawl.seen += 1
                assert not [s for s in secrets if s in shown], path
    queue = ok(mcp.call("review_queue", {"limit": 1000}))
    for card in queue["cards"]:
        crawl.observe(card["itemId"], json.dumps(card), open_now)


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
@pytest.mark.parametrize("seed", SEEDS)
def test_no_open_card_is_unblindable_from_any_surface(
    tmp_path: Path, backend: str, seed: int, request: pytest.FixtureRequest
) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.sqlite'}"
    if backend == "postgres":
        url = request.getfixturevalue("pg_url")
    store = new_store(tmp_path, url)
    env = _env(tmp_path, url)
    mcp = InProcess(store, Settings(store=tmp_path / "store", database_url=url))
    rng = random.Random(seed)
    truth = Truth()
    try:
        for n in range(4):
            build_campaign(store, rng, f"camp-{seed}-{n}", truth)
        crawl = Crawl(truth)
        decision_script(store, rng, truth, crawl, _surfaces(store, env, mcp), limits={"mcp": 3})
        _sessions(store, rng, truth, crawl, env)
        _final_crawl(tmp_path, truth, crawl, env, mcp, store)
        open_now = open_items(store, truth)
    finally:
        store.close()
    # The crawl read every item, with cards still open and items decided, and found no open card
    # whose producer it could name.
    assert crawl.seen > 6 * len(truth.items)
    assert crawl.second_judgments > 0, "some items were judged a second time"
    assert open_now and len(open_now) < len(truth.items)
    found = crawl.open_cards_unblindable()
    final = len({item for item, moment in crawl.unblindable if moment == crawl.moment})
    assert found == 0, (
        f"{found} of {len(truth.items)} cards unblindable while open; "
        f"{final} of the {len(open_now)} open at the end by the final crawl"
    )
