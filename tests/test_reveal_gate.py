"""The reveal gate: who produced a response is shown only once no open item shows it (the same
run, or the same exact text from any run or prompt); an item is open while it has no active
decision or an active skip, so a skip reveals nothing; a withheld position says when it is shown;
changing a decision on the reviewed history is judged blinded."""

from __future__ import annotations

import itertools
import urllib.request
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import run_cli
from reviewtrail._struct import parse
from reviewtrail.human_review.records import ReviewDecision, ReviewItem
from reviewtrail.human_review.records._projection import response_text_digest
from reviewtrail.human_review.rules import DecisionFact
from reviewtrail.human_review.session import decide, history, item_open
from reviewtrail.human_review.session._reveal_gate import open_by_decisions, withheld_statement
from reviewtrail.store import Store
from support.human_review import add_item, add_prompt, add_run, new_store
from support.web import running_inspector

PREFER_A = {"disposition": "prefer", "preferred": "A", "strength": "slight"}


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = new_store(tmp_path)
    yield s  # type: ignore[misc]
    s.close()


def three_agents(store: Store) -> dict[frozenset[str], ReviewItem]:
    """One prompt, agents a, b, c, every pair an item (each run shown on two items)."""
    prompt = add_prompt(store, agents=("agent-a", "agent-b", "agent-c"))
    runs = {name: add_run(store, prompt, f"agent-{name}") for name in "abc"}
    return {frozenset(p): add_item(store, prompt, runs[p[0]], runs[p[1]]) for p in itertools.combinations("abc", 2)}


def shown(store: Store, item: ReviewItem) -> dict[str, str | None]:
    """Position -> the agent the history shows there (None when withheld)."""
    return {p.position: p.agent_id for p in history(store, item.item_id).provenance}


def test_a_skip_reveals_nothing_and_leaves_the_item_open(store: Store) -> None:
    prompt = add_prompt(store)
    item = add_item(store, prompt, add_run(store, prompt, "agent-a"), add_run(store, prompt, "agent-b"))
    result = decide(store, item.item_id, {"disposition": "skip"}, reviewer="rev-1")
    assert [p.to_json() for p in result.provenance] == [
        {"position": "A", "withheld": "revealed when this item is decided"},
        {"position": "B", "withheld": "revealed when this item is decided"},
    ]
    assert item_open(store.ledger, item.item_id)
    assert history(store, item.item_id).blinded
    # The judgment that supersedes the skip reveals both.
    skip = result.decision_id
    judged = decide(store, item.item_id, {**PREFER_A, "supersedes": skip}, reviewer="rev-2")
    assert {p.agent_id for p in judged.provenance} == {"agent-a", "agent-b"}
    assert not item_open(store.ledger, item.item_id)


def test_a_run_shown_on_an_open_sibling_is_withheld_until_that_sibling_is_decided(store: Store) -> None:
    items = three_agents(store)
    ab, ac, bc = items[frozenset("ab")], items[frozenset("ac")], items[frozenset("bc")]
    first = decide(store, ab.item_id, PREFER_A, reviewer="rev-1")
    assert [p.withheld for p in first.provenance] == [
        "revealed when the 1 other item showing this response is decided"
    ] * 2
    assert all(p.run_id is None and p.agent_id is None and p.model is None for p in first.provenance)
    decide(store, ac.item_id, {"disposition": "tie"}, reviewer="rev-2")
    # a's run is on ab and ac, both decided now: shown; b's run is still on bc, open.
    agent_of = {ab.display_order[0]: None, ab.display_order[1]: None}
    now = shown(store, ab)
    for position, run in zip("AB", ab.display_order, strict=True):
        agent_of[run] = now[position]
    assert sorted(v or "withheld" for v in agent_of.values()) == ["agent-a", "withheld"]
    decide(store, bc.item_id, {"disposition": "skip"}, reviewer="rev-3")  # a skip: bc stays open
    assert sorted(v or "withheld" for v in shown(store, ab).values()) == ["agent-a", "withheld"]
    assert set(shown(store, bc).values()) == {None}


NEAR_COPIES = [
    "Refunds are issued within 30 days of purchase.",
    "Refunds are issued within 30 days of purchase.\n",  # a trailing newline
    "Refunds are issued\r\nwithin 30 days of purchase.",  # CRLF where the other has a space
    "REFUNDS are issued within 30 days of purchase.",  # letter case
    "Refunds are issued within \uff13\uff10 days of purchase.",  # full-width digits: NFKC folds them
]


@pytest.mark.parametrize("copy", NEAR_COPIES, ids=["same", "newline", "crlf", "case", "nfkc"])
def test_the_same_text_from_another_prompt_and_agent_is_withheld_near_copies_too(store: Store, copy: str) -> None:
    one, two = add_prompt(store), add_prompt(store)
    same = NEAR_COPIES[0]
    first = add_item(store, one, add_run(store, one, "agent-a", response=same), add_run(store, one, "agent-b"))
    add_item(store, two, add_run(store, two, "agent-c", response=copy), add_run(store, two, "agent-d"))
    result = decide(store, first.item_id, PREFER_A, reviewer="rev-1")
    by_agent = {p.agent_id for p in result.provenance if p.withheld is None}
    assert by_agent == {"agent-b"}
    [withheld] = [p for p in result.provenance if p.withheld is not None]
    assert withheld.withheld == "revealed when the 1 other item showing this response is decided"


def test_review_history_and_decide_print_the_withheld_statement(tmp_path: Path) -> None:
    s = new_store(tmp_path)
    try:
        items = three_agents(s)
    finally:
        s.close()
    env = {
        "REVIEWTRAIL_STORE": str(tmp_path / "store"),
        "REVIEWTRAIL_DATABASE_URL": f"sqlite:///{tmp_path / 'ledger.sqlite'}",
        "COLUMNS": "300",
    }
    item = items[frozenset("ab")].item_id
    code, out, err = run_cli("review", "decide", item, "--skip", "--reviewer", "rev-1", env=env)
    assert code == 0, err
    assert "revealed when this item and the 1 other item showing this response are decided" in out
    assert "agent-a" not in out and "agent-b" not in out
    code, out, err = run_cli("review", "history", item, env=env)
    assert code == 0, err
    assert "revealed when this item and the 1 other item showing this response are decided" in out
    assert "agent-a" not in out and "agent-b" not in out


def test_changing_a_decision_on_the_history_page_shows_the_blinded_card_and_no_producer(tmp_path: Path) -> None:
    s = new_store(tmp_path)
    try:
        prompt = add_prompt(s)
        a, b = (
            add_run(s, prompt, "agent-a", response="Text of one."),
            add_run(s, prompt, "agent-b", response="Text two."),
        )
        item = add_item(s, prompt, a, b)
        decide(s, item.item_id, PREFER_A, reviewer="rev-1")
    finally:
        s.close()
    with running_inspector(tmp_path) as inspector:
        url = f"{inspector.url}items/{item.item_id}/history"
        with urllib.request.urlopen(url, timeout=30) as answer:
            page = answer.read().decode()
        with urllib.request.urlopen(url + "?change=1", timeout=30) as answer:
            change = answer.read().decode()
    assert "agent-a" in page and "?change=1" in page  # decided, nothing open: revealed on the history
    first, second = ("Text of one.", "Text two.") if item.display_order[0] == a else ("Text two.", "Text of one.")
    assert "Change decision" in change and change.index(first) < change.index(second)
    assert not [secret for secret in ("agent-a", "agent-b", "model-agent", a, b) if secret in change]


DISPOSITIONS = st.sampled_from(["tie", "skip", "underdetermined", "malformed"])


@given(st.lists(DISPOSITIONS, max_size=6))
def test_an_item_is_open_exactly_while_its_active_decision_is_none_or_a_skip(chain: list[str]) -> None:
    facts, previous = [], None
    for seq, disposition in enumerate(chain, start=1):
        wire = {"itemId": "item-1", "disposition": disposition, "submissionId": f"s-{seq}"}
        decision = parse(ReviewDecision, {**wire, **({"supersedes": previous} if previous else {})}, field="payload")
        facts.append(DecisionFact(f"d-{seq}", seq, decision))
        previous = f"d-{seq}"
    assert open_by_decisions(facts, "item-1") == (not chain or chain[-1] == "skip")


@given(st.booleans(), st.integers(min_value=0, max_value=50))
def test_the_withheld_statement_counts_the_other_open_items(self_open: bool, others: int) -> None:
    said = withheld_statement(self_open, others)
    assert said.startswith("revealed when ") and said.endswith(" decided")
    assert (f" {others} other item" in said) == (others > 0)
    assert ("this item" in said) == (self_open or others == 0)


@given(st.text(min_size=1, max_size=80))
def test_the_text_digest_ignores_form_case_and_white_space_only(text: str) -> None:
    import unicodedata

    digest = response_text_digest(text)
    assert response_text_digest(unicodedata.normalize("NFD", text) + "\r\n") == digest
    assert response_text_digest("  " + text.upper().replace(" ", "\n\t")) == response_text_digest(text.upper())
    assert response_text_digest(text + " x") != digest


def test_the_text_digest_known_answer() -> None:
    # SHA-256 of "refunds are issued within 30 days." (NFKC, case folded, white space collapsed)
    assert response_text_digest(" Refunds  are issued\r\nwithin \uff13\uff10 days.\n") == (
        "7ede6072c0a9b056b423c25d8b478f317f7003f409fe20235cc12f09c134d1eb"
    )
