"""``review summary``: the latest Reviewer Specialist findings of a version as bounded text for an
agent's next prompt, with the review run it came from; never an older version's review."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from reviewtrail.app import init_store
from reviewtrail.config import ReviewerSettings, Settings
from reviewtrail.errors import NotFoundError
from reviewtrail.provenance.artifacts import upload_artifact
from reviewtrail.reviewer import SUMMARY_LIMIT, review_artifact, review_summary
from reviewtrail.store import Store

QUICK = ReviewerSettings(tier="quick")
CITED = "The result holds [1].\n[1] Study. arXiv:1706.03762\n"
UNCITED = "The result holds [2].\n"


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REVIEWTRAIL_REVIEWER", raising=False)
    root = tmp_path / "store"
    monkeypatch.setenv("REVIEWTRAIL_STORE", str(root))
    monkeypatch.setenv("REVIEWTRAIL_DATABASE_URL", f"sqlite:///{root / 'ledger.sqlite'}")
    s = init_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}"))
    yield s  # type: ignore[misc]
    s.close()


def upload(store: Store, tmp_path: Path, text: str) -> None:
    path = tmp_path / "upload.md"
    path.write_text(text, encoding="utf-8")
    upload_artifact(store, name="analysis.md", file=path, media_type="text/markdown")


def test_the_latest_review_of_the_version_is_given_with_its_run(store: Store, tmp_path: Path) -> None:
    upload(store, tmp_path, UNCITED)
    first = review_artifact(store, "analysis.md", settings=QUICK)
    again = review_artifact(store, "analysis.md", settings=QUICK, force=True)
    found = review_summary(store, "analysis.md@1", "default")
    assert found.review_run_id == again.run.review_run_id != first.run.review_run_id
    assert found.summary == again.run.summary and len(found.summary) <= SUMMARY_LIMIT
    assert found.decision == again.run.decision
    text = found.context_text()
    assert text.startswith(again.run.summary) and again.run.review_run_id in text and "read-only" in text


def test_a_newer_unreviewed_version_is_not_given_an_older_review(store: Store, tmp_path: Path) -> None:
    upload(store, tmp_path, UNCITED)
    review_artifact(store, "analysis.md", settings=QUICK)
    upload(store, tmp_path, CITED)
    with pytest.raises(NotFoundError) as caught:
        review_summary(store, "analysis.md", "default")  # the latest version: 2
    assert caught.value.field == "review" and "analysis.md@2" in str(caught.value)
    assert review_summary(store, "analysis.md@1", "default").version == 1


def test_the_command_prints_the_context_text_or_json(store: Store, tmp_path: Path) -> None:
    upload(store, tmp_path, UNCITED)
    run = review_artifact(store, "analysis.md", settings=QUICK).run
    code, out, err = run_cli("review", "summary", "analysis.md")
    assert code == 0, err
    assert out.strip().startswith(run.summary) and run.review_run_id in out
    code, out, _ = run_cli("review", "summary", "analysis.md@1", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["reviewRunId"] == run.review_run_id and doc["version"] == 1
    assert doc["context"].startswith(run.summary)
    assert run_cli("review", "summary", "missing.md")[0] == 3
    assert run_cli("review", "summary", "analysis.md@9")[0] == 3
    assert run_cli("review", "summary", "analysis.md@x")[0] == 2
