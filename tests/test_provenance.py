"""Sessions, recorded sandbox runs, the artifact catalog and lineage, on a real store and real bubblewrap."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import need
from reviewtrail.app import init_store, open_store
from reviewtrail.config import Settings
from reviewtrail.errors import ConflictError, InvalidInputError, NotFoundError
from reviewtrail.provenance.artifacts import (
    declare_artifact,
    get_version,
    lineage,
    list_artifacts,
    render_tree,
    upload_artifact,
    versions_of,
)
from reviewtrail.provenance.runs import create_session, delete_session, run_code
from reviewtrail.store import Store
from reviewtrail.verify import verify_store


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    need(shutil.which("bwrap") is not None, "bubblewrap (bwrap) is not installed")
    root = tmp_path / "store"
    url = f"sqlite:///{root / 'ledger.sqlite'}" if request.param == "sqlite" else request.getfixturevalue("pg_url")
    s = init_store(Settings(store=root, database_url=url))
    yield s  # type: ignore[misc]
    s.close()


def test_a_run_is_recorded_with_every_seed_field(store: Store) -> None:
    session = create_session(store, "paper-1")
    out = run_code(
        store,
        session_id=session.session_id,
        code="import os, json\nos.makedirs('sub', exist_ok=True)\nopen('sub/a.txt','w').write('A')\n"
        "print(json.dumps({'cwd': os.getcwd(), 'env': dict(os.environ)}))",
        lang="python",
        env={"SEED": "42"},
    )
    run = out.run
    doc = out.to_json()
    for key in (
        "toolName", "language", "code", "stdout", "stderr", "exitCode", "startedAt", "endedAt",
        "environmentRevisionId", "kernelMode", "kernelId", "permissionEpochId", "networkPolicy",
        "networkAccessRevision", "sandbox", "createdFiles", "modifiedFiles", "status", "workingDirectory",
        "envSnapshot",
    ):  # fmt: skip
        assert key in doc, key
    assert run.status == "succeeded" and run.exit_code == 0 and run.sandbox == "bubblewrap"
    assert run.network_policy == "none" and run.network_access_revision is None
    assert run.created_files == ["sub/a.txt"] and run.modified_files == []
    seen = json.loads(store.cas.read(run.stdout["digest"]))  # type: ignore[index]
    assert run.working_directory == seen["cwd"] == "/workspace"
    assert run.env_snapshot is not None
    recorded_env = json.loads(store.cas.read(run.env_snapshot["digest"]))
    assert recorded_env == seen["env"] and recorded_env["SEED"] == "42"
    assert store.cas.read(run.code["digest"]).startswith(b"import os")
    [deriv] = out.derivations
    assert deriv.payload_value["path"] == "sub/a.txt" and deriv.payload_value["executionRunIds"] == [out.envelope.id]
    assert store.cas.read(deriv.payload_value["content"]["digest"]) == b"A"
    assert deriv.payload_value["content"]["pool"] == "data"
    assert list_artifacts(store, "paper-1") == [], "an ordinary run never creates an artifact version"
    assert verify_store(store).ok


def test_failures_timeouts_and_bad_input(store: Store) -> None:
    session = create_session(store)
    failed = run_code(store, session_id=session.session_id, code="exit 3", lang="bash")
    assert failed.run.status == "failed" and failed.run.exit_code == 3
    cancelled = run_code(store, session_id=session.session_id, code="import time; time.sleep(30)", lang="python",
                         timeout=0.5)  # fmt: skip
    assert cancelled.run.status == "cancelled"
    before = store.ledger.head()
    for bad in ({"lang": "ruby"}, {"timeout": 0}, {"env": {"BAD-NAME": "x"}}, {"network": "open"}):
        kwargs = {"session_id": session.session_id, "code": "print(1)", "lang": "python", **bad}
        with pytest.raises(InvalidInputError):
            run_code(store, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        run_code(store, session_id=session.session_id, code="print(1)", lang="python", cwd="/workspace/../etc")
    assert store.ledger.head() == before, "bad input records nothing"
    with pytest.raises(NotFoundError):
        run_code(store, session_id="01a228bb-b613-7f7d-913d-0c0f35384322", code="1", lang="python")


def test_versions_lineage_and_a_deleted_session(store: Store, tmp_path: Path) -> None:
    session = create_session(store)
    sid = session.session_id
    first = run_code(store, session_id=sid, code="open('report.md','w').write('line 1\\nline 2\\n')", lang="python")
    v1 = declare_artifact(store, session_id=sid, name="report", path="report.md")
    assert v1.version.version == 1 and v1.version.origin == "llm_declared"
    assert v1.version.derivation_ids == [first.derivations[0].id]
    second = run_code(store, session_id=sid, code="printf 'line 1\\nline two\\nline 3\\n' > report.md", lang="bash")
    assert second.run.modified_files == ["report.md"]
    v2 = declare_artifact(store, session_id=sid, name="report", path="report.md")
    assert v2.version.version == 2 and v2.version.artifact_id == v1.version.artifact_id
    assert [v.version.version for v in versions_of(store, "report")] == [1, 2]

    graph = lineage(store, "report")
    kinds = {n.kind for n in graph.nodes.values()}
    assert {"artifact_version", "artifact", "derivation", "execution_run", "session", "agent"} <= kinds
    runs = {n.record_id for n in graph.nodes.values() if n.kind == "execution_run"}
    assert runs == {first.envelope.id, second.envelope.id}, "v2 reaches both runs through its derivation chain"
    tree = render_tree(graph)
    assert "cwd=/workspace" in tree and "report@2" in tree

    delete_session(store, sid)
    assert not session.workspace.exists()
    with pytest.raises(ConflictError):
        run_code(store, session_id=sid, code="print(1)", lang="python")
    after = lineage(store, "report", 1)
    assert any("source session deleted" in n for n in after.notes)
    assert store.cas.read(get_version(store, "report", 1).version.content["digest"]) == b"line 1\nline 2\n"
    assert verify_store(store).ok


def test_uploads_and_declare_errors(store: Store, tmp_path: Path) -> None:
    f = tmp_path / "data.csv"
    f.write_text("a,b\n")
    up = upload_artifact(store, name="data.csv", file=f, project_id="p")
    assert up.version.origin == "user_upload" and up.version.content["mediaType"] == "text/csv"
    graph = lineage(store, "data.csv", project_id="p")
    assert any("uploaded" in n for n in graph.notes)
    session = create_session(store)
    for path in ("../outside", "/etc/passwd", "missing.txt"):
        with pytest.raises(InvalidInputError):
            declare_artifact(store, session_id=session.session_id, name="x", path=path)
    (session.workspace / "link").symlink_to("/etc/passwd")
    with pytest.raises(InvalidInputError):
        declare_artifact(store, session_id=session.session_id, name="x", path="link")
    with pytest.raises(NotFoundError):
        get_version(store, "nope")


def test_persistent_kernels_record_each_evaluation(store: Store) -> None:
    from reviewtrail.provenance.kernels import SessionKernel

    session = create_session(store)
    with SessionKernel(store, session.session_id, "python", env={"K": "1"}) as kernel:
        first = kernel.evaluate("import os\nx = 41\nos.makedirs('d', exist_ok=True)\nos.chdir('d')")
        second = kernel.evaluate("x += 1\nos.environ['LATE'] = str(x)\nopen('k.txt','w').write(str(x))")
    assert first.run.kernel_mode == second.run.kernel_mode == "persistent"
    assert first.run.kernel_id == second.run.kernel_id == kernel.kernel_id
    assert first.run.working_directory == "/workspace/d"
    assert second.run.created_files == ["d/k.txt"]
    env_after = json.loads(store.cas.read(second.run.env_snapshot["digest"]))  # type: ignore[index]
    assert env_after["LATE"] == "42" and env_after["K"] == "1", "env as observed at the end of the evaluation"
    with SessionKernel(store, session.session_id, "bash") as shell:
        shell.evaluate("cd d && export B=2")
        out = shell.evaluate("echo $B; pwd")
    assert out.run.working_directory == "/workspace/d"
    assert store.cas.read(out.run.stdout["digest"]) == b"2\n/workspace/d\n"  # type: ignore[index]
    assert json.loads(store.cas.read(out.run.env_snapshot["digest"]))["B"] == "2"  # type: ignore[index]


def test_a_model_turn_that_declares_an_artifact_is_in_its_lineage(store: Store) -> None:
    from reviewtrail.models import ScriptedBackend, invoke

    session = create_session(store)
    turn = invoke(
        store,
        ScriptedBackend(["Wrote notes.md with the summary."]),
        [{"role": "user", "content": "Summarise the results into notes.md"}],
        session_id=session.session_id,
    )
    run_code(store, session_id=session.session_id, code="open('notes.md','w').write('summary')", lang="python")
    version = declare_artifact(
        store,
        session_id=session.session_id,
        name="notes",
        path="notes.md",
        prompt_manifest_id=turn.manifest_envelope.id,
    )
    graph = lineage(store, "notes")
    manifests = [n for n in graph.nodes.values() if n.kind == "prompt_manifest"]
    assert [m.record_id for m in manifests] == [turn.manifest_envelope.id]
    assert manifests[0].attributes["endpointHost"] == "scripted.local"
    assert version.version.prompt_manifest_id == turn.manifest_envelope.id
    from reviewtrail.provenance.export._intoto import to_in_toto
    from reviewtrail.provenance.export._prov import to_prov_json

    prov = to_prov_json(graph)
    assert prov["activity"] and prov["entity"]
    statement = to_in_toto(graph)
    assert statement["subject"][0]["digest"]["sha256"] == version.version.content["digest"].split(":")[1]


def test_a_file_swapped_for_a_symlink_after_the_snapshot_is_never_read(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Code in the sandbox (e.g. a background process of a kernel) can swap a changed file for a
    symlink to a host file between the snapshot and the read: the host file must not be stored."""
    from reviewtrail.provenance.runs import _runs
    from reviewtrail.provenance.runs._snapshot import FileState

    secret = tmp_path / "host-secret.txt"
    secret.write_bytes(b"HOST-ONLY-SECRET")
    session = create_session(store)
    (session.workspace / "sub").mkdir()
    (session.workspace / "out.txt").symlink_to(secret)
    (session.workspace / "sub" / "x.txt").write_text("fine")
    (session.workspace / "evil").symlink_to(tmp_path)
    fake = {
        "out.txt": FileState(16, 1, 1, "0" * 64),
        "evil/host-secret.txt": FileState(16, 1, 1, "0" * 64),
        "sub/x.txt": FileState(4, 1, 1, "1" * 64),
    }
    monkeypatch.setattr(_runs, "snapshot", lambda root, previous=None: fake)
    outcome = _runs.record_run(
        store, session_id=session.session_id, workspace=session.workspace, code="true", lang="bash", result=None,
        before={}, timeout=1.0, network="none", allowlist=(), tool_name="test", actor="t",
    )  # fmt: skip
    assert [d.payload_value["path"] for d in outcome.derivations] == ["sub/x.txt"]
    assert "out.txt" in (outcome.run.error or "") and "evil/host-secret.txt" in (outcome.run.error or "")
    for _location, name in store.cas.iter_objects():
        assert store.cas.read(name) != b"HOST-ONLY-SECRET"


def test_concurrent_declarations_never_share_a_version_number(store: Store) -> None:
    import threading

    from reviewtrail.config import Settings as _Settings

    session = create_session(store)
    (session.workspace / "f.txt").write_text("x")
    url = store.ledger.url if hasattr(store.ledger, "url") else f"sqlite:///{store.root / 'ledger.sqlite'}"  # type: ignore[operator]
    errors: list[BaseException] = []

    def declare() -> None:
        try:
            with open_store(_Settings(store=store.root, database_url=url)) as other:  # type: ignore[arg-type]
                for _ in range(5):
                    declare_artifact(other, session_id=session.session_id, name="shared", path="f.txt")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=declare) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [v.version.version for v in versions_of(store, "shared")] == list(range(1, 21))
    assert verify_store(store).ok
