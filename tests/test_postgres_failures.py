"""PostgreSQL failures end in a clear error and a documented exit code, never a traceback: a
connection killed before a snapshot's BEGIN, a dropped query table under `verify` and `review queue`,
and a rule that swallows query-table inserts under `review decide`."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from reviewtrail.app import open_store
from reviewtrail.config import Settings
from reviewtrail.errors import EXIT_BACKEND, EXIT_INTEGRITY, ReviewtrailError
from reviewtrail.human_review.session import decide, review_queue
from reviewtrail.verify import verify_store
from support.human_review import campaign_with_items, new_store


def _sql(url: str, *statements: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for stmt in statements:
            conn.execute(stmt)  # type: ignore[arg-type]


def _store_with_items(tmp_path: Path, url: str) -> Settings:
    store = new_store(tmp_path, url)
    try:
        campaign_with_items(store, 2)
    finally:
        store.close()
    return Settings(store=tmp_path / "store", database_url=url)


@pytest.mark.postgres
def test_a_connection_killed_before_a_snapshot_is_retried_or_exit_5(tmp_path: Path, pg_url: str) -> None:
    settings = _store_with_items(tmp_path, pg_url)
    with open_store(settings) as store:
        for _ in range(3):
            pid = store.ledger.recorder._conn.info.backend_pid  # type: ignore[attr-defined]
            _sql(pg_url, f"SELECT pg_terminate_backend({pid})")
            try:  # the read reconnects once; a server that stays away is exit 5
                cards = review_queue(store, "camp", 1, limit=5, include_decided=False)
            except ReviewtrailError as exc:
                assert exc.exit_code == EXIT_BACKEND and exc.field == "database", exc
            else:
                assert len(cards) == 2


@pytest.mark.postgres
def test_a_dropped_query_table_is_exit_4_for_verify_and_the_queue(tmp_path: Path, pg_url: str) -> None:
    settings = _store_with_items(tmp_path, pg_url)
    _sql(pg_url, "DROP TABLE rt_p_hr_open")
    with open_store(settings) as store:
        problems = verify_store(store).problems
        assert any("hr_open" in p and "dropped" in p for p in problems), problems
        with pytest.raises(ReviewtrailError) as err:
            review_queue(store, "camp", 1, limit=5)
    assert err.value.exit_code == EXIT_INTEGRITY and "hr_open" in str(err.value)


@pytest.mark.postgres
def test_a_rule_that_swallows_query_rows_is_refused_before_the_decision_counts(tmp_path: Path, pg_url: str) -> None:
    settings = _store_with_items(tmp_path, pg_url)
    _sql(pg_url, "CREATE RULE swallow AS ON INSERT TO rt_p_hr_decisions DO INSTEAD NOTHING")
    with open_store(settings) as store:
        item = review_queue(store, "camp", 1, limit=1)[0].item_id
        head = store.ledger.head()
        with pytest.raises(ReviewtrailError) as err:
            decide(store, item, {"disposition": "prefer", "preferred": "A", "strength": "slight"}, reviewer="rev-1")
        assert err.value.exit_code in (EXIT_BACKEND, EXIT_INTEGRITY), err.value
        assert store.ledger.head() == head  # nothing was appended
        assert any("swallow" in p or "rule" in p for p in verify_store(store).problems)
