"""An export killed part way leaves a manifest that lists only whole exports, and the same export
run again leaves what an uninterrupted one leaves (docs/human-review.md, "Exporting a campaign")."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

import pytest
from tests.support.human_review import campaign_with_items, new_store
from tests.test_human_review_export_job import decide

import reviewtrail.human_review.export._dataset_manifest as dataset_manifest
import reviewtrail.human_review.export._export_folder as export_folder
from reviewtrail.errors import ConflictError
from reviewtrail.human_review.campaigns import campaign_settings
from reviewtrail.human_review.export import export_campaign
from reviewtrail.store import Store

NAMES = [f"camp-v1-1.{kind}.jsonl" for kind in ("training-example.v4", "trl-preference", "openai-preference")]


class Killed(BaseException):
    """Stands for the process dying: nothing after it runs (no cleanup of written files)."""


def _store(tmp_path: Path) -> Store:
    store = new_store(tmp_path)
    campaign_settings(store, "camp", 1, training=True)
    for item in campaign_with_items(store, 2):
        decide(store, item, "prefer")
    return store


def _listing(out: Path) -> tuple[list[str], dict[str, bytes]]:
    names = [e["name"] for e in json.loads((out / "manifest.json").read_text(encoding="utf-8"))["files"]]
    return names, {p.name: p.read_bytes() for p in out.iterdir()}


def _die_at(monkeypatch: pytest.MonkeyPatch, writes: int) -> None:
    """The process dies at the ``writes``-th file put in place (each written file renamed into
    place, then the manifest replaced)."""
    real_place, real_replace = dataset_manifest.place_file, dataset_manifest.replace_file
    count = {"n": 0}

    def dies(path: Path, data: bytes) -> bool:
        count["n"] += 1
        if count["n"] == writes:
            path.with_name(f".{path.name}.dead.tmp").write_bytes(data[: len(data) // 2])
        return count["n"] == writes

    def place(staged: Path, target: Path) -> None:
        if dies(target, staged.read_bytes()):
            raise Killed
        real_place(staged, target)

    def replace(path: Any, data: bytes, **kw: Any) -> None:
        if dies(Path(path), data):
            raise Killed
        real_replace(path, data, **kw)

    monkeypatch.setattr(dataset_manifest, "place_file", place)
    monkeypatch.setattr(dataset_manifest, "replace_file", replace)


@pytest.mark.parametrize("writes", [1, 2, 3, 4])  # three files, then the manifest
def test_a_killed_export_lists_no_partial_export_and_the_rerun_ends_as_an_uninterrupted_one(
    tmp_path: Path, writes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    reference = tmp_path / "reference"
    export_campaign(store, "camp", 1, reference)
    out = tmp_path / "out"
    with monkeypatch.context() as patch:
        _die_at(patch, writes)
        with pytest.raises(Killed):
            export_campaign(store, "camp", 1, out)
    if (out / "manifest.json").exists():  # a manifest lists whole exports only
        names, _ = _listing(out)
        assert names in ([], NAMES)
    report = export_campaign(store, "camp", 1, out)
    assert report.number == 1
    assert _listing(out) == _listing(reference)  # the same files, the same bytes, nothing else
    store.close()


def test_an_export_killed_while_its_journal_is_rewritten_leaves_nothing_after_the_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journal is rewritten (with the files' SHA-256) through a temporary file beside it; a
    kill before that file is renamed leaves it behind, and the next export removes it with the
    rest of what the killed export journaled."""
    store = _store(tmp_path)
    reference = tmp_path / "reference"
    export_campaign(store, "camp", 1, reference)
    out = tmp_path / "out"

    def dies(path: Any, data: bytes, **_kw: Any) -> None:
        Path(path).with_name(f".{Path(path).name}.k1ll3d.tmp").write_bytes(data[: len(data) // 2])
        raise Killed

    with monkeypatch.context() as patch:
        patch.setattr(export_folder, "replace_file", dies)
        patch.setattr(dataset_manifest.ExportFiles, "_abort", lambda _self: None)  # a dead process cleans nothing
        with pytest.raises(Killed):
            export_campaign(store, "camp", 1, out)
    assert (out / f".{export_folder.JOURNAL_NAME}.k1ll3d.tmp").exists()
    assert export_campaign(store, "camp", 1, out).number == 1
    assert _listing(out) == _listing(reference)  # the same files, the same bytes, nothing else
    store.close()


def test_an_export_while_another_writes_into_the_folder_is_a_conflict(tmp_path: Path) -> None:
    store = _store(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    fd = os.open(out, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(ConflictError) as err:
            export_campaign(store, "camp", 1, out)
        assert err.value.field == "out"
        assert list(out.iterdir()) == []
    finally:
        os.close(fd)
    assert export_campaign(store, "camp", 1, out).number == 1
    store.close()


def test_files_of_other_campaigns_and_other_names_are_left_alone(tmp_path: Path) -> None:
    store = _store(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    keep = {"other-v1-1.training-example.v4.jsonl": b"x\n", "notes.txt": b"mine\n", ".hidden": b"h"}
    for name, data in keep.items():
        (out / name).write_bytes(data)
    export_campaign(store, "camp", 1, out)
    assert {name: (out / name).read_bytes() for name in keep} == keep
    store.close()
