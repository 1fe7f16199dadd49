"""Second judgments on every surface: the command line (``campaign settings
--second-judgment-share``, ``review decide --second``, ``campaign coverage``), the MCP tool and the
inspector's one write route with the same fixed decision body, and the coverage page and its JSON
(docs/human-review.md, "Second judgments" and "Agreement")."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import init_cli_store, open_cli_store, run_cli, run_wide
from reviewtrail.human_review.campaigns import campaign_settings
from reviewtrail.human_review.records import SECOND_JUDGMENT
from reviewtrail.human_review.session import decide
from reviewtrail.web._capability import CAPABILITY_FILE_ENV, DECISION_ROUTE, load_capability, sign_decision
from support.human_review import campaign_with_items, new_store
from support.mcp_agents import InProcess, error_of, ok
from support.mcp_agents import new_store as mcp_store
from support.web import planted_campaign, running_inspector


def _prefer(run: str = "A") -> dict[str, Any]:
    return {"disposition": "prefer", "preferred": run, "strength": "slight"}


# --- the command line -------------------------------------------------------------------------------


def test_cli_sets_the_share_records_a_second_judgment_and_shows_agreement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    init_cli_store(tmp_path, monkeypatch)
    with open_cli_store(tmp_path) as store:
        items = campaign_with_items(store, 2)
        first = decide(store, items[0].item_id, _prefer("A"), reviewer="alice")
    code, out, err = run_cli("campaign", "settings", "camp", "--version", "1", "--second-judgment-share", "1")
    assert code == 0, err
    assert "second-judgment share 1" in out and "(recorded)" in out
    code, out, err = run_cli("campaign", "settings", "camp", "--version", "1", "--second-judgment-share", "2")
    assert code == 2 and "secondJudgmentShare" in err
    item = items[0].item_id
    code, out, err = run_cli("review", "decide", item, "--reviewer", "bob", "--tie")
    assert code == 6 and "supersedes" in err  # without --second: today's refusal
    code, out, err = run_cli("review", "decide", item, "--reviewer", "alice", "--tie", "--second")
    assert code == 2 and "reviewer" in err
    code, out, err = run_cli("review", "decide", item, "--reviewer", "bob", "--prefer", "A", "--strength", "strong",
                             "--second", "--json")  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    assert doc["secondJudgment"] is True and doc["comparedWith"] == first.decision_id and doc["active"] is False
    code, out, err = run_wide("campaign", "coverage", "camp", "--version", "1")
    assert code == 0, err
    assert "Agreement with second judgments" in out and "alice & bob" in out
    assert "1 of 1 agreed" in out
    code, out, err = run_cli("campaign", "coverage", "camp", "--version", "1", "--json")
    seconds = json.loads(out)["secondJudgments"]
    assert (seconds["pairs"], seconds["agreed"], seconds["selected"], seconds["waiting"]) == (1, 1, 2, 0)
    assert [r["reviewer"] for r in seconds["byReviewer"]] == ["alice", "bob"]


# --- the MCP tool -----------------------------------------------------------------------------------


def test_the_mcp_tool_records_a_second_judgment_with_the_decision_body(tmp_path: Path) -> None:
    store, settings = mcp_store(tmp_path)
    try:
        [item] = campaign_with_items(store, 1)
        campaign_settings(store, "camp", 1, second_judgment_share=1.0)
        mcp = InProcess(store, settings)
        first = ok(mcp.call("review_decide", {"item": item.item_id, "reviewer": "alice", "disposition": "tie"}))
        second = ok(mcp.call("review_decide", {"item": item.item_id, "reviewer": "bob", "disposition": "tie"}))
        assert second["secondJudgment"] is True and second["comparedWith"] == first["decisionId"]
        third = error_of(mcp.call("review_decide", {"item": item.item_id, "reviewer": "carol", "disposition": "tie"}))
        assert third["exitCode"] == 6 and third["field"] == "supersedes"
        assert len(store.ledger.records_about([item.item_id], type=SECOND_JUDGMENT)) == 1
    finally:
        store.close()


# --- the inspector ----------------------------------------------------------------------------------


def _body(item: Any, reviewer: str, **fields: Any) -> dict[str, Any]:
    return {
        "itemId": item.item_id,
        "campaignId": "camp",
        "campaignVersion": 1,
        "submissionId": secrets.token_hex(16),
        "reviewer": reviewer,
        **_prefer("A"),
        **fields,
    }


def test_the_write_route_records_a_second_judgment_and_the_page_shows_agreement(tmp_path: Path) -> None:
    import subprocess
    import sys

    store = new_store(tmp_path)
    try:
        items, _ = planted_campaign(store, n=2)
        campaign_settings(store, "camp", 1, second_judgment_share=1.0)
        key = tmp_path / "capability.key"
        subprocess.run([sys.executable, "-m", "reviewtrail", "serve", "--new-capability", str(key)], check=True)
        capability = load_capability(key)
        with running_inspector(tmp_path, env={CAPABILITY_FILE_ENV: str(key)}) as inspector:
            url = inspector.url.rstrip("/") + DECISION_ROUTE

            def post(body: dict[str, Any]) -> httpx.Response:
                raw = json.dumps(body).encode()
                return httpx.post(url, content=raw, headers=sign_decision(capability, url, raw))

            first = post(_body(items[0], "proxy-alice"))
            assert first.status_code == 201, first.text
            second = post(_body(items[0], "proxy-bob", preferred="B"))
            assert second.status_code == 201, second.text
            doc = second.json()
            assert doc["secondJudgment"] is True and doc["comparedWith"] == first.json()["decisionId"]
            assert doc["use"]["use"] == "evaluation-only" and "second judgment" in doc["use"]["reason"]
            third = post(_body(items[0], "proxy-carol"))
            assert third.status_code == 409
            page = httpx.get(inspector.url.rstrip("/") + "/coverage/camp/1")
            assert page.status_code == 200
            assert 'id="agreement-table"' in page.text and "proxy-alice &amp; proxy-bob" in page.text
            twin = httpx.get(inspector.url.rstrip("/") + "/api/coverage/camp/1").json()["secondJudgments"]
            assert (twin["pairs"], twin["agreed"], twin["waiting"]) == (1, 0, 0)
            assert [r["reviewer"] for r in twin["byReviewer"]] == ["proxy-alice", "proxy-bob"]
    finally:
        store.close()
