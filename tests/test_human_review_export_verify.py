"""An export folder is proven against its manifest and the store: ``review export verify``,
``campaign receipt`` and ``campaign coverage --export-manifest`` refuse an export file edited after
its receipt (alone, or together with its manifest entry), and an export deletes only the files it
journaled (docs/human-review.md, "Verifying an export", "Exporting a campaign")."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import init_cli_store, open_cli_store, run_cli
from tests.support.human_review import campaign_with_items, new_store
from tests.test_human_review_export_job import decide

import reviewtrail.human_review.export._dataset_manifest as dataset_manifest
from reviewtrail.errors import ConflictError, IntegrityError
from reviewtrail.human_review.campaigns import campaign_settings
from reviewtrail.human_review.export import JOURNAL_NAME, export_campaign, record_training_receipt, verify_export
from reviewtrail.human_review.quality import campaign_coverage
from reviewtrail.store import Store

V4 = "camp-v1-1.training-example.v4.jsonl"
NAMES = [V4, "camp-v1-1.trl-preference.jsonl", "camp-v1-1.openai-preference.jsonl"]


def _campaign(store: Store) -> None:
    campaign_settings(store, "camp", 1, training=True)
    for item in campaign_with_items(store, 2):
        decide(store, item, "prefer")


def _receipt(store: Store, out: Path, checkpoint: str = "ckpt-1") -> Any:
    return record_training_receipt(
        store, "camp", 1, export_manifest=out / "manifest.json", checkpoint=checkpoint, evaluation={"winRate": 0.6}
    )


def _manifest(out: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    return loaded


def _write_manifest(out: Path, manifest: dict[str, Any]) -> None:
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def _edit_v4(out: Path) -> bytes:
    """Change one character of the v4 file's first row (the reply preferred); its new bytes."""
    path = out / V4
    data = path.read_bytes().replace(b'"response":"', b'"response":"X', 1)
    path.write_bytes(data)
    return data


def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.fixture
def exported(tmp_path: Path) -> Iterator[tuple[Store, Path]]:
    store = new_store(tmp_path)
    _campaign(store)
    out = tmp_path / "out"
    export_campaign(store, "camp", 1, out)
    yield store, out
    store.close()


def test_a_fresh_export_holds_and_is_named_by_its_receipt_then_by_its_files(exported: tuple[Store, Path]) -> None:
    store, out = exported
    proof = verify_export(store, out)
    assert proof.ok and sorted(f["name"] for f in proof.files) == sorted(NAMES)
    [head] = proof.ledger_heads
    assert store.ledger.records_at([head["seq"]])[head["seq"]].hash == head["hash"]
    assert proof.receipts == [] and any("no training receipt" in n for n in proof.notes)
    assert {e["ledgerHeadSeq"] for e in _manifest(out)["files"]} == {head["seq"]}
    receipt = _receipt(store, out)
    [named] = verify_export(store, out).receipts
    assert named["recordId"] == receipt.record_id and named["boundBy"] == "manifest"
    bound = store.ledger.get(receipt.record_id).payload_value["exportFiles"]
    assert [b["name"] for b in bound] == NAMES
    export_campaign(store, "camp", 1, out)  # appends: the receipt still names the first three files
    proof = verify_export(store, out)
    assert proof.ok and [r["boundBy"] for r in proof.receipts] == ["files"] and len(proof.files) == 6


def test_a_file_edited_after_its_receipt_is_refused_everywhere(
    exported: tuple[Store, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, out = exported
    _receipt(store, out)
    _edit_v4(out)
    proof = verify_export(store, out)
    assert not proof.ok
    assert {(p.name, p.field) for p in proof.problems} == {(V4, "sha256"), (V4, "bytes")}
    with pytest.raises(IntegrityError) as caught:
        campaign_coverage(store, "camp", 1, export_manifest=out / "manifest.json")
    assert caught.value.field == "export-manifest" and V4 in str(caught.value)
    with pytest.raises(IntegrityError) as caught:
        _receipt(store, out, "ckpt-2")
    assert V4 in str(caught.value)
    assert store.ledger.count("hr_training_receipts") == 1  # the refused receipt was never recorded


def test_a_file_edited_with_its_manifest_entry_is_caught_by_the_receipt(exported: tuple[Store, Path]) -> None:
    store, out = exported
    _receipt(store, out)
    data = _edit_v4(out)
    manifest = _manifest(out)
    entry = next(e for e in manifest["files"] if e["name"] == V4)
    entry.update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
    _write_manifest(out, manifest)
    proof = verify_export(store, out)
    assert [(p.name, p.field) for p in proof.problems] == [(V4, "receipt")]
    assert "ckpt-1" in proof.problems[0].problem
    with pytest.raises(IntegrityError):
        campaign_coverage(store, "camp", 1, export_manifest=out / "manifest.json")
    with pytest.raises(IntegrityError):
        _receipt(store, out, "ckpt-2")
    assert store.ledger.count("hr_training_receipts") == 1


@pytest.mark.parametrize(
    "change",
    [
        {"ledgerHead": "ab" * 32},  # a head no record of this chain has
        {"ledgerHeadSeq": 1},  # a record of the chain, but not the listed head
        {"ledgerHeadSeq": 10**9},  # no record at that seq
    ],
)
def test_a_ledger_head_that_is_not_this_chains_is_refused(exported: tuple[Store, Path], change: dict[str, Any]) -> None:
    store, out = exported
    manifest = _manifest(out)
    for entry in manifest["files"]:
        entry.update(change)
    _write_manifest(out, manifest)
    proof = verify_export(store, out)
    assert sorted(p.name for p in proof.problems) == sorted(NAMES)
    assert {p.field for p in proof.problems} == {"ledgerHead"}
    with pytest.raises(IntegrityError):
        _receipt(store, out)


def test_a_head_listed_without_its_seq_is_found_along_the_chain(exported: tuple[Store, Path]) -> None:
    store, out = exported
    manifest = _manifest(out)
    for entry in manifest["files"]:
        del entry["ledgerHeadSeq"]
    _write_manifest(out, manifest)
    assert verify_export(store, out).ok


def test_missing_symlinked_and_unlisted_files_are_named(exported: tuple[Store, Path], tmp_path: Path) -> None:
    store, out = exported
    (out / NAMES[1]).unlink()
    moved = tmp_path / "elsewhere.jsonl"
    shutil.move(out / NAMES[2], moved)
    (out / NAMES[2]).symlink_to(moved)
    (out / "camp-v1-7.trl-preference.jsonl").write_bytes(b"mine\n")
    problems = {(p.name, p.field) for p in verify_export(store, out).problems}
    assert problems == {(NAMES[1], "file"), (NAMES[2], "file"), ("camp-v1-7.trl-preference.jsonl", "unlisted")}


def test_export_verify_cli_exits_0_then_4_naming_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = init_cli_store(tmp_path, monkeypatch)
    store = open_cli_store(project)
    _campaign(store)
    out = tmp_path / "ds"
    export_campaign(store, "camp", 1, out)
    store.close()
    code, stdout, err = run_cli("review", "export-verify", str(out), "--json")
    assert code == 0, err
    doc = json.loads(stdout)
    assert doc["ok"] and doc["problems"] == [] and len(doc["files"]) == 3
    code, stdout, _ = run_cli("review", "export-verify", str(out))
    assert code == 0 and "the export holds" in stdout
    evaluation = tmp_path / "eval.json"
    evaluation.write_text('{"accuracy": 0.9}', encoding="utf-8")
    receipt = ["campaign", "receipt", "camp", "--version", "1", "--export-manifest", str(out / "manifest.json")]
    code, _, err = run_cli(*receipt, "--checkpoint", "c1", "--eval", str(evaluation))
    assert code == 0, err
    _edit_v4(out)
    code, stdout, _ = run_cli("review", "export-verify", str(out), "--json")
    assert code == 4
    assert {(p["name"], p["field"]) for p in json.loads(stdout)["problems"]} == {(V4, "sha256"), (V4, "bytes")}
    code, _, err = run_cli(
        "campaign", "coverage", "camp", "--version", "1", "--export-manifest", str(out / "manifest.json")
    )
    assert code == 4 and V4 in err
    code, _, err = run_cli(*receipt, "--checkpoint", "c2", "--eval", str(evaluation))
    assert code == 4 and V4 in err


def test_a_manifest_moved_away_then_an_export_deletes_nothing(exported: tuple[Store, Path], tmp_path: Path) -> None:
    store, out = exported
    (out / "manifest.json").rename(tmp_path / "moved-manifest.json")
    before = _files(out)
    with pytest.raises(ConflictError) as caught:
        export_campaign(store, "camp", 1, out)
    assert caught.value.field == "out" and all(name in str(caught.value) for name in NAMES)
    assert _files(out) == before


def test_a_moved_manifest_is_exit_6_on_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = init_cli_store(tmp_path, monkeypatch)
    store = open_cli_store(project)
    _campaign(store)
    out = tmp_path / "ds"
    export_campaign(store, "camp", 1, out)
    store.close()
    (out / "manifest.json").unlink()
    before = _files(out)
    code, _, err = run_cli("review", "export", "camp", "--version", "1", "--out", str(out))
    assert code == 6 and "out:" in err and V4 in err
    assert _files(out) == before


def test_a_users_own_file_with_an_export_name_survives(exported: tuple[Store, Path]) -> None:
    store, out = exported
    mine = {"camp-v1-2.training-example.v4.jsonl": b"my own notes\n", ".camp-v1-2.trl-preference.jsonl.x1.tmp": b"t"}
    for name, data in mine.items():
        (out / name).write_bytes(data)
    report = export_campaign(store, "camp", 1, out)
    assert report.number == 3  # numbered after the user's file, never over it
    assert {name: (out / name).read_bytes() for name in mine} == mine
    assert not (out / JOURNAL_NAME).exists()


def test_a_users_own_file_survives_in_a_folder_without_a_manifest(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    _campaign(store)
    out = tmp_path / "out"
    out.mkdir()
    (out / V4).write_bytes(b"mine\n")
    with pytest.raises(ConflictError):
        export_campaign(store, "camp", 1, out)
    assert (out / V4).read_bytes() == b"mine\n"
    store.close()


def test_a_journaled_name_whose_bytes_differ_is_not_deleted(exported: tuple[Store, Path]) -> None:
    """A journal names what an interrupted export wrote, with its SHA-256: a file of that name
    with other bytes is not what the export wrote, so it stays."""
    store, out = exported
    name = "camp-v1-2.trl-preference.jsonl"
    journal = {"journalVersion": 1, "files": [{"name": name, "sha256": "00" * 32}], "temporaries": [name]}
    (out / JOURNAL_NAME).write_text(json.dumps(journal), encoding="utf-8")
    (out / name).write_bytes(b"not the journaled bytes\n")
    (out / f".{name}.abc123.tmp").write_bytes(b"half")
    report = export_campaign(store, "camp", 1, out)
    assert (out / name).read_bytes() == b"not the journaled bytes\n"
    assert not (out / f".{name}.abc123.tmp").exists()  # the journaled name's temporary file is the export's
    assert report.number == 3 and not (out / JOURNAL_NAME).exists()


class Killed(BaseException):
    """Stands for the process dying: nothing after it runs."""


def test_an_export_killed_after_its_manifest_keeps_its_files_and_the_next_clears_the_journal(
    exported: tuple[Store, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, out = exported

    def die(folder: Path) -> None:
        raise Killed

    with monkeypatch.context() as patch:
        patch.setattr(dataset_manifest, "remove_journal", die)
        with pytest.raises(Killed):
            export_campaign(store, "camp", 1, out)
    assert (out / JOURNAL_NAME).exists() and len(_manifest(out)["files"]) == 6
    listed = _files(out)
    assert export_campaign(store, "camp", 1, out).number == 3
    kept = {name: data for name, data in listed.items() if name not in (JOURNAL_NAME, "manifest.json")}
    assert all((out / name).read_bytes() == data for name, data in kept.items()) and len(kept) == 6
    assert not (out / JOURNAL_NAME).exists() and verify_export(store, out).ok


def test_an_export_killed_while_writing_its_journal_leaves_nothing_the_next_one_minds(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    _campaign(store)
    out = tmp_path / "out"
    out.mkdir()
    (out / JOURNAL_NAME).write_bytes(b'{"journalVersion": 1, "fil')  # cut short: nothing was written after it
    assert export_campaign(store, "camp", 1, out).number == 1
    assert sorted(p.name for p in out.iterdir()) == sorted([*NAMES, "manifest.json"])
    store.close()


def test_a_carried_v3_entry_is_checked_against_its_file_and_its_foreign_head_is_a_note(
    exported: tuple[Store, Path],
) -> None:
    store, out = exported
    data = b'{"schemaVersion":"thoughtstream.training-example.v3"}\n'
    (out / "legacy.v3.jsonl").write_bytes(data)
    manifest = _manifest(out)
    entry = {"name": "legacy.v3.jsonl", "schemaVersion": "thoughtstream.training-example.v3", "rows": 1}
    entry.update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest(), ledgerHead="cd" * 32)
    manifest["files"].insert(0, entry)
    _write_manifest(out, manifest)
    proof = verify_export(store, out)
    assert proof.ok and any(n.startswith("legacy.v3.jsonl: a carried entry") for n in proof.notes)
    (out / "legacy.v3.jsonl").write_bytes(data.replace(b"v3", b"v9"))
    assert [(p.name, p.field) for p in verify_export(store, out).problems] == [("legacy.v3.jsonl", "sha256")]
