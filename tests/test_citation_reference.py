"""The citation pre-check cases of the public sciencediscovery reference, reproduced.

Each case below restates one assertion of the reference's own test suite (its offline citation
pre-check and its review checkpoint tests) against our check. Where the reference and our rules
differ on purpose, the case states our rule and says so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewtrail.app import init_store
from reviewtrail.config import ReviewerSettings, Settings
from reviewtrail.provenance.artifacts import upload_artifact
from reviewtrail.reviewer import check_citations, review_artifact
from reviewtrail.store import Store

QUICK = ReviewerSettings(tier="quick")


def _codes(text: str) -> list[str]:
    return [f.code for f in check_citations(text).findings]


# ---------------------------------------------------------------------------------------------
# The offline citation pre-check (pure)
# ---------------------------------------------------------------------------------------------


def test_ref_recognizable_identifier_with_a_marker_is_accepted() -> None:
    report = check_citations("Transformers use attention [1].\n[1] Vaswani et al., 2017. arXiv:1706.03762")
    assert report.decision == "ACCEPT_AND_PROCEED"
    assert report.findings == []


def test_ref_source_without_an_inline_marker() -> None:
    report = check_citations("Transformers use attention.\nSource identifier: arXiv:1706.03762")
    assert report.decision == "REVISE_AND_RETRY"
    assert report.findings[0].code == "CITATION_MARKER_MISSING"
    assert "numbered marker such as [1]" in report.findings[0].message


def test_ref_author_year_without_an_identifier_is_accepted() -> None:
    report = check_citations("Treatment improved survival (Doe et al., 2024).")
    assert report.decision == "ACCEPT_AND_PROCEED"
    assert report.findings == []


def test_ref_markdown_footnote_is_accepted() -> None:
    text = "Transformers use attention.[^vaswani]\n\n[^vaswani]: Vaswani et al. Attention Is All You Need, 2017."
    assert check_citations(text).decision == "ACCEPT_AND_PROCEED"


def test_ref_chinese_numeric_marker_is_accepted() -> None:
    text = "该方法使用注意力机制【1】。\n\n参考文献\n[1] Vaswani 等，Attention Is All You Need，2017。"
    assert check_citations(text).decision == "ACCEPT_AND_PROCEED"


def test_ref_provenance_chip_is_not_an_academic_citation() -> None:
    report = check_citations(
        "The reported result is supported by graph evidence [evidence1].\n\n"
        "## References\n1. Example et al. DOI: 10.1000/example [evidence1]"
    )
    assert report.decision == "REVISE_AND_RETRY"
    finding = next(f for f in report.findings if f.code == "CITATION_MARKER_MISSING")
    assert "[evidenceN]" in finding.message
    assert "not a replacement for an academic citation" in finding.message


def test_ref_dangling_footnote() -> None:
    assert _codes("Transformers use attention.[^missing]")[0] == "CITATION_REFERENCE_MISSING"


def test_ref_unfinished_identifier() -> None:
    assert _codes("Transformers use attention [1].\n[1] Vaswani et al. DOI: TODO")[0] == "CITATION_IDENTIFIER_MISSING"


def test_ref_text_without_a_citation_is_skipped() -> None:
    assert check_citations("The analysis is complete.").decision == "SKIPPED"


def test_ref_numeric_result_array_in_a_table_is_data() -> None:
    report = check_citations("| field | values |\n| --- | --- |\n| y_values | [1, 4, 9, 16, 25] |")
    assert report.decision == "SKIPPED"
    assert report.findings == []


def test_ref_real_markers_next_to_arrays_are_still_checked() -> None:
    report = check_citations("The method was validated [2, 3].\n\n## References\n[2] Study A.\n[3] Study B.")
    assert report.decision == "ACCEPT_AND_PROCEED"
    assert report.findings == []


# ---------------------------------------------------------------------------------------------
# The review checkpoint (an artifact version in a store)
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REVIEWTRAIL_REVIEWER", raising=False)
    root = tmp_path / "store"
    s = init_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}"))
    yield s  # type: ignore[misc]
    s.close()


def _upload(store: Store, tmp_path: Path, name: str, text: str, media_type: str) -> None:
    path = tmp_path / "upload.bin"
    path.write_text(text, encoding="utf-8")
    upload_artifact(store, name=name, file=path, media_type=media_type)


def test_ref_media_type_parameters_are_normalized_before_narrative_checks(store: Store, tmp_path: Path) -> None:
    text = "The study reports a result. DOI: 10.1234/example"
    _upload(store, tmp_path, "analysis.md", text, "text/markdown; charset=utf-8")
    run = review_artifact(store, "analysis.md", settings=QUICK).run
    assert {c.check: c.status for c in run.checks}["citation"] == "failed"
    assert "CITATION_MARKER_MISSING" in {f.code for f in run.findings}
    assert run.decision == "REVISE_AND_RETRY"


def test_ref_cited_report_is_accepted_by_the_checkpoint(store: Store, tmp_path: Path) -> None:
    _upload(store, tmp_path, "analysis.md", "分析结果支持该结论 [1].\n[1] Study. arXiv:1706.03762", "text/markdown")
    run = review_artifact(store, "analysis.md", settings=QUICK).run
    assert {c.check: c.status for c in run.checks}["citation"] == "passed"
    assert [f.code for f in run.findings if f.check == "citation"] == []


def test_ref_checkpoint_keeps_citation_findings(store: Store, tmp_path: Path) -> None:
    _upload(store, tmp_path, "analysis.md", "The result supports this claim [1].", "text/markdown")
    run = review_artifact(store, "analysis.md", settings=QUICK).run
    assert "CITATION_REFERENCE_MISSING" in {f.code for f in run.findings}
    assert run.decision == "REVISE_AND_RETRY"


def test_ref_json_artifact_is_not_reviewed_as_a_report(store: Store, tmp_path: Path) -> None:
    # The reference skips structured JSON sources: no citation check on them. (Ours adds a structure check.)
    body = '{"claim": "TP53 mutation frequency was 39.7% [ev1].", "references": ["[1] Study. arXiv:1706.03762"]}'
    _upload(store, tmp_path, "sources.json", body, "application/json")
    run = review_artifact(store, "sources.json", settings=QUICK).run
    checks = {c.check: c.status for c in run.checks}
    assert checks["citation"] == "skipped" and checks["structure"] == "passed"
    assert not any(f.code.startswith("CITATION_") for f in run.findings)


def test_ref_malformed_json_gets_the_structure_finding(store: Store, tmp_path: Path) -> None:
    # The reference's structure review: ARTIFACT_JSON_INVALID when the JSON does not parse.
    _upload(store, tmp_path, "sources.json", "{ not-json", "application/json")
    run = review_artifact(store, "sources.json", settings=QUICK).run
    assert [f.code for f in run.findings if f.check == "structure"] == ["ARTIFACT_JSON_INVALID"]
    assert run.decision == "REVISE_AND_RETRY"
