"""``reviewtrail migrate``: a whole store copied between backends (SQLite and files to PostgreSQL
and files, and back), byte for byte; resumed after a kill at any point; refused when the target
holds another chain (and the target left untouched); stopped by a corrupt source object (nothing
corrupt copied); bad URLs and an unreachable database with their documented exit codes.

The source is a store with a record of every kind the CLI writes and a row in every query table
(``support.campaign.populate``), plus an object in the legacy layout that a record references."""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reviewtrail.cas import FilesystemCas
from reviewtrail.ledger import open_ledger
from support.campaign import Project, Result, populate
from support.seaweed import SeaweedServer

LEGACY = b"an object in the legacy layout, referenced by a bare {hash, size}\n"


@pytest.fixture(scope="module")
def populated(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project, _ = populate(tmp_path_factory.mktemp("migrate") / "project")
    digest = hashlib.sha256(LEGACY).hexdigest()
    legacy = project.store / "cas" / "sha256" / digest[:2] / digest
    legacy.parent.mkdir(parents=True, exist_ok=True)
    legacy.write_bytes(LEGACY)
    payload = json.dumps({"old": {"hash": digest, "size": len(LEGACY)}})
    appended = project.cli("ledger", "append", "--type", "eval.legacy@1", "--actor", "alice", "--privacy", "private",
                           "--payload", payload)  # fmt: skip
    assert appended.code == 0, appended.describe()
    return project


@pytest.fixture
def source(populated: Project, tmp_path: Path) -> Project:
    """A copy of the populated project, this test's own."""
    return populated.clone(tmp_path / "source")


def migrate(project: Project, *args: str, env: dict[str, str] | None = None) -> Result:
    return project.cli("migrate", *args, "--json", env=env)


def records(url: str) -> list[tuple[Any, ...]]:
    """Every record of the ledger at ``url``, every field (payload bytes and hashes included)."""
    with open_ledger(url, create=False, read_only=True) as ledger:
        return [tuple(vars(env)[n] for n in env._fields) for env in ledger.read()]


def tables(url: str) -> dict[str, list[Any]]:
    """Every row of every query table of the application's ledger at ``url``, as stored."""
    from reviewtrail.app import catalog

    with open_ledger(url, catalog=catalog(), create=False, read_only=True) as ledger:
        return {name: sorted(map(repr, ledger.stored_rows(name))) for name in sorted(ledger.tables)}


def objects(root: Path) -> dict[tuple[str, str], str | None]:
    """Every object under a CAS folder and what is wrong with it (None: intact)."""
    cas = FilesystemCas(root, require_layout=False)
    return {(loc, name): cas.check_object(loc, name).problem for loc, name in cas.iter_objects()}


def copied_objects(project: Project) -> dict[tuple[str, str], str | None]:
    """The source's objects as a target holds them: the legacy layout's in the data pool."""
    return {("data" if loc == "legacy" else loc, name): p for (loc, name), p in objects(project.store).items()}


def object_bytes(root: Path) -> int:
    cas = FilesystemCas(root, require_layout=False)
    return sum(cas.stored_size(loc, name) or 0 for loc, name in cas.iter_objects())


def verify(project: Project, env: dict[str, str]) -> tuple[Result, dict[str, Any]]:
    """``reviewtrail verify --json`` of the project's store under ``env`` (the target's settings)."""
    result = project.cli("verify", "--json", "--project-dir", str(project.root), env=env)
    return result, result.json() if result.out.strip() else {}


def source_url(project: Project) -> str:
    return f"sqlite:///{project.db}"


def target_env(database_url: str, cas: Path) -> dict[str, str]:
    return {"REVIEWTRAIL_DATABASE_URL": database_url, "REVIEWTRAIL_CAS_URL": f"file://{cas}"}


def assert_same_store(project: Project, url: str, cas: Path, *, from_url: str | None = None) -> None:
    """The target holds the source's chain byte for byte, the same query rows, every object intact."""
    want = records(from_url or source_url(project))
    assert records(url) == want and len(want) > 30
    assert tables(url) == tables(from_url or source_url(project))
    held = objects(cas)
    assert set(copied_objects(project)) <= set(held)
    assert all(problem is None for problem in held.values())


def test_sqlite_and_files_to_postgresql_and_files_and_back(source: Project, pg_url: str, tmp_path: Path) -> None:
    cas = tmp_path / "objects"
    result = migrate(source, "--to", pg_url, "--cas-to", f"file://{cas}", "--batch-size", "9")
    assert result.code == 0, result.describe()
    report = result.json()
    head = len(records(source_url(source)))
    assert report["ok"] and report["head"]["seq"] == head
    assert report["records"] == {"copied": head, "alreadyPresent": 0}
    assert report["objects"]["copied"] == len(objects(source.store)) and report["objects"]["skipped"] == 0
    assert report["objects"]["bytes"] == object_bytes(source.store) > 0 and report["refsChecked"] > 5
    assert_same_store(source, pg_url, cas)
    want = records(source_url(source)), tables(source_url(source)), copied_objects(source)

    # Run again: nothing left to copy, and the target is checked all the same.
    again = migrate(source, "--to", pg_url, "--cas-to", f"file://{cas}")
    assert again.code == 0, again.describe()
    assert again.json()["records"] == {"copied": 0, "alreadyPresent": head}
    assert again.json()["objects"] == {"copied": 0, "skipped": len(want[2]), "bytes": 0}

    set_aside(source)  # from here on the store's objects are only where the target's CAS URL points
    verified, doc = verify(source, target_env(pg_url, cas))
    assert verified.code == 0, verified.describe()
    assert doc["head"]["seq"] == head and doc["storeId"] == report_store_id(source)
    assert doc["objectsChecked"] == len(want[2])

    # And back: the PostgreSQL store (objects in the folder) to SQLite and another folder.
    back_db, back_cas = tmp_path / "back.sqlite", tmp_path / "objects-back"
    result = migrate(
        source, "--to", f"sqlite:///{back_db}", "--cas-to", f"file://{back_cas}", env=target_env(pg_url, cas)
    )
    assert result.code == 0, result.describe()
    assert result.json()["records"]["copied"] == head
    assert (records(f"sqlite:///{back_db}"), tables(f"sqlite:///{back_db}")) == want[:2]
    assert objects(back_cas) == want[2]
    verified, _ = verify(source, target_env(f"sqlite:///{back_db}", back_cas))
    assert verified.code == 0, verified.describe()


def set_aside(project: Project) -> None:
    """Move the store folder's objects (both pools and the legacy layout) out of the store."""
    aside = project.root / "set-aside"
    aside.mkdir()
    for part in ("versioning", "cas"):
        (project.store / part).rename(aside / part)


def test_sqlite_and_files_to_postgresql_and_s3_and_back(
    source: Project, pg_url: str, seaweed: SeaweedServer, s3_bucket: str, tmp_path: Path
) -> None:
    s3_url = f"s3://{s3_bucket}/team/rt"
    result = migrate(source, "--to", pg_url, "--cas-to", s3_url, "--batch-size", "11", env=seaweed.env())
    assert result.code == 0, result.describe()
    report = result.json()
    want = records(source_url(source)), tables(source_url(source)), copied_objects(source)
    assert report["objects"]["copied"] == len(objects(source.store)) and report["ok"]
    assert records(pg_url) == want[0] and tables(pg_url) == want[1]
    on_s3 = {
        key.removeprefix("team/rt/")
        for page in seaweed.client().get_paginator("list_objects_v2").paginate(Bucket=s3_bucket, Prefix="team/rt/")
        for key in (item["Key"] for item in page.get("Contents", []))
    }
    assert {f"versioning/{pool}/blobs/sha256/{name}" for pool, name in want[2]} <= on_s3
    set_aside(source)
    s3_env = {**seaweed.env(), "REVIEWTRAIL_DATABASE_URL": pg_url, "REVIEWTRAIL_CAS_URL": s3_url}
    verified, doc = verify(source, s3_env)
    assert verified.code == 0, verified.describe()
    assert doc["objectsChecked"] == len(want[2])

    # And back: PostgreSQL and S3 to SQLite and a folder, the same store.
    back_db, back_cas = tmp_path / "back.sqlite", tmp_path / "objects-back"
    result = migrate(source, "--to", f"sqlite:///{back_db}", "--cas-to", f"file://{back_cas}", env=s3_env)
    assert result.code == 0, result.describe()
    assert (records(f"sqlite:///{back_db}"), tables(f"sqlite:///{back_db}")) == want[:2]
    assert objects(back_cas) == want[2]
    verified, _ = verify(source, target_env(f"sqlite:///{back_db}", back_cas))
    assert verified.code == 0, verified.describe()


def report_store_id(project: Project) -> str:
    return str(json.loads((project.store / "reviewtrail-store.json").read_text())["storeId"])


def test_only_the_ledger_moves_when_no_cas_is_given(source: Project, pg_url: str) -> None:
    result = migrate(source, "--to", pg_url)
    assert result.code == 0, result.describe()
    report = result.json()
    assert report["objects"] == {"copied": 0, "skipped": 0, "bytes": 0} and report["refsChecked"] > 5
    assert records(pg_url) == records(source_url(source))
    verified, _ = verify(source, {"REVIEWTRAIL_DATABASE_URL": pg_url})
    assert verified.code == 0, verified.describe()


def test_signed_records_keep_their_signatures(tmp_path: Path, pg_url: str) -> None:
    """A store whose writer signs every record, signatures required: the target holds the same
    signature beside each record, so verify with the writer's key as trusted passes on it."""
    project = Project(tmp_path / "signed")
    project.root.mkdir()
    key = tmp_path / "writer.pem"
    signing = {"REVIEWTRAIL_SIGNING_KEY": str(key)}
    steps = [
        (("init",), None),
        (("key", "new", str(key)), None),
        (("key", "add", f"{key}.pub", "--name", "ci-host"), signing),
        (("key", "require"), signing),
        *(
            (("ledger", "append", "--type", "eval.result@1", "--actor", "ci", "--privacy", "private",
              "--payload", json.dumps({"n": n})), signing)
            for n in range(12)
        ),
    ]  # fmt: skip
    for args, env in steps:
        done = project.cli(*args, env=env)
        assert done.code == 0, f"{args}: {done.describe()}"
    with open_ledger(source_url(project), create=False, read_only=True) as src:
        head = src.head_seq()
        signed = src.signatures_at(range(1, head + 1))
    assert len(signed) >= 13  # the requirement and every record after it
    result = migrate(project, "--to", pg_url, "--batch-size", "5")
    assert result.code == 0, result.describe()
    with open_ledger(pg_url, create=False, read_only=True) as target:
        assert target.signatures_at(range(1, head + 1)) == signed
    trusted = ("--trusted-keys", f"{key}.pub")
    verified = project.cli("verify", "--json", *trusted, env={"REVIEWTRAIL_DATABASE_URL": pg_url})
    assert verified.code == 0, verified.describe()


# --- killed or failing at any point: the target as it was, then run again -----------------------------
KILLER = """
import os, signal, sys, threading
from reviewtrail import migrate
from reviewtrail.cas import FilesystemCas
from reviewtrail.ledger.backends._sql import SqlRecorder

where, after = sys.argv[1], int(sys.argv[2])
calls = [0]
one_at_a_time = threading.RLock()  # objects are copied on several threads: the first `after` calls end first

def dying(original):
    def call(*args, **kwargs):
        with one_at_a_time:
            calls[0] += 1
            if calls[0] > after:
                os.kill(os.getpid(), signal.SIGKILL)
            return original(*args, **kwargs)
    return call

def dying_at_the_end(original):  # every run read and checked, the last ones not yet committed
    def call(*args, **kwargs):
        yield from original(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)
    return call

if where == "in-a-run":  # a run inserted and read back, its query rows not yet written
    SqlRecorder._refuse_unless_stored_as_sealed = dying(SqlRecorder._refuse_unless_stored_as_sealed)
elif where == "between-runs":  # runs stored, the next not begun
    SqlRecorder._store_sealed = dying(SqlRecorder._store_sealed)
elif where == "after-the-last-run":
    migrate._batches = dying_at_the_end(migrate._batches)
else:  # an object's bytes staged in the target's ingest folder, not yet published
    FilesystemCas._publish = dying(FilesystemCas._publish)
sys.argv = ["reviewtrail", "migrate", *sys.argv[3:]]
from reviewtrail.cli import main
main()
"""


def record_indexes(url: str) -> list[tuple[str, str]]:
    """The indexes of the PostgreSQL ledger's records table, by name, with their definitions."""
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'rt_records' ORDER BY 1")
        return [(str(name), str(ddl)) for name, ddl in rows.fetchall()]


@pytest.mark.parametrize(
    ("where", "after"), [("in-a-run", 3), ("between-runs", 4), ("after-the-last-run", 0), ("an-object", 2)]
)
def test_a_migrate_killed_anywhere_leaves_the_target_as_it_was_and_runs_again(
    source: Project, pg_url: str, tmp_path: Path, where: str, after: int
) -> None:
    from reviewtrail.app import catalog

    open_ledger(pg_url, catalog=catalog()).close()  # an empty ledger: its tables and indexes
    indexes = record_indexes(pg_url)
    assert len(indexes) == 6
    cas = tmp_path / "objects"
    args = ["--to", pg_url, "--cas-to", f"file://{cas}", "--batch-size", "7"]
    killed = subprocess.run(
        [sys.executable, "-c", KILLER, where, str(after), *args],
        cwd=source.root,
        env=source.env(),
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()[-2000:]
    head = len(records(source_url(source)))
    present = len(records(pg_url))
    assert record_indexes(pg_url) == indexes  # the indexes a bulk load drops are there again
    if where == "an-object":  # the records are copied beside the objects: committed whole, or not at all
        assert present in (0, head) and 0 < len(objects(cas)) < len(objects(source.store))
    else:
        assert present == 0 and tables(pg_url) == {name: [] for name in tables(pg_url)}
    result = migrate(source, *args)
    assert result.code == 0, result.describe()
    report = result.json()
    assert report["records"] == {"copied": head - present, "alreadyPresent": present}
    assert report["objects"]["copied"] + report["objects"]["skipped"] == len(objects(source.store))
    assert_same_store(source, pg_url, cas)
    assert record_indexes(pg_url) == indexes
    verified, _ = verify(source, target_env(pg_url, cas))
    assert verified.code == 0, verified.describe()


def tamper_record(project: Project, seq: int) -> None:
    """Change one byte of the payload of the source's record at ``seq`` (its hashes no longer hold)."""
    import sqlite3

    with sqlite3.connect(project.db) as conn:
        conn.execute("DROP TRIGGER IF EXISTS rt_records_no_update")
        conn.execute("UPDATE rt_records SET payload = CAST(replace(CAST(payload AS TEXT), '}', ' }') AS BLOB) "
                     "WHERE seq = ?", (seq,))  # fmt: skip


@pytest.mark.parametrize("held", [0, 5])
def test_a_tampered_source_is_refused_and_the_target_left_as_it_was(source: Project, pg_url: str, held: int) -> None:
    """A record that does not hash, late in the source: exit 4 naming it, and nothing of this run is
    in the target (whatever it held before stays, and the next run goes on from there)."""
    from reviewtrail.app import catalog

    head = len(records(source_url(source)))
    with open_ledger(source_url(source), create=False, read_only=True) as src:
        chain = list(src.read(end=held)) if held else []
    with open_ledger(pg_url, catalog=catalog()) as target:
        target.append_sealed(chain)
    before = records(pg_url), tables(pg_url)
    tamper_record(source, head - 2)
    result = migrate(source, "--to", pg_url, "--batch-size", "4")
    assert result.code == 4, result.describe()
    assert f"ledger seq {head - 2} (" in result.err and "payload does not hash to payloadHash" in result.err
    assert result.json()["error"]["type"] == "IntegrityError"
    assert (records(pg_url), tables(pg_url)) == before


# --- a target holding another chain ----------------------------------------------------------------
def snapshot(url: str, cas: Path) -> tuple[Any, ...]:
    return records(url), tables(url), sorted(str(p) for p in cas.rglob("*")) if cas.exists() else []


def test_a_target_holding_another_store_is_refused_and_left_untouched(
    source: Project, pg_url: str, tmp_path: Path
) -> None:
    from reviewtrail.app import init_store
    from reviewtrail.config import Settings

    init_store(Settings(store=tmp_path / "other", database_url=pg_url)).close()  # its own identity at seq 1
    cas = tmp_path / "objects"
    before = snapshot(pg_url, cas)
    result = migrate(source, "--to", pg_url, "--cas-to", f"file://{cas}")
    assert result.code == 4, result.describe()
    assert "differs from the source at seq 1" in result.err and "it was not written to" in result.err
    assert result.json()["error"]["type"] == "IntegrityError"
    assert snapshot(pg_url, cas) == before and not cas.exists()


def test_a_target_that_parts_from_the_chain_is_refused_naming_the_seq(source: Project, pg_url: str) -> None:
    from reviewtrail.app import catalog
    from reviewtrail.ledger import NewRecord

    with open_ledger(source_url(source), create=False, read_only=True) as src:
        chain = list(src.read(end=12))
    with open_ledger(pg_url, catalog=catalog()) as target:
        target.append_sealed(chain[:10])
        target.append([NewRecord(type="eval.other@1", actor="mallory", privacy="private", payload={"n": 1})])
    before = snapshot(pg_url, Path("/nonexistent"))
    result = migrate(source, "--to", pg_url)
    assert result.code == 4, result.describe()
    assert "differs from the source at seq 11" in result.err
    assert snapshot(pg_url, Path("/nonexistent")) == before


def test_a_target_ahead_of_the_source_is_refused(source: Project, pg_url: str) -> None:
    from reviewtrail.app import catalog
    from reviewtrail.ledger import NewRecord

    assert migrate(source, "--to", pg_url).code == 0
    head = len(records(source_url(source)))
    with open_ledger(pg_url, catalog=catalog(), create=False) as target:
        target.append([NewRecord(type="eval.other@1", actor="alice", privacy="private", payload={"n": 2})])
    before = records(pg_url)
    result = migrate(source, "--to", pg_url)
    assert result.code == 4, result.describe()
    assert f"differs from the source at seq {head + 1}" in result.err
    assert records(pg_url) == before


# --- a corrupt source object -----------------------------------------------------------------------
def test_a_corrupt_source_object_stops_migrate_and_nothing_corrupt_is_copied(source: Project, tmp_path: Path) -> None:
    blobs = sorted((source.store / "versioning" / "data" / "blobs" / "sha256").iterdir())
    victim = blobs[len(blobs) // 2]
    good = victim.read_bytes()
    victim.chmod(0o644)
    victim.write_bytes(bytes([good[0] ^ 1]) + good[1:])
    cas, db = tmp_path / "objects", tmp_path / "target.sqlite"
    args = ["--to", f"sqlite:///{db}", "--cas-to", f"file://{cas}"]
    result = migrate(source, *args)
    assert result.code == 4, result.describe()
    assert f"data/sha256:{victim.name}" in result.err and "does not hash" in result.err
    held = objects(cas)
    assert ("data", victim.name) not in held and all(problem is None for problem in held.values())
    assert not any(victim.name in p.name for p in cas.rglob("*"))

    victim.write_bytes(good)  # repaired (from a backup): the next run completes the copy
    result = migrate(source, *args)
    assert result.code == 0, result.describe()
    assert result.json()["objects"]["skipped"] == len(held)
    assert_same_store(source, f"sqlite:///{db}", cas)


def test_a_referenced_object_missing_from_the_source_fails_the_final_check(source: Project, tmp_path: Path) -> None:
    digest = hashlib.sha256(LEGACY).hexdigest()
    (source.store / "cas" / "sha256" / digest[:2] / digest).unlink()
    cas, db = tmp_path / "objects", tmp_path / "target.sqlite"
    result = migrate(source, "--to", f"sqlite:///{db}", "--cas-to", f"file://{cas}")
    assert result.code == 4, result.describe()
    report = result.json()
    assert not report["ok"] and len(report["problems"]) == 1
    assert f"sha256:{digest}" in report["problems"][0] and "nor intact in the source's" in report["problems"][0]
    assert records(f"sqlite:///{db}") == records(source_url(source))


# --- bad inputs ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--to", "mysql://rt@db/x"], 2, "is not a database URL"),
        (["--to", "sqlite:///{tmp}/missing/ledger.sqlite"], 2, "does not exist"),
        (["--to", "sqlite:///{tmp}/t.sqlite", "--cas-to", "http://objects.example/x"], 2, "is not a CAS URL"),
        (["--to", "sqlite:///{tmp}/t.sqlite", "--cas-to", "file://relative/folder"], 2, "absolute folder"),
        (["--cas-to", "s3://"], 2, "is not a CAS URL"),
        ([], 2, "nothing to migrate"),
        (["--to", "sqlite:///{db}"], 2, "nothing to migrate"),
        (["--cas-to", "file://{store}/"], 2, "nothing to migrate"),
        (["--cas-to", "file://host.example/objects"], 2, "absolute folder"),
        (["--to", "sqlite:///{tmp}/t.sqlite", "--batch-size", "0"], 2, "batch-size"),
        (["--to", "postgresql://rt:s3cret-pw@127.0.0.1:1/rt"], 5, "cannot connect to PostgreSQL"),
    ],
)
def test_bad_inputs_have_documented_exit_codes(
    source: Project, tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    given = [a.format(tmp=tmp_path, db=source.db, store=source.store) for a in args]
    result = source.cli("migrate", *given)
    assert result.code == code, result.describe()
    assert message in result.err and "s3cret-pw" not in result.err + result.out
    assert "Traceback" not in result.err
    assert not (tmp_path / "t.sqlite").exists()


def test_help_tells_how_to_switch_to_the_target() -> None:
    from conftest import run_wide

    code, out, _ = run_wide("migrate", "--help")
    assert code == 0
    assert "REVIEWTRAIL_DATABASE_URL" in out and "REVIEWTRAIL_CAS_URL" in out and "reviewtrail verify" in out


def test_nothing_is_written_to_the_source(source: Project, tmp_path: Path) -> None:
    before = source.fingerprint(), records(source_url(source))
    shutil.copy(source.db, tmp_path / "ledger-before.sqlite")
    result = migrate(source, "--to", f"sqlite:///{tmp_path / 't.sqlite'}", "--cas-to", f"file://{tmp_path / 'o'}")
    assert result.code == 0, result.describe()
    assert (source.fingerprint(), records(source_url(source))) == before
