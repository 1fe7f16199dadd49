"""The reference's citation rules (seed 002 §4): markers, identifiers, chips, data brackets, the
decision, advice codes and which media types get which check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.app import init_store
from reviewtrail.config import ReviewerSettings, Settings
from reviewtrail.media import JSON_MEDIA_TYPES, NARRATIVE_MEDIA_TYPES, media_kind
from reviewtrail.provenance.artifacts import upload_artifact
from reviewtrail.reviewer import ArtifactReviewRun, check_citations, get_review, review_artifact
from reviewtrail.reviewer._records import CheckResult, ReviewFinding
from reviewtrail.reviewer._specialist import decide
from reviewtrail.store import Store

QUICK = ReviewerSettings(tier="quick")

IDENTIFIERS = [
    "doi:10.1000/xyz",
    "DOI: 10.1000/abc.def",
    "10.5555/12345678",
    "arXiv:1706.03762",
    "arXiv:hep-th/9901001",
    "PMID: 12345678",
    "PMC1234567",
    "PMCID: PMC7654321",
    "Europe PMC: PMC13210248",
    "Europe-pmc:42092972",
    "MED/31452104",
]


def codes(text: str) -> list[str]:
    return [f.code for f in check_citations(text).findings]


# ---------------------------------------------------------------------------------------------
# 1. An identifier with no inline marker anywhere
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("identifier", IDENTIFIERS)
def test_an_identifier_without_any_inline_marker_is_marker_missing(identifier: str) -> None:
    report = check_citations(f"The effect was large.\n\nSource: {identifier}\n")
    assert "CITATION_MARKER_MISSING" in report.codes, report.to_json()
    assert report.decision == "REVISE_AND_RETRY"


@pytest.mark.parametrize("identifier", IDENTIFIERS)
def test_the_same_identifier_with_a_marker_is_accepted(identifier: str) -> None:
    report = check_citations(f"The effect was large [1].\n\n[1] Smith J. Effects. 2020. {identifier}\n")
    assert report.decision == "ACCEPT_AND_PROCEED", report.to_json()


@pytest.mark.parametrize(
    "text",
    [
        "See https://example.org/a for details; doi:10.1000/xyz.",
        "See [the paper](https://doi.org/10.1000/xyz). PMID: 12345678",
        "Read www.example.org/report first.\n\n## References\n1. Report. doi:10.1000/xyz\n",
    ],
)
def test_a_markdown_link_or_bare_url_counts_as_an_inline_marker(text: str) -> None:
    report = check_citations(text)
    assert "CITATION_MARKER_MISSING" not in report.codes, report.to_json()
    assert report.decision == "ACCEPT_AND_PROCEED"


def test_a_url_only_inside_the_reference_list_is_not_an_inline_marker() -> None:
    text = "Large effect.\n\n## References\n1. Smith. https://example.org/paper doi:10.1000/xyz\n"
    assert codes(text) == ["CITATION_MARKER_MISSING"]


@given(st.sampled_from(IDENTIFIERS), st.sampled_from(["", "Intro.\n\n", "# Title\n\nBody text.\n\n"]))
def test_identifier_alone_is_always_marker_missing_and_a_marker_fixes_it(identifier: str, prefix: str) -> None:
    bare = check_citations(f"{prefix}Finding stated. {identifier}\n")
    assert bare.decision == "REVISE_AND_RETRY" and "CITATION_MARKER_MISSING" in bare.codes
    cited = check_citations(f"{prefix}Finding stated [1].\n\n[1] Author A. Title. 2021. {identifier}\n")
    assert not any(c.startswith("CITATION_") for c in cited.codes), cited.to_json()


# ---------------------------------------------------------------------------------------------
# 2. Author-year markers and superscripts are never matched against entries
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Treatment improved survival (Smith, 2020).",
        "Smith et al. (2019) showed the opposite.",
        "Both agree (Smith & Jones, 2019; Lee, 2021).",
        "模型效果显著（张三等，2020）。",
        "Attention helps.¹",
        "Attention helps<sup>2</sup> a lot.",
        "Attention helps.^3",
    ],
)
def test_author_year_and_superscripts_without_a_bibliography_are_accepted(text: str) -> None:
    report = check_citations(text)
    assert report.findings == [], report.to_json()
    assert report.decision == "ACCEPT_AND_PROCEED"


def test_author_year_that_matches_no_entry_is_not_dangling() -> None:
    report = check_citations("As found (Smith, 2020).\n\n## References\n1. Jones A. Other work. 2019.\n")
    assert "CITATION_REFERENCE_MISSING" not in report.codes
    assert report.decision == "ACCEPT_AND_PROCEED"


def test_numeric_and_footnote_markers_are_still_matched() -> None:
    assert codes("Claim [4].") == ["CITATION_REFERENCE_MISSING"]
    assert codes("Claim.[^nope]") == ["CITATION_REFERENCE_MISSING"]


_SURNAMES = st.sampled_from(["Smith", "García", "Nguyen", "O'Brien", "van der Berg", "Müller", "Lee"])


@given(_SURNAMES, st.integers(1900, 2029), st.sampled_from(["", "a", "b"]), st.booleans())
def test_author_year_is_never_reference_missing(surname: str, year: int, suffix: str, et_al: bool) -> None:
    who = f"{surname} et al." if et_al else f"{surname},"
    text = f"The result holds ({who} {year}{suffix}).\n\n## References\n1. Other P. Unrelated. 1999.\n"
    assert "CITATION_REFERENCE_MISSING" not in check_citations(text).codes


# ---------------------------------------------------------------------------------------------
# 3. Provenance chips are never academic markers
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("chip", ["[ev1]", "[EV2]", "[evidence3]", "[Evidence4]", "[artifact5]", "[ARTIFACT6]"])
def test_a_references_list_cited_only_by_chips_is_marker_missing(chip: str) -> None:
    text = f"The rate was high {chip}.\n\n## References\n1. Smith J. A study. 2020. doi:10.1000/xyz\n"
    report = check_citations(text)
    assert "CITATION_MARKER_MISSING" in report.codes, report.to_json()
    assert report.decision == "REVISE_AND_RETRY"
    assert report.stats["provenance_chips"] == 1


@pytest.mark.parametrize("chip", ["[artifact1]", "[Artifact12]", "[ev7]"])
def test_chips_alone_cite_nothing(chip: str) -> None:
    report = check_citations(f"The value is 3 {chip}.")
    assert report.decision == "SKIPPED" and report.findings == []


# ---------------------------------------------------------------------------------------------
# 4. Bracketed number lists that are data
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "| field | values |\n| --- | --- |\n| y_values | [1, 4, 9, 16, 25] |",
        "| run | a_b | [2, 3] |",
        "Squares: [1, 4, 9]",
        "scores = [1, 2, 3]",
        "We kept train_ids [3, 5, 8] for later.",
        "Output:\n\nvalues: [2, 3]",
        "Run `y_values [1, 2]` to see.",
        "```\nmarkers [1, 2]\n```",
        "~~~text\nSee [7].\n~~~",
    ],
)
def test_number_lists_after_names_with_underscores_equals_or_colons_and_code_are_data(text: str) -> None:
    report = check_citations(text)
    assert report.decision == "SKIPPED" and report.findings == [], report.to_json()


@pytest.mark.parametrize(
    "text",
    [
        "| method | [1, 2] |",  # a plain name in a cell: a marker
        "Shown in: [3]",  # a single number after a colon is still a marker
        "As reported [1, 2].",
    ],
)
def test_other_number_lists_are_markers(text: str) -> None:
    assert "CITATION_REFERENCE_MISSING" in codes(text)


@given(
    st.from_regex(r"[a-z]{1,6}_[a-z0-9]{1,6}", fullmatch=True),
    st.lists(st.integers(1, 99), min_size=2, max_size=6, unique=True).map(sorted),
    st.sampled_from(["{name} {nums}", "| {name} | {nums} |", "{name}: {nums}", "x = {nums}", "key: {nums}"]),
)
def test_data_lists_are_never_markers(name: str, numbers: list[int], shape: str) -> None:
    text = shape.format(name=name, nums="[" + ", ".join(map(str, numbers)) + "]")
    report = check_citations(text)
    assert report.stats["markers"]["numeric"] == 0, text


# ---------------------------------------------------------------------------------------------
# 5. The decision and our own advice codes
# ---------------------------------------------------------------------------------------------


def test_a_citation_finding_revises_whatever_its_severity() -> None:
    report = check_citations("A.\n\n## References\n1. X 2020\n2. Y 2021\n")
    [finding] = report.findings
    assert finding.code == "CITATION_MARKER_MISSING"
    assert report.decision == "REVISE_AND_RETRY"


def test_advice_keeps_its_own_codes_and_stays_advisory() -> None:
    uncited = check_citations("A [1].\n\n## References\n1. X 2020\n2. Y 2021\n")
    assert uncited.codes == ["ADVICE_ENTRY_UNCITED"]
    assert uncited.findings[0].severity == "warning" and uncited.decision == "ACCEPT_AND_PROCEED"
    needed = check_citations("The claim is bold [citation needed].")
    assert needed.codes == ["ADVICE_CITATION_NEEDED"] and needed.decision == "ACCEPT_AND_PROCEED"


_PIECES = st.sampled_from(
    [
        "Claim [1].",
        "Claim [2, 3].",
        "Other (Smith, 2020).",
        "See https://x.org/a.",
        "doi:10.1000/q",
        "[citation needed]",
        "Value [ev1].",
        "\n\n## References\n",
        "1. Smith J. 2020.\n",
        "[1] Lee K. 2019. PMID: 123456\n",
        "[^a]",
        "\n[^a]: Note 2021.\n",
        "| a_b | [1, 2] |\n",
        "Plain words.",
    ]
)


@given(st.lists(_PIECES, max_size=10))
def test_decision_is_revise_exactly_when_a_citation_finding_exists(pieces: list[str]) -> None:
    report = check_citations(" ".join(pieces))
    has_citation_finding = any(c.startswith("CITATION_") for c in report.codes)
    assert (report.decision == "REVISE_AND_RETRY") == has_citation_finding
    if report.decision == "SKIPPED":
        assert report.findings == []


def test_the_specialist_decision_revises_on_any_citation_code() -> None:
    checks = [CheckResult(check="citation", status="passed")]
    warning = ReviewFinding(code="CITATION_UNRESOLVED", severity="warning", check="citation", message="m")
    info = ReviewFinding(code="CITATION_CLAIM_NOT_SUPPORTED", severity="info", check="smart", message="m")
    advice = ReviewFinding(code="ADVICE_ENTRY_UNCITED", severity="warning", check="citation", message="m")
    assert decide(checks, [warning]) == "REVISE_AND_RETRY"
    assert decide(checks, [info]) == "REVISE_AND_RETRY"
    assert decide(checks, [advice]) == "ACCEPT_AND_PROCEED"


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


def test_old_records_with_the_former_codes_stay_readable(store: Store, tmp_path: Path) -> None:
    from reviewtrail.ledger import new_record

    _upload(store, tmp_path, "r.md", "A [1].\n\n## References\n1. X 2020\n2. Y 2021\n", "text/markdown")
    first = review_artifact(store, "r.md", settings=QUICK)
    old = {k: v for k, v in first.run.payload_json().items() if v is not None}
    for key in ("reusedFromReviewId", "configuration", "configurationDigest", "contentDigest"):
        old.pop(key, None)
    old["reviewRunId"] = "old-run"
    old["findings"] = [
        {"code": "CITATION_MARKER_MISSING", "severity": "warning", "check": "citation", "message": "uncited"}
    ]
    old["decision"] = "ACCEPT_AND_PROCEED"
    record = new_record(ArtifactReviewRun.read(old), actor="old", privacy="private", subject="artifact:x")
    store.append([record])
    [shown] = get_review(store, "old-run")
    assert shown.run.findings[0].code == "CITATION_MARKER_MISSING" and shown.run.decision == "ACCEPT_AND_PROCEED"
    assert shown.run.reused_from_review_id is None


# ---------------------------------------------------------------------------------------------
# 6. Narrative media types get the citation check; JSON gets a structure check
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("media_type", "kind"),
    [
        ("text/markdown", "narrative"),
        ("Text/Markdown; charset=UTF-8", "narrative"),
        ("text/plain", "narrative"),
        ("text/html;charset=utf-8", "narrative"),
        ("application/x-tex", "narrative"),
        ("application/json", "json"),
        ("application/json; charset=utf-8", "json"),
        ("application/ld+json", "json"),
        ("text/csv", "other"),
        ("text/x-python", "other"),
        ("application/octet-stream", "other"),
        ("", "other"),
        ("markdown", "other"),
    ],
)
def test_media_kinds(media_type: str, kind: str) -> None:
    assert media_kind(media_type) == kind
    assert "text/markdown" in NARRATIVE_MEDIA_TYPES and "application/json" in JSON_MEDIA_TYPES


def test_a_csv_artifact_gets_no_citation_check(store: Store, tmp_path: Path) -> None:
    _upload(store, tmp_path, "t.csv", "id,values\n1,[1, 2]\n2,[7]\n", "text/csv")
    run = review_artifact(store, "t.csv", settings=QUICK).run
    assert {c.check: c.status for c in run.checks}["citation"] == "skipped"
    assert not any(f.code.startswith("CITATION_") for f in run.findings)


def test_invalid_json_is_an_error_and_gets_no_narrative_checks(store: Store, tmp_path: Path) -> None:
    _upload(store, tmp_path, "d.json", '{"claim": "Accuracy is 0.91 [run:nope] [4]."', "application/json")
    run = review_artifact(store, "d.json", settings=QUICK).run
    [finding] = run.findings
    assert (finding.code, finding.severity, finding.check) == ("ARTIFACT_JSON_INVALID", "error", "structure")
    assert "line 1" in finding.message
    checks = {c.check: c.status for c in run.checks}
    assert checks["structure"] == "failed" and checks["citation"] == "skipped"
    assert run.decision == "REVISE_AND_RETRY"


def test_valid_json_passes_the_structure_check_without_narrative_findings(store: Store, tmp_path: Path) -> None:
    body = json.dumps({"claim": "Accuracy is 0.91 [run:nope] [4].", "refs": ["doi:10.1/x"]})
    _upload(store, tmp_path, "d.json", body, "application/json")
    run = review_artifact(store, "d.json", settings=QUICK).run
    assert run.findings == [], run.findings
    assert {c.check: c.status for c in run.checks}["structure"] == "passed"
    assert run.decision == "ACCEPT_AND_PROCEED"
