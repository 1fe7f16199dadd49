"""Review reuse: an unchanged artifact version reviewed again with the same tier and configuration
reuses the earlier complete review (``reusedFromReviewId``) unless forced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reviewtrail.app import init_store
from reviewtrail.config import ReviewerSettings, Settings
from reviewtrail.evidence import add_evidence
from reviewtrail.provenance.artifacts import upload_artifact
from reviewtrail.reviewer import get_review, review_artifact, review_checkpoint
from reviewtrail.reviewer._reuse import REVIEW_RULES_VERSION, review_configuration
from reviewtrail.store import Store

QUICK = ReviewerSettings(tier="quick")
OFF = ReviewerSettings(tier="off")
TEXT = "分析结果支持该结论 [1].\n[1] Study. arXiv:1706.03762\n"


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REVIEWTRAIL_REVIEWER", raising=False)
    root = tmp_path / "store"
    s = init_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}"))
    yield s  # type: ignore[misc]
    s.close()


def _upload(store: Store, tmp_path: Path, text: str = TEXT) -> None:
    path = tmp_path / "upload.bin"
    path.write_text(text, encoding="utf-8")
    upload_artifact(store, name="analysis.md", file=path, media_type="text/markdown")


def _scripted(*answers: str, model: str = "model-1") -> object:
    from reviewtrail.models import ScriptedBackend

    return ScriptedBackend(list(answers), model=model)


READY = json.dumps({"verdict": "ready", "findings": []})
REVISE = json.dumps({"verdict": "revise", "findings": [{"code": "CITATION_CLAIM_NOT_SUPPORTED", "severity": "warning",
                                                          "message": "the source does not say this"}]})  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Reproduced from the reference's checkpoint tests
# ---------------------------------------------------------------------------------------------


def test_ref_quick_review_of_an_unchanged_version_is_reused(store: Store, tmp_path: Path) -> None:
    _upload(store, tmp_path)
    first = review_artifact(store, "analysis.md", settings=QUICK)
    second = review_checkpoint(store, "analysis.md", settings=QUICK)
    assert second is not None
    assert second.run.reused_from_review_id == first.run.review_run_id
    assert second.run.review_run_id != first.run.review_run_id
    assert second.run.trigger == "review_checkpoint"
    assert (second.run.decision, second.run.findings, second.run.checks) == (
        first.run.decision,
        first.run.findings,
        first.run.checks,
    )
    assert len(store.ledger.rows("rv_runs")) == 2, "the reuse is recorded as its own review"
    assert second.to_json()["reusedFromReviewId"] == first.run.review_run_id


def test_ref_deep_review_of_an_identical_version_makes_no_new_model_call(store: Store, tmp_path: Path) -> None:
    _upload(store, tmp_path)
    backend = _scripted(REVISE)  # one answer only: a second call would fail
    first = review_artifact(store, "analysis.md", tier="deep", settings=OFF, backend=_scripted(REVISE, REVISE),
                            project_dir=tmp_path)  # fmt: skip
    second = review_artifact(store, "analysis.md", tier="deep", settings=OFF, backend=backend, project_dir=tmp_path)
    assert second.run.reused_from_review_id == first.run.review_run_id
    assert "CITATION_CLAIM_NOT_SUPPORTED" in {f.code for f in second.run.findings}
    assert second.run.prompt_manifest_ids == [] and second.run.trace_paths == []
    assert len(store.ledger.tail(10, type="provenance.prompt-manifest")) == 2


def test_ref_an_unreadable_llm_answer_is_not_reused(store: Store, tmp_path: Path) -> None:
    _upload(store, tmp_path)
    first = review_artifact(store, "analysis.md", tier="smart", settings=OFF, backend=_scripted("not json"),
                            project_dir=tmp_path)  # fmt: skip
    assert {c.check: c.status for c in first.run.checks}["smart"] == "inconclusive"
    retried = review_artifact(store, "analysis.md", tier="smart", settings=OFF, backend=_scripted(READY),
                              project_dir=tmp_path)  # fmt: skip
    assert retried.run.reused_from_review_id is None
    assert {c.check: c.status for c in retried.run.checks}["smart"] == "passed"


# ---------------------------------------------------------------------------------------------
# What "the same configuration" means
# ---------------------------------------------------------------------------------------------


def test_force_runs_the_checks_again(store: Store, tmp_path: Path) -> None:
    _upload(store, tmp_path)
    first = review_artifact(store, "analysis.md", settings=QUICK)
    forced = review_artifact(store, "analysis.md", settings=QUICK, force=True)
    assert forced.run.reused_from_review_id is None
    again = review_artifact(store, "analysis.md", settings=QUICK)
    assert again.run.reused_from_review_id == forced.run.review_run_id, "the latest complete review is reused"
    assert first.run.review_run_id != forced.run.review_run_id


def test_a_reuse_points_at_the_original_review_not_at_another_reuse(store: Store, tmp_path: Path) -> None:
    _upload(store, tmp_path)
    first = review_artifact(store, "analysis.md", settings=QUICK)
    review_artifact(store, "analysis.md", settings=QUICK)
    third = review_artifact(store, "analysis.md", settings=QUICK)
    assert third.run.reused_from_review_id == first.run.review_run_id


def test_another_tier_or_model_is_another_configuration(store: Store, tmp_path: Path) -> None:
    _upload(store, tmp_path)
    quick = review_artifact(store, "analysis.md", settings=QUICK)
    smart = review_artifact(
        store, "analysis.md", tier="smart", settings=OFF, backend=_scripted(READY), project_dir=tmp_path
    )
    assert smart.run.reused_from_review_id is None
    other_model = review_artifact(store, "analysis.md", tier="smart", settings=OFF,
                                  backend=_scripted(READY, model="model-2"), project_dir=tmp_path)  # fmt: skip
    assert other_model.run.reused_from_review_id is None
    same_model = review_artifact(store, "analysis.md", tier="smart", settings=OFF,
                                 backend=_scripted(READY, model="model-2"), project_dir=tmp_path)  # fmt: skip
    assert same_model.run.reused_from_review_id == other_model.run.review_run_id
    back_to_quick = review_artifact(store, "analysis.md", settings=QUICK)
    assert back_to_quick.run.reused_from_review_id == quick.run.review_run_id


def test_a_new_version_is_reviewed_afresh(store: Store, tmp_path: Path) -> None:
    _upload(store, tmp_path)
    review_artifact(store, "analysis.md", settings=QUICK)
    _upload(store, tmp_path, TEXT + "\nMore.\n")
    latest = review_artifact(store, "analysis.md", settings=QUICK)
    assert latest.run.version == 2 and latest.run.reused_from_review_id is None
    # recording the new version is something recorded since the first review: version 1 is reviewed again
    earlier = review_artifact(store, "analysis.md", 1, settings=QUICK)
    assert earlier.run.version == 1 and earlier.run.reused_from_review_id is None
    again = review_artifact(store, "analysis.md", 1, settings=QUICK)
    assert again.run.reused_from_review_id == earlier.run.review_run_id


def test_new_evidence_since_the_review_means_a_fresh_review(store: Store, tmp_path: Path) -> None:
    _upload(store, tmp_path)
    review_artifact(store, "analysis.md", settings=QUICK)
    add_evidence(store, {"kind": "paper", "paperId": "doi:10.5/p"})
    again = review_artifact(store, "analysis.md", settings=QUICK)
    assert again.run.reused_from_review_id is None


def test_an_inconclusive_review_is_not_reused(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "latin.md"
    path.write_bytes(b"Caf\xe9 [1].\n")
    upload_artifact(store, name="latin.md", file=path, media_type="text/markdown")
    review_artifact(store, "latin.md", settings=QUICK)
    assert review_artifact(store, "latin.md", settings=QUICK).run.reused_from_review_id is None


def test_the_configuration_is_recorded_and_documented(store: Store, tmp_path: Path) -> None:
    _upload(store, tmp_path)
    run = review_artifact(store, "analysis.md", settings=QUICK).run
    assert run.configuration == {
        "rulesVersion": REVIEW_RULES_VERSION,
        "tier": "quick",
        "mediaKind": "narrative",
        "checks": ["citation", "computation"],
        "reviewer": None,
    }
    assert run.configuration_digest is not None and run.configuration_digest.startswith("sha256:")
    assert run.content_digest is not None
    reviewer = {"kind": "ScriptedBackend", "endpoint": "scripted.local", "model": "m"}
    smart = review_configuration("smart", "json", reviewer)
    assert smart["checks"] == ["structure", "computation", "smart"]
    [shown] = [o for o in get_review(store, "analysis.md") if o.run.review_run_id == run.review_run_id]
    assert shown.run.configuration == run.configuration


# ---------------------------------------------------------------------------------------------
# The command line: `review run --force`
# ---------------------------------------------------------------------------------------------


def test_review_run_force_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewtrail.cli._app import app

    runner = CliRunner()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REVIEWTRAIL_STORE", str(tmp_path / "store"))
    for var in ("REVIEWTRAIL_DATABASE_URL", "REVIEWTRAIL_PROJECT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("REVIEWTRAIL_REVIEWER", "quick")
    assert runner.invoke(app, ["init"]).exit_code == 0
    (tmp_path / "r.md").write_text(TEXT, encoding="utf-8")
    assert runner.invoke(app, ["artifact", "upload", "r.md", "r.md", "--media-type", "text/markdown"]).exit_code == 0

    def review(*extra: str) -> dict[str, object]:
        result = runner.invoke(app, ["review", "run", "r.md", "--json", *extra])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)  # type: ignore[no-any-return]

    first = review()
    assert review()["reusedFromReviewId"] == first["reviewRunId"]
    assert review("--force")["reusedFromReviewId"] is None
    help_text = runner.invoke(app, ["review", "run", "--help"]).stdout
    assert "--force" in help_text
