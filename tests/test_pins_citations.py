"""Inline citation markers at their edges: body text only, the number limits, superscript
context, author names, index expressions and value lists."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from reviewtrail.reviewer._cite_document import _Document
from reviewtrail.reviewer._cite_markers import scan_markers
from reviewtrail.reviewer._cite_references import parse_references

Found = tuple[str, str, list[str]]

SURNAMES = st.sampled_from(["Smith", "Nakamura", "García", "O'Neil", "van Dijk", "Lee-Park", "张"])
YEARS = st.integers(min_value=1950, max_value=2029).map(str)


def markers(text: str) -> list[Found]:
    doc = _Document(text)
    return [(m.kind, m.raw, m.keys) for m in scan_markers(doc, parse_references(doc))]


def detailed(text: str) -> list[tuple[str, int, bool]]:
    doc = _Document(text)
    return [(m.kind, m.start, m.tentative) for m in scan_markers(doc, parse_references(doc))]


def with_references(body: str, entry: str) -> str:
    return f"{body}\n\n## References\n\n1. {entry}\n"


# --- author-year markers only in body text -----------------------------------------------


@pytest.mark.parametrize(
    ("cite", "key"),
    [
        ("(Smith, 2020)", "smith 2020"),
        ("(Smith et al., 2020a)", "smith 2020a"),
        ("Smith et al. (2020)", "smith 2020"),
        ("Smith and Jones (2019)", "smith 2019"),
        ("[Smith, 2020]", "smith 2020"),
        ("（张三等，2020）", "张三 2020"),
    ],
)
def test_author_year_counts_in_the_body_only(cite: str, key: str) -> None:
    assert [(k, keys) for k, _, keys in markers(f"As shown {cite} here.")] == [("author_year", [key])]
    in_entry = with_references("Plain body text.", f"Jones A. Title, as in {cite}. Journal.")
    assert markers(in_entry) == []
    in_section_prose = "Plain body text.\n\n## References\n\nSee also {cite}.\n\n1. Jones A. Title. 2020.\n"
    assert markers(in_section_prose.replace("{cite}", cite)) == []


@given(SURNAMES, YEARS, st.booleans())
def test_generated_author_year_markers_are_found_in_body_and_never_in_entries(
    surname: str, year: str, narrative: bool
) -> None:
    cite = f"{surname} et al. ({year})" if narrative else f"({surname} et al., {year})"
    found = markers(f"It was shown {cite} before.")
    assert [kind for kind, _, _ in found] == ["author_year"]
    assert found[0][2][0].endswith(f" {year}")
    assert markers(with_references("Body without markers.", f"{surname} A. A paper {cite}. 2020.")) == []


def test_a_bare_single_name_needs_the_comma_in_parentheses() -> None:
    assert markers("As shown (Smith 2020) here.") == []
    assert markers("As shown (Smith, 2020) here.") == [("author_year", "(Smith, 2020)", ["smith 2020"])]
    assert markers("As shown (Smith & Jones 2019) here.")[0][2] == ["smith 2019"]


@pytest.mark.parametrize("name", ["In", "January", "Figure", "smith", "S", "Version"])
def test_non_names_are_never_authors(name: str) -> None:
    assert markers(f"As shown ({name}, 2020) here.") == []
    assert markers(f"As shown, {name} et al. (2020) here.") == []


def test_a_single_cjk_surname_counts() -> None:
    assert markers("见（张，2020）。") == [("author_year", "（张，2020）", ["张 2020"])]


def test_a_single_name_narrative_marker_is_tentative() -> None:
    assert detailed("Smith (2020) said so.") == [("author_year", 0, True)]
    assert detailed("Smith et al. (2020) said so.") == [("author_year", 0, False)]


def test_narrative_cjk_name_needs_et_al() -> None:
    assert markers("张三（2020）发现") == []
    assert markers("张三等（2020）发现") == [("author_year", "张三等（2020）", ["张三 2020"])]


def test_several_items_in_one_group_each_get_a_marker_at_their_offset() -> None:
    text = "As (Smith & Jones, 2019; Lee, 2021) shows."
    doc = _Document(text)
    found = scan_markers(doc, parse_references(doc))
    assert [(m.keys, m.start) for m in found] == [(["smith 2019"], 4), (["lee 2021"], 24)]


def test_narrative_years_give_one_key_each() -> None:
    assert markers("Smith et al. (2019, 2020b) agree.") == [
        ("author_year", "Smith et al. (2019, 2020b)", ["smith 2019", "smith 2020b"])
    ]


# --- numeric limits ----------------------------------------------------------------------


@given(st.integers(min_value=0, max_value=1100))
@example(0)
@example(1)
@example(999)
@example(1000)
def test_single_numbers_are_citations_from_1_to_999(n: int) -> None:
    expected = [("numeric", f"[{n}]", [str(n)])] if 1 <= n <= 999 else []
    assert markers(f"See [{n}] here.") == expected


@given(st.integers(min_value=0, max_value=1000), st.integers(min_value=-2, max_value=110))
@example(1, 100)
@example(1, 101)
@example(5, 0)
@example(899, 100)
@example(900, 100)
def test_ranges_go_up_by_1_to_100_within_1_to_999(first: int, width: int) -> None:
    last = first + width  # may be negative: "[0--2]" is no group at all
    found = markers(f"See [{first}-{last}] here.")
    if 1 <= first < last <= 999 and width <= 100:
        assert found == [("numeric", f"[{first}-{last}]", [str(x) for x in range(first, last + 1)])]
    else:
        assert found == []


@given(st.lists(st.integers(min_value=0, max_value=1001), min_size=2, max_size=4))
@example([1, 2])
@example([2, 1])
@example([1, 1])
@example([998, 999])
@example([999, 1000])
def test_lists_must_strictly_increase_within_1_to_999(numbers: list[int]) -> None:
    body = ", ".join(map(str, numbers))
    ok = all(1 <= n <= 999 for n in numbers) and all(a < b for a, b in pairwise(numbers))
    expected = [("numeric", f"[{body}]", [str(n) for n in numbers])] if ok else []
    assert markers(f"See [{body}] here.") == expected


@pytest.mark.parametrize("body", ["01", "1, 02", "1-05", "0", "0-3", "00"])
def test_leading_zeros_are_not_citations(body: str) -> None:
    assert markers(f"See [{body}] here.") == []


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("See [1; 3] here.", ["1", "3"]),
        ("See [1–3] here.", ["1", "2", "3"]),
        ("See [1,3-5] here.", ["1", "3", "4", "5"]),
        ("见【１，２】。", ["1", "2"]),
        ("见〔1～3〕。", ["1", "2", "3"]),
        ("见［2、4］。", ["2", "4"]),
    ],
)
def test_separators_and_full_width_forms(text: str, keys: list[str]) -> None:
    assert [k for _, _, k in markers(text)] == [keys]


def test_full_width_zero_is_a_leading_zero() -> None:
    assert markers("见【０】和【０１】。") == []


def test_a_line_leading_full_width_group_labels_a_list_item() -> None:
    assert markers("【1】 first item\n> 【2】 quoted item") == []
    assert [k for _, _, k in markers("text 【1】")] == [["1"]]


def test_mismatched_brackets_are_not_groups() -> None:
    assert markers("See [1】 and 【2] here.") == []


# --- numeric markers that are data ---------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "x[1] is the first",
        "my_list[2] holds",
        "x[1][2] chained",
        "a = [1, 2] values",
        "v =[3]",
        "{[1]}",
        "[[1, 2], [3, 4]]",
        "x ∈ [1, 3]",
        "f([1, 2])",
        "g_([4])",
        "y_values [1, 4, 9]",
        "scores: [1, 2]",
        "| col_a | [1, 2] |",
    ],
)
def test_index_expressions_and_value_lists_are_not_markers(text: str) -> None:
    assert markers(text) == []


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("word [1] here", [["1"]]),
        ("ab[1] two letters", [["1"]]),
        ("(see [1, 2])", [["1", "2"]]),
        ("x = y [1]", [["1"]]),  # one number after '=' and a word is a citation
        ("scores: [3]", [["3"]]),  # a single number after ':' is not a value list
        ("Text.[1][2]", [["1"], ["2"]]),
    ],
)
def test_groups_that_are_markers(text: str, keys: list[list[str]]) -> None:
    assert [k for _, _, k in markers(text)] == keys


# --- superscripts ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("shown abc¹ here", [["1"]]),
        ("shown 中¹ here", [["1"]]),
        ("shown abc.² here", [["2"]]),
        ("shown abc%³ here", [["3"]]),
        ("shown abc¹⁻³ here", [["1", "2", "3"]]),
        ("shown abc¹,² here", [["1", "2"]]),
        ("shown abc<sup>4</sup> here", [["4"]]),
        ("shown abc<sup>[1,2]</sup> here", [["1", "2"]]),
        ("shown abc^5 here", [["5"]]),
        ("shown abc^5^ here", [["5"]]),
        ("shown abc^[6] here", [["6"]]),
        ("shown 中文^7 here", [["7"]]),
    ],
)
def test_superscripts_after_words_of_three_letters_or_punctuation(text: str, keys: list[list[str]]) -> None:
    assert [k for kind, _, k in markers(text) if kind == "superscript"] == keys


@pytest.mark.parametrize(
    "text", ["¹ at the start", "10⁶ units", "m² area", "ab¹ short", "(a+b)² sum", "x^2 power", "10^6", "cm³", "abc⁰"]
)
def test_superscripts_that_are_not_citations(text: str) -> None:
    assert [m for m in markers(text) if m[0] == "superscript"] == []


# --- footnotes and inline notes ----------------------------------------------------------


def test_footnotes_are_compared_case_insensitively() -> None:
    assert markers("Claim[^Note-1] here.") == [("footnote", "[^Note-1]", ["^note-1"])]


def test_inline_notes_resolve_themselves() -> None:
    assert markers("Claim^[a self-contained note] here.") == [("inline_note", "^[a self-contained note]", [])]


def test_markers_in_a_reference_entry_are_not_inline_markers() -> None:
    text = with_references("Body text only.", "Smith J. A paper [2]¹ with a note[^a]^[b] and <sup>3</sup>. 2020.")
    assert markers(text) == []


def test_markers_come_back_in_text_order() -> None:
    text = "A [^f] and (Smith, 2020) then [1] then abc² then Jones et al. (2021)."
    assert [kind for kind, _, _ in markers(text)] == [
        "footnote",
        "author_year",
        "numeric",
        "superscript",
        "author_year",
    ]


# --- every match is looked at, not only those before the first one skipped ----------------


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("A (Smith, 2020] and (Lee, 2021).", [["lee 2021"]]),  # mismatched brackets, then a marker
        ("A (In, 2019; Smith, 2020).", [["smith 2020"]]),  # a non-name item, then a marker
        ("A (Smith 2019; Lee, 2021).", [["lee 2021"]]),  # a bare single name, then a marker
        ("In (2019) and Smith et al. (2020).", [["smith 2020"]]),
        ("张三（2020）发现。Smith et al. (2021) too.", [["smith 2021"]]),
        ("Both (Li, 2020) and (Wu, 2021).", [["li 2020"], ["wu 2021"]]),  # two-letter surnames
        ("(Smith, n. d.) and (Jones, in press)", [["smith n.d."], ["jones inpress"]]),
        ("See [1】 and then [2].", [["2"]]),
        ("See [0] and then [1].", [["1"]]),
        ("Use x[1] and then [2].", [["2"]]),
        ("scores: [1, 2] and then [3].", [["3"]]),
        ("【1】 item with 【2】 inside", [["2"]]),
        ("X 【1】", [["1"]]),
        ("][1] see", [["1"]]),
        ("([1]) see abc", [["1"]]),
        ("Model X [1] works", [["1"]]),
        ("x=X [1]", [["1"]]),
        ("10⁶ units, then abc¹", [["1"]]),
        ("10^[1] then abc^[2]", [["2"]]),
    ],
)
def test_a_skipped_match_does_not_hide_later_markers(text: str, keys: list[list[str]]) -> None:
    assert [k for _, _, k in markers(text)] == keys


def test_markers_after_a_reference_section_are_body_again() -> None:
    text = (
        "Intro.\n\n## References\n\n1. X Y (2019). Paper ^[n1] and Lee et al. (2018) and abc² [3].\n\n"
        "## Discussion\n\nSmith et al. (2020) and ^[note] and (Lee, 2021) [2] abc³.\n"
    )
    assert markers(text) == [
        ("author_year", "Smith et al. (2020)", ["smith 2020"]),
        ("inline_note", "^[note]", []),
        ("author_year", "(Lee, 2021)", ["lee 2021"]),
        ("numeric", "[2]", ["2"]),
        ("superscript", "³", ["3"]),
    ]


@pytest.mark.parametrize(
    ("text", "raw"), [("shown abc^[6] here", "^[6]"), ("shown abc¹ here", "¹"), ("abc<sup>4</sup>", "<sup>4</sup>")]
)
def test_superscript_markers_keep_their_raw_text(text: str, raw: str) -> None:
    assert [r for kind, r, _ in markers(text)] == [raw]


@pytest.mark.parametrize("text", ["10^[1]", "^[1] first", "x <sup>0</sup>", "abc<sup>0</sup>"])
def test_numeric_notes_out_of_context_are_nothing(text: str) -> None:
    assert markers(text) == []


@pytest.mark.parametrize(("text", "found"), [("abc¹", 1), ("中¹", 1), ("ab c¹", 0), ("¹ starts this.", 0), ("ab¹", 0)])
def test_superscript_context_at_the_edges_of_the_text(text: str, found: int) -> None:
    assert len([m for m in markers(text) if m[0] == "superscript"]) == found


def test_the_narrative_author_window_is_80_characters() -> None:
    near = "Smith" + " " * 68 + "et al. (2020)"  # "Smith" starts 80 characters before "("
    far = "Smith" + " " * 69 + "et al. (2020)"
    assert [k for _, _, k in markers(near)] == [["smith 2020"]]
    assert markers(far) == []
