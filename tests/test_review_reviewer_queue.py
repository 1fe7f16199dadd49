"""A queue per reviewer, on SQLite and PostgreSQL: two reviewers drawing at once are never served
the same open card (the library's leases); a skip takes an item out of the skipping reviewer's
queue only, the others are served it after the never-judged items, and their judgment supersedes
the skip, naming whose it was; the queue's order interleaves prompts and never follows the order
the items were recorded in."""

from __future__ import annotations

import itertools
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewtrail.app import init_store, open_store
from reviewtrail.config import Settings
from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.quality import campaign_coverage
from reviewtrail.human_review.records import queue_key
from reviewtrail.human_review.rules import DecisionMark, in_queue_of, item_state, queue_order
from reviewtrail.human_review.session import (
    Leases,
    campaign_progress,
    decide,
    draw_card,
    own_counts,
    queue_position,
    review_queue,
    reviewer_holder,
)
from reviewtrail.store import Store
from reviewtrail.verify import verify_store
from support.human_review import add_item, add_prompt, add_run

AGENTS = ("agent-a", "agent-b", "agent-c")


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Settings]:
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else f"sqlite:///{tmp_path / 'l.sqlite'}"
    settings = Settings(store=tmp_path / "store", database_url=url)
    init_store(settings).close()
    yield settings


def _campaign(store: Store, prompts: int, agents: tuple[str, ...] = AGENTS) -> list[tuple[str, str]]:
    """(item id, prompt id) of every item, in the order recorded: per prompt, the declared pair order."""
    out = []
    for k in range(prompts):
        prompt = add_prompt(store, family=("billing", "shipping", "returns")[k % 3], agents=agents)
        runs = [add_run(store, prompt, agent, response=f"reply {k} {agent}") for agent in agents]
        for i in range(len(runs)):
            for j in range(i + 1, len(runs)):
                out.append((add_item(store, prompt, runs[i], runs[j]).item_id, prompt.id))
    return out


def test_two_reviewers_drawing_at_once_never_get_the_same_open_card(backend: Settings) -> None:
    with open_store(backend) as store:
        items = _campaign(store, 2)  # 6 open items
        reviewers = [f"rev-{n}" for n in range(6)]
        drawn: dict[str, str | None] = {}
        start = threading.Barrier(len(reviewers))

        def draw(reviewer: str) -> None:
            with open_store(backend) as own, Leases(own) as leases:  # a connection each: a real race
                start.wait()
                card = draw_card(own, "camp", 1, reviewer, leases)
                drawn[reviewer] = None if card is None else card.item_id
                leases.held_by(reviewer_holder(reviewer))  # still held once the session ends

        threads = [threading.Thread(target=draw, args=(r,)) for r in reviewers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        got = [i for i in drawn.values() if i is not None]
        assert len(got) == len(reviewers) and len(set(got)) == len(got)  # each its own card
        assert set(got) == {i for i, _ in items}
        with Leases(store) as leases:
            # A reviewer drawing again is served the card they hold; a seventh reviewer gets none.
            again = draw_card(store, "camp", 1, "rev-0", leases)
            assert again is not None and again.item_id == drawn["rev-0"]
            assert draw_card(store, "camp", 1, "rev-7", leases) is None
            # Their decision recorded and the lease released, the next card is another one.
            decide(store, drawn["rev-0"] or "", {"disposition": "tie"}, reviewer="rev-0")
            leases.release(drawn["rev-0"] or "", holder=reviewer_holder("rev-0"))
            assert draw_card(store, "camp", 1, "rev-0", leases) is None  # every other card is held
        assert verify_store(store).ok  # leases are no record


def test_a_skip_leaves_the_item_open_to_others_and_their_judgment_supersedes_it_named(backend: Settings) -> None:
    with open_store(backend) as store:
        items = [i for i, _ in _campaign(store, 2)]
        head = review_queue(store, "camp", 1, include_decided=False)
        first = head[0].item_id
        skipped = decide(store, first, {"disposition": "skip"}, reviewer="rev-a")
        assert skipped.superseded_skip is None and skipped.notice is None
        # Still open: in the campaign's queue, after the never-judged items, and counted open.
        open_now = [c.item_id for c in review_queue(store, "camp", 1, include_decided=False)]
        assert open_now == [c.item_id for c in head[1:]] + [first]
        assert campaign_progress(store, "camp", 1).open == len(items)
        assert campaign_coverage(store, "camp", 1).to_json()["overall"]["decisions"]["open"] == len(items)
        position = queue_position(store, "camp", 1, len(items))
        assert position.card is not None and position.card.item_id == first and not position.card.decided
        # Out of the skipper's queue only.
        assert first not in [c.item_id for c in review_queue(store, "camp", 1, reviewer="rev-a", include_decided=False)]
        assert open_now == [c.item_id for c in review_queue(store, "camp", 1, reviewer="rev-b", include_decided=False)]
        assert own_counts(store.ledger, ("camp", 1), "rev-a").to_json() == {
            "reviewer": "rev-a",
            "decided": 0,
            "skipped": 1,
        }
        with Leases(store) as leases:
            # rev-a draws every other card first and never the one they skipped.
            seen_a = []
            while (card := draw_card(store, "camp", 1, "rev-a", leases)) is not None:
                seen_a.append(card.item_id)
                decide(store, card.item_id, {"disposition": "tie"}, reviewer="rev-a")
                leases.release(card.item_id, holder=reviewer_holder("rev-a"))
            assert set(seen_a) == set(items) - {first}
            # rev-b is served the skipped item, and judges it: the skip is superseded, by name.
            card = draw_card(store, "camp", 1, "rev-b", leases)
            assert card is not None and card.item_id == first
        judged = decide(
            store, first, {"disposition": "prefer", "preferred": "A", "strength": "slight"}, reviewer="rev-b"
        )
        assert judged.active and judged.superseded_skip == (skipped.decision_id, "rev-a")
        assert judged.notice == f"supersedes the skip by rev-a (decision {skipped.decision_id})"
        assert judged.to_json()["supersedesSkip"] == {"decisionId": skipped.decision_id, "reviewer": "rev-a"}
        assert review_queue(store, "camp", 1, include_decided=False) == []
        assert campaign_progress(store, "camp", 1).open == 0
        assert own_counts(store.ledger, ("camp", 1), "rev-b").decided == 1
        assert own_counts(store.ledger, ("camp", 1), "rev-a").to_json()["skipped"] == 0
        report = verify_store(store)
        assert report.ok, report.problems


def test_a_skip_never_replaces_a_judgment_so_a_judged_item_is_never_open_again(backend: Settings) -> None:
    with open_store(backend) as store:
        [(item, _), *_] = _campaign(store, 1)
        judged = decide(store, item, {"disposition": "tie"}, reviewer="rev-a")
        assert item not in [c.item_id for c in review_queue(store, "camp", 1, include_decided=False)]
        head = store.ledger.head()
        with pytest.raises(InvalidInputError) as refused:  # its producers may have been revealed
            decide(store, item, {"disposition": "skip", "supersedes": judged.decision_id}, reviewer="rev-b")
        assert refused.value.field == "disposition" and "underdetermined or malformed" in str(refused.value)
        assert store.ledger.head() == head
        for reviewer in ("rev-a", "rev-b"):
            assert item not in [
                c.item_id for c in review_queue(store, "camp", 1, include_decided=False, reviewer=reviewer)
            ]


def test_the_queue_interleaves_prompts_and_never_follows_the_declared_pair_order(tmp_path: Path) -> None:
    settings = Settings(store=tmp_path / "store", database_url=f"sqlite:///{tmp_path / 'l.sqlite'}")
    init_store(settings).close()
    with open_store(settings) as store:
        items = _campaign(store, 20)  # 60 items, 3 per prompt, recorded prompt by prompt in pair order
        prompt_of = dict(items)
        cards = [c.item_id for c in review_queue(store, "camp", 1, limit=len(items), include_decided=False)]
        assert sorted(cards) == sorted(prompt_of)
        assert cards == sorted(prompt_of, key=queue_key)
        assert cards != [i for i, _ in items]
        # Consecutive cards rarely share a prompt: a fixed shuffle gives about 2 such pairs in 59.
        shared = sum(prompt_of[a] == prompt_of[b] for a, b in itertools.pairwise(cards))
        assert shared <= 8
        # No prompt's items come in their declared pair order back to back.
        recorded = [i for i, _ in items]
        runs = [cards[k : k + 3] for k in range(len(cards) - 2)]
        assert not any(run == recorded[recorded.index(run[0]) : recorded.index(run[0]) + 3] for run in runs)
        # The page's positions and the library's draw follow the same order.
        assert [queue_position(store, "camp", 1, k).card.item_id for k in (1, 2, 3)] == cards[:3]  # type: ignore[union-attr]
        with Leases(store) as leases:
            drawn = draw_card(store, "camp", 1, "rev-a", leases)
            assert drawn is not None and drawn.item_id == cards[0]


# --- the pure rules ---------------------------------------------------------------------------------
MARKS = st.lists(
    st.tuples(st.sampled_from(["skip", "tie", "prefer"]), st.sampled_from(["rev-a", "rev-b", "rev-c"])), max_size=4
)


@settings(max_examples=200, deadline=None)
@given(
    items=st.lists(st.tuples(st.uuids().map(str), MARKS), min_size=1, max_size=12, unique_by=lambda t: t[0]),
    reviewer=st.sampled_from([None, "rev-a", "rev-b"]),
)
def test_a_reviewers_queue_is_never_judged_then_skipped_by_others_each_in_key_order(
    items: list[tuple[str, list[tuple[str, str]]]], reviewer: str | None
) -> None:
    facts = {
        item_id: [DecisionMark(seq, d, who) for seq, (d, who) in enumerate(marks, start=1)] for item_id, marks in items
    }
    order = queue_order(((i, queue_key(i), m) for i, m in facts.items()), reviewer)
    never = [i for i in order if not facts[i]]
    rest = order[len(never) :]
    assert never == sorted((i for i, m in facts.items() if not m), key=queue_key)
    assert rest == sorted(rest, key=queue_key)
    for item_id, marks in facts.items():
        latest = marks[-1] if marks else None
        expected = latest is None or (
            latest.disposition == "skip"
            and (reviewer is None or all(m.actor != reviewer for m in marks if m.disposition == "skip"))
        )
        assert (item_id in order) == expected == in_queue_of(reviewer, marks)
        if latest is not None and latest.disposition != "skip":
            assert item_state(marks) == "judged" and item_id not in order


DECISIONS = st.lists(
    st.tuples(st.integers(0, 3), st.sampled_from(["skip", "tie", "underdetermined"]), st.sampled_from(["a", "b", "c"])),
    max_size=8,
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=DECISIONS, reviewer=st.sampled_from([None, "rev-a", "rev-b"]))
def test_the_stores_queue_is_the_rules_queue_whatever_the_decisions(
    ops: list[tuple[int, str, str]], reviewer: str | None
) -> None:
    """Any sequence of decisions by three reviewers (each superseding the item's latest, as the
    Review page and review session do): the store's open queue for a reviewer is the pure rules'
    queue, in the same order, and its counts agree."""
    with tempfile.TemporaryDirectory() as tmp:
        settings_ = Settings(store=Path(tmp) / "store", database_url=f"sqlite:///{Path(tmp) / 'l.sqlite'}")
        init_store(settings_).close()
        with open_store(settings_) as store:
            items = [i for i, _ in _campaign(store, 1, agents=("agent-a", "agent-b", "agent-c"))]
            items += [i for i, _ in _campaign(store, 1, agents=("agent-a", "agent-b"))]
            marks: dict[str, list[DecisionMark]] = {i: [] for i in items}
            latest: dict[str, str] = {}
            for which, disposition, who in ops:
                item_id = items[which]
                payload: dict[str, str] = {"disposition": disposition}
                if item_id in latest:
                    payload["supersedes"] = latest[item_id]
                judged = bool(marks[item_id]) and marks[item_id][-1].disposition != "skip"
                if disposition == "skip" and judged:
                    with pytest.raises(InvalidInputError):  # a skip never replaces a judgment
                        decide(store, item_id, payload, reviewer=f"rev-{who}")
                    continue
                result = decide(store, item_id, payload, reviewer=f"rev-{who}")
                latest[item_id] = result.decision_id
                marks[item_id].append(DecisionMark(result.seq, disposition, f"rev-{who}"))
            expected = queue_order(((i, queue_key(i), m) for i, m in marks.items()), reviewer)
            got = [c.item_id for c in review_queue(store, "camp", 1, include_decided=False, reviewer=reviewer)]
            assert got == expected
            everyone = queue_order(((i, queue_key(i), m) for i, m in marks.items()), None)
            assert campaign_progress(store, "camp", 1).open == len(everyone)
            positions = [queue_position(store, "camp", 1, k + 1).card for k in range(len(everyone))]
            assert [c.item_id for c in positions if c is not None] == everyone
