"""A reviewer's wait in the browser, on the Review page of a 100,000-item campaign.

review_flow
    The store of bench/_hr_store.py (100,000 items in 1,000,000 records, half of them decided;
    5,000 items with --quick), the one bench_web.py keeps under bench/.work/cache/, copied for
    this run (decisions are written into the copy). ``reviewtrail serve`` with a review capability,
    ``reviewtrail proxy`` before it with an OIDC login at ``oidc-provider-mock`` (the test suite's
    helpers, tests/support/), Debian's Chromium driven by Playwright, signed in as a reviewer
    allowed to write.
    Per card, with the keyboard only: ``t`` arms a tie (untimed), then
    - the confirming key, Enter, to the reveal drawn (the decision sent through the proxy, signed,
      recorded, answered and shown: the frame after the reveal is unhidden), and
    - the continuing key, Enter, to the next card drawn: the page fetched the next card while the
      reveal was shown and swaps its <main> in; the frame after the swap (were it a navigation,
      the new document's <main> parsed in).
    The figure is the p95 over cards of the sum of the two: what the reviewer waits for between
    judging one card and seeing the next, their own reading of the reveal left out. Key times are
    the events' own time stamps, "drawn" the frame after the change (a requestAnimationFrame, then
    a message: after that frame's paint), both on the page's clock (an init script observes the
    page; nothing of it is changed). The time until the next card's controls
    are active (its ``/auth/session`` answered) is a note.
    Baseline, in the same run and the same browser: the same card page's bytes saved as a static
    file with its style sheet and script, served by Python's http.server from a folder, and the
    key ArrowRight (the page's "next card") to that page's first contentful paint: what drawing a
    page of the same size costs this browser with no reviewtrail on the way.
    Target: p95 <= 100 ms.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _util import Config, Result, verdict, work_dir
from bench_human_review import _p95
from bench_web import _store

TESTS = Path(__file__).resolve().parent.parent / "tests"
TARGET_MS = 100.0
STATIC = Path(__file__).resolve().parent.parent / "src" / "reviewtrail" / "web" / "static"
# On every document: the time stamp of each Enter and ArrowRight (kept across the navigation it
# starts), the first contentful paint, and the frame after the reveal is shown and after the
# controls are active. Installed by the browser (an init script), outside the page's CSP.
PROBE = """
(() => {
  const at = (stamp) => performance.timeOrigin + stamp;
  addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === "ArrowRight") sessionStorage.setItem("bench:key", String(at(e.timeStamp)));
  }, true);
  const painted = (name) => requestAnimationFrame(() => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => { window[name] = at(performance.now()); };
    channel.port2.postMessage(0);
  });
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (e.name === "first-contentful-paint") window.__fcp = at(e.startTime);
  }).observe({ type: "paint", buffered: true });
  window.__seen = {};
  new MutationObserver((records) => {
    const seen = window.__seen;
    if (!seen.drawn && records.some((r) => [...r.addedNodes].some((n) => n.nodeName === "MAIN"))) {
      seen.drawn = true; painted("__drawn");
    }
    const reveal = document.getElementById("reveal");
    if (!seen.revealed && reveal && !reveal.hidden) { seen.revealed = true; painted("__revealed"); }
    const state = document.getElementById("write-state");
    if (!seen.active && state && state.className === "ok") { seen.active = true; painted("__active"); }
  }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ["hidden", "class"] });
})();
"""


def _support() -> None:
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))


def _copy_store(source: Any, root: Path) -> dict[str, str]:
    """The cached store copied under ``root``: the environment that points a command at it."""
    database = Path(source.database_url.removeprefix("sqlite:///"))
    shutil.copytree(source.store, root / "store")
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{database}{suffix}").exists():
            shutil.copy2(f"{database}{suffix}", root / f"ledger.sqlite{suffix}")
    return {"REVIEWTRAIL_STORE": str(root / "store"), "REVIEWTRAIL_DATABASE_URL": f"sqlite:///{root / 'ledger.sqlite'}"}


@contextmanager
def _reviewer_site(root: Path, store_env: dict[str, str]) -> Iterator[str]:
    """The inspector with a capability and the proxy with an OIDC login before it: the proxy's URL."""
    import os

    from reviewtrail.web import new_capability
    from reviewtrail.web._capability import CAPABILITY_FILE_ENV
    from support.oidc import running_oidc_mock
    from support.proxy import running_proxy, write_secret
    from support.web import announcing

    key = root / "review.key"
    new_capability(key)
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVIEWTRAIL_")} | store_env
    serve = [sys.executable, "-m", "reviewtrail", "serve", "--port", "0", "--json"]
    with (
        announcing(serve, env | {CAPABILITY_FILE_ENV: str(key)}, root, "the inspector") as (_, inspector, _out),
        running_oidc_mock() as provider,
        running_proxy(
            inspector["url"].rstrip("/"),
            {
                "REVIEWTRAIL_PROXY_OIDC_ISSUER": provider,
                "REVIEWTRAIL_PROXY_OIDC_CLIENT_ID": "reviewtrail-proxy",
                "REVIEWTRAIL_PROXY_OIDC_CLIENT_SECRET": "client-secret-value",
                "REVIEWTRAIL_PROXY_ALLOW": "alice",
                "REVIEWTRAIL_PROXY_SESSION_SECRET_FILE": str(write_secret(root / "proxy.secret", os.urandom(48))),
                CAPABILITY_FILE_ENV: str(key),
            },
            root,
        ) as proxy,
    ):
        yield proxy.url


@contextmanager
def _static_site(root: Path, html: bytes) -> Iterator[str]:
    """``html`` as ``card.html`` beside the inspector's style sheet and script, served by
    http.server (any query string answers the same file): its URL."""
    folder = root / "static-site"
    (folder / "static").mkdir(parents=True)
    (folder / "card.html").write_bytes(html)
    for name in ("inspector.css", "review.js"):
        shutil.copy2(STATIC / name, folder / "static" / name)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/card.html"
    finally:
        server.shutdown()
        server.server_close()


def _value(page: Any, name: str) -> float:
    """``window[name]`` once the probe has set it."""
    page.wait_for_function(f"() => window.{name} !== undefined", timeout=60_000)
    return float(page.evaluate(f"window.{name}"))


def _key_time(page: Any) -> float:
    return float(page.evaluate("Number(sessionStorage.getItem('bench:key'))"))


def _sign_in(page: Any, proxy: str, next_path: str) -> None:
    page.goto(f"{proxy}/auth/login?next={next_path}")
    page.wait_for_selector('input[name="sub"]')
    page.keyboard.type("alice")
    with page.expect_navigation(url=f"{proxy}{next_path}"):
        page.keyboard.press("Enter")


def _reset(page: Any) -> None:
    page.evaluate("window.__seen = {}; window.__drawn = window.__revealed = window.__active = undefined")


POSTED = """() => {
  const sent = performance.getEntriesByType("resource").filter((e) => e.name.endsWith("/api/review/decisions"));
  return sent.length ? sent[sent.length - 1].duration : -1;
}"""


def _one_card(page: Any) -> tuple[float, float, float, float]:
    """One tie, confirmed and continued: (key to reveal drawn, key to next card drawn, key to its
    controls active, the decision's request as the browser timed it), in ms."""
    page.wait_for_selector("#write-state.ok")
    page.keyboard.press("t")
    page.locator("#confirm").wait_for()
    _reset(page)
    page.keyboard.press("Enter")
    page.locator("#reveal").wait_for()
    revealed = _value(page, "__revealed") - _key_time(page)
    posted = float(page.evaluate(POSTED))
    _reset(page)
    page.keyboard.press("Enter")
    drawn = _value(page, "__drawn") - _key_time(page)
    active = _value(page, "__active") - _key_time(page)
    return revealed, drawn, active, posted


def _static_card(page: Any, url: str, n: int) -> float:
    page.goto(f"{url}?card={n}")
    page.wait_for_selector("#next")
    with page.expect_navigation():
        page.keyboard.press("ArrowRight")
    return _value(page, "__fcp") - _key_time(page)


def bench_review_flow(cfg: Config) -> Result:
    _support()
    from support.web import chromium

    cached = _store(cfg)
    cards, warm = cfg.rep_count(60, 12), 3
    with work_dir("review-flow") as root:
        store_env = _copy_store(cached.settings, root)
        with _reviewer_site(root, store_env) as proxy, chromium() as browser:
            context = browser.new_context(viewport={"width": 1366, "height": 768})
            context.add_init_script(PROBE)
            page = context.new_page()
            path = "/review/bench-campaign/1"
            _sign_in(page, proxy, path)
            page.goto(f"{proxy}{path}?card=1")  # a card page as browsed (with its pager), for the floor
            html = page.content().encode()
            page.goto(f"{proxy}{path}")  # the reviewer's queue: each card drawn and leased to them
            waits = [_one_card(page) for _ in range(warm + cards)][warm:]
            with _static_site(root, html) as url:
                floor = [_static_card(page, url, n) for n in range(warm + cards)][warm:]
            context.close()
    total = [w[0] + w[1] for w in waits]
    ours, base = _p95(total), _p95(floor)
    return Result(
        "review_flow",
        verdict(ours <= TARGET_MS),
        ours=f"{ours:.1f} ms",
        baseline=f"{base:.1f} ms",
        ratio=base / ours,
        target=f"p95 <= {TARGET_MS:.0f} ms",
        notes=[
            f"{cards} cards of {cached.items:,} items ({cached.note}); p95 of confirming key -> reveal drawn "
            f"+ continuing key -> next card drawn (in place), through the proxy",
            f"parts, p95: key -> reveal drawn {_p95([w[0] for w in waits]):.1f} ms, of which the decision's "
            f"request (resource timing: proxy, signature, inspector, append) {_p95([w[3] for w in waits]):.1f} ms; "
            f"key -> next card drawn {_p95([w[1] for w in waits]):.1f} ms; key -> its controls active "
            f"{_p95([w[2] for w in waits]):.1f} ms",
            "baseline: the same card page's bytes as a static file (with its style sheet and script) served "
            "by http.server, ArrowRight -> that page's first contentful paint, same browser, same run",
        ],
    )
