"""Accessibility of every inspector page: axe-core (npm ``axe-core``, installed into
.cache/axe-core by ``scripts/setup.sh --system``) injected by Playwright into Debian's Chromium
finds no violation of impact serious or critical, in the light colour scheme and in the dark one
(the inspector's colours follow ``prefers-color-scheme``).

The pages are not listed here: they are found by crawling the links from ``/`` within the
inspector's origin (HTML responses only, at most :data:`MAX_PAGES`), over a store that gives
every page something to show: a campaign in two scenario families with decisions (one superseded,
so its history reveals who produced A and B) and open items, a campaign with no item yet, an
artifact with two versions, their execution logs and a Reviewer Specialist review, and traced
reviewer calls over three rounds (tests/support/web_pages.py); an error page is visited too. A
page added to the inspector is checked as soon as some page links to it.

Artifacts: a full-page screenshot and the axe results (JSON) of each page are written to
``test-artifacts/accessibility/RUN/`` at the repository root (git-ignored; RUN is the run's
time and process id, the last five runs are kept), or under ``$REVIEWTRAIL_TEST_ARTIFACTS`` when
that variable is set.

The axe script runs as an inline script, which the inspector's CSP (``script-src 'self'``)
blocks, so the page is opened with Playwright's ``bypass_csp``; the CSP itself is held by
tests/test_web_browser.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urlsplit

import pytest

from conftest import need
from reviewtrail.human_review.session import decide
from support.human_review import add_prompt, new_store
from support.web import chromium, running_inspector
from support.web_pages import artifact_with_two_runs, campaign_in_two_families, three_rounds

REPO = Path(__file__).resolve().parent.parent
AXE = REPO / ".cache" / "axe-core" / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = frozenset({"serious", "critical"})
MAX_PAGES = 60
KEEP_RUNS = 5
# Pages no link leads to, visited as well: an error page (a campaign that does not exist).
UNLINKED = ("review/no-such-campaign/1",)


def artifacts() -> Path:
    """A new folder for this run's artifacts; of the earlier runs' folders the newest few are kept
    (runs at once in one tree each write their own)."""
    root = Path(os.environ.get("REVIEWTRAIL_TEST_ARTIFACTS") or REPO / "test-artifacts") / "accessibility"
    folder = root / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    folder.mkdir(parents=True)
    for old in sorted(p for p in root.iterdir() if p.is_dir())[:-KEEP_RUNS]:
        shutil.rmtree(old, ignore_errors=True)
    return folder


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    need(AXE.is_file(), f"axe-core is not installed at {AXE} (scripts/setup.sh --system installs it)")
    with chromium() as launched:
        yield launched


def axe_run(page: Any) -> dict[str, Any]:
    """axe-core's results on the page as it is now (every rule axe runs by default)."""
    page.add_script_tag(path=str(AXE))
    results: dict[str, Any] = page.evaluate("async () => await axe.run(document)")
    return results


def blocking(violations: list[dict[str, Any]]) -> list[str]:
    """The serious and critical ones, one line each: rule, impact, help and the first elements."""
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[node['target'] for node in v['nodes'][:3]]}"
        for v in violations
        if v.get("impact") in BLOCKING
    ]


def same_origin_links(page: Any, origin: str) -> list[str]:
    hrefs = page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)")
    found = []
    for href in hrefs:
        url = urldefrag(href)[0]
        if url.startswith(origin):
            found.append(url)
    return found


def slug(url: str) -> str:
    parts = urlsplit(url)
    text = (parts.path + ("_" + parts.query if parts.query else "")).strip("/") or "index"
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:120]


def store_decision(store: Any, item_id: str) -> str:
    """The active decision of ``item_id``: its id."""
    from reviewtrail.human_review.session import history

    active = history(store, item_id).active
    assert active is not None
    return str(active.decision_id)


def test_axe_finds_a_serious_violation_on_a_page_that_has_one(browser: Any) -> None:
    """The check can fail: a page with an unlabelled image and an unnamed button is caught."""
    context = browser.new_context(bypass_csp=True)
    page = context.new_page()
    page.set_content('<html lang="en"><title>t</title><main><img src="x.png"><button></button></main></html>')
    found = blocking(axe_run(page)["violations"])
    context.close()
    assert any(line.startswith("image-alt ") for line in found), found
    assert any(line.startswith("button-name ") for line in found), found


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_inspector_page_has_no_serious_or_critical_axe_violation(
    browser: Any, tmp_path: Path, scheme: str
) -> None:
    need(shutil.which("bwrap") is not None, "bubblewrap (bwrap) is not installed")
    store = new_store(tmp_path)
    artifact_with_two_runs(store)  # provenance, the diff of two versions, the Reviewer Specialist card
    three_rounds(store, tmp_path)  # traces
    items, _hidden = campaign_in_two_families(store)
    first = store_decision(store, items[0].item_id)
    decide(
        store,
        items[0].item_id,
        {"disposition": "prefer", "preferred": "A", "strength": "slight", "supersedes": first},
        reviewer="rev-2",
    )
    add_prompt(store, campaign="empty")  # a campaign version whose Review page has no card yet
    store.close()
    out = artifacts()

    problems: dict[str, list[str]] = {}
    visited: list[str] = []
    with running_inspector(tmp_path) as inspector:
        origin = inspector.url.rstrip("/")
        context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 1000}, color_scheme=scheme)
        page = context.new_page()
        queue = deque([inspector.url, *(inspector.url + path for path in UNLINKED)])
        seen = set(queue)
        while queue and len(visited) < MAX_PAGES:
            url = queue.popleft()
            response = page.goto(url)
            assert response is not None, url
            if not response.headers.get("content-type", "").startswith("text/html"):
                continue
            visited.append(url)
            for link in same_origin_links(page, origin):
                if link not in seen:
                    seen.add(link)
                    queue.append(link)
            results = axe_run(page)
            name = f"{len(visited):02d}-{slug(url)}"
            page.screenshot(path=str(out / f"{name}.png"), full_page=True)
            kept = {"url": url, "violations": results["violations"], "passed": [r["id"] for r in results["passes"]]}
            (out / f"{name}.axe.json").write_text(json.dumps(kept, indent=2))
            assert len(results["passes"]) >= 10, (url, kept["passed"])  # axe ran its rules on this page
            if found := blocking(results["violations"]):
                problems[url] = found
        context.close()

    paths = {urlsplit(url).path + ("?" + urlsplit(url).query if urlsplit(url).query else "") for url in visited}
    # The crawl reached the pages this store has: the index, both Review pages, a later card, the
    # history of the decided item and of an open one, and the error page.
    assert "/" in paths
    assert {"/review/camp/1", "/review/empty/1", "/review/no-such-campaign/1"} <= paths, sorted(paths)
    assert any(path.startswith("/review/camp/1?card=") for path in paths), sorted(paths)
    assert f"/items/{items[0].item_id}/history" in paths, sorted(paths)
    assert any(path.endswith("/history") and items[0].item_id not in path for path in paths), sorted(paths)
    # and the audit pages over the artifact and the traces, wherever they are linked from.
    for prefix in ("/coverage/camp/1", "/artifacts", "/provenance/", "/specialist/", "/traces/", "/health"):
        assert any(path.startswith(prefix) for path in paths), (prefix, sorted(paths))
    assert problems == {}, json.dumps(problems, indent=2)
