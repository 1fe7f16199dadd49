"""Numeric claims: what counts as a number to back, table cells, and the review's findings on them."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.app import init_store
from reviewtrail.config import ReviewerSettings, Settings
from reviewtrail.evidence._claims import extract_claims, is_numeric
from reviewtrail.store import Store

QUICK = ReviewerSettings(tier="quick")


def _numeric(text: str) -> list[tuple[str, str]]:
    from reviewtrail.evidence import numeric_claims

    return [(n.text, n.support) for n in numeric_claims(text)]


# --- the detector ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "numeric"),
    [
        ("The 2024 study reported this association [1].", False),
        ("The 2019 survey and the 2021 census agree.", False),
        ("In 2024 the rate fell.", False),
        ("2024 patients were enrolled.", True),
        ("As shown before [12], [3-5], [7, 9] and [^2].", False),
        ("Indexed as PMID: 12345678, arXiv:2401.01234 and 10.1000/182.", False),
        ("All pooled odds ratios, 95% CIs, and I² values are not extractable.", False),
        ("The 95% confidence interval was wide.", False),
        ("About 95% of samples passed.", True),
        ("TP53 mutation frequency was 39.7% [1].", True),
    ],
)
def test_numeric_rule(sentence: str, numeric: bool) -> None:
    assert is_numeric(sentence) is numeric


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("### 3.1 Results\n", []),
        ("## 2. Methods\n\n# IV. Discussion\n", []),
        ("# Accuracy rose to 95%\n", [("Accuracy rose to 95%", "none")]),
        ("> About 60% of cancers carry it.\n>> Nested 5%.\n", []),
        ("> Quoted 60%.\nThe measured rate was 39.7%.\n", [("The measured rate was 39.7%.", "none")]),
        ("[1] Example et al. (2024). PMID: 12345678\n", []),
        ("## References\n\n1. Smith J. Nature 2020; 581: 434-443.\n2. Doe A. 2019.\n", []),
        ("## 参考文献\n\n[1] 张三. 2020, 12(3): 45-67.\n", []),
        ("Rose 5% [ev:run-1]. Fell 3% [2]. Dropped 2%.\n",
         [("Rose 5% [ev:run-1].", "cited"), ("Fell 3% [2].", "literature"), ("Dropped 2%.", "none")]),
        ("It was 39.7% [evidence1].", [("It was 39.7% [evidence1].", "cited")]),
        ("It was 39.7% [artifact1].", [("It was 39.7% [artifact1].", "cited")]),
        ("Rate 4% (Smith et al., 2020).", [("Rate 4% (Smith et al., 2020).", "literature")]),
        ("TP53 mutation frequency was 39.7%（张三等(2024, PMID: 12345678)）。",
         [("TP53 mutation frequency was 39.7%（张三等(2024, PMID: 12345678)）。", "literature")]),
        ("Rate 4% per [the survey](https://x.org/s).", [("Rate 4% per [the survey](https://x.org/s).", "literature")]),
    ],
)  # fmt: skip
def test_numeric_claims(text: str, expected: list[tuple[str, str]]) -> None:
    assert _numeric(text) == expected


TABLE = "| Metric | 2023 | Source |\n|---|:--:|---|\n| Accuracy | 0.91 | [ev1] |\n| Recall | 0.75 [EV2] | x |\n"


def test_each_table_cell_is_its_own_claim() -> None:
    assert _numeric(TABLE) == [("0.91", "none"), ("0.75 [EV2]", "cited")]
    claims = extract_claims(TABLE)
    assert [(c.text, [x.raw for x in c.citations], c.numeric) for c in claims] == [
        ("[ev1]", ["[ev1]"], False),
        ("0.75 [EV2]", ["[EV2]"], True),
    ]
    for c in claims:
        assert TABLE[c.sentence_start : c.sentence_end] == c.text


def test_a_pipe_inside_code_or_a_citation_or_escaped_does_not_split_a_cell() -> None:
    text = "| a `x|y` 5% [ev:p|q] | 3\\|4 kg |\n"
    assert [c.text for c in extract_claims(text)] == ["a `x|y` 5% [ev:p|q]"]
    assert _numeric(text) == [("a `x|y` 5% [ev:p|q]", "cited"), ("3\\|4 kg", "none")]


# --- properties --------------------------------------------------------------------------------------

_YEAR_FORMS = ["in {y}", "The {y} study", "the {y} survey", "(Smith, {y})", "since {y}", "Smith et al. {y}",
               "during {y}", "({y})", "as of {y}", "the {y} guidelines"]  # fmt: skip
_WORDS = st.text(string.ascii_lowercase, min_size=1, max_size=8)


@given(st.integers(1800, 2099), st.sampled_from(_YEAR_FORMS), st.lists(_WORDS, max_size=4))
def test_years_are_never_numeric_claims(year: int, form: str, words: list[str]) -> None:
    sentence = " ".join(["Reported", form.format(y=year), *words]) + "."
    assert not is_numeric(sentence), sentence


@given(
    st.integers(1, 6),
    st.lists(st.integers(0, 99), min_size=1, max_size=4),
    st.booleans(),
    st.lists(_WORDS, min_size=1, max_size=4),
)
def test_section_numbers_in_headings_are_not_numeric_claims(
    level: int, parts: list[int], dot: bool, words: list[str]
) -> None:
    heading = "#" * level + " " + ".".join(map(str, parts)) + ("." if dot else "") + " " + " ".join(words).title()
    assert _numeric(heading + "\n") == [], heading


_NUMBERS = st.one_of(
    st.floats(0, 1e6, allow_nan=False).map(lambda x: f"{x:.2f}"),
    st.integers(0, 10**6).map(str),
)
_UNITS = ["%", " mg", " patients", " kg", "", " fold"]


@given(_NUMBERS, st.sampled_from(_UNITS), st.integers(1, 3))
def test_block_quotes_are_never_numeric_claims(number: str, unit: str, depth: int) -> None:
    text = ">" * depth + f" The source says the value was {number}{unit}.\n"
    assert _numeric(text) == []
    assert _numeric(text + "\n" + f"We measured {number}{unit}.\n") == [(f"We measured {number}{unit}.", "none")]


@given(
    st.lists(st.tuples(st.integers(1, 300), st.integers(0, 5)), min_size=1, max_size=4), st.lists(_WORDS, max_size=5)
)
def test_reference_numbers_are_not_numeric_claims(refs: list[tuple[int, int]], words: list[str]) -> None:
    markers = [f"[{a}]" if not b else f"[{a}-{a + b}]" for a, b in refs]
    sentence = "Shown " + " ".join(words + markers) + "."
    assert not is_numeric(sentence), sentence
    entries = "\n".join(f"[{a}] Author {w or 'x'}. Journal {a}; {a + 1}: {a}-{a + 9}." for (a, _), w in
                        zip(refs, words + [""] * len(refs), strict=False))  # fmt: skip
    assert _numeric(entries + "\n") == []


@given(_NUMBERS, st.sampled_from(["%", " mg", " patients", " kg"]))
def test_measurements_are_numeric_claims(number: str, unit: str) -> None:
    assert is_numeric(f"The value was {number}{unit}.")


_CELLS = st.sampled_from(["0.91", "12 kg", "[ev1]", "[EVIDENCE2]", "4.5% [ev3]", "text", "[artifact7] 3 mg", "n/a"])


@given(st.lists(st.lists(_CELLS, min_size=1, max_size=5), min_size=1, max_size=5), st.booleans())
def test_a_chip_in_another_cell_never_backs_a_number(rows: list[list[str]], header: bool) -> None:
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    if header:
        lines = ["| " + " | ".join(f"H{i}" for i in range(len(rows[0]))) + " |", "|" + "---|" * len(rows[0]), *lines]
    found = _numeric("\n".join(lines) + "\n")
    expected = [
        (cell, "cited" if "[" in cell else "none")
        for row in rows
        for cell in row
        if any(ch.isdigit() for ch in cell.replace("[ev1]", "").replace("[EVIDENCE2]", ""))
        and cell not in ("[ev1]", "[EVIDENCE2]")
    ]
    assert found == expected


# --- the review --------------------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REVIEWTRAIL_REVIEWER", raising=False)
    root = tmp_path / "store"
    s = init_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}"))
    yield s  # type: ignore[misc]
    s.close()


def _computation(store: Store, tmp_path: Path, text: str, name: str = "report.md") -> list[tuple[str, str]]:
    from reviewtrail.provenance.artifacts import upload_artifact
    from reviewtrail.reviewer import review_artifact

    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    upload_artifact(store, name=name, file=path)
    outcome = review_artifact(store, name, settings=QUICK)
    return [(f.code, f.message) for f in outcome.run.findings if f.code.startswith(("COMPUTATION", "CITATION_EV"))]


# The sciencediscovery reference cases (its Quick computation review tests), as they apply here.
REFERENCE_CASES: list[tuple[str, str, list[str], str | None]] = [
    ("cited-without-evidence-mapping",
     "TP53 mutation frequency was 39.7% [1].\n\n[1] Example et al. (2024). PMID: 12345678",
     ["COMPUTATION_NUMERIC_CLAIM_EVIDENCE_MISSING"], "39.7%"),
    ("chinese-author-year-and-pmid", "TP53 mutation frequency was 39.7%（张三等(2024, PMID: 12345678)）。",
     ["COMPUTATION_NUMERIC_CLAIM_EVIDENCE_MISSING"], None),
    ("unavailable-quantitative-fields",
     "All pooled odds ratios, 95% CIs, and I² values are not extractable because the abstract is unavailable.",
     [], None),
    ("without-any-support", "TP53 mutation frequency was 39.7%.", ["COMPUTATION_NUMERIC_CLAIM_UNSUPPORTED"], None),
    # The reference calls this COMPUTATION_NUMERIC_CLAIM_PROVENANCE_UNRESOLVED; here every chip without a
    # mapping is CITATION_EVIDENCE_ALIAS_UNRESOLVED, and the number it was meant to back is unbacked.
    ("unresolved-generated-data-alias", "TP53 mutation frequency was 39.7% [artifact1].",
     ["CITATION_EVIDENCE_ALIAS_UNRESOLVED", "COMPUTATION_UNBACKED"], None),
    ("publication-year", "The 2024 study reported this association [1].\n\n[1] Example (2024).", [], None),
    ("headings-and-quoted-source-text",
     '### 3.1 Direct frequency values\n> "TP53 is frequently mutated in about 60% of cancers."\n'
     "The measured TP53 mutation frequency was 39.7%.",
     ["COMPUTATION_NUMERIC_CLAIM_UNSUPPORTED"], "39.7%"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "text", "codes", "mentions"), REFERENCE_CASES, ids=[c[0] for c in REFERENCE_CASES])
def test_reference_cases(
    store: Store, tmp_path: Path, case: str, text: str, codes: list[str], mentions: str | None
) -> None:
    found = _computation(store, tmp_path, text)
    assert sorted(code for code, _ in found) == sorted(codes), found
    if mentions is not None:
        assert all(mentions in message for _, message in found)


def test_a_number_without_any_citation_fails_the_computation_check(store: Store, tmp_path: Path) -> None:
    from reviewtrail.reviewer import get_review

    found = _computation(store, tmp_path, "# Results\n\nAccuracy was 0.91 on the test set.\n")
    assert found == [("COMPUTATION_NUMERIC_CLAIM_UNSUPPORTED", found[0][1])]
    [outcome] = get_review(store, "report.md")
    assert outcome.run.decision == "REVISE_AND_RETRY"
    assert {c.check: c.status for c in outcome.run.checks}["computation"] == "failed"
    [finding] = outcome.run.findings
    assert finding.location is not None and finding.location["excerpt"] == "Accuracy was 0.91 on the test set."


def test_a_table_chip_in_another_cell_does_not_back_the_number(store: Store, tmp_path: Path) -> None:
    found = _computation(store, tmp_path, "| Metric | Value | Source |\n|---|---|---|\n| Accuracy | 0.91 | [ev1] |\n")
    assert [code for code, _ in found] == [
        "COMPUTATION_NUMERIC_CLAIM_UNSUPPORTED",
        "CITATION_EVIDENCE_ALIAS_UNRESOLVED",
    ]


def test_numbers_in_prose_free_artifacts_are_not_checked(store: Store, tmp_path: Path) -> None:
    found = _computation(store, tmp_path, '{"accuracy": 0.91}', name="metrics.json")
    assert found == []
