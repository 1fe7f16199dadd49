"""Quick-tier Citation check (seed 002 §4): corpus cases, one test group per recognizer, properties."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from reviewtrail.reviewer._citations import check_citations, scan
from reviewtrail.reviewer._cite_references import REFERENCE_HEADINGS
from reviewtrail.reviewer._cite_report import (
    ADVICE_CITATION_NEEDED,
    ADVICE_ENTRY_UNCITED,
    CITATION_IDENTIFIER_MISSING,
    CITATION_MARKER_MISSING,
    CITATION_REFERENCE_MISSING,
    CitationReport,
    Finding,
)

CORPUS = Path(__file__).parent / "corpus" / "citations"
CASES = sorted(CORPUS.glob("*.md"))
CODES = {
    CITATION_IDENTIFIER_MISSING,
    CITATION_MARKER_MISSING,
    CITATION_REFERENCE_MISSING,
    ADVICE_CITATION_NEEDED,
    ADVICE_ENTRY_UNCITED,
}


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def markers(text: str) -> dict[str, int]:
    return {k: v for k, v in check_citations(text).stats["markers"].items() if v}


def marker_keys(text: str) -> set[str]:
    return {key for marker in scan(text).markers for key in marker.keys}


def identifiers(text: str) -> dict[str, int]:
    return {k: v for k, v in check_citations(text).stats["identifiers"].items() if v}


def reasons(report: CitationReport) -> list[str]:
    return sorted(f.reason for f in report.findings)


def by_reason(report: CitationReport, reason: str) -> list[Finding]:
    return [f for f in report.findings if f.reason == reason]


# ---------------------------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------------------------


def test_corpus_is_large_enough_and_every_case_has_expectations() -> None:
    assert len(CASES) >= 40
    for md in CASES:
        assert md.with_suffix(".expected.json").is_file(), md.name
    orphans = {p.name.removesuffix(".expected.json") for p in CORPUS.glob("*.expected.json")} - {p.stem for p in CASES}
    assert not orphans
    decisions = {json.loads(md.with_suffix(".expected.json").read_text())["decision"] for md in CASES}
    assert decisions == {"ACCEPT_AND_PROCEED", "REVISE_AND_RETRY", "SKIPPED"}
    assert any(md.stem.startswith("zh_") for md in CASES)


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_corpus_case(path: Path) -> None:
    expected = json.loads(path.with_suffix(".expected.json").read_text(encoding="utf-8"))
    report = check_citations(_read(path))
    got = {"decision": report.decision, "codes": report.codes}
    details = [f"{f.code}/{f.reason} @{f.location.line}:{f.location.column} {f.message}" for f in report.findings]
    assert got == {"decision": expected["decision"], "codes": expected["codes"]}, "\n".join(details)
    doc = report.to_json()
    assert json.loads(json.dumps(doc)) == doc
    assert set(doc) == {"decision", "findings", "stats"}
    for f in doc["findings"]:
        assert {"code", "severity", "message", "location"} <= set(f)
        assert set(f["location"]) == {"line", "column", "excerpt"}


# ---------------------------------------------------------------------------------------------
# Result shape, severities, decision
# ---------------------------------------------------------------------------------------------


def test_json_shape_of_a_finding() -> None:
    report = check_citations("Claim [2].\n\n## References\n[1] Smith 2020.\n")
    doc = report.to_json()
    assert doc["decision"] == "REVISE_AND_RETRY"
    dangling = next(f for f in doc["findings"] if f["reason"] == "dangling_marker")
    assert dangling == {
        "code": "CITATION_REFERENCE_MISSING",
        "severity": "error",
        "message": dangling["message"],
        "location": {"line": 1, "column": 7, "excerpt": "Claim [2]."},
        "marker": "[2]",
        "key": "2",
        "reason": "dangling_marker",
        "occurrences": 1,
    }
    uncited = next(f for f in doc["findings"] if f["reason"] == "uncited_entry")
    assert (uncited["code"], uncited["severity"], uncited["key"], uncited["marker"]) == (
        "ADVICE_ENTRY_UNCITED",
        "warning",
        "1",
        None,
    )
    assert uncited["location"]["line"] == 4
    # to_json copies: mutating it does not touch the report
    doc["stats"]["markers"]["numeric"] = 99
    assert report.stats["markers"]["numeric"] == 1


@pytest.mark.parametrize(
    ("text", "code", "severity", "reason"),
    [
        (
            "A [3].\n\n## References\n[1] X 2020.\n[2] Y 2021.\n[3]\n",
            CITATION_IDENTIFIER_MISSING,
            "error",
            "empty_entry",
        ),
        ("A [1].\n\n## References\n[1] TBD\n", CITATION_IDENTIFIER_MISSING, "error", "placeholder_entry"),
        ("A [1].\n\n## References\n[1] X. DOI: TODO\n", CITATION_IDENTIFIER_MISSING, "error", "placeholder_identifier"),
        ("A [citation needed].", ADVICE_CITATION_NEEDED, "warning", "placeholder_marker"),
        ("A [paper](TODO).", CITATION_IDENTIFIER_MISSING, "error", "placeholder_link"),
        ("A [2].", CITATION_REFERENCE_MISSING, "error", "dangling_marker"),
        ("A.\n\n## References\n\n", CITATION_REFERENCE_MISSING, "error", "empty_references"),
        ("A [1].\n\n## References\n1. X 2020\n2. Y 2021\n", ADVICE_ENTRY_UNCITED, "warning", "uncited_entry"),
        ("A.\n\n## References\n1. X 2020\n2. Y 2021\n", CITATION_MARKER_MISSING, "warning", "no_inline_markers"),
    ],
)
def test_severity_of_each_rule(text: str, code: str, severity: str, reason: str) -> None:
    report = check_citations(text)
    found = by_reason(report, reason)
    assert len(found) == 1, report.to_json()
    assert (found[0].code, found[0].severity) == (code, severity)
    citation = any(f.code.startswith("CITATION_") for f in report.findings)
    assert report.decision == ("REVISE_AND_RETRY" if citation else "ACCEPT_AND_PROCEED")


def test_decisions() -> None:
    assert check_citations("").decision == "SKIPPED"
    assert check_citations("Nothing cited here.").decision == "SKIPPED"
    assert check_citations("Good [1].\n\n[1] Smith J. 2020.").decision == "ACCEPT_AND_PROCEED"
    warn = check_citations("Good [1].\n\n## References\n1. Smith J. 2020\n2. Unused 2021\n")
    assert warn.decision == "ACCEPT_AND_PROCEED"
    assert warn.codes == [ADVICE_ENTRY_UNCITED]
    assert check_citations("Bad [7].").decision == "REVISE_AND_RETRY"
    # an identifier alone is a source: accepted, nothing to complain about
    assert check_citations("See https://example.org/a.").decision == "ACCEPT_AND_PROCEED"
    # chips alone are not academic citations
    assert check_citations("Value 3 [ev1] [execution:run-1].").decision == "SKIPPED"


def test_dangling_marker_reported_once_per_key_with_occurrences() -> None:
    report = check_citations("A [4]. B [4]. C [4, 5]. D [^x] and [^x].")
    found = {f.key: f for f in report.findings}
    assert set(found) == {"4", "5", "^x"}
    assert found["4"].occurrences == 3
    assert found["4"].location.column == 3
    assert found["^x"].occurrences == 2
    assert "cited 3 times" in found["4"].message


def test_findings_are_ordered_by_location() -> None:
    report = check_citations(_read(CORPUS / "en_mixed_errors.md"))
    positions = [(f.location.line, f.location.column) for f in report.findings]
    assert positions == sorted(positions)


def test_locations_and_excerpt() -> None:
    long_line = "word " * 60 + "[9] tail " + "more " * 40
    report = check_citations("first line\n" + long_line)
    (f,) = report.findings
    assert f.location.line == 2
    assert f.location.column == long_line.index("[9]") + 1
    assert "[9]" in f.location.excerpt
    assert len(f.location.excerpt) <= 122
    assert f.location.excerpt.startswith("…") and f.location.excerpt.endswith("…")


def test_crlf_text_gives_the_same_result() -> None:
    for path in CASES[:20]:
        text = _read(path)
        lf = check_citations(text)
        crlf = check_citations(text.replace("\n", "\r\n"))
        assert (crlf.decision, crlf.codes) == (lf.decision, lf.codes), path.name
        assert [f.location.line for f in crlf.findings] == [f.location.line for f in lf.findings]
        assert all("\r" not in f.location.excerpt for f in crlf.findings)


# ---------------------------------------------------------------------------------------------
# Recognizers: inline markers
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("A [1].", {"1"}),
        ("A [1, 2].", {"1", "2"}),
        ("A [1-3].", {"1", "2", "3"}),
        ("A [1–3].", {"1", "2", "3"}),
        ("A [1,3-5].", {"1", "3", "4", "5"}),
        ("A [2; 6].", {"2", "6"}),
        ("Paris[1] is big.", {"1"}),
        ("A.[12][13]", {"12", "13"}),
        ("See [the study][4].", {"4"}),
        ("A [ 7 ].", {"7"}),
    ],
)
def test_numeric_markers(text: str, keys: set[str]) -> None:
    report = check_citations(text)
    assert {f.key for f in report.findings} == keys
    assert report.stats["markers"]["numeric"] >= 1


@pytest.mark.parametrize(
    "text",
    [
        "CI [0.52, 0.91].",
        "drift [3.2 ± 0.1] mm",
        "range [-1, 1]",
        "range [0, 1]",
        "bins [5, 3, 8]",
        "dupes [1, 1, 2]",
        "spaces [1 2 3]",
        "a year [2020]",
        "huge range [1-500]",
        "leading zero [01]",
        "matrix [[1, 2], [3, 4]]",
        "assignment w = [1, 2, 3]",
        "set {[1, 2]}",
        "interval t ∈ [1, 5]",
        "index x[1] and m[1][2]",
        "underscore my_list[2]",
        "call L = List([1, 3, 5])",
        "call f([1, 2]) here",
        "- [x] checkbox",
        "- [ ] checkbox",
        "[1](https://example.org) is a link",
    ],
)
def test_numeric_data_is_not_a_marker(text: str) -> None:
    assert markers(text).get("numeric", 0) == 0


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("水【1】。", {"1"}),
        ("水［2，3］。", {"2", "3"}),
        ("水〔1-3〕。", {"1", "2", "3"}),
        ("水【１】。", {"1"}),
        ("水【1、4】。", {"1", "4"}),
    ],
)
def test_fullwidth_markers(text: str, keys: set[str]) -> None:
    report = check_citations(text)
    assert report.stats["markers"]["fullwidth"] == 1
    assert {f.key for f in report.findings} == keys


def test_footnote_markers_and_definitions() -> None:
    text = "A[^One] and B[^two].\n\n[^one]: Smith 2020.\n[^two]: Jones.\n    continued on a second line\n"
    report = check_citations(text)
    assert report.findings == []
    assert report.stats["markers"]["footnote"] == 2
    assert report.stats["reference_entries"] == 2
    dangling = check_citations("A[^missing].")
    assert dangling.findings[0].key == "^missing"
    assert "has no definition" in dangling.findings[0].message


def test_inline_notes_are_self_contained() -> None:
    report = check_citations("A claim.^[Smith 2020, p. 3.]")
    assert (report.decision, report.stats["markers"]["inline_note"]) == ("ACCEPT_AND_PROCEED", 1)
    assert check_citations("A claim.^[TODO]").codes == [ADVICE_CITATION_NEEDED]
    assert marker_keys("A claim.^[2]") == {"2"}  # superscript numeric
    assert check_citations("A claim.^[2]").stats["markers"]["superscript"] == 1


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("X (Smith, 2020).", {"smith 2020"}),
        ("X (Smith et al., 2020a).", {"smith 2020a"}),
        ("X (Smith & Jones, 2019; Lee, 2021).", {"smith 2019", "lee 2021"}),
        ("X (Smith, Jones, & Lee, 2019).", {"smith 2019"}),
        ("X (see Smith, 2020, p. 4).", {"smith 2020"}),
        ("X (e.g., van der Berg, 2018).", {"van der berg 2018"}),
        ("X (Smith, n.d.).", {"smith n.d."}),
        ("X [Smith et al., 2020].", {"smith 2020"}),
        ("Smith et al. (2020) found X.", {"smith 2020"}),
        ("Smith and Jones (2019) found X.", {"smith 2019"}),
        ("Smith & Jones (2019, 2021) found X.", {"smith 2019", "smith 2021"}),
        ("研究显示（张三，2020）。", {"张三 2020"}),
        ("研究显示（张三等，2020）。", {"张三 2020"}),
        ("，张三等（2020）指出。", {"张三 2020"}),
    ],
)
def test_author_year_markers(text: str, keys: set[str]) -> None:
    assert marker_keys(text) == keys
    report = check_citations(text)
    assert report.findings == [], "author-year markers are never matched against entries"
    assert report.decision == "ACCEPT_AND_PROCEED"


@pytest.mark.parametrize(
    "text",
    [
        "Apple (2020) revenue grew.",  # single-name narrative: counted only when it resolves
        "It happened in (March, 2020).",
        "In March (2021) it rained.",
        "The survey (n = 2020) was long.",
        "The period (2019–2021) was long.",
        "Version (Python 3.11, 2023) is fine.",
        "X (Smith 2020).",  # single author without a comma
        "X (smith, 2020).",  # lower-case is not a name
    ],
)
def test_not_author_year(text: str) -> None:
    assert markers(text).get("author_year", 0) == 0
    assert check_citations(text).decision == "SKIPPED"


def test_single_name_narrative_counts_when_it_resolves() -> None:
    text = "Miller (1956) said seven.\n\n## References\n- Miller, G. A. (1956). The magical number seven.\n"
    report = check_citations(text)
    assert (report.decision, report.findings, report.stats["markers"]["author_year"]) == ("ACCEPT_AND_PROCEED", [], 1)


def test_author_year_resolution_rules() -> None:
    refs = "\n\n## References\n- Garcia, M. (2020a). One.\n- Garcia, M. (2020b). Two.\n"
    assert check_citations("X (Garcia, 2020a; Garcia, 2020b)." + refs).findings == []
    # a bare year matches every suffixed entry of that year
    assert check_citations("X (Garcia, 2020)." + refs).findings == []
    # the suffix must match when the marker has one (an unmatched marker leaves the entries uncited)
    assert len(by_reason(check_citations("X (Garcia, 2020c)." + refs), "uncited_entry")) == 2
    # the surname must appear as a word
    assert len(by_reason(check_citations("X (Garc, 2020a)." + refs), "uncited_entry")) == 2
    # never reported as dangling
    assert not by_reason(check_citations("X (Garc, 2020a)." + refs), "dangling_marker")


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("Aspirin works.¹", {"1"}),
        ("Aspirin works¹²", {"12"}),
        ("Aspirin works.²⁻⁴", {"2", "3", "4"}),
        ("Aspirin works.¹,³", {"1", "3"}),
        ("Aspirin works<sup>4</sup>.", {"4"}),
        ("Aspirin works<sup>[1,2]</sup>.", {"1", "2"}),
        ("Aspirin works^5.", {"5"}),
        ("Aspirin works^5^.", {"5"}),
        ("阿司匹林有效¹。", {"1"}),
    ],
)
def test_superscript_markers(text: str, keys: set[str]) -> None:
    report = check_citations(text)
    assert report.stats["markers"]["superscript"] == 1
    assert marker_keys(text) == keys
    assert report.findings == [], "superscripts are never matched against entries"


@pytest.mark.parametrize(
    "text", ["20 m²", "50 cm³", "10⁶ cells", "E = mc²", "(a+b)²", "x^2 + y^2", "10^6", "x<sup>2</sup>", "2019^5"]
)
def test_exponents_are_not_superscript_markers(text: str) -> None:
    assert check_citations(text).decision == "SKIPPED"


def test_numeric_and_superscript_markers_share_one_namespace() -> None:
    text = "A [1] and B.² and Cells<sup>3</sup>.\n\n## References\n1. One 2001\n2. Two 2002\n3. Three 2003\n"
    assert check_citations(text).findings == []


# ---------------------------------------------------------------------------------------------
# Recognizers: reference sections and entries
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "heading",
    [
        "# References",
        "## Bibliography",
        "###### Works Cited",
        "## 7. References",
        "## VII. References",
        "**References**",
        "**Sources:**",
        "__参考文献__",
        "References:",
        "Citations",
        "Literature",
        "参考文献",
        "参考文献：",
        "## 引用文献",
        "参考资料",
        "文献",
        "## 六、参考文献",
        "📚 Sources",
        "References\n==========",
        "> ## References",
    ],
)
def test_reference_headings(heading: str) -> None:
    prefix = "> " if heading.startswith(">") else ""
    report = check_citations(f"Claim [1].\n\n{heading}\n{prefix}1. Smith J. 2020.\n")
    assert report.stats["reference_sections"] == 1
    assert (report.decision, report.findings) == ("ACCEPT_AND_PROCEED", [])


@pytest.mark.parametrize(
    "line", ["- References", "1. References", "## Sources of error", "References of the past were many.", "## Notes"]
)
def test_not_reference_headings(line: str) -> None:
    assert check_citations(f"Text.\n\n{line}\n\nMore text.\n").stats["reference_sections"] == 0


def test_every_documented_heading_keyword_opens_a_section() -> None:
    for keyword in sorted(REFERENCE_HEADINGS):
        report = check_citations(f"## {keyword}\n\n[1] Smith 2020.\n")
        assert report.stats["reference_sections"] == 1, keyword


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ("[3] Smith J. 2020.", "3"),
        ("[3]: https://example.org/x", "3"),
        ("【3】 张三. 2020.", "3"),
        ("3. Smith J. 2020.", "3"),
        ("3) Smith J. 2020.", "3"),
        ("3、张三. 2020.", "3"),
        ("(3) Smith J. 2020.", "3"),
        ("[^3]: Smith J. 2020.", "^3"),
    ],
)
def test_numbered_entry_forms(entry: str, key: str) -> None:
    marker = "[^3]" if key.startswith("^") else "[3]"
    report = check_citations(f"Claim {marker}.\n\n## References\n{entry}\n")
    assert report.findings == [], report.to_json()
    uncited = check_citations(f"Claim [9].\n\n## References\n{entry}\n")
    assert {f.key for f in by_reason(uncited, "uncited_entry")} == {key}


def test_entry_continuation_lines_and_section_end() -> None:
    text = (
        "A [1] and [2].\n\n## References\n"
        "1. Smith J. Title.\n   Journal. 2020. DOI: TODO\n"
        "2. Lee K.\nlazy continuation 2021.\n\n"
        "Thanks for reading! Let me know.\n"
    )
    report = check_citations(text)
    assert report.stats["reference_entries"] == 2
    (f,) = report.findings
    assert (f.reason, f.key, f.location.line) == ("placeholder_identifier", "1", 4)


def test_section_ends_at_same_level_heading_but_not_at_a_subheading() -> None:
    text = "A [1] [2].\n\n## References\n### Articles\n1. One 2001\n### Books\n2. Two 2002\n## Appendix\n3. Data 2003\n"
    report = check_citations(text)
    assert report.stats["reference_entries"] == 2
    assert report.findings == []


def test_plain_entries_need_to_look_like_references() -> None:
    text = (
        "Per (Smith, 2020).\n\nReferences\n\nThe following works were consulted:\n"
        "Smith, J. (2020). A title. Journal.\nJones, K. (2019). Another.\n"
    )
    report = check_citations(text)
    assert report.stats["reference_entries"] == 2
    assert reasons(report) == ["uncited_entry"]


def test_headingless_numbered_entries_need_text() -> None:
    assert check_citations("Claim [1].\n\n[1] Smith J. 2020.\n").findings == []
    assert by_reason(check_citations("Claim [1].\n\n[1]\n"), "dangling_marker")
    bullets = check_citations("【1】背景介绍。\n【2】主要结论。\n")
    assert (bullets.decision, bullets.stats["reference_entries"]) == ("SKIPPED", 0)


def test_numeric_markers_resolve_to_the_nth_bullet_without_numbered_entries() -> None:
    text = "A [1] B [2] C [3].\n\nSources:\n- Alpha 2020\n- Beta 2021\n"
    report = check_citations(text)
    assert [f.key for f in report.findings] == ["3"]


def test_lazy_ordered_list_is_renumbered() -> None:
    text = "A [1] B [2] C [3].\n\n## References\n1. One 2001\n1. Two 2002\n1. Three 2003\n"
    assert check_citations(text).findings == []


def test_empty_section_and_placeholder_only_section() -> None:
    empty = check_citations("Text.\n\n## References\n\n## Next\nMore.\n")
    assert reasons(empty) == ["empty_references"]
    only_placeholder = check_citations("正文。\n\n参考文献：\n\n待补充\n")
    assert reasons(only_placeholder) == ["empty_references"]
    assert "placeholder" in only_placeholder.findings[0].message
    prose_only = check_citations("Text.\n\n## Sources\n\nSee the links above.\n")
    assert reasons(prose_only) == ["empty_references"]


def test_no_inline_markers_is_one_warning_not_one_per_entry() -> None:
    text = "Plain answer.\n\n## References\n1. A 2001\n2. B 2002\n3. C 2003\n"
    report = check_citations(text)
    (f,) = report.findings
    assert (f.reason, f.occurrences, f.location.line) == ("no_inline_markers", 3, 3)


def test_entries_cited_by_a_body_link_or_identifier() -> None:
    text = (
        "See [the study](https://doi.org/10.1000/ABC) and arXiv:1706.03762v2.\n\n## References\n"
        "- Study. doi:10.1000/abc\n- Transformers. https://arxiv.org/abs/1706.03762\n"
    )
    assert check_citations(text).findings == []


# ---------------------------------------------------------------------------------------------
# Recognizers: identifiers, links, placeholders, chips, masking
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("see 10.1038/nature14539.", "doi"),
        ("see doi:10.1038/nature14539", "doi"),
        ("see DOI: 10.1016/S0140-6736(15)60721-8.", "doi"),
        ("see https://doi.org/10.1038/nature14539", "doi"),
        ("see https://dx.doi.org/10.1038/nature14539", "doi"),
        ("see arXiv:2401.01234", "arxiv"),
        ("see arXiv: 1706.03762v5", "arxiv"),
        ("see hep-th/9901001", "arxiv"),
        ("see math.GT/0309136", "arxiv"),
        ("see https://arxiv.org/abs/1706.03762", "arxiv"),
        ("see PMID: 31978945", "pmid"),
        ("see PMID 31978945", "pmid"),
        ("see https://pubmed.ncbi.nlm.nih.gov/31978945/", "pmid"),
        ("see PMC1234567", "pmc"),
        ("see PMCID: PMC1234567", "pmc"),
        ("see https://www.ncbi.nlm.nih.gov/pmc/articles/PMC7092803/", "pmc"),
        ("see europepmc.org/article/MED/32109013", "europepmc"),
        ("see https://europepmc.org/abstract/MED/32109013", "europepmc"),
        ("see MED/12345", "europepmc"),
        ("see PPR/123456", "europepmc"),
        ("see https://example.org/page?id=3", "url"),
        ("see www.example.org/page", "url"),
        ("see [a page](https://example.org/x)", "url"),
        ("see <https://example.org/x>", "url"),
    ],
)
def test_identifiers(text: str, kind: str) -> None:
    assert identifiers(text) == {kind: 1}
    report = check_citations(text)
    if re.search(r"https?://|www\.|\]\(", text):  # a bare URL or a link is itself an inline marker
        assert (report.decision, report.codes) == ("ACCEPT_AND_PROCEED", [])
    else:  # an identifier with no inline marker anywhere
        assert (report.decision, report.codes) == ("REVISE_AND_RETRY", [CITATION_MARKER_MISSING])


@pytest.mark.parametrize(
    "text",
    [
        "Version 10.12 is out.",
        "arXiv is a preprint server.",
        "The PMID field is numeric.",
        "hep-th/99 is short.",
        "see [a file](results/table.csv)",
        "write to [me](mailto:me@example.org)",
        "![a figure](https://example.org/fig.png)",
        "see [below](#results)",
    ],
)
def test_not_identifiers(text: str) -> None:
    report = check_citations(text)
    assert report.stats["identifiers"] == dict.fromkeys(report.stats["identifiers"], 0)
    assert report.decision == "SKIPPED"


@pytest.mark.parametrize(
    "text",
    [
        "Smith 2020. DOI: TODO",
        "Smith 2020. PMID: tbd",
        "Smith 2020. arXiv: ???",
        "Smith 2020. doi: xxx",
        "Smith 2020. doi:10.xxxx/xxxxx",
        "Smith 2020. DOI：待补充",
        "Smith 2020. DOI: <doi>",
        "Smith 2020. ISBN: unknown",
        "Smith 2020. DOI:",
        "It is true [citation needed].",
        "It is true [source needed].",
        "It is true [needs citation].",
        "It is true (citation needed).",
        "It is true [?].",
        "It is true [TODO].",
        "It is true [cite].",
        "It is true [待补充].",
        "It is true 【待补充】.",
        "It is true [需要引用].",
        "It is true [来源请求].",
        "It is true (Author, Year).",
        "It is true (Author et al., 2020).",
        "It is true (Smith, YYYY).",
        "It is true (Name, 20XX).",
        "It is true （作者，年份）.",
        "It is true [Author, Year].",
        "It is true [citation:TODO].",
        "It is true [doi:TBD].",
        "It is true [paper](TODO).",
        "It is true [paper]().",
        "It is true [paper](#).",
        "It is true [paper](https://doi.org/TODO).",
    ],
)
def test_placeholders(text: str) -> None:
    report = check_citations(text)
    if by_reason(report, "placeholder_marker"):  # a bracketed request or template marker: advice
        assert report.codes == [ADVICE_CITATION_NEEDED], report.to_json()
        assert report.decision == "ACCEPT_AND_PROCEED"
    else:
        assert report.codes == [CITATION_IDENTIFIER_MISSING], report.to_json()
        assert report.decision == "REVISE_AND_RETRY"


@pytest.mark.parametrize(
    "text",
    [
        "Release date: TBD",
        "TODO: write the intro",
        "[TODO] write the intro",
        "- [TBD] decide",
        "待补充的内容很多",
        "The DOI is assigned later.",
        "Source: our own survey.",
    ],
)
def test_not_placeholders_in_body_text(text: str) -> None:
    assert check_citations(text).decision == "SKIPPED"


@pytest.mark.parametrize(
    "entry",
    [
        "[1] Smith J. Title. TBD.",
        "[1] Smith J. Title. Journal, vol. xxx, 2020.",
        "[1] Smith J. Title. URL: TODO",
        "[1] Smith J. Title. 链接：待补充",
        "[1] Author, A. (Year). Title.",
        "[1] Smith J. Title [citation needed].",
        "[1] Smith J. [Title](TODO).",
    ],
)
def test_placeholders_inside_entries(entry: str) -> None:
    report = check_citations(f"Claim [1].\n\n## References\n{entry}\n")
    (f,) = report.findings
    assert (f.code, f.reason, f.key) == (CITATION_IDENTIFIER_MISSING, "placeholder_identifier", "1")


def test_entry_that_is_only_a_placeholder_is_not_also_uncited() -> None:
    report = check_citations("Claim [1].\n\n## References\n[1] Smith 2020.\n[2] TBD\n")
    assert reasons(report) == ["placeholder_entry"]


@pytest.mark.parametrize(
    ("text", "chips"),
    [
        ("v [ev1]", 1),
        ("v [evidence2]", 1),
        ("v [ev:run-1]", 1),
        ("v [ev]", 1),
        ("v [EV-3]", 1),
        ("v [execution:run-17]", 1),
        ("v [mcp-record:GSE12345]", 1),
        ("v [paper:abc#p3]", 1),
        ("v [ev1, ev2]", 1),
        ("v [ev1][ev2]", 2),
        ("v 【4:0†source】", 1),
        ("v [doi:10.1038/x]", 1),
    ],
)
def test_provenance_chips(text: str, chips: int) -> None:
    report = check_citations(text)
    assert report.stats["provenance_chips"] == chips
    assert report.decision == "SKIPPED"


def test_not_chips() -> None:
    assert check_citations("v [event]").stats["provenance_chips"] == 0
    assert check_citations("v [https://example.org/x]").stats["identifiers"]["url"] == 1
    assert check_citations("v [ev1](https://example.org/x)").stats["links"] == 1


@pytest.mark.parametrize(
    "wrapped",
    [
        "```\nClaim [1]. (Smith, 2020) [citation needed] doi:10.1/x\n```",
        "~~~md\nClaim [1].\n## References\n[1] TODO\n~~~",
        "   ```python\n   x = [1]  # [2]\n   ```",
        "```\nunclosed fence runs to the end [1]\n\n## References\n",
        "Inline `[1]` and ``a ` [2] ``.",
        "<!-- [1] (Smith, 2020) -->",
        "<code>[1]</code> and <pre>\n[2]\n</pre>",
        "Math $[1, 2]$ and $$\n[3]\n$$ and \\[ [4] \\] and \\( [5] \\).",
        "> ```\n> [1]\n> ```",
        ">>> sorted([3, 1, 2])\n[1, 2, 3]\n>>> f(1)\n[2]",
    ],
)
def test_code_comments_and_math_are_masked(wrapped: str) -> None:
    report = check_citations(wrapped)
    assert report.decision == "SKIPPED", report.to_json()


def test_unmatched_backtick_is_literal() -> None:
    # a lone backtick does not open a code span, so the marker after it still counts
    assert check_citations("A ` tick and [1].").codes == [CITATION_REFERENCE_MISSING]
    # a code span does not cross a paragraph break
    assert check_citations("A `tick\n\nand [1]. `").codes == [CITATION_REFERENCE_MISSING]


def test_dollar_amounts_are_not_math() -> None:
    assert check_citations("It costs $5 and $10 [1].").codes == [CITATION_REFERENCE_MISSING]


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------

_PLAIN_ALPHABET = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \n\t.,;:!?'\"-—…"
    + "水火山的是了在人有我他这中大为上个国和地到以说时要就出会可也你对生能而子那得于着下自之年过发后作里"
)
_IDENTIFIER_WORDS = re.compile(r"(?i)doi|pmid|pmc|arxiv|isbn|issn|www|http|ftp|med|ppr")


def _normalized_lines(text: str) -> set[str]:
    return {re.sub(r"^[^\w]+|[^\w]+$", "", " ".join(line.split())).casefold() for line in text.split("\n")}


@given(st.text(alphabet=_PLAIN_ALPHABET, max_size=400))
def test_text_without_brackets_identifiers_or_headings_is_skipped(text: str) -> None:
    assume(not _IDENTIFIER_WORDS.search(text))
    assume(not (_normalized_lines(text) & REFERENCE_HEADINGS))
    report = check_citations(text)
    assert report.decision == "SKIPPED"
    assert report.findings == []


@given(
    st.sets(st.integers(1, 40), min_size=1, max_size=8),
    st.sets(st.integers(1, 40), max_size=8),
    st.sampled_from(["[{}]", "【{}】", "<sup>{}</sup>", "^{}"]),
    st.sampled_from(["## References\n", "**Sources**\n", "参考文献\n", ""]),
    st.sampled_from(["[{}] Author {} et al. Title. 2020.", "{}. Author {} Title, 2020.", "【{}】作者{}. 标题. 2020."]),
)
def test_adding_the_missing_entry_removes_the_dangling_marker(
    cited: set[int], listed: set[int], marker: str, heading: str, entry: str
) -> None:
    if not heading:
        entry = "[{}] Author {} et al. Title. 2020."  # headingless lists are [n] lines only
    sep = "" if marker.startswith(("<", "^")) else " "
    body = " ".join(f"Claim number {k} holds{sep}{marker.format(k)}." for k in sorted(cited))

    def document(entries: set[int]) -> str:
        lines = "\n".join(entry.format(k, k) for k in sorted(entries))
        return f"{body}\n\n{heading}{lines}\n"

    report = check_citations(document(listed))
    dangling = {f.key for f in report.findings if f.code == CITATION_REFERENCE_MISSING}
    superscript = marker.startswith(("<", "^"))  # superscripts are never matched against entries
    if listed:
        assert dangling == (set() if superscript else {str(k) for k in cited - listed}), report.to_json()
    fixed = check_citations(document(listed | cited))
    assert not [f for f in fixed.findings if f.code == CITATION_REFERENCE_MISSING], fixed.to_json()
    uncited = {f.key for f in fixed.findings if f.reason == "uncited_entry"}
    assert uncited == {str(k) for k in listed - cited}
    assert fixed.decision == "ACCEPT_AND_PROCEED"


_DOCUMENTS = [_read(p) for p in CASES]
_ANY_TEXT = st.lists(
    st.sampled_from([*"ab1 2\n[]()^【】#*-:.,`~$<>!/\\x", "[1]", "(Smith, 2020)", "## References\n", "TBD"]),
    max_size=120,
).map("".join)


def _fence_for(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


@given(st.one_of(st.sampled_from(_DOCUMENTS), _ANY_TEXT), st.sampled_from(["", "markdown", "text"]))
def test_wrapping_any_document_in_a_fence_skips_it(document: str, info: str) -> None:
    fence = _fence_for(document)
    report = check_citations(f"{fence}{info}\n{document}\n{fence}\n")
    assert report.decision == "SKIPPED", report.to_json()
    assert report.findings == []


@given(st.one_of(st.sampled_from(_DOCUMENTS), _ANY_TEXT, st.text(max_size=300)), st.integers(1, 3))
def test_leading_blank_lines_only_shift_locations(document: str, shift: int) -> None:
    before = check_citations(document)
    after = check_citations("\n" * shift + document)
    assert (after.decision, after.codes) == (before.decision, before.codes)
    assert [f.location.line for f in after.findings] == [f.location.line + shift for f in before.findings]


@given(st.one_of(st.text(max_size=500), _ANY_TEXT, st.sampled_from(_DOCUMENTS)))
def test_never_raises_and_the_report_is_consistent(text: str) -> None:
    report = check_citations(text)
    doc: dict[str, Any] = report.to_json()
    assert json.loads(json.dumps(doc)) == doc
    has_citation_finding = any(f.code.startswith("CITATION_") for f in report.findings)
    if report.decision == "SKIPPED":
        assert report.findings == []
    else:
        assert (report.decision == "REVISE_AND_RETRY") == has_citation_finding
    assert all(f.severity == "warning" for f in report.findings if f.code.startswith("ADVICE_"))
    line_count = text.count("\n") + 1
    for f in report.findings:
        assert f.code in CODES
        assert f.severity in {"error", "warning"}
        assert 1 <= f.location.line <= line_count
        assert f.location.column >= 1
        assert f.occurrences >= 1


# ---------------------------------------------------------------------------------------------
# Performance sanity (printed, not asserted)
# ---------------------------------------------------------------------------------------------


def test_one_megabyte_document() -> None:
    chunk = (
        _read(CORPUS / "en_mixed_reply.md").split("## References")[0]
        + _read(CORPUS / "en_author_year_ok.md").split("## Bibliography")[0]
    )
    chunk += "Footnoted[^n] and superscripted.¹ 全角【2】。 Data [0.5, 0.9] and `code [9]`.\n\n"
    parts: list[str] = []
    size = 0
    while size < 1_000_000:
        parts.append(chunk)
        size += len(chunk)
    references = (
        "\n## References\n\n[1] Rao P. Slopes. 2019. https://doi.org/10.2134/agronj2018.01.0001\n"
        "[2] Chen L, et al. Meta-analysis. 2021. PMID: 33445566\n"
        + "".join(
            f"- {line}\n"
            for line in _read(CORPUS / "en_author_year_ok.md").split("## Bibliography")[1].strip().splitlines()
        )
        + "\n[^n]: A note.\n"
    )
    text = "".join(parts) + references
    report = check_citations(text)  # its speed: bench/run.py --only check_citations
    assert report.decision == "ACCEPT_AND_PROCEED", report.codes[:10]
