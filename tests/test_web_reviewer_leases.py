"""A queue per reviewer on the Review page: through the proxy, two signed-in reviewers drawing at
once are leased different open cards; a skip leaves the item open to the other, whose judgment
supersedes it, named. The reviewer the proxy vouches for is signed with the review capability: a
request straight to the inspector with that header forged, replayed, moved to another path, or
with no signature takes no lease and gains nothing, and an inspector without a capability
verifies nothing and takes no lease at all. Leases are working state: the ledger never sees them."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reviewtrail.human_review.records import queue_key
from reviewtrail.human_review.session import LEASE_FILE, history
from reviewtrail.verify import verify_store
from reviewtrail.web import new_capability
from reviewtrail.web._capability import Capability, load_capability
from reviewtrail.web._reviewer_header import sign_reviewer
from support.human_review import new_store
from support.proxy import login, writing_team
from support.web import Inspector, ledger_head, planted_campaign, running_inspector

NEXT = "/api/review/camp/1/next"


def leases_held(root: Path) -> list[tuple[str, str]]:
    """(item, holder) of every lease row beside the store (none when the file was never made)."""
    path = root / "store" / LEASE_FILE
    if not path.exists():
        return []
    conn = sqlite3.connect(path)
    try:
        return [(str(i), str(h)) for i, h in conn.execute("SELECT item_id, holder FROM leases")]
    finally:
        conn.close()


@pytest.fixture
def team(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """Three open items, the inspector with a capability, the OIDC provider and the proxy
    allowing ``alice`` and ``dave`` to write."""
    store = new_store(tmp_path)
    items, _ = planted_campaign(store, n=3)
    with writing_team(tmp_path, "alice,dave") as (inspector, proxy):
        yield {"store": store, "items": items, "proxy": proxy.url, "inspector": inspector, "root": tmp_path}
    store.close()


def _decide(browser: httpx.Client, proxy: str, item_id: str, disposition: str) -> httpx.Response:
    token = browser.get(f"{proxy}/auth/session").json()["csrfToken"]
    body = {
        "itemId": item_id,
        "campaignId": "camp",
        "campaignVersion": 1,
        "submissionId": f"sub-{disposition}-{item_id}",
        "disposition": disposition,
    }
    return browser.post(f"{proxy}/api/review/decisions", json=body, headers={"X-CSRF-Token": token})


def test_two_reviewers_through_the_proxy_never_get_the_same_open_card_and_a_skip_stays_open_to_the_other(
    team: dict[str, Any],
) -> None:
    proxy, store = team["proxy"], team["store"]
    head = ledger_head(store)
    with login(proxy, "alice") as alice, login(proxy, "dave") as dave:
        drawn: dict[str, dict[str, Any]] = {}
        start = threading.Barrier(2)

        def draw(name: str, browser: httpx.Client) -> None:
            start.wait()
            # A header the browser sends is not the proxy's: dropped, never believed.
            answer = browser.get(f"{proxy}{NEXT}", headers={"Reviewtrail-Reviewer": "mallory"})
            assert answer.status_code == 200, answer.text
            drawn[name] = answer.json()

        threads = [threading.Thread(target=draw, args=(n, b)) for n, b in (("alice", alice), ("dave", dave))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        a, d = drawn["alice"], drawn["dave"]
        assert (
            a["reviewer"].startswith("oidc-") and d["reviewer"].startswith("oidc-") and a["reviewer"] != d["reviewer"]
        )
        assert a["card"]["itemId"] != d["card"]["itemId"]
        assert ledger_head(store) == head  # drawing appends nothing
        # The page draws the same card again (held), with the reviewer's own counts.
        page = alice.get(f"{proxy}/review/camp/1").text
        assert a["card"]["itemId"] in page and "your next card" in page and "you: 0 decided, 0 skipped" in page
        # alice skips: the item stays open, out of her queue, and her lease ends.
        skipped = _decide(alice, proxy, a["card"]["itemId"], "skip")
        assert skipped.status_code == 201, skipped.text
        after = alice.get(f"{proxy}{NEXT}").json()
        third = ({i.item_id for i in team["items"]} - {a["card"]["itemId"], d["card"]["itemId"]}).pop()
        assert after["card"]["itemId"] == third and after["own"] == {
            "reviewer": a["reviewer"],
            "decided": 0,
            "skipped": 1,
        }
        # dave judges his card; nothing never-judged is left to him, so he is served alice's skip.
        assert _decide(dave, proxy, d["card"]["itemId"], "tie").status_code == 201
        again = dave.get(f"{proxy}{NEXT}").json()
        assert again["card"]["itemId"] == a["card"]["itemId"]
        judged = _decide(dave, proxy, a["card"]["itemId"], "underdetermined")
        assert judged.status_code == 201, judged.text
        answer = judged.json()
        assert answer["supersedesSkip"]["reviewer"] == a["reviewer"]
        assert answer["notice"].startswith(f"supersedes the skip by {a['reviewer']} (decision ")
        assert dave.get(f"{proxy}{NEXT}").json()["card"] is None  # alice holds the third
        assert dave.get(f"{proxy}/api/review/camp/1/progress").json()["own"] == {
            "reviewer": d["reviewer"],
            "decided": 2,
            "skipped": 0,
        }
    found = history(store, a["card"]["itemId"])
    assert found.active is not None and found.active.disposition == "underdetermined"
    assert len(found.decisions) == 2
    # Leases are kept beside the store; the ledger holds the three decisions and nothing else.
    assert ledger_head(store) is not None and store.ledger.head_seq() == (head[0] if head else 0) + 3
    assert {holder for _, holder in leases_held(team["root"])} == {f"reviewer:{a['reviewer']}"}
    assert verify_store(store).ok


def _signed_get(inspector: Inspector, capability: Capability, path: str, reviewer: str, **sent: Any) -> httpx.Response:
    base = inspector.url.rstrip("/")
    headers = sign_reviewer(capability, "GET", base + path, reviewer)
    return httpx.get(base + sent.get("to", path), headers=headers | sent.get("extra", {}), timeout=30)


def test_a_forged_replayed_moved_or_absent_reviewer_header_takes_no_lease(team: dict[str, Any], tmp_path: Path) -> None:
    inspector, root = team["inspector"], team["root"]
    capability = load_capability(root / "review.key")
    base = inspector.url.rstrip("/")
    first = sorted((i.item_id for i in team["items"]), key=queue_key)[0]
    # Absent: an anonymous read, the campaign's card 1, unleased.
    anonymous = httpx.get(base + NEXT, timeout=30).json()
    assert anonymous["reviewer"] is None and anonymous["card"]["itemId"] == first
    page = httpx.get(base + "/review/camp/1", timeout=30)
    assert page.status_code == 200 and "card 1" in page.text
    # A header without a signature, or signed by another key: refused, nothing leased.
    bare = httpx.get(base + NEXT, headers={"Reviewtrail-Reviewer": "oidc-0123456789abcdef"}, timeout=30)
    assert bare.status_code == 401 and bare.json()["error"]["field"] == "signature"
    other = tmp_path / "other.key"
    new_capability(other)
    forged = _signed_get(inspector, load_capability(other), NEXT, "oidc-0123456789abcdef")
    assert forged.status_code == 401 and forged.json()["error"]["field"] == "keyid"
    # Signed for another path or query: refused.
    moved = _signed_get(inspector, capability, NEXT + "?x=1", "rev-m", to=NEXT)
    assert moved.status_code == 401
    # A signature over another reviewer's header value does not verify.
    swapped = _signed_get(inspector, capability, NEXT, "rev-s", extra={"Reviewtrail-Reviewer": "rev-t"})
    assert swapped.status_code == 401
    assert leases_held(root) == []
    # The proxy's signature once: a lease for that reviewer; the same request replayed: refused.
    headers = sign_reviewer(capability, "GET", base + NEXT, "rev-r")
    once = httpx.get(base + NEXT, headers=headers, timeout=30)
    assert once.status_code == 200 and once.json()["reviewer"] == "rev-r"
    replayed = httpx.get(base + NEXT, headers=headers, timeout=30)
    assert replayed.status_code == 401 and replayed.json()["error"]["field"] == "nonce"
    assert leases_held(root) == [(once.json()["card"]["itemId"], "reviewer:rev-r")]


def test_an_inspector_without_a_capability_verifies_nothing_and_takes_no_lease(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    items, _ = planted_campaign(store, n=2)
    key = tmp_path / "review.key"
    new_capability(key)
    capability = load_capability(key)
    with running_inspector(tmp_path) as inspector:
        base = inspector.url.rstrip("/")
        headers = sign_reviewer(capability, "GET", base + NEXT, "rev-r")
        answer = httpx.get(base + NEXT, headers=headers, timeout=30)
        again = httpx.get(base + NEXT, headers=headers, timeout=30)  # no nonce is claimed either
        forged = httpx.get(base + NEXT, headers={"Reviewtrail-Reviewer": "rev-x"}, timeout=30)
    first = sorted((i.item_id for i in items), key=queue_key)[0]
    for got in (answer, again, forged):
        assert got.status_code == 200 and got.json()["reviewer"] is None and got.json()["card"]["itemId"] == first
    assert leases_held(tmp_path) == [] and not (tmp_path / "store" / LEASE_FILE).exists()
    store.close()
