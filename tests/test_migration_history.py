"""A ledger whose migration history (``rt_migrations``) lost a row is an integrity failure (exit 4)
naming the version, on SQLite and PostgreSQL alike: never a migration run again over what it made
(on PostgreSQL that was a ``DuplicateTable`` traceback, on SQLite exit 5, and a deleted version 2
silently rebuilt every query table)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewtrail.errors import IntegrityError
from reviewtrail.ledger import NewRecord, open_ledger


def _url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    return str(request.getfixturevalue("pg_url")) if backend == "postgres" else f"sqlite:///{tmp_path / 'l.sqlite'}"


def _sql(url: str, statement: str) -> None:
    if url.startswith("sqlite:"):
        import sqlite3

        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        conn.execute(statement)
        conn.commit()
        conn.close()
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(statement)  # type: ignore[arg-type]


def _versions(url: str) -> list[int]:
    if url.startswith("sqlite:"):
        import sqlite3

        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        rows = conn.execute("SELECT version FROM rt_migrations ORDER BY version").fetchall()
        conn.close()
    else:
        import psycopg

        with psycopg.connect(url) as conn:
            rows = conn.execute("SELECT version FROM rt_migrations ORDER BY version").fetchall()
    return [int(v) for (v,) in rows]


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
@pytest.mark.parametrize("version", [2, 3, 4])
def test_a_deleted_migration_row_is_an_integrity_failure(
    tmp_path: Path, request: pytest.FixtureRequest, backend: str, version: int
) -> None:
    url = _url(backend, tmp_path, request)
    with open_ledger(url) as ledger:
        ledger.append([NewRecord.make(type="t.note@1", actor="a", privacy="private", payload={})])
    before = _versions(url)
    _sql(url, f"DELETE FROM rt_migrations WHERE version = {version}")
    for read_only in (False, True):
        with pytest.raises(IntegrityError, match=rf"rt_migrations\) lacks version\(s\) {version}\b") as err:
            open_ledger(url, create=False, read_only=read_only)
        assert err.value.exit_code == 4 and err.value.field == "ledger"
    assert _versions(url) == [v for v in before if v != version]  # nothing was run again


def test_a_ledger_made_before_signatures_still_migrates(tmp_path: Path) -> None:
    """Without the signatures table, a history that ends before migration 4 is an older ledger's:
    opened, it takes the migration."""
    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    with open_ledger(url) as ledger:
        ledger.append([NewRecord.make(type="t.note@1", actor="a", privacy="private", payload={})])
    _sql(url, "DROP TABLE rt_signatures")
    _sql(url, "DELETE FROM rt_migrations WHERE version = 4")
    with open_ledger(url, create=False) as ledger:
        assert ledger.signatures_at([1]) == {}
    assert _versions(url) == [1, 2, 3, 4]
