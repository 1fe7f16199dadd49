"""A reviewer's whole flow in a real browser, every part real and on loopback: Debian's Chromium
(Playwright), ``reviewtrail proxy`` with OIDC login at ``oidc-provider-mock``, ``reviewtrail
serve`` with the review capability, over a real store.

login → queue → a decision made with the keyboard only → provenance revealed → history shows
it → a superseding decision. Before the first decision nothing the browser received names who
produced a candidate. A screenshot of each step is kept in ``test-artifacts/review-flow/``; the
docs' images of the Review page are made by tests/test_web_review_layout.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import need
from reviewtrail.human_review.session import history
from support.human_review import new_store
from support.proxy import writing_team
from support.web import PLANTED, chromium, ledger_head, planted_campaign

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "review-flow"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def team(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The store (two planted items), the inspector with a capability, the OIDC provider and the
    proxy allowing ``alice`` to write."""
    store = new_store(tmp_path)
    items, hidden = planted_campaign(store, n=2)
    with writing_team(tmp_path, "alice") as (_, proxy):
        yield {"store": store, "items": items, "hidden": hidden, "proxy": proxy.url}
    store.close()


class Seen:
    """The body of every response the page received."""

    def __init__(self, page: Any) -> None:
        self.bodies: dict[str, bytes] = {}
        page.on("response", self._response)

    def _response(self, response: Any) -> None:
        if not 300 <= response.status < 400:
            self.bodies[response.url] = response.body()

    def leaked(self, hidden: set[str]) -> list[str]:
        return sorted({name for body in self.bodies.values() for name in hidden if name.encode() in body})


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def revealed(page: Any) -> None:
    """Wait until the decision is recorded and revealed; a refusal fails with what the page said.
    (Locators only: a predicate evaluated in the page is refused by the page's CSP.)"""
    page.locator("#reveal:visible, #key-feedback:text-matches('^(Not recorded|No answer)')").first.wait_for(
        timeout=60_000
    )
    assert page.locator("#reveal").is_visible(), page.locator("#key-feedback").inner_text()


def sign_in(page: Any, proxy: str, subject: str, next_path: str) -> None:
    """Log in at the provider's page with the keyboard: the subject typed, Enter."""
    page.goto(f"{proxy}/auth/login?next={next_path}")
    page.wait_for_selector('input[name="sub"]')
    page.keyboard.type(subject)  # the field has autofocus
    with page.expect_navigation(url=f"{proxy}{next_path}"):
        page.keyboard.press("Enter")


def test_login_decide_with_the_keyboard_reveal_history_and_supersede(browser: Any, team: dict[str, Any]) -> None:
    store, items, hidden, proxy = team["store"], team["items"], team["hidden"], team["proxy"]
    page = browser.new_page(viewport={"width": 1280, "height": 1400})
    seen = Seen(page)
    sign_in(page, proxy, "alice", "/review/camp/1")
    page.wait_for_selector("#write-state.ok")  # the controls are active: the proxy gave write state
    shot(page, "1-login-done-queue")
    assert "Signed in as oidc-" in page.locator("#write-state").inner_text()
    first = page.locator("#item-title code").inner_text()
    assert first in {item.item_id for item in items}
    assert seen.leaked(hidden) == [], "something the browser received names who produced a candidate"
    head = ledger_head(store)

    # A decision with the keyboard only: a reason-free strong preference for B, with training off.
    page.keyboard.press("b")
    assert page.locator("#strength").is_visible()
    page.keyboard.press("2")
    revealed(page)
    shot(page, "2-decided-revealed")
    shown = page.locator("#reveal").inner_text()
    models = {agent["model"] for agent in PLANTED.values()}
    assert all(model in shown for model in models), shown
    assert "prefer" in shown and "oidc-" in shown

    recorded = history(store, first)
    assert recorded.active is not None and recorded.active.disposition == "prefer"
    assert recorded.active.preferred == "B" and recorded.active.strength == "strong"
    assert recorded.active.reviewer.startswith("oidc-") and "alice" not in recorded.active.reviewer
    assert ledger_head(store)[0] == head[0] + 1  # exactly one record

    # Enter moves on: the next open card, drawn in place, with nothing of the reveal on it.
    from playwright.sync_api import expect

    page.keyboard.press("Enter")
    expect(page.locator("#item-title code")).not_to_have_text(first)
    shot(page, "3-next-card")
    second = page.locator("#item-title code").inner_text()
    page.locator("#progress", has_text="decided").wait_for()
    assert page.locator("#progress").inner_text().strip() == "· 1 of 2 items decided, 1 open"
    assert second != first and second in {item.item_id for item in items}
    assert all(model not in page.content() for model in models)

    # z: back to the card decided last, its reviewed history, where "change decision" supersedes.
    with page.expect_navigation():
        page.keyboard.press("z")
    page.wait_for_selector("#write-state.ok")
    shot(page, "4-history")
    assert page.locator("#previous").inner_text() == "0"
    assert page.locator("#reviewer").inner_text() == recorded.active.reviewer
    page.keyboard.press("t")  # armed: Enter records it
    assert ledger_head(store)[0] == head[0] + 1
    page.keyboard.press("Enter")
    revealed(page)
    shot(page, "5-superseded-revealed")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    shot(page, "6-history-after")
    assert page.locator("#previous").inner_text() == "1"
    changed = history(store, first)
    assert changed.active is not None and changed.active.disposition == "tie"
    assert changed.active.supersedes == recorded.active.decision_id
    assert [d.disposition for d in changed.decisions] == ["prefer", "tie"]
    assert ledger_head(store)[0] == head[0] + 2
    page.close()


def test_a_reader_outside_the_allowlist_cannot_decide(browser: Any, team: dict[str, Any]) -> None:
    store, proxy = team["store"], team["proxy"]
    head = ledger_head(store)
    page = browser.new_page()
    sign_in(page, proxy, "mallory", "/review/camp/1")
    page.wait_for_load_state("networkidle")
    assert page.locator('button[data-key="t"]').is_disabled()
    assert page.locator("#write-state").get_attribute("class") == "note"
    page.keyboard.press("t")
    assert "not active" in page.locator("#key-feedback").inner_text()
    shot(page, "7-read-only-reviewer")
    assert ledger_head(store) == head
    page.close()


def test_the_active_controls_and_the_reveal_have_no_serious_axe_violation(browser: Any, team: dict[str, Any]) -> None:
    """axe-core over what only a signed-in reviewer sees: the active controls, the reveal, and
    change decision on the reviewed history (the crawl of tests/test_web_accessibility.py sees
    the inspector alone, read-only). axe is injected inline, so this page bypasses the CSP."""
    from test_web_accessibility import AXE, axe_run, blocking

    need(AXE.is_file(), f"axe-core is not installed at {AXE} (scripts/setup.sh --system installs it)")
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    sign_in(page, team["proxy"], "alice", "/review/camp/1")
    page.wait_for_selector("#write-state.ok")
    found = {"review, active": blocking(axe_run(page)["violations"])}
    page.keyboard.press("a")
    page.keyboard.press("1")
    revealed(page)
    found["review, revealed"] = blocking(axe_run(page)["violations"])
    with page.expect_navigation():
        page.keyboard.press("z")
    page.wait_for_selector("#write-state.ok")
    found["history, change decision"] = blocking(axe_run(page)["violations"])
    assert found == {name: [] for name in found}
    context.close()
