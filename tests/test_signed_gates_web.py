"""The inspector's pages are held to the store's key records as the commands are: a decision
``verify`` rejects is refused, not shown (the page reads through the same library call)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from support.signed import decision, forge_tail, signed_store
from support.web import running_inspector

DECISION = "stream.thought.review.decision@1"


def test_the_web_pages_serve_no_decision_verify_rejects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The inspector's coverage page reads through the same library call as the command: held
    to the store's key records, it answers the refusal (exit 4) instead of the forged figures."""
    monkeypatch.chdir(tmp_path)
    shop = signed_store(tmp_path)
    with (
        running_inspector(tmp_path, env=shop.env()) as inspector,
        httpx.Client(base_url=inspector.url, timeout=120) as client,
    ):
        assert client.get("api/coverage/camp/1").status_code == 200
        forged = forge_tail(shop, decision(shop.items[1]))
        response = client.get("api/coverage/camp/1")
        error = response.json()["error"]
        assert error["exitCode"] == 4 and f"ledger seq {forged.seq} ({DECISION}): it is not signed" in error["message"]
        assert f"ledger seq {forged.seq}" in client.get("coverage/camp/1").text
