"""``reviewtrail provenance --format prov|in-toto`` on a real store, read back with ``prov`` and in-toto-attestation."""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prov.model import ProvActivity, ProvDocument, ProvRecord, ProvUsage
from typer.testing import CliRunner

from conftest import need
from reviewtrail.app import open_store
from reviewtrail.cli._app import app
from reviewtrail.models import ScriptedBackend, invoke
from reviewtrail.provenance.artifacts import declare_artifact, upload_artifact
from reviewtrail.provenance.runs import create_session, run_code
from reviewtrail.store import Store
from test_export_consumers import load_in_toto

runner = CliRunner()


def export(spec: str, fmt: str) -> dict[str, Any]:
    result = runner.invoke(app, ["provenance", spec, "--format", fmt], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.stderr
    return dict(json.loads(result.stdout))


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REVIEWTRAIL_STORE", str(tmp_path / "store"))
    monkeypatch.delenv("REVIEWTRAIL_DATABASE_URL", raising=False)
    monkeypatch.delenv("REVIEWTRAIL_PROJECT", raising=False)
    assert runner.invoke(app, ["init"]).exit_code == 0
    s = open_store()
    yield s
    s.close()


def relation_key(record: ProvRecord) -> tuple[str, tuple[tuple[str, str], ...]]:
    """A PROV relation as its kind and attributes, without its document-local id."""
    attributes = tuple(sorted((str(k), str(v)) for k, v in record.attributes))
    return record.get_type().localpart, attributes


def prov_relations(doc: dict[str, Any]) -> set[tuple[str, tuple[tuple[str, str], ...]]]:
    loaded = ProvDocument.deserialize(content=json.dumps(doc), format="json")
    return {relation_key(r) for r in loaded.get_records() if r.is_relation()}


def dependency_hexes(statement: dict[str, Any]) -> set[str]:
    return {d["digest"]["sha256"] for d in statement["predicate"]["buildDefinition"]["resolvedDependencies"]}


def turn(store: Store, session_id: str, text: str) -> str:
    done = invoke(
        store,
        ScriptedBackend([text]),
        [{"role": "user", "content": f"write {text}"}],
        system=f"You are the writer of {text}.",
        session_id=session_id,
    )
    return done.manifest_envelope.id


def test_a_model_turn_in_the_exports_names_its_prompt_system_message_and_end(store: Store) -> None:
    session = create_session(store)
    manifest_id = turn(store, session.session_id, "notes")
    (session.workspace / "notes.md").write_text("summary\n")
    declare_artifact(
        store, session_id=session.session_id, name="notes", path="notes.md", prompt_manifest_id=manifest_id
    )
    manifest = store.ledger.get(manifest_id).payload_value
    node = f"prompt_manifest:{manifest_id}"

    statement = export("notes", "in-toto")
    load_in_toto(statement)
    by_name = {d["name"]: d for d in statement["predicate"]["buildDefinition"]["resolvedDependencies"]}
    assert "sha256:" + by_name[f"{node}/systemPrompt"]["digest"]["sha256"] == manifest["systemPrompt"]["digest"]
    assert "sha256:" + by_name[f"{node}/inputMessages"]["digest"]["sha256"] == manifest["inputMessages"]["digest"]
    [params] = statement["predicate"]["buildDefinition"]["internalParameters"]["modelTurns"]
    assert params["endedAt"] == manifest["endedAt"]

    loaded = ProvDocument.deserialize(content=json.dumps(export("notes", "prov")), format="json")
    used = {(u.args[0].localpart, u.args[1].localpart) for u in loaded.get_records(ProvUsage)}
    assert {(node, f"{node}/systemPrompt"), (node, f"{node}/inputMessages")} <= used
    [activity] = [a for a in loaded.get_records(ProvActivity) if a.identifier.localpart == node]
    assert activity.get_endTime() is not None
    assert activity.get_endTime().strftime("%Y-%m-%dT%H:%M:%S") == manifest["endedAt"][:19]


def test_each_version_export_keeps_what_the_earlier_versions_exports_say(store: Store) -> None:
    session = create_session(store)
    upload = store.root.parent / "draft.md"
    upload.write_text("draft\n")
    upload_artifact(store, name="paper", file=upload, actor="alice@example.org")
    for text in ("second", "third"):
        manifest_id = turn(store, session.session_id, text)
        (session.workspace / "paper.md").write_text(f"{text}\n")
        declare_artifact(
            store, session_id=session.session_id, name="paper", path="paper.md", prompt_manifest_id=manifest_id
        )
    provs = [export(f"paper@{v}", "prov") for v in (1, 2, 3)]
    statements = [export(f"paper@{v}", "in-toto") for v in (1, 2, 3)]
    relations = [prov_relations(doc) for doc in provs]
    assert relations[0] <= relations[1] <= relations[2]
    assert relations[0] < relations[2]
    # version 3 still says that version 1 was uploaded by alice and version 2 was written by its model turn
    attributed = [r for r in relations[2] if r[0] == "Attribution"]
    assert any("alice@example.org" in str(r) for r in attributed)
    revisions = [r for r in relations[2] if r[0] == "Derivation" and "prov:Revision" in str(r)]
    assert len(revisions) == 2  # 3 -> 2 and 2 -> 1
    for earlier, later in itertools.pairwise(statements):
        subject = later["subject"][0]["digest"]["sha256"]
        assert dependency_hexes(earlier) - {subject} <= dependency_hexes(later)
        load_in_toto(later)
    assert len(dependency_hexes(statements[2])) > len(dependency_hexes(statements[1])) > 0


def test_derivations_of_an_earlier_version_stay_in_the_export(store: Store) -> None:
    need(shutil.which("bwrap") is not None, "bubblewrap (bwrap) is not installed")
    session = create_session(store)
    run_code(store, session_id=session.session_id, code="open('a.txt','w').write('one')", lang="python")
    declare_artifact(store, session_id=session.session_id, name="table", path="a.txt")
    run_code(store, session_id=session.session_id, code="open('b.txt','w').write('two')", lang="python")
    declare_artifact(store, session_id=session.session_id, name="table", path="b.txt")
    first, second = export("table@1", "prov"), export("table@2", "prov")
    assert prov_relations(first) <= prov_relations(second)
    runs = [k for k in second["activity"] if k.startswith("rt:execution_run:")]
    assert len(runs) == 2
    statement = export("table@2", "in-toto")
    assert len(statement["predicate"]["buildDefinition"]["externalParameters"]["executionRuns"]) == 2
    assert dependency_hexes(export("table@1", "in-toto")) <= dependency_hexes(statement)
