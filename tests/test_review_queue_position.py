"""Card K of a campaign version's queue, found through the query tables' indexes
(:func:`~reviewtrail.human_review.session.queue_position`): the K-th card of the whole queue, open items
first then decided ones, on SQLite and on PostgreSQL."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewtrail.app import open_store
from reviewtrail.config import Settings
from reviewtrail.errors import IntegrityError, InvalidInputError
from reviewtrail.human_review.session import QUEUE_MAX, decide, queue_position, review_queue
from reviewtrail.store import Store
from support.human_review import add_item, add_prompt, add_run, new_store

_names = itertools.count(1)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else None
    with new_store(tmp_path, url) as opened:
        yield opened


def _item(store: Store, campaign: str, version: int) -> str:
    prompt = add_prompt(store, campaign=campaign, version=version)
    runs = [add_run(store, prompt, agent) for agent in ("agent-a", "agent-b")]
    return add_item(store, prompt, *runs).item_id


# Each item: its campaign version (1 or 2, recorded interleaved) and how many decisions it gets (0 to 2).
_CAMPAIGNS = st.lists(st.tuples(st.sampled_from([1, 2]), st.integers(0, 2)), max_size=7)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=_CAMPAIGNS, order=st.randoms(use_true_random=False))
def test_card_k_is_the_kth_card_of_the_whole_queue(store: Store, plan: list[tuple[int, int]], order: object) -> None:
    campaign = f"camp-{next(_names)}"  # a new campaign per example, beside the ones made before
    items = [(_item(store, campaign, version), decisions) for version, decisions in plan]
    decided = [(item_id, n) for item_id, n in items if n]
    order.shuffle(decided)  # type: ignore[attr-defined]  # decided in an order of their own
    for item_id, n in decided:
        previous = None
        for i in range(n):
            wire = {"disposition": "tie"} | ({"supersedes": previous} if previous else {})
            previous = decide(store, item_id, wire, submission_id=f"{item_id}-{i}", reviewer="rev-1").decision_id
    for version in (1, 2, 3):
        queue = review_queue(store, campaign, version, limit=QUEUE_MAX)
        for k in range(1, len(queue) + 2):
            found = queue_position(store, campaign, version, k)
            opened = sum(1 for card in queue if not card.decided)
            # Counted at or past the last open card, where the answer needs it; not before.
            assert found.cards == (len(queue) if k >= opened else None)
            assert found.more == (k < len(queue))
            assert found.card == (queue[k - 1] if k <= len(queue) else None)


def test_a_position_outside_the_queue_is_refused_naming_the_card(store: Store) -> None:
    for position in (0, -1, QUEUE_MAX + 1, True):
        with pytest.raises(InvalidInputError) as err:
            queue_position(store, "camp", 1, position)
        assert err.value.field == "card"


def test_an_open_card_counted_but_not_paged_is_refused_naming_the_table(tmp_path: Path) -> None:
    """An open item whose order column was emptied is counted but never paged: the card it would
    fill is refused, naming the query table to verify, never answered with a wrong card."""
    with new_store(tmp_path, None) as store:
        items = [_item(store, "camp", 1) for _ in range(3)]
    conn = sqlite3.connect(tmp_path / "ledger.sqlite")
    try:
        with conn:
            assert conn.execute("UPDATE rt_p_hr_open SET queue_key = NULL WHERE item_id = ?", (items[1],)).rowcount == 1
    finally:
        conn.close()
    with open_store(
        Settings(store=tmp_path / "store", database_url=f"sqlite:///{tmp_path / 'ledger.sqlite'}")
    ) as store:
        with pytest.raises(IntegrityError) as refused:
            queue_position(store, "camp", 1, 3)
        assert refused.value.field == "hr_open"
        assert str(refused.value) == (
            "hr_open: query table hr_open counts 3 card(s) but has no row at card 3; run 'reviewtrail verify'"
        )
