"""What ``migrate`` checks at its end, in this process: every record, signature and query row of the
target compared with the source's (not only the head), the target's head, and an object already in
the target that is corrupt. The target is SQLite or PostgreSQL; the source a signed store (a
campaign written by a writer whose key is required) with objects in its CAS."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reviewtrail import migrate as migrate_module
from reviewtrail.app import catalog
from reviewtrail.cas import FilesystemCas
from reviewtrail.config import sqlite_path
from reviewtrail.errors import CorruptObjectError
from reviewtrail.ledger import NewRecord, open_ledger
from reviewtrail.migrate import MigrateOptions, MigrateReport, migrate
from support.signed import SignedStore, cli, edit_signature, signed_store

TARGETS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> SignedStore:
    shop = signed_store(tmp_path_factory.mktemp("migrate-checks") / "source", items=3)
    with shop.open(shop.key) as store:
        refs = {f"f{n}": store.cas.put(f"object {n}\n".encode()).to_json() for n in range(3)}
        store.append([NewRecord(type="eval.result@1", actor="ci", privacy="private", payload=refs)])
    return shop


@pytest.fixture
def shop(made: SignedStore, tmp_path: Path) -> SignedStore:
    """A copy of the signed store, this test's own (its SQLite ledger inside the store folder)."""
    import shutil

    shutil.copytree(made.root, tmp_path / "source")
    return dataclasses.replace(
        made, root=tmp_path / "source", url=f"sqlite:///{tmp_path / 'source/store/ledger.sqlite'}"
    )


def target_url(request: pytest.FixtureRequest, kind: str, tmp_path: Path) -> str:
    return str(request.getfixturevalue("pg_url")) if kind == "postgresql" else f"sqlite:///{tmp_path / 'target.sqlite'}"


def run(shop: SignedStore, url: str | None = None, cas: Path | None = None) -> MigrateReport:
    options = MigrateOptions(database_url=url, cas_url=f"file://{cas}" if cas is not None else None, batch_size=4)
    return migrate(shop.settings(), catalog(), options)


def execute(url: str, sql: str, *params: Any) -> None:
    """One statement on the target with plain SQL, as someone who can write its database."""
    path = sqlite_path(url)
    if path is not None:
        with sqlite3.connect(path) as conn:
            conn.execute(sql, params)
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.replace("?", "%s"), params)  # type: ignore[arg-type]


def first_row(url: str) -> tuple[str, dict[str, Any]]:
    """The first query table (by name) that holds a row, and that row."""
    with open_ledger(url, catalog=catalog(), create=False, read_only=True) as ledger:
        for table in sorted(ledger.tables):
            rows = ledger.stored_rows(table)
            if rows:
                return table, rows[0]
    raise AssertionError("no query row in the target")


@pytest.mark.parametrize("kind", TARGETS)
@pytest.mark.parametrize("tamper", ["zeroed signature", "deleted signature row"])
def test_a_signature_changed_in_the_target_fails_the_next_migrate(
    shop: SignedStore, request: pytest.FixtureRequest, tmp_path: Path, kind: str, tamper: str
) -> None:
    url = target_url(request, kind, tmp_path)
    assert run(shop, url).ok
    seq = shop.required_at + 2
    edit_signature(dataclasses.replace(shop, url=url), seq, delete=tamper == "deleted signature row", value=bytes(64))
    report = run(shop, url)
    assert not report.ok and report.records_present > seq
    assert len(report.problems) == 1, report.problems
    assert report.problems[0].startswith(f"the target's signature of seq {seq} differs from the source's")
    held = "no signature" if tamper == "deleted signature row" else "(0000000000000000…)"
    assert held in report.problems[0] and shop.key.key_id in report.problems[0]
    code, out, _ = cli("migrate", "--to", url, "--json", env=shop.env())
    assert code == 4 and out["problems"] == report.problems


@pytest.mark.parametrize("kind", TARGETS)
def test_a_query_row_deleted_in_the_target_fails_the_next_migrate(
    shop: SignedStore, request: pytest.FixtureRequest, tmp_path: Path, kind: str
) -> None:
    url = target_url(request, kind, tmp_path)
    assert run(shop, url).ok
    table, row = first_row(url)
    with open_ledger(url, catalog=catalog(), create=False, read_only=True) as ledger:
        spec = ledger.tables[table]
    where = " AND ".join(f'"{k}" = ?' for k in spec.key)
    execute(url, f"DELETE FROM rt_p_{table} WHERE {where}", *(row[k] for k in spec.key))
    report = run(shop, url)
    assert not report.ok and len(report.problems) == 1, report.problems
    assert report.problems[0].startswith(f"the target's query table {table}: row {{")
    assert "is missing" in report.problems[0]
    assert repr(row[spec.key[0]]) in report.problems[0]


@pytest.mark.parametrize("kind", TARGETS)
def test_a_query_row_edited_in_the_target_fails_the_next_migrate(
    shop: SignedStore, request: pytest.FixtureRequest, tmp_path: Path, kind: str
) -> None:
    url = target_url(request, kind, tmp_path)
    assert run(shop, url).ok
    table, row = first_row(url)
    with open_ledger(url, catalog=catalog(), create=False, read_only=True) as ledger:
        spec = ledger.tables[table]
    where = " AND ".join(f'"{k}" = ?' for k in spec.key)
    execute(url, f"UPDATE rt_p_{table} SET rt_seq = 999 WHERE {where}", *(row[k] for k in spec.key))
    report = run(shop, url)
    assert len(report.problems) == 1 and "was edited" in report.problems[0], report.problems
    assert f"rt_seq=999 (chain: {row['rt_seq']})" in report.problems[0]
    assert report.problems[0].startswith(f"the target's query table {table}: row {{")


def test_an_intact_copy_passes_again_with_every_row_compared(shop: SignedStore, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'target.sqlite'}"
    first = run(shop, url)
    assert first.ok and first.records_copied == first.head_seq > 10
    again = run(shop, url)
    assert again.ok and again.problems == [] and again.records_present == first.head_seq


def during_the_final_check(monkeypatch: pytest.MonkeyPatch, change: Callable[[Any], None]) -> None:
    """``change(target ledger)`` once the copy is done, just before migrate checks the target: as
    someone who writes the target's database while migrate runs."""
    original = migrate_module._check_target

    def check(ledger: Any, *args: Any) -> None:
        change(ledger)
        original(ledger, *args)

    monkeypatch.setattr(migrate_module, "_check_target", check)


def test_a_record_appended_to_the_target_during_the_copy_fails_the_head_check(
    shop: SignedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'target.sqlite'}"

    def append(ledger: Any) -> None:
        ledger.signer = shop.key.signer()
        ledger.append([NewRecord(type="eval.other@1", actor="mallory", privacy="private", payload={"n": 1})])

    during_the_final_check(monkeypatch, append)
    report = run(shop, url)
    end = report.head_seq
    assert report.problems == [
        f"the target ledger's head is seq {end + 1} ({open_head(url)}), the source's is seq {end} ({report.head_hash})"
    ]


def open_head(url: str) -> str:
    with open_ledger(url, create=False, read_only=True) as ledger:
        head = ledger.head()
        assert head is not None
        return head.hash


def test_a_record_changed_in_the_target_during_the_copy_is_named_by_its_seq(
    shop: SignedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'target.sqlite'}"
    path = sqlite_path(url)
    assert path is not None

    def edit(ledger: Any) -> None:
        with sqlite3.connect(path) as conn:
            conn.execute("DROP TRIGGER rt_records_no_update")
            conn.execute("UPDATE rt_records SET actor = 'mallory' WHERE seq = 5")

    during_the_final_check(monkeypatch, edit)
    report = run(shop, url)
    assert report.problems[0].startswith("the target's record at seq 5 differs from the source's"), report.problems


# --- objects ---------------------------------------------------------------------------------------
def test_a_corrupt_object_already_in_the_target_is_refused_and_not_copied_over(
    shop: SignedStore, tmp_path: Path
) -> None:
    cas = tmp_path / "objects"
    assert run(shop, cas=cas).objects_copied >= 3
    held = FilesystemCas(cas, require_layout=False)
    location, name = sorted(held.iter_objects())[0]
    path = next(p for p in cas.rglob(name) if p.is_file())
    good = path.read_bytes()
    path.chmod(0o644)
    path.write_bytes(bytes([good[0] ^ 1]) + good[1:])
    with pytest.raises(CorruptObjectError, match=f"the target already holds {location}/sha256:{name}, corrupt"):
        run(shop, cas=cas)
    assert path.read_bytes() != good  # nothing was copied over it
