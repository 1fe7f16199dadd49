"""The inspector in a real browser: Debian's Chromium driven by Playwright (never a browser
Playwright downloads), against ``reviewtrail serve`` on 127.0.0.1 over a real store.

The blinding test reads the Review page as the browser shows it and the body of every response
the browser received (the page, its script and style sheet, anything else it loads), and finds
none of the candidates' run ids, agent ids, models, providers or adapters before a decision.
Screenshots of each page are kept in the test's tmp dir (the README's image of the Review page is
made by tests/test_web_review_flow.py, signed in).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reviewtrail.human_review.session import decide
from support.human_review import new_store
from support.web import chromium, planted_campaign, running_inspector


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


class Recorder:
    """Every response a page received (its URL and body) and every console message about the
    Content Security Policy."""

    def __init__(self, page: Any) -> None:
        self.bodies: dict[str, bytes] = {}
        self.csp: list[str] = []
        page.on("response", self._response)
        page.on("console", lambda message: self._console(message.text))

    def _response(self, response: Any) -> None:
        if 300 <= response.status < 400:
            return  # a redirect has no body to read
        self.bodies[response.url] = response.body()

    def _console(self, text: str) -> None:
        if "Content Security Policy" in text:
            self.csp.append(text)


def leaked(text: str, hidden: set[str]) -> list[str]:
    return sorted(name for name in hidden if name in text)


def test_the_review_page_shows_nothing_of_who_produced_a_candidate(browser: Any, tmp_path: Path) -> None:
    store = new_store(tmp_path)
    items, hidden = planted_campaign(store, n=3)
    with running_inspector(tmp_path) as inspector:
        page = browser.new_page(viewport={"width": 1280, "height": 1400})
        seen = Recorder(page)
        page.goto(inspector.url + "review/camp/1")
        first = page.locator("#item-title code").inner_text()
        assert first in {item.item_id for item in items}
        assert page.get_by_role("heading", name="Candidate A").is_visible()
        assert page.get_by_role("heading", name="Candidate B").is_visible()
        assert "Prefer the reply that applies the policy exactly." in page.inner_text("main")
        assert page.locator(".badge").inner_text() == "read-only"
        page.screenshot(path=str(tmp_path / "review.png"), full_page=True)
        html = [page.content()]

        # The decision controls are there, disabled, each with its key listed.
        for name in ("underdetermined", "malformed", "skip", "prefer A", "prefer B", "tie"):
            assert page.get_by_role("button", name=name).is_disabled()
        assert page.locator("#correction").is_disabled()
        keys = page.locator("#shortcuts").inner_text()
        for key in ("u", "m", "s", "a", "b", "t", "c", "r", "g", "f", "y", "n", "→", "←", "h"):
            assert f"{key}\t" in keys, key
        page.keyboard.press("a")
        assert "is not active: this page is read-only" in page.locator("#key-feedback").inner_text()

        # The shortcuts run (the page's one script loads under the CSP): the next card, back, history.
        page.keyboard.press("ArrowRight")
        page.wait_for_url("**/review/camp/1?card=2")
        assert page.locator("#item-title code").inner_text() not in {first}
        html.append(page.content())
        page.keyboard.press("ArrowLeft")
        page.wait_for_url("**/review/camp/1?card=1")
        page.keyboard.press("h")
        page.wait_for_url(f"**/items/{first}/history")
        assert "No decision yet" in page.inner_text("#current")
        html.append(page.content())
        page.screenshot(path=str(tmp_path / "history-blinded.png"), full_page=True)
        page.close()
    store.close()

    assert seen.csp == []
    assert any(url.endswith("/static/review.js") for url in seen.bodies)
    assert len(seen.bodies) >= 5
    for text in html:
        assert leaked(text, hidden) == []
    for url, body in seen.bodies.items():
        assert leaked(body.decode("utf-8", "replace"), hidden) == [], url


def test_the_history_page_shows_the_decision_its_reviewer_and_provenance(browser: Any, tmp_path: Path) -> None:
    store = new_store(tmp_path)
    items, hidden = planted_campaign(store, n=2)
    item = items[0]
    first = decide(store, item.item_id, {"disposition": "tie"}, reviewer="rev-1")
    decide(
        store,
        item.item_id,
        {"disposition": "prefer", "preferred": "B", "strength": "strong", "supersedes": first.decision_id},
        reviewer="rev-2",
    )
    with running_inspector(tmp_path) as inspector:
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        seen = Recorder(page)
        page.goto(inspector.url)
        assert page.get_by_role("link", name="Review camp v1").is_visible()
        page.screenshot(path=str(tmp_path / "index.png"), full_page=True)

        page.goto(inspector.url + f"items/{item.item_id}/history")
        assert page.inner_text("#reviewer") == "rev-2"
        assert "prefer B (strong)" in page.inner_text("#current")
        assert page.inner_text("#previous") == "1"
        assert (
            page.inner_text("#use")
            == "evaluation-only: the decision is not marked for training (useForTraining is false)"
        )
        provenance = page.inner_text("#provenance")
        for agent in ("agent-heron", "agent-bison"):
            assert agent in provenance
        assert {"pelican-model-7", "walrus-model-2", "quokkacloud", "narwhal-exec@3"} <= {
            name for name in hidden if name in provenance
        }
        decisions = page.inner_text("table.list >> nth=0")
        assert "rev-1" in decisions and "rev-2" in decisions
        page.screenshot(path=str(tmp_path / "history.png"), full_page=True)

        # The decided item is still blinded on the Review page; the open one comes first.
        page.goto(inspector.url + "review/camp/1")
        assert page.locator("#item-title code").inner_text() == items[1].item_id
        page.goto(inspector.url + "review/camp/1?card=2")
        assert "decided" in page.inner_text("#status")
        assert leaked(page.content(), hidden) == []
        page.close()
    store.close()
    assert seen.csp == []
    for name in ("index.png", "history.png"):
        assert (tmp_path / name).stat().st_size > 0
