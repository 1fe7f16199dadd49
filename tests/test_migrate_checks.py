"""What ``migrate`` checks at its end, in this process: every record, signature and query row of the
target compared with the source's (not only the head), the target's head, and an object already in
the target that is corrupt. The target is SQLite or PostgreSQL; the source a signed store (a
campaign written by a writer whose key is required) with objects in its CAS."""

from __future__ import annotations

import dataclasses
import functools
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
        again = {"a": store.cas.put(b"object 3\n").to_json(), "b": refs["f0"]}  # read: one seen before, then a new one
        pools = {  # the bytes of f0 in the other pool too: each pool's copy is its own object
            "s": store.cas.put(b"agent state\n", pool="agent-state").to_json(),
            "t": store.cas.put(b"object 0\n", pool="agent-state").to_json(),
        }
        appended = [
            NewRecord(type="eval.result@1", actor="ci", privacy="private", payload=p) for p in (refs, again, pools)
        ]
        store.append(appended)
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
    with open_ledger(shop.url, create=False, read_only=True) as src:
        value = src.signatures_at([seq])[seq].value
    key = shop.key.key_id
    held = "no signature" if tamper == "deleted signature row" else f"a signature by key {key!r} (0000000000000000…)"
    assert report.problems == [
        f"the target's signature of seq {seq} differs from the source's: it holds {held} where the source has a "
        f"signature by key {key!r} ({value[:8].hex()}…)"
    ]
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
        missing = {"hash": "00" * 32, "size": 1}  # not read: the check reads the records up to the source's head
        ledger.append([NewRecord(type="eval.other@1", actor="mallory", privacy="private", payload={"f": missing})])

    during_the_final_check(monkeypatch, append)
    report = run(shop, url)
    end = report.head_seq
    assert report.problems == [
        f"the target ledger's head is seq {end + 1} ({open_head(url)}), the source's is seq {end} ({report.head_hash})",
        f"the target's query table cas_refs: row {{seq={end + 1}, hash='{'0' * 64}', pool=''}} was added (no record "
        "gives it) (compared with the source's rows)",
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
            conn.execute("DELETE FROM rt_p_cas_refs")  # and, later in the comparison, the query rows

    during_the_final_check(monkeypatch, edit)
    report = run(shop, url)
    with open_ledger(shop.url, create=False, read_only=True) as src:
        fifth = src.records_at([5])[5]
    described = f"record {fifth.id} (hash {fifth.hash[:12]}…)"  # the same id and hash: another field was edited
    assert report.problems[0] == (
        f"the target's record at seq 5 differs from the source's: it holds {described} where the source has {described}"
    )
    assert any(p.startswith("the target's query table cas_refs: row {") for p in report.problems[1:])


def test_the_end_of_the_target_cut_during_the_copy_is_named(
    shop: SignedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'target.sqlite'}"
    path = sqlite_path(url)
    assert path is not None
    with open_ledger(shop.url, create=False, read_only=True) as src:
        last = src.head()
        assert last is not None
        signature = src.signatures_at([last.seq])[last.seq]
        before = src.records_at([last.seq - 1])[last.seq - 1]

    def cut(ledger: Any) -> None:
        with sqlite3.connect(path) as conn:
            conn.execute("DROP TRIGGER rt_records_no_delete")
            conn.execute("DELETE FROM rt_records WHERE seq = ?", (last.seq,))

    during_the_final_check(monkeypatch, cut)
    report = run(shop, url)
    end, hashed = last.seq, last.hash[:12]
    assert report.problems == [
        f"the target ledger's head is seq {end - 1} ({before.hash}), the source's is seq {end} ({last.hash})",
        f"the target's record at seq {end} differs from the source's: it holds no record where the source has "
        f"record {last.id} (hash {hashed}…)",
        f"the target's signature of seq {end} differs from the source's: it holds no record where the source has a "
        f"signature by key {signature.key_id!r} ({signature.value[:8].hex()}…)",
        f"the target holds a signature at seq {end}, where it holds no record",
    ]


def test_a_target_emptied_during_the_copy_has_no_head(
    shop: SignedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'target.sqlite'}"
    path = sqlite_path(url)
    assert path is not None

    def empty(ledger: Any) -> None:
        with sqlite3.connect(path) as conn:
            conn.execute("DROP TRIGGER rt_records_no_delete")
            conn.execute("DELETE FROM rt_records")

    during_the_final_check(monkeypatch, empty)
    report = run(shop, url)
    assert report.problems[0] == (
        f"the target ledger's head is seq 0 (None), the source's is seq {report.head_seq} ({report.head_hash})"
    )
    assert report.problems[1].startswith("the target's record at seq 1 differs from the source's: it holds no record")


def test_a_signature_and_a_query_row_changed_are_both_named(shop: SignedStore, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'target.sqlite'}"
    assert run(shop, url).ok
    seq = shop.required_at + 1
    edit_signature(dataclasses.replace(shop, url=url), seq, value=bytes(64))
    execute(url, "DELETE FROM rt_p_cas_refs")
    problems = run(shop, url).problems
    assert problems[0].startswith(f"the target's signature of seq {seq} differs from the source's")
    assert len(problems) > 1 and all(p.startswith("the target's query table cas_refs: row {") for p in problems[1:])


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
    with pytest.raises(CorruptObjectError, match=f"the target already holds {location}/sha256:{name}, corrupt") as no:
        run(shop, cas=cas)
    assert str(no.value).endswith("; nothing was copied over it")
    assert path.read_bytes() != good  # nothing was copied over it


# --- the rest of what migrate checks, in this process (scripts/mutation.sh runs these) ------------
def source_store(shop: SignedStore) -> Path:
    return shop.root / "store"


@pytest.mark.parametrize(
    ("database_url", "cas_url", "field", "message"),
    [
        ("mysql://rt@db/x", None, "to", "is not a database URL (sqlite:///PATH"),
        ("postgresql://", None, "to", "is not a database URL"),
        ("sqlite:///{tmp}/missing/ledger.sqlite", None, "to", "the folder {tmp}/missing does not exist"),
        ("sqlite:////", None, "to", "'sqlite:////' names no file"),
        ("sqlite:///", None, "to", "'sqlite:///' names no file"),
        (None, "http://objects.example/x", "cas_to", "is not a CAS URL; use file:///ABSOLUTE/FOLDER or s3://"),
        (None, "file://relative/folder", "cas_to", "names the host 'relative', does not name an absolute folder"),
        (None, "file:///", "cas_to", "'file:///' does not name an absolute folder; use file:///ABSOLUTE/FOLDER"),
        (None, "file:///{tmp}/o?x=1", "cas_to", "is not a CAS URL"),
        (None, "file:///{tmp}/o#part", "cas_to", "is not a CAS URL"),
        (None, "s3://", "cas_to", "is not a CAS URL"),
        (None, "s3://key:secret@bucket/p", "cas_to", "is not a CAS URL"),
        (None, "s3://bucket:9000/p", "cas_to", "is not a CAS URL"),
        (None, "ftp://bucket/p", "cas_to", "is not a CAS URL"),
        (None, "s3://[bucket/p", "cas_to", "'s3://[bucket/p' is not a CAS URL; use file:///ABSOLUTE/FOLDER"),
        (None, "file:///{tmp}/o?", "cas_to", "is not a CAS URL"),
        (None, "file:///{tmp}/o#", "cas_to", "is not a CAS URL"),
        (None, "file://localhost/", "cas_to", "'file://localhost/' does not name an absolute folder; use file:///"),
        (None, "s3://key@bucket/p", "cas_to", "is not a CAS URL"),
        (None, "s3://Bad_Bucket/p", "cas_to", "'Bad_Bucket' is not an S3 bucket name"),
        (None, None, "to", "nothing to migrate: give --to and/or --cas-to naming somewhere the store is not already"),
        ("sqlite:///{db}", None, "to", "nothing to migrate"),
        ("sqlite:///{store}/../store/ledger.sqlite", "file://{store}/", "to", "nothing to migrate"),
        (None, "file://localhost{store}", "to", "nothing to migrate"),
    ],
)
def test_bad_targets_are_refused_naming_the_field(
    shop: SignedStore, tmp_path: Path, database_url: str | None, cas_url: str | None, field: str, message: str
) -> None:
    from reviewtrail.errors import InvalidInputError

    store = source_store(shop)
    names = {"tmp": tmp_path, "db": store / "ledger.sqlite", "store": store}
    options = MigrateOptions(
        database_url=database_url.format(**names) if database_url else None,
        cas_url=cas_url.format(**names) if cas_url else None,
    )
    with pytest.raises(InvalidInputError) as refused:
        migrate(shop.settings(), catalog(), options)
    assert refused.value.field == field and message.format(**names) in str(refused.value), str(refused.value)
    if message.startswith(("nothing", "'")):  # the whole message, from its start
        assert str(refused.value).startswith(f"{field}: {message.format(**names)}")
    assert "secret" not in str(refused.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["source"]  # nothing written anywhere


def test_a_batch_of_one_record_is_a_batch(shop: SignedStore, tmp_path: Path) -> None:
    options = MigrateOptions(database_url=f"sqlite:///{tmp_path / 't.sqlite'}", batch_size=1)
    report = migrate(shop.settings(), catalog(), options)
    assert report.ok and report.records_copied == report.head_seq


@pytest.mark.parametrize("size", [0, -1, True])
def test_a_batch_size_below_one_is_refused(shop: SignedStore, tmp_path: Path, size: int) -> None:
    from reviewtrail.errors import InvalidInputError

    options = MigrateOptions(database_url=f"sqlite:///{tmp_path / 't.sqlite'}", batch_size=size)
    with pytest.raises(InvalidInputError, match=f"must be at least 1, got {size!r}") as refused:
        migrate(shop.settings(), catalog(), options)
    assert refused.value.field == "batch_size" and not (tmp_path / "t.sqlite").exists()


@pytest.mark.parametrize(
    "url", ["postgres://rt:s3cret-pw@127.0.0.1:1/rt", "postgresql://rt:s3cret-pw@127.0.0.1:1/rt", "postgres:///"]
)
def test_an_unreachable_target_database_is_exit_5(shop: SignedStore, url: str) -> None:
    from reviewtrail.errors import BackendUnavailableError

    with pytest.raises(BackendUnavailableError) as refused:
        run(shop, url)
    assert refused.value.exit_code == 5 and "s3cret-pw" not in str(refused.value)


def test_where_a_store_lives_is_compared_by_place() -> None:
    same, place = migrate_module._same_database, migrate_module._cas_place
    assert same("postgresql://h/db/", "postgresql://h/db") and not same("postgresql://h/a", "postgresql://h/b")
    assert not same("sqlite:////tmp/x.sqlite", "postgresql://h/db") and not same("postgresql://h/db", "sqlite:///x")
    assert same("sqlite:////tmp/x.sqlite", "sqlite:////tmp/../tmp/x.sqlite")
    assert same("postgresql://h/dbX/", "postgresql://h/dbX") and same("postgresql://h/dbX", "postgresql://h/dbX/")
    assert place("s3://bucket/teamX/", None) == ("s3", "bucket/teamX") and place("file:///X", None) == ("file", "/X")
    assert place("s3://bucket/team/rt/", None) == ("s3", "bucket/team/rt")
    assert place("S3://bucket", None) == ("s3", "bucket/")
    assert place("file:///tmp/../tmp/o/", None) == ("file", str(Path("/tmp/o").resolve()))
    assert place("file://localhost/tmp/o", None) == ("file", str(Path("/tmp/o").resolve()))


def test_a_copy_reports_what_it_did(shop: SignedStore, tmp_path: Path) -> None:
    cas, url = tmp_path / "objects", f"sqlite:///{tmp_path / 'target.sqlite'}"
    seen: list[tuple[str, int, int]] = []
    options = MigrateOptions(database_url=url, cas_url=f"file://{cas}", batch_size=5)
    report = migrate(shop.settings(), catalog(), options, progress=lambda *tick: seen.append(tick))
    with open_ledger(shop.url, create=False, read_only=True) as src:
        head = src.head()
        assert head is not None
    source_objects = FilesystemCas(source_store(shop), require_layout=False)
    total = sum(source_objects.stored_size(loc, name) or 0 for loc, name in source_objects.iter_objects())
    count = len(list(source_objects.iter_objects()))
    doc = report.to_json()
    assert doc == {
        "ok": True,
        "source": {"databaseUrl": shop.url, "casUrl": f"file://{source_store(shop)}"},
        "target": {"databaseUrl": url, "casUrl": f"file://{cas}"},
        "head": {"seq": head.seq, "hash": head.hash},
        "records": {"copied": head.seq, "alreadyPresent": 0},
        "objects": {"copied": count, "skipped": 0, "bytes": total},
        "refsChecked": report.refs_checked,
        "elapsedSeconds": round(report.elapsed, 3),
        "problems": [],
        "moreProblems": 0,
        "notes": [],
    }
    with open_ledger(shop.url, create=False, read_only=True) as src:  # each distinct reference once
        distinct = {(getattr(r, "pool", ""), r.hash, r.size) for env in src.read() for r in env.cas_refs}
    assert report.refs_checked == len(distinct) == 6 and report.elapsed > 0
    held = FilesystemCas(cas, require_layout=False)
    assert sorted(held.iter_objects()) == sorted(source_objects.iter_objects())  # each in its own pool
    assert {loc for loc, _ in held.iter_objects()} == {"data", "agent-state"}
    phases = {phase: [tick for tick in seen if tick[0] == phase] for phase in ("records", "bytes", "checking")}
    assert [advance for _, advance, _ in phases["records"]] == [5] * (head.seq // 5) + (
        [head.seq % 5] if head.seq % 5 else []
    )
    assert {t for _, _, t in phases["records"]} == {head.seq}
    assert phases["checking"] == [("checking", 1, report.refs_checked)] * report.refs_checked  # each reference once
    assert sum(advance for _, advance, _ in phases["bytes"]) == total and {t for _, _, t in phases["bytes"]} == {total}
    assert [t for t in seen if t[0] == "comparing"] == [("comparing", head.seq, head.seq)]  # one digest of each side

    again: list[tuple[str, int, int]] = []
    report = migrate(shop.settings(), catalog(), options, progress=lambda *tick: again.append(tick))
    assert report.ok and report.to_json()["records"] == {"copied": 0, "alreadyPresent": head.seq}
    assert report.to_json()["objects"] == {"copied": 0, "skipped": count, "bytes": 0}
    assert [t for t in again if t[0] == "records"] == [("records", head.seq, head.seq)]
    assert sum(advance for phase, advance, _ in again if phase == "bytes") == total
    assert {t for phase, _, t in again if phase == "bytes"} == {total}
    assert [t for t in again if t[0] == "comparing"] == [("comparing", head.seq, head.seq)]
    assert [t for t in again if t[0] == "checking"] == phases["checking"]


def test_only_the_objects_move_when_no_database_is_given(shop: SignedStore, tmp_path: Path) -> None:
    cas = tmp_path / "objects"
    report = run(shop, cas=cas)
    assert report.ok and report.records_copied == 0 and report.records_present == 0
    assert report.target_database == report.source_database and report.objects_copied >= 3
    held = FilesystemCas(cas, require_layout=False)
    assert all(held.check_object(loc, name).problem is None for loc, name in held.iter_objects())


def test_a_target_holding_another_chain_or_ahead_is_refused_unwritten(shop: SignedStore, tmp_path: Path) -> None:
    from reviewtrail.errors import IntegrityError

    url = f"sqlite:///{tmp_path / 'target.sqlite'}"
    with open_ledger(shop.url, create=False, read_only=True) as src:
        chain = list(src.read(end=6))
    with open_ledger(url, catalog=catalog()) as target:
        target.append_sealed(chain[:4])
        target.signer = shop.key.signer()
        target.append([NewRecord(type="eval.other@1", actor="mallory", privacy="private", payload={"n": 1})])
        head = target.head()
    with pytest.raises(
        IntegrityError, match=r"differs from the source at seq 5: it holds record .* where the source has record"
    ) as refused:
        run(shop, url)
    assert refused.value.field == "to" and "it was not written to" in str(refused.value)
    with open_ledger(url, create=False, read_only=True) as target:
        assert target.head() == head

    ahead = f"sqlite:///{tmp_path / 'ahead.sqlite'}"
    assert run(shop, ahead).ok
    with open_ledger(ahead, catalog=catalog(), create=False) as target:
        target.signer = shop.key.signer()
        end = target.head_seq()
        target.append([NewRecord(type="eval.other@1", actor="mallory", privacy="private", payload={"n": 2})])
    with pytest.raises(
        IntegrityError, match=f"differs from the source at seq {end + 1}: it holds {end + 1} records, the source {end}"
    ) as ahead_refused:
        run(shop, ahead)
    assert ahead_refused.value.field == "to"


@pytest.mark.parametrize("held", [1, 6])
def test_a_target_shorter_than_the_source_is_continued(shop: SignedStore, tmp_path: Path, held: int) -> None:
    url = f"sqlite:///{tmp_path / 'target.sqlite'}"
    with open_ledger(shop.url, create=False, read_only=True) as src:
        chain = list(src.read(end=held))
        signatures = src.signatures_at(e.seq for e in chain)
    with open_ledger(url, catalog=catalog()) as target:
        target.append_sealed(chain, signatures=signatures)
    report = run(shop, url)
    assert report.ok and report.records_present == held and report.records_copied == report.head_seq - held


def test_the_digests_taken_while_copying_are_each_chunks_records_digest(
    shop: SignedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks of 3 records across batches of 5: each digest taken on the way is what both ledgers'
    ``records_digest`` give of its chunk (the source is not digested again to compare)."""
    monkeypatch.setattr(migrate_module, "_COMPARE_CHUNK", 3)
    taken: list[list[tuple[int, str]] | None] = []
    compare = migrate_module._differences

    def spy(source: Any, target: Any, upto: int, tick: Any, known: Any = None) -> Any:
        taken.append(known)
        return compare(source, target, upto, tick, known)

    monkeypatch.setattr(migrate_module, "_differences", spy)
    url = f"sqlite:///{tmp_path / 'target.sqlite'}"
    assert migrate(shop.settings(), catalog(), MigrateOptions(database_url=url, batch_size=5)).ok
    with open_ledger(shop.url, create=False, read_only=True) as src, open_ledger(url, create=False) as dst:
        head = src.head_seq()
        chunks = [(start, min(start + 2, head)) for start in range(1, head + 1, 3)]
        assert head > 6 and taken == [[src.records_digest(a, b) for a, b in chunks]]
        assert taken[0] == [dst.records_digest(a, b) for a, b in chunks]


def runs_written(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of each run of records the SQL recorders store from now on (a batch of migrate)."""
    from reviewtrail.ledger.backends._sql import SqlRecorder

    sizes: list[int] = []
    original = SqlRecorder._store_sealed

    def counted(self: Any, cur: Any, envelopes: Any, signatures: Any) -> None:
        sizes.append(len(envelopes))
        original(self, cur, envelopes, signatures)

    monkeypatch.setattr(SqlRecorder, "_store_sealed", counted)
    return sizes


def test_large_payloads_are_written_in_smaller_batches(
    shop: SignedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = runs_written(monkeypatch)
    with open_ledger(shop.url, create=False, read_only=True) as src:
        payloads = [len(env.payload) for env in src.read()]
    monkeypatch.setattr(migrate_module, "_BATCH_BYTES", payloads[0] + payloads[1])
    report = migrate(shop.settings(), catalog(), MigrateOptions(database_url=f"sqlite:///{tmp_path / 't.sqlite'}"))
    assert report.ok and sum(sizes) == len(payloads)
    assert sizes[0] == 2  # the first two records reach the bytes of a batch, whatever its size in records


LEGACY = b"an object in the legacy layout, referenced by a bare {hash, size}\n"


def legacy_object(shop: SignedStore) -> str:
    """An object in the source's legacy layout (cas/sha256/xx/HEX), named by a bare reference in a
    new record: its hex digest."""
    import hashlib

    digest = hashlib.sha256(LEGACY).hexdigest()
    path = source_store(shop) / "cas" / "sha256" / digest[:2] / digest
    path.parent.mkdir(parents=True)
    path.write_bytes(LEGACY)
    with shop.open(shop.key) as store:
        payload = {"old": {"hash": digest, "size": len(LEGACY)}}
        store.append([NewRecord(type="eval.legacy@1", actor="ci", privacy="private", payload=payload)])
    return digest


def test_a_legacy_object_goes_to_the_data_pool_and_strays_are_noted(shop: SignedStore, tmp_path: Path) -> None:
    digest = legacy_object(shop)
    stray = source_store(shop) / "versioning" / "data" / "blobs" / "sha256" / "not-an-address"
    stray.write_bytes(b"x")
    cas = tmp_path / "objects"
    report = run(shop, cas=cas)
    assert report.ok, report.problems
    assert report.notes == ["data: 'not-an-address' is not a SHA-256 address (not an object); not copied"]
    held = FilesystemCas(cas, require_layout=False)
    assert held.check_object("data", digest).problem is None and held.stored_size("data", digest) == len(LEGACY)
    assert not (cas / "cas").exists() and not list(cas.rglob("not-an-address"))
    again = run(shop, cas=cas)  # the legacy object is found where a bare reference finds it: skipped
    assert again.ok and again.objects_copied == 0 and again.objects_skipped == report.objects_copied


def test_a_corrupt_source_object_stops_the_copy_and_nothing_of_it_is_published(
    shop: SignedStore, tmp_path: Path
) -> None:
    blobs = sorted((source_store(shop) / "versioning" / "data" / "blobs" / "sha256").iterdir())
    victim = blobs[0]
    good = victim.read_bytes()
    victim.chmod(0o644)
    victim.write_bytes(bytes([good[0] ^ 1]) + good[1:])
    cas = tmp_path / "objects"
    with pytest.raises(CorruptObjectError) as stopped:
        run(shop, cas=cas)
    text = str(stopped.value)
    assert text.startswith(f"source object data/sha256:{victim.name}: ") and "does not hash" in text
    assert text.endswith("migrate stopped and copied nothing of it (run 'reviewtrail verify' on the source)")
    assert not any(victim.name in p.name for p in cas.rglob("*"))


def test_a_legacy_object_that_does_not_hash_stops_the_copy(shop: SignedStore, tmp_path: Path) -> None:
    digest = legacy_object(shop)
    path = source_store(shop) / "cas" / "sha256" / digest[:2] / digest
    path.write_bytes(LEGACY[:-1] + b"?")
    with pytest.raises(CorruptObjectError, match=f"source object legacy/sha256:{digest}: "):
        run(shop, cas=tmp_path / "objects")


def test_an_object_missing_from_both_sides_fails_the_final_check(shop: SignedStore, tmp_path: Path) -> None:
    digest = legacy_object(shop)
    (source_store(shop) / "cas" / "sha256" / digest[:2] / digest).unlink()
    url = f"sqlite:///{tmp_path / 'target.sqlite'}"
    report = run(shop, url)  # the ledger moves, the objects stay: the source's CAS is checked
    with open_ledger(shop.url, create=False, read_only=True) as src:
        head = src.head()
        assert head is not None
    assert report.problems == [
        f"ledger seq {head.seq} ({head.id}) references sha256:{digest} ({len(LEGACY)} bytes), which is not intact "
        "in the target's CAS (nor intact in the source's)"
    ]
    assert report.refs_checked >= 4


def test_an_object_lost_from_the_target_during_the_copy_fails_the_final_check(
    shop: SignedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cas = tmp_path / "objects"
    lost: list[str] = []

    def remove(ledger: Any) -> None:
        path = sorted(p for p in (cas / "versioning" / "data" / "blobs" / "sha256").iterdir())[0]
        lost.append(path.name)
        path.chmod(0o644)
        path.unlink()

    during_the_final_check(monkeypatch, remove)
    report = run(shop, cas=cas)
    assert len(report.problems) == 1 and f"references data:{lost[0]} (" in report.problems[0], report.problems
    assert report.problems[0].endswith("which is not intact in the target's CAS (though the source's holds it)")


def test_a_record_with_a_malformed_reference_is_a_problem(
    shop: SignedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewtrail.errors import InvalidInputError
    from reviewtrail.ledger import Envelope

    with open_ledger(shop.url, create=False, read_only=True) as src:
        bad = next(env.seq for env in src.read() if env.cas_refs)  # a record that may hold references

    def malformed(self: Envelope) -> Any:
        if self.seq == bad:
            raise InvalidInputError("not a reference", field="ref")
        return original.func(self)

    original = Envelope.cas_refs
    monkeypatch.setattr(Envelope, "cas_refs", property(malformed))
    report = run(shop, cas=tmp_path / "objects")
    assert len(report.problems) == 1 and report.problems[0].startswith(f"ledger seq {bad} (")
    assert report.problems[0].endswith("): a malformed CAS reference (ref: not a reference)")
    assert report.refs_checked >= 3  # the records after it were checked all the same


def test_records_appended_to_the_source_meanwhile_are_noted(
    shop: SignedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def append_to_source(ledger: Any) -> None:
        with shop.open(shop.key) as store:
            store.append(
                [NewRecord(type="eval.result@1", actor="ci", privacy="private", payload={"n": n}) for n in (1, 2)]
            )

    original = migrate_module._common_start

    def common_start(*args: Any) -> int:  # the source's head is read: a writer appends before the copy begins
        append_to_source(None)
        return original(*args)

    monkeypatch.setattr(migrate_module, "_common_start", common_start)
    report = run(shop, f"sqlite:///{tmp_path / 'target.sqlite'}")
    end = report.head_seq
    assert report.records_copied == end  # only the records up to the head read when migrate began
    assert report.ok, report.problems
    assert report.notes == [
        f"the source gained 2 record(s) while migrating (seq {end + 1}..{end + 2}); run migrate again to copy them"
    ]


def test_a_report_keeps_the_first_problems_and_counts_the_rest() -> None:
    report = MigrateReport("a", "b", "c", "d")
    for n in range(migrate_module._MAX_PROBLEMS + 3):
        report.problem(f"p{n}")
    assert report.problems == [f"p{n}" for n in range(100)] and report.more_problems == 3 and not report.ok
    assert report.to_json()["moreProblems"] == 3 and report.to_json()["ok"] is False


@pytest.mark.parametrize("kind", TARGETS)
def test_a_signature_added_in_the_target_where_no_record_is_fails_the_next_migrate(
    shop: SignedStore, request: pytest.FixtureRequest, tmp_path: Path, kind: str
) -> None:
    url = target_url(request, kind, tmp_path)
    assert run(shop, url).ok
    execute(url, "INSERT INTO rt_signatures (seq, key_id, sig) VALUES (?, ?, ?)", 999, shop.key.key_id, bytes(64))
    report = run(shop, url)
    assert report.problems == ["the target holds a signature at seq 999, where it holds no record"]


def test_a_target_that_is_the_source_spelled_otherwise_is_left_alone(shop: SignedStore, tmp_path: Path) -> None:
    store = source_store(shop)
    same_db = f"sqlite:///{store}/../store/ledger.sqlite"
    report = run(shop, same_db, cas=tmp_path / "objects")  # only the objects move
    assert report.ok and report.target_database == report.source_database
    assert (report.records_present, report.records_copied) == (0, 0) and report.objects_copied >= 4
    options = MigrateOptions(database_url=f"sqlite:///{tmp_path / 't.sqlite'}", cas_url=f"file://localhost{store}")
    report = migrate(shop.settings(), catalog(), options)  # only the records move
    assert report.ok and report.target_cas == report.source_cas == f"file://{store}"
    assert report.to_json()["objects"] == {"copied": 0, "skipped": 0, "bytes": 0} and report.records_copied > 10


def test_a_source_whose_objects_were_moved_already_is_compared_by_its_cas_url(
    shop: SignedStore, tmp_path: Path
) -> None:
    from reviewtrail.errors import InvalidInputError

    cas = tmp_path / "objects"
    assert run(shop, cas=cas).ok
    moved = shop.settings().replace(cas_url=f"file://{cas}")
    with pytest.raises(InvalidInputError, match="nothing to migrate"):
        migrate(moved, catalog(), MigrateOptions(cas_url=f"file://{cas}/"))


def test_the_source_is_opened_read_only_and_the_time_is_measured(
    shop: SignedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from reviewtrail.store import Store

    opened: list[Any] = []
    original = Store.open.__func__  # type: ignore[attr-defined]

    def spy(cls: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(original(cls, *args, **kwargs))
        return opened[-1]

    monkeypatch.setattr(Store, "open", classmethod(spy))
    began = time.monotonic()
    report = run(shop, f"sqlite:///{tmp_path / 't.sqlite'}")
    took = time.monotonic() - began
    assert report.ok and [store.ledger.read_only for store in opened] == [True]
    assert 0 < report.elapsed <= took  # from its start to its end, no longer than the call itself


def test_an_object_that_vanishes_from_the_source_while_copying_is_named(
    shop: SignedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewtrail.errors import ObjectNotFoundError

    gone = "ab" * 32
    listed = FilesystemCas.iter_objects

    def with_a_vanished_one(self: FilesystemCas) -> Any:
        yield from listed(self)
        if self.root == source_store(shop):
            yield "data", gone

    monkeypatch.setattr(FilesystemCas, "iter_objects", with_a_vanished_one)
    seen: list[tuple[str, int, int]] = []
    options = MigrateOptions(cas_url=f"file://{tmp_path / 'objects'}")
    with pytest.raises(ObjectNotFoundError) as vanished:
        migrate(shop.settings(), catalog(), options, progress=lambda *tick: seen.append(tick))
    source = FilesystemCas(source_store(shop), require_layout=False)
    sizes = [source.stored_size(loc, name) for loc, name in listed(source)]
    assert {total for phase, _, total in seen if phase == "bytes"} == {sum(sizes)}  # the vanished one adds nothing
    assert str(vanished.value) == f"ref: source object data/sha256:{gone} vanished while migrating"


def _batch_sizes(payloads: list[int], limit: int, first: int, rest: int) -> list[int]:
    """The batches of the rule (a batch ends when its payloads reach ``limit`` bytes), counting
    from ``first`` bytes in the first batch and ``rest`` in the others."""
    sizes, count, size = [], 0, first
    for n in payloads:
        count, size = count + 1, size + n
        if size >= limit:
            sizes.append(count)
            count, size = 0, rest
    return sizes + ([count] if count else [])


def test_each_batch_counts_its_bytes_from_zero(
    shop: SignedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_ledger(shop.url, create=False, read_only=True) as src:
        payloads = [len(env.payload) for env in src.read()]
    # limits at which counting the first batch's bytes, or a later one's, from one rather than zero would cut the
    # batches elsewhere
    rule = functools.partial(_batch_sizes, payloads)
    limits = [
        next(n for n in range(1, sum(payloads)) if rule(n, 0, 0) != rule(n, *other)) for other in ((1, 0), (0, 1))
    ]
    sizes = runs_written(monkeypatch)
    for limit in limits:
        sizes.clear()
        monkeypatch.setattr(migrate_module, "_BATCH_BYTES", limit)
        options = MigrateOptions(database_url=f"sqlite:///{tmp_path / f't{limit}.sqlite'}")
        report = migrate(shop.settings(), catalog(), options)
        assert report.ok and sizes == rule(limit, 0, 0)


def test_a_row_deleted_from_any_query_table_is_named_by_its_table(shop: SignedStore, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'target.sqlite'}"
    assert run(shop, url).ok
    with open_ledger(url, catalog=catalog(), create=False, read_only=True) as ledger:
        held = {table: (spec, ledger.stored_rows(table)) for table, spec in ledger.tables.items()}
    deleted = sorted(table for table, (_, rows) in held.items() if rows)
    assert len(deleted) >= 5  # the application's tables, not only the ledger's own
    for table in deleted:
        spec, rows = held[table]
        where = " AND ".join(f'"{k}" = ?' for k in spec.key)
        execute(url, f"DELETE FROM rt_p_{table} WHERE {where}", *(rows[0][k] for k in spec.key))
    problems = run(shop, url).problems
    assert sorted({p.split(":")[0].removeprefix("the target's query table ") for p in problems}) == deleted
