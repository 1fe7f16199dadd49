"""The Review page built for long sessions, in Debian's Chromium (Playwright) against ``reviewtrail
serve`` on 127.0.0.1 (and, for the decisions, ``reviewtrail proxy`` with an OIDC login).

At 1366×768 the prompt and both candidates start on the first screen, side by side, each scrolling
on its own, and the decision controls stay visible wherever the page is scrolled (a sticky bar). At
390×844 nothing scrolls sideways and the candidates stack. Candidates are drawn as markdown on the
server (raw HTML off, code in monospace) with a "raw" view of their exact characters; dark mode
follows ``prefers-color-scheme``; axe-core finds no violation at either size, light or dark. With
the keyboard only, a single-key disposition waits for Enter, Esc drops it, and the reveal states
the choice and the strength.

With REVIEWTRAIL_DOCS_IMAGES=DIR the signed-in page is also written to DIR at both sizes (light,
and 1366×768 dark): how docs/images/review-*.png are made.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import need
from reviewtrail.human_review.session import history
from support.human_review import add_item, add_prompt, add_run, new_store
from support.proxy import writing_team
from support.web import chromium, ledger_head, running_inspector
from test_web_accessibility import AXE, axe_run
from test_web_review_flow import revealed, sign_in

WIDE = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}
CODE = "def refund(days):\n    return days <= 30  # " + "y" * 400 + "\n"  # a line wider than any box
LONG_WORD = "x" * 3000
MARKER = "pwned-by-candidate"
# A response with everything the page must draw safely: headings, a list, a table, a code block, a
# long unbroken line, raw HTML that would run if it were HTML, a link and an image, carriage
# returns and a leading line feed (kept by the raw view), and enough lines to scroll.
RESPONSE_A = (
    "\n# Refund answer\r\n\r\n"
    "The policy allows **refunds within 30 days**; see [the policy](https://example.com/policy).\n\n"
    f"```python\n{CODE}```\n\n"
    f"<script>document.title = '{MARKER}'</script>\n\n"
    f'<img src="x" onerror="document.title = \'{MARKER}\'">\n\n'
    "![chart](https://example.com/track.png)\n\n"
    "| days | refund |\n|---|---|\n| 10 | yes |\n| 40 | no |\n\n"
    f"{LONG_WORD}\n\n" + "".join(f"- point {n}: the reply keeps to the policy.\n" for n in range(60))
)
RESPONSE_B = "A plain reply, in `one` paragraph.\n\n" + "\n\n".join(f"Paragraph {n}." for n in range(80))
PROMPT = "\n".join(f"Line {n} of a long prompt about a refund after {n} days." for n in range(40))


def rich(page: Any) -> str:
    """The position (A or B) of RESPONSE_A on this card: the display order is the item's."""
    return "A" if page.locator("#rendered-A h4").count() else "B"


def axe_violations(page: Any) -> list[str]:
    """Every violation axe-core finds (any impact), one line each."""
    return [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes'][:3]]}" for v in axe_run(page)["violations"]]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def long_campaign(store: Any, n: int = 3) -> list[Any]:
    """``n`` items of campaign ``camp`` v1 with a long prompt and the responses above."""
    items = []
    for _ in range(n):
        prompt = add_prompt(store, text=PROMPT + f"\nThe {len(items) + 1}th case.")
        runs = [
            add_run(store, prompt, "agent-a", response=RESPONSE_A),
            add_run(store, prompt, "agent-b", response=RESPONSE_B),
        ]
        items.append(add_item(store, prompt, *runs))
    return items


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The read-only inspector over a store of three long items: its URL of the Review page."""
    root = tmp_path_factory.mktemp("layout")
    store = new_store(root)
    long_campaign(store)
    store.close()
    with running_inspector(root) as inspector:
        yield inspector.url + "review/camp/1"


def open_page(browser: Any, url: str, viewport: dict[str, int], **options: Any) -> tuple[Any, Any]:
    context = browser.new_context(viewport=viewport, **options)
    page = context.new_page()
    page.goto(url)
    return context, page


def box(page: Any, selector: str) -> dict[str, float]:
    """The element's box relative to the window as it is scrolled now."""
    found = page.locator(selector).first.bounding_box()
    assert found is not None, f"{selector} is not drawn"
    return dict(found)


def in_window(found: dict[str, float], viewport: dict[str, int]) -> bool:
    return found["y"] >= 0 and found["y"] + found["height"] <= viewport["height"]


def test_at_1366x768_the_prompt_and_both_candidates_start_on_the_first_screen_side_by_side(
    browser: Any, served: str
) -> None:
    context, page = open_page(browser, served, WIDE)
    controls = box(page, 'button[data-key="u"]')  # the decision bar's top row
    prompt, a, b = (
        box(page, "#prompt-title"),
        box(page, "section.candidate >> nth=0"),
        box(page, "section.candidate >> nth=1"),
    )
    for name, found in {"prompt": prompt, "candidate A": a, "candidate B": b}.items():
        # each starts on the first screen, with room for its first lines above the decision bar
        assert found["y"] >= 0 and found["y"] + 80 <= min(controls["y"], WIDE["height"]), (name, found, controls)
    assert abs(a["y"] - b["y"]) <= 1 and a["x"] + a["width"] <= b["x"], (a, b)  # side by side
    bar = box(page, "section.decision")
    for selector in ("#rendered-A", "#rendered-B"):  # and each box ends above the bar
        assert box(page, selector)["y"] + box(page, selector)["height"] <= bar["y"], (selector, bar)
    # each candidate (and the long prompt) scrolls on its own: its box holds less than its text
    for selector in ("#rendered-A", "#rendered-B", ".scroll.prompt"):
        sizes = page.locator(selector).first.evaluate("e => [e.scrollHeight, e.clientHeight]")
        assert sizes[0] > sizes[1], (selector, sizes)
    assert page.locator("#rendered-A").evaluate("e => getComputedStyle(e).overflowY") == "auto"
    context.close()


def test_at_1366x768_the_decision_controls_stay_visible_wherever_the_page_is_scrolled(
    browser: Any, served: str
) -> None:
    context, page = open_page(browser, served, WIDE)
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height > WIDE["height"] * 1.5  # the page scrolls: the shortcuts table lies below the card
    for y in (0, height // 3, (2 * height) // 3, height):
        page.evaluate(f"window.scrollTo(0, {y})")
        for name in ("underdetermined", "malformed", "skip", "prefer A", "prefer B", "tie"):
            assert in_window(box(page, f'button:has-text("{name}")'), WIDE), (y, name)
    context.close()


def test_at_390_nothing_scrolls_sideways_and_the_candidates_stack(browser: Any, served: str) -> None:
    context, page = open_page(browser, served, PHONE)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert page.evaluate("document.body.scrollWidth") <= PHONE["width"]
    a, b = box(page, "#candidate-A-box"), box(page, "#candidate-B-box")
    assert b["y"] >= a["y"] + a["height"] and abs(a["x"] - b["x"]) <= 1, (a, b)
    page.locator("details.more > summary").click()  # the correction and note boxes, unfolded
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    for selector in ("#correction", "#note"):
        found = box(page, selector)
        assert found["x"] >= 0 and found["x"] + found["width"] <= PHONE["width"], (selector, found)
    context.close()


def test_candidates_are_drawn_as_markdown_and_raw_html_in_them_is_text(browser: Any, served: str) -> None:
    # bypass_csp: a script that reached the page as HTML would run; it must reach it as text
    context, page = open_page(browser, served, WIDE, bypass_csp=True)
    shown, other = ("A", "B") if rich(page) == "A" else ("B", "A")
    rendered = page.locator(f"#rendered-{shown}")
    assert rendered.locator("h4", has_text="Refund answer").count() == 1
    assert rendered.locator("strong", has_text="refunds within 30 days").count() == 1
    assert rendered.locator("table td", has_text="40").count() == 1
    code = rendered.locator("pre code")
    assert code.text_content() == CODE
    assert "monospace" in code.evaluate("e => getComputedStyle(e).fontFamily")
    block = rendered.locator("pre")  # the long code line scrolls inside its own block
    assert block.evaluate("e => getComputedStyle(e).overflowX") == "auto"
    assert block.evaluate("e => e.scrollWidth > e.clientWidth")
    assert rendered.locator("script, img, iframe").count() == 0
    text = rendered.inner_text()
    assert f"<script>document.title = '{MARKER}'</script>" in text and "<img src=" in text
    assert "[image: chart · https://example.com/track.png]" in text
    assert page.title() != MARKER
    link = rendered.locator("a", has_text="the policy")
    assert set((link.get_attribute("rel") or "").split()) >= {"noopener", "nofollow", "noreferrer"}
    # the long unbroken line wraps inside its box: nothing wider than the candidate
    sizes = rendered.evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert sizes[0] <= sizes[1], sizes
    assert page.locator(f"#rendered-{other} code").text_content() == "one"
    context.close()


def test_the_raw_toggle_shows_the_exact_characters(browser: Any, served: str) -> None:
    context, page = open_page(browser, served, WIDE)
    shown = rich(page)
    raw, rendered = page.locator(f"#raw-{shown}"), page.locator(f"#rendered-{shown}")
    assert raw.is_hidden()
    page.locator(f"#candidate-{shown}-box details.raw > summary").click()
    assert raw.is_visible() and rendered.is_hidden()
    assert raw.text_content() == RESPONSE_A  # the leading line feed and \r included
    assert "monospace" in raw.evaluate("e => getComputedStyle(e).fontFamily")
    page.locator(f"#candidate-{shown}-box details.raw > summary").click()
    assert rendered.is_visible()
    context.close()


def test_dark_mode_follows_the_system_colour_scheme(browser: Any, served: str) -> None:
    backgrounds = {}
    for scheme in ("light", "dark"):
        context, page = open_page(browser, served, WIDE, color_scheme=scheme)
        backgrounds[scheme] = page.evaluate("getComputedStyle(document.body).backgroundColor")
        context.close()
    assert backgrounds == {"light": "rgb(255, 255, 255)", "dark": "rgb(13, 17, 23)"}


def test_axe_finds_nothing_at_either_size_light_or_dark(browser: Any, served: str) -> None:
    need(AXE.is_file(), f"axe-core is not installed at {AXE} (scripts/setup.sh --system installs it)")
    found = {}
    for viewport in (WIDE, PHONE):
        for scheme in ("light", "dark"):
            context, page = open_page(browser, served, viewport, bypass_csp=True, color_scheme=scheme)
            page.locator("#candidate-A-box details.raw > summary").click()  # the raw view too
            found[f"{viewport['width']} {scheme}"] = axe_violations(page)
            context.close()
    assert found == {name: [] for name in found}


@pytest.fixture
def team(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """Three long items, the inspector with a capability, the OIDC provider and the proxy allowing
    ``alice`` to write."""
    store = new_store(tmp_path)
    items = long_campaign(store)
    with writing_team(tmp_path, "alice") as (_, proxy):
        yield {"store": store, "items": items, "proxy": proxy.url}
    store.close()


def next_card(page: Any) -> None:
    """Enter once recorded: the next card is drawn in place (no navigation), its controls active."""
    from playwright.sync_api import expect

    before = page.locator("#item-title code").inner_text()
    page.keyboard.press("Enter")
    expect(page.locator("#item-title code")).not_to_have_text(before)
    page.wait_for_selector("#write-state.ok")
    assert page.url.endswith("/review/camp/1")  # the next card of the reviewer's queue, drawn and leased


def docs_images(page: Any) -> None:
    """With REVIEWTRAIL_DOCS_IMAGES=DIR: the signed-in page's first screen at 1366×768 (light and
    dark) and the first screen at 390 px."""
    folder = os.environ.get("REVIEWTRAIL_DOCS_IMAGES")
    if not folder:
        return
    for name, viewport, scheme in (
        ("review-1366-light.png", WIDE, "light"),
        ("review-1366-dark.png", WIDE, "dark"),
        ("review-390-light.png", PHONE, "light"),
    ):
        page.set_viewport_size(viewport)
        page.emulate_media(color_scheme=scheme)
        page.screenshot(path=str(Path(folder) / name))
    page.set_viewport_size(WIDE)
    page.emulate_media(color_scheme="light")


def test_keyboard_only_a_single_key_disposition_waits_for_enter(browser: Any, team: dict[str, Any]) -> None:
    store, items, proxy = team["store"], team["items"], team["proxy"]
    context = browser.new_context(viewport=WIDE)
    page = context.new_page()
    sign_in(page, proxy, "alice", "/review/camp/1")
    page.wait_for_selector("#write-state.ok")
    docs_images(page)
    head = ledger_head(store)
    ids = {item.item_id for item in items}

    # t arms a tie; Esc drops it: nothing is sent.
    first = page.locator("#item-title code").inner_text()
    page.keyboard.press("t")
    assert page.locator("#confirm").is_visible() and "Record tie?" in page.locator("#confirm").inner_text()
    page.keyboard.press("Escape")
    assert page.locator("#confirm").is_hidden()
    assert "nothing was recorded" in page.locator("#key-feedback").inner_text()
    assert ledger_head(store) == head

    # A multi-line note, then s armed and confirmed with Enter.
    page.keyboard.press("n")
    page.keyboard.type("first line")
    page.keyboard.press("Enter")
    page.keyboard.type("second line")
    page.keyboard.press("Escape")
    page.keyboard.press("s")
    assert ledger_head(store) == head  # armed, not sent
    page.keyboard.press("Enter")
    revealed(page)
    assert page.locator("#reveal-summary").inner_text().startswith("Recorded: skip by oidc-")
    skipped = history(store, first).active
    assert skipped is not None and skipped.disposition == "skip"
    assert json.loads(store.ledger.get(skipped.decision_id).payload)["note"] == "first line\nsecond line"
    next_card(page)

    # A preference is two keys already: b then 2 records it, and the reveal names the choice.
    second = page.locator("#item-title code").inner_text()
    assert second in ids and second != first
    page.keyboard.press("b")
    page.keyboard.press("2")
    revealed(page)
    assert page.locator("#reveal-summary").inner_text().startswith("Recorded: prefer B (candidate B), strong by ")
    next_card(page)

    # u, then Enter.
    third = page.locator("#item-title code").inner_text()
    assert third in ids - {first, second}
    page.keyboard.press("u")
    page.keyboard.press("Enter")
    revealed(page)
    assert page.locator("#reveal-summary").inner_text().startswith("Recorded: underdetermined by ")
    assert [history(store, i).active.disposition for i in (first, second, third)] == [  # type: ignore[union-attr]
        "skip",
        "prefer",
        "underdetermined",
    ]
    assert ledger_head(store)[0] == head[0] + 3  # type: ignore[index]
    context.close()


def test_axe_finds_nothing_on_the_active_controls_confirmation_and_reveal(browser: Any, team: dict[str, Any]) -> None:
    need(AXE.is_file(), f"axe-core is not installed at {AXE} (scripts/setup.sh --system installs it)")
    found = {}
    for viewport, scheme in ((WIDE, "light"), (PHONE, "dark")):
        context = browser.new_context(bypass_csp=True, viewport=viewport, color_scheme=scheme)
        page = context.new_page()
        sign_in(page, team["proxy"], "alice", "/review/camp/1")
        page.wait_for_selector("#write-state.ok")
        page.keyboard.press("n")  # the details unfolded
        page.keyboard.press("Escape")
        page.keyboard.press("t")
        found[f"{viewport['width']} {scheme}, armed"] = axe_violations(page)
        page.keyboard.press("Enter")
        revealed(page)
        found[f"{viewport['width']} {scheme}, revealed"] = axe_violations(page)
        context.close()
    assert found == {name: [] for name in found}
