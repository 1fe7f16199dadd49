"""The order a review session serves cards in: scenario families interleaved (consecutive cards
share a family only when no other family has cards left), each family in the order recorded, and
the same store gives the same order."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.human_review.session import SessionQueue, interleave_families
from support.human_review import add_item, add_prompt, add_run, new_store


def adjacent_pairs(families: list[str]) -> int:
    return sum(1 for a, b in itertools.pairwise(families) if a == b)


def fewest_pairs(families: list[str]) -> int:
    """The fewest consecutive same-family pairs any order of ``families`` can have."""
    if not families:
        return 0
    most = max(Counter(families).values())
    return max(0, most - (len(families) - most) - 1)


@given(st.lists(st.sampled_from("ABCDE"), max_size=60))
def test_families_alternate_wherever_possible_and_each_keeps_its_order(recorded: list[str]) -> None:
    items = [(family, f"item-{n}") for n, family in enumerate(recorded)]
    family_of = dict((item, family) for family, item in items)
    order = interleave_families(items)
    assert sorted(order) == sorted(item for _, item in items)  # every item once
    served = [family_of[item] for item in order]
    assert adjacent_pairs(served) == fewest_pairs(recorded)
    for family in set(recorded):  # each family in the order recorded
        mine = [item for item in order if family_of[item] == family]
        assert mine == [item for f, item in items if f == family]
    assert interleave_families(list(items)) == order  # deterministic


@pytest.mark.parametrize(
    ("recorded", "served"),
    [
        ("", ""),
        ("AAAABBBB", "ABABABAB"),
        ("AAAAB", "ABAAA"),
        ("ABBBCC", "BCBABC"),  # the family with most left first; a tie goes to the earlier item
        ("AABBCC", "ABCABC"),
        ("CCCAAB", "CACACB"),
    ],
)
def test_known_orders(recorded: str, served: str) -> None:
    items = [(family, f"{family}{n}") for n, family in enumerate(recorded)]
    assert "".join(item[0] for item in interleave_families(items)) == served


def test_an_item_given_twice_is_served_once_in_its_first_place() -> None:
    assert interleave_families([("A", "x"), ("B", "y"), ("A", "x")]) == ["x", "y"]


def test_a_session_serves_a_store_recorded_in_family_blocks_alternately_and_the_same_way_twice(
    tmp_path: Path,
) -> None:
    store = new_store(tmp_path)
    try:
        ids: dict[str, str] = {}
        for family in ("billing",) * 4 + ("shipping",) * 4:
            prompt = add_prompt(store, family=family)
            item = add_item(store, prompt, add_run(store, prompt, "agent-a"), add_run(store, prompt, "agent-b"))
            ids[item.item_id] = family
        orders = []
        for _ in range(2):
            queue = SessionQueue(store, "camp")
            assert queue.planned == 8
            served: list[str] = []
            while (card := queue.next_card(served)) is not None:
                assert card.scenario_family == ids[card.item_id]
                served.append(card.item_id)
            orders.append(served)
        assert orders[0] == orders[1]
        # Alternately (the family whose item comes first in the queue's shuffled order leads).
        assert [ids[i] for i in orders[0]] in (["billing", "shipping"] * 4, ["shipping", "billing"] * 4)
    finally:
        store.close()
