"""Every file a campaign export writes, and its manifest, validate against the JSON Schemas shipped
in reviewtrail/schemas/export/ (and a row that breaks them is caught)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from tests.support.human_review import campaign_with_items, new_store
from tests.test_human_review_export_job import OPENAI, TRL, V4, decide

from reviewtrail.human_review.campaigns import campaign_settings
from reviewtrail.human_review.export import export_campaign


def validator(name: str) -> Draft202012Validator:
    text = resources.files("reviewtrail").joinpath("schemas", "export", name).read_text(encoding="utf-8")
    schema = json.loads(text)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


SCHEMAS = {
    V4: "training-example.v4.schema.json",
    TRL: "trl.preference.v1.schema.json",
    OPENAI: "openai.preference.v1.schema.json",
}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("export")
    store = new_store(root)
    campaign_settings(store, "camp", 1, training=True)
    items = campaign_with_items(store, 3)
    decide(store, items[0], "prefer")
    decide(store, items[1], "correct")
    decide(store, items[2], "tie")
    export_campaign(store, "camp", 1, root / "out")
    store.close()
    return root / "out"


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("name", [V4, TRL, OPENAI])
def test_every_exported_row_validates_against_its_schema(exported: Path, name: str) -> None:
    rows = lines(exported / name)
    assert rows, name
    check = validator(SCHEMAS[name])
    for row in rows:
        assert list(check.iter_errors(row)) == []


@pytest.mark.parametrize("name", [V4, TRL, OPENAI])
def test_a_row_with_an_extra_field_or_an_empty_text_breaks_its_schema(exported: Path, name: str) -> None:
    row = lines(exported / name)[0]
    check = validator(SCHEMAS[name])
    assert not check.is_valid({**row, "submissionId": "s-1"})
    first_text = "prompt" if name != OPENAI else "input"
    broken = {**row, first_text: "" if name != OPENAI else {"messages": [{"role": "user", "content": ""}]}}
    assert not check.is_valid(broken)


def test_the_manifest_validates_and_carries_a_v3_entry(exported: Path) -> None:
    check = validator("dataset-manifest.v1.schema.json")
    manifest = json.loads((exported / "manifest.json").read_text(encoding="utf-8"))
    assert list(check.iter_errors(manifest)) == []
    legacy = {"name": "old.v3.jsonl", "schemaVersion": "thoughtstream.training-example.v3", "rows": 2}
    assert check.is_valid({**manifest, "files": [legacy, *manifest["files"]]})
    damaged = {**manifest["files"][0], "sha256": "not-a-hash"}
    assert not check.is_valid({**manifest, "files": [damaged]})
    assert not check.is_valid({**manifest, "manifestVersion": 2})
