"""Query tables an older version made: a writable open rebuilds them from the chain; a read-only
open (the inspector, reads) cannot, so it refuses with exit 5 naming the tables and the fix instead
of answering from tables of another shape (SQLite reads an unknown quoted column as a string)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from conftest import run_cli
from reviewtrail.app import open_store
from reviewtrail.config import Settings
from reviewtrail.errors import ReadOnlyStoreError
from reviewtrail.human_review.records import HUMAN_REVIEW_PROJECTION
from reviewtrail.human_review.session import review_queue
from support.human_review import campaign_with_items, new_store


def _age(ledger: Path, name: str, version: int) -> None:
    """Record ``name``'s query tables as made by another projection version."""
    with sqlite3.connect(ledger) as conn:
        conn.execute("UPDATE rt_projection_state SET version = ? WHERE name = ?", (version, name))


def test_a_read_only_open_refuses_tables_of_another_version_and_a_writable_one_rebuilds_them(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        items = campaign_with_items(store, 3)
    ledger = tmp_path / "ledger.sqlite"
    settings = Settings(store=tmp_path / "store", database_url=f"sqlite:///{ledger}")
    old = HUMAN_REVIEW_PROJECTION.version - 2
    _age(ledger, "human_review", old)
    with pytest.raises(ReadOnlyStoreError) as info:
        open_store(settings, read_only=True)
    message = str(info.value)
    assert f"human_review (version {old}, now {HUMAN_REVIEW_PROJECTION.version})" in message
    assert "reviewtrail verify" in message and info.value.exit_code == 5
    env = {"REVIEWTRAIL_STORE": str(settings.store), "REVIEWTRAIL_DATABASE_URL": settings.database_url}
    code, _, err = run_cli("serve", "--port", "0", env=env)  # the inspector refuses before it listens
    assert code == 5 and "query tables made by another version" in err
    code, _, err = run_cli("verify", env=env)  # a writable open rebuilds them
    assert code == 0, err
    with open_store(settings, read_only=True) as store:
        assert {c.item_id for c in review_queue(store, "camp", 1)} == {i.item_id for i in items}
