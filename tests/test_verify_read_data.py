"""``verify --read-data`` (the default) re-hashes every object; ``--no-read-data`` lists them:
presence and size are checked, bytes are not. In both configurations (embedded, PostgreSQL + S3)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from contracts.store_backend import StoreBackend


def cli(backend: StoreBackend, *args: str, stdin: bytes | None = None) -> tuple[int, Any, str]:
    done = subprocess.run(
        [sys.executable, "-m", "reviewtrail", *args],
        env=backend.process_env(),
        cwd=backend.store.parent,
        input=stdin,
        capture_output=True,
        timeout=300,
        check=False,
    )
    out = done.stdout.decode()
    try:
        doc = json.loads(out) if out.strip().startswith(("{", "[")) else out
    except json.JSONDecodeError:
        doc = out
    return done.returncode, doc, done.stderr.decode()


def _stored(backend: StoreBackend) -> str:
    """A store holding one object named by one record; the object's hex digest."""
    assert cli(backend, "init")[0] == 0
    src = backend.store.parent / "results.csv"
    src.write_bytes(b"model,score\nx,0.81\ny,0.84\n" * 50)
    code, ref, err = cli(backend, "cas", "put", str(src), "--json")
    assert code == 0, err
    payload = json.dumps({"results": ref})
    code, _, err = cli(backend, "ledger", "append", "--type", "demo.r@1", "--actor", "a", "--privacy", "private",
                       "--payload", payload)  # fmt: skip
    assert code == 0, err
    return str(ref["digest"]).removeprefix("sha256:")


def _replace(backend: StoreBackend, hexdigest: str, change: Any) -> None:
    """Rewrite the stored bytes of the object, as anyone with raw access could."""
    if backend.external:
        assert backend.seaweed is not None and backend.bucket is not None
        client = backend.seaweed.client()
        key = f"{backend.prefix}versioning/data/blobs/sha256/{hexdigest}"
        data = client.get_object(Bucket=backend.bucket, Key=key)["Body"].read()
        new = change(data)
        if new is None:
            client.delete_object(Bucket=backend.bucket, Key=key)
        else:
            client.put_object(Bucket=backend.bucket, Key=key, Body=new)
        return
    path = backend.store / "versioning" / "data" / "blobs" / "sha256" / hexdigest
    path.chmod(0o644)
    new = change(path.read_bytes())
    if new is None:
        path.unlink()
    else:
        path.write_bytes(new)


def _flip(data: bytes) -> bytes:
    return bytes([data[0] ^ 1]) + data[1:]


@pytest.mark.parametrize("read_data", [True, False], ids=["read-data", "no-read-data"])
def test_an_intact_store_passes_either_way(store_backend: StoreBackend, read_data: bool) -> None:
    _stored(store_backend)
    code, report, err = cli(store_backend, "verify", "--json", "--read-data" if read_data else "--no-read-data")
    assert code == 0, (report, err)
    listed = [n for n in report["notes"] if "listed, not read" in n]
    assert report["objectsChecked"] == (1 if read_data else 0)
    assert bool(listed) is not read_data
    if listed:
        assert listed[0].startswith("1 object(s) listed")


def test_a_flipped_byte_needs_read_data(store_backend: StoreBackend) -> None:
    hexdigest = _stored(store_backend)
    _replace(store_backend, hexdigest, _flip)
    code, report, _ = cli(store_backend, "verify", "--json")
    assert code == 4 and any("does not hash to its address" in p for p in report["problems"])
    code, report, _ = cli(store_backend, "verify", "--json", "--no-read-data")
    assert code == 0 and report["problems"] == []  # the documented limit of a listing


@pytest.mark.parametrize(
    "change",
    [pytest.param(lambda data: None, id="deleted"), pytest.param(lambda data: data[:-1], id="truncated")],
)
def test_a_missing_or_resized_object_is_found_by_a_listing(store_backend: StoreBackend, change: Any) -> None:
    hexdigest = _stored(store_backend)
    _replace(store_backend, hexdigest, change)
    code, report, _ = cli(store_backend, "verify", "--json", "--no-read-data")
    assert code == 4, report
    assert any(hexdigest in p for p in report["problems"]), report["problems"]


# --- the status file: a partial check is never "ok" ------------------------------------------------
def _audit(root: Path, **options: Any) -> tuple[bool, dict[str, Any] | None]:
    """``verify`` as the command runs it (status file kept) on the embedded store at ``root``:
    whether it passed, and the status file it left (None: no file)."""
    from reviewtrail.app import open_store
    from reviewtrail.audit import VERIFY_STATUS_FILE, AuditOptions, audit
    from reviewtrail.config import Settings

    with open_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}")) as store:
        report = audit(store, AuditOptions(**{"keep_status": True, **options}))
    path = root / VERIFY_STATUS_FILE
    return report.ok, json.loads(path.read_text()) if path.exists() else None


@pytest.fixture
def embedded(tmp_path: Path) -> tuple[Path, Path]:
    """An embedded store holding one object named by one record: its folder and the object's file."""
    from reviewtrail.app import init_store
    from reviewtrail.config import Settings
    from reviewtrail.ledger import NewRecord

    with init_store(
        Settings(store=tmp_path / "store", database_url=f"sqlite:///{tmp_path / 'store' / 'ledger.sqlite'}")
    ) as store:
        ref = store.cas.put(b"model,score\nx,0.81\n" * 50)
        store.append([NewRecord(type="demo.r@1", actor="a", privacy="private", payload={"results": ref.to_json()})])
    blob = tmp_path / "store" / "versioning" / "data" / "blobs" / "sha256" / ref.hash
    return tmp_path / "store", blob


def test_a_listing_after_a_failure_keeps_the_failure_and_is_never_ok(embedded: tuple[Path, Path]) -> None:
    root, blob = embedded
    good = blob.read_bytes()
    blob.chmod(0o644)
    blob.write_bytes(_flip(good))
    passed, failed = _audit(root)
    assert not passed and failed is not None and failed["ok"] is False and failed["problems"] >= 1
    assert failed["partial"] is False and failed["objectsRead"] is True and failed["lastFailure"] is None

    passed, listed = _audit(root, read_data=False)  # checks no object's bytes: passes, partially
    assert passed and listed is not None
    assert listed["ok"] is False and listed["passed"] is True and listed["partial"] is True
    assert listed["objectsRead"] is False and listed["objectsChecked"] == 0
    assert listed["lastFailure"] == {
        "checkedAt": failed["checkedAt"],
        "problems": failed["problems"],
        "headSeq": failed["headSeq"],
    }
    passed, again = _audit(root, read_data=False)  # a second partial pass still carries the failure
    assert passed and again is not None and again["ok"] is False and again["lastFailure"] == listed["lastFailure"]

    blob.write_bytes(good)  # repaired: a whole check that passes is ok, and clears the failure
    passed, whole = _audit(root)
    assert passed and whole is not None and whole["ok"] is True and whole["partial"] is False
    assert whole["lastFailure"] is None and whole["objectsChecked"] == 1


def test_a_check_from_a_checkpoint_is_partial(embedded: tuple[Path, Path], tmp_path: Path) -> None:
    from reviewtrail.app import open_store
    from reviewtrail.config import Settings
    from reviewtrail.ledger import make_checkpoint

    root, _ = embedded
    with open_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}")) as store:
        checkpoint = tmp_path / "checkpoint.json"
        checkpoint.write_text(json.dumps(make_checkpoint(store.ledger, store_id=store.store_id, private_key_pem=None)))
    passed, status = _audit(root, since=checkpoint)
    assert passed and status is not None
    assert status["ok"] is False and status["passed"] is True and status["partial"] is True
    assert status["sinceSeq"] is not None


def test_a_status_file_from_before_partial_reads_a_pass_from_a_checkpoint_as_not_ok(
    embedded: tuple[Path, Path],
) -> None:
    from reviewtrail.app import open_store
    from reviewtrail.audit import VERIFY_STATUS_FILE, last_verify_status
    from reviewtrail.config import Settings

    root, _ = embedded
    old = {"checkedAt": "2026-11-30T10:00:00Z", "ok": True, "problems": 0, "headSeq": 2, "headHash": "ab" * 32,
           "recordsChecked": 1, "objectsChecked": 0, "sinceSeq": 1}  # fmt: skip
    (root / VERIFY_STATUS_FILE).write_text(json.dumps(old))
    with open_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}")) as store:
        status = last_verify_status(store)
        assert status is not None and status.ok is False and status.partial is True and status.passed is True
        (root / VERIFY_STATUS_FILE).write_text(json.dumps({**old, "partial": True}))  # ok and partial: not a status
        assert last_verify_status(store) is None
        (root / VERIFY_STATUS_FILE).write_text(json.dumps({**old, "sinceSeq": None}))
        whole = last_verify_status(store)
        assert whole is not None and whole.ok is True and whole.partial is False


def test_audit_writes_no_status_file_unless_asked(embedded: tuple[Path, Path]) -> None:
    root, _ = embedded
    passed, status = _audit(root, keep_status=False)
    assert passed and status is None
    passed, status = _audit(root)
    assert passed and status is not None and status["ok"] is True
