"""Claim extraction (seed 002 §5): sentence splitting, structured citations, claims, the numeric flag."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.errors import InvalidInputError
from reviewtrail.evidence._claims import ExtractedClaim, citation_tokens, extract_claims, is_numeric, split_sentences
from reviewtrail.evidence._sentences import CHIP, CITATION

# (reply, the exact sentences split_sentences gives)
SPLITS: list[tuple[str, list[str]]] = [
    ("Hello world. This is a test.", ["Hello world.", "This is a test."]),
    ("The value is 3.14. Next.", ["The value is 3.14.", "Next."]),
    (
        "A rate of 1.5e-3 was seen. Version v2.1.0 fixed it. About 95.5% agreed. We paid 1,000.5 dollars.",
        ["A rate of 1.5e-3 was seen.", "Version v2.1.0 fixed it.", "About 95.5% agreed.", "We paid 1,000.5 dollars."],
    ),
    (
        "Results, e.g. Accuracy, improved. Also i.e. This holds.",
        ["Results, e.g. Accuracy, improved.", "Also i.e. This holds."],
    ),
    ("Smith et al. Reported it. Dr. Lee agreed.", ["Smith et al. Reported it.", "Dr. Lee agreed."]),
    ("See Fig. 2 and Eq. 3 for details. Tab. 1 has more.", ["See Fig. 2 and Eq. 3 for details.", "Tab. 1 has more."]),
    ("Mr. Smith vs. Mrs. Jones, cf. Sec. 4. Done.", ["Mr. Smith vs. Mrs. Jones, cf. Sec. 4.", "Done."]),
    ("It took approx. 3 hours. It was No. 5 on the list.", ["It took approx. 3 hours.", "It was No. 5 on the list."]),
    ("The answer is no. We move on.", ["The answer is no.", "We move on."]),
    ("pp. 3-9 and p. 12 were cited. Next.", ["pp. 3-9 and p. 12 were cited.", "Next."]),
    (
        "The U.S. Food and Drug Administration approved it. J. R. R. Tolkien wrote it. Data from J. Smith. End.",
        [
            "The U.S. Food and Drug Administration approved it.",
            "J. R. R. Tolkien wrote it.",
            "Data from J. Smith.",
            "End.",
        ],
    ),
    (
        "See https://doi.org/10.1000/182. Also arxiv.org/abs/2401.01234 is relevant. Mail www.x.org/a?b=1! Ok",
        [
            "See https://doi.org/10.1000/182.",
            "Also arxiv.org/abs/2401.01234 is relevant.",
            "Mail www.x.org/a?b=1!",
            "Ok",
        ],
    ),
    ("Call `a.b()`. Then `x. Y` is code.", ["Call `a.b()`.", "Then `x. Y` is code."]),
    ("Before.\n\n```python\nx = 1. Y = 2.\nprint('[ev:x]')\n```\nAfter.", ["Before.", "After."]),
    ("Text.\n~~~\ncode. More.\n", ["Text."]),
    ("First line without end\n\nSecond paragraph", ["First line without end", "Second paragraph"]),
    (
        "This sentence wraps\nonto the next line. Then ends.",
        ["This sentence wraps\nonto the next line.", "Then ends."],
    ),
    (
        "Intro:\n- item one\n- item two. Still two? Yes\n1. first\n2. second\n  * nested",
        ["Intro:", "item one", "item two.", "Still two?", "Yes", "first", "second", "nested"],
    ),
    ("It happened in\n2. place", ["It happened in\n2. place"]),
    ("# Results\nAccuracy rose.\n## 2 Methods", ["Results", "Accuracy rose.", "2 Methods"]),
    ("We waited... and waited. Then it came.", ["We waited... and waited.", "Then it came."]),
    ("He paused… Then spoke.", ["He paused… Then spoke."]),
    ('He said "Stop." Then left.', ['He said "Stop."', "Then left."]),
    ("Really?! Yes (mostly). OK", ["Really?!", "Yes (mostly).", "OK"]),
    ("The result (surprisingly?) was 3. Done.", ["The result (surprisingly?) was 3.", "Done."]),
    ("**Bold claim.** Next one.", ["**Bold claim.**", "Next one."]),
    (
        "It is [doi:10.1000/x.y.] true. Next [ev:run-1.2].",
        ["It is [doi:10.1000/x.y.] true.", "Next [ev:run-1.2]."],
    ),
    ("Growth was 5%. [paper:x] The next point.", ["Growth was 5%. [paper:x]", "The next point."]),
    ("Growth was 5%. [paper:x] reports that. End.", ["Growth was 5%.", "[paper:x] reports that.", "End."]),
    ("True.[1] Next.[^2] Last. [ev:a], [ev:b]", ["True.[1]", "Next.[^2]", "Last. [ev:a], [ev:b]"]),
    ("See [the docs](https://x.org/a.b). Next.", ["See [the docs](https://x.org/a.b).", "Next."]),
    ("| a | b |\n|---|---|\n| 1.5 | [ev:x] |", ["a", "b", "1.5", "[ev:x]"]),  # each table cell is a sentence
    (
        "# 1. Introduction. Scope\n| Accuracy. | 0.91 [ev:x] |",
        ["1. Introduction. Scope", "Accuracy.", "0.91 [ev:x]"],
    ),
    ("(e.g. Fig. 2) **Fig. 3** shows it. Next.", ["(e.g. Fig. 2) **Fig. 3** shows it.", "Next."]),
    ("> Quoted one. Quoted two.\nNot quoted.", ["Quoted one.", "Quoted two.", "Not quoted."]),
    ("Above\n---\nBelow", ["Above", "Below"]),
    ("One.\r\n\r\nTwo.", ["One.", "Two."]),
    ("这是第一句。这是第二句！这是第三句？", ["这是第一句。", "这是第二句！", "这是第三句？"]),
    ("甲为3；乙为4。丙为5：见下。", ["甲为3；乙为4。", "丙为5：见下。"]),
    ("他说：“好。”然后走了。", ["他说：“好。”", "然后走了。"]),
    ("结果……还不确定。下一步。", ["结果……还不确定。", "下一步。"]),
    ("要点：\n1、第一点\n2、第二点\n• 第三点\n（4）第四点", ["要点：", "第一点", "第二点", "第三点", "第四点"]),
    (
        "增长了5.5%[ev:a]。The rate was 3.2 [ev:b]. 结束。",
        ["增长了5.5%[ev:a]。", "The rate was 3.2 [ev:b].", "结束。"],
    ),
    ("增长显著。[pmid:12345]\n下一段。", ["增长显著。[pmid:12345]", "下一段。"]),
    ("真的吗?是的.", ["真的吗?", "是的."]),
    ("第一段没有句号\n\n第二段也没有", ["第一段没有句号", "第二段也没有"]),
    ("值为3.14，版本v2.1.0。见图3。", ["值为3.14，版本v2.1.0。", "见图3。"]),
    ("  \n\n---\n```\nonly code\n```\n", []),
]


@pytest.mark.parametrize(("reply", "expected"), SPLITS, ids=[f"split{i}" for i in range(len(SPLITS))])
def test_sentence_splits(reply: str, expected: list[str]) -> None:
    sentences = split_sentences(reply)
    assert [s.text for s in sentences] == expected
    for s in sentences:
        assert reply[s.start : s.end] == s.text


# (reply, [(claim text, [raw citations], numeric)])
CLAIMS: list[tuple[str, list[tuple[str, list[str], bool]]]] = [
    (
        "Accuracy reached 0.91 [run:abc]. It was trained for 3 epochs [run:def].\n\nNo claim here.",
        [("Accuracy reached 0.91 [run:abc].", ["[run:abc]"], True),
         ("It was trained for 3 epochs [run:def].", ["[run:def]"], True)],
    ),
    ("See [1] and [^2] and [2, 3] and [0.5, 0.9]. A [link](https://x.org) too.", []),
    ("See [ev1] and [EVIDENCE2] and [artifact3].", [("See [ev1] and [EVIDENCE2] and [artifact3].",
                                                    ["[ev1]", "[EVIDENCE2]", "[artifact3]"], False)]),
    ("The DOI [doi:10.1/x](https://doi.org/10.1/x) is a link, [https://x.org/a] a bracketed URL.", []),
    (
        "Use `[ev:x]` here [ev:y].\n```\n[ev:z] is code.\n```\nAnd ``[ev:w]`` too.",
        [("Use `[ev:x]` here [ev:y].", ["[ev:y]"], False)],
    ),
    ("X holds [ev:a] and again [ev:a].", [("X holds [ev:a] and again [ev:a].", ["[ev:a]", "[ev:a]"], False)]),
    (
        "该基因在2020年被发现[pmid:12345]。表达量提高了3倍[ev:run-7]。没有引用。",
        [("该基因在2020年被发现[pmid:12345]。", ["[pmid:12345]"], False),
         ("表达量提高了3倍[ev:run-7]。", ["[ev:run-7]"], True)],
    ),
    ("As shown in Fig. 3 and Table S2 [ev:fig].", [("As shown in Fig. 3 and Table S2 [ev:fig].", ["[ev:fig]"], False)]),
    ("COVID-19 and H1N1 spread by air [pmid:1].", [("COVID-19 and H1N1 spread by air [pmid:1].", ["[pmid:1]"], False)]),
    (
        "In 2020, Smith et al. described it [paper:x]. On March 5, 2021 it was confirmed [paper:y].",
        [("In 2020, Smith et al. described it [paper:x].", ["[paper:x]"], False),
         ("On March 5, 2021 it was confirmed [paper:y].", ["[paper:y]"], False)],
    ),
    (
        "The effect was significant (p < .05) [ev:stat]. It rose 95.5% [ev:a]; see v2.1.0 [ev:b].",
        [("The effect was significant (p < .05) [ev:stat].", ["[ev:stat]"], True),
         ("It rose 95.5% [ev:a]; see v2.1.0 [ev:b].", ["[ev:a]", "[ev:b]"], True)],
    ),
    (
        "Sources: [url:https://x.org/a] and [mcp:pubmed:123] and [DOI:10.1000/X.Y] agree.",
        [("Sources: [url:https://x.org/a] and [mcp:pubmed:123] and [DOI:10.1000/X.Y] agree.",
          ["[url:https://x.org/a]", "[mcp:pubmed:123]", "[DOI:10.1000/X.Y]"], False)],
    ),
    (
        "## Results [ev:h]\n- Mean was 4.2 mg [artifact:a1].\n- No effect [ev:n]. Second [ev:m]\n",
        [("Results [ev:h]", ["[ev:h]"], False), ("Mean was 4.2 mg [artifact:a1].", ["[artifact:a1]"], True),
         ("No effect [ev:n].", ["[ev:n]"], False), ("Second [ev:m]", ["[ev:m]"], False)],
    ),
    (
        "J. Smith et al. [paper:10.1038/nature.2020.1] showed it, e.g. in Fig. 2. Done [ev:d].",
        [("J. Smith et al. [paper:10.1038/nature.2020.1] showed it, e.g. in Fig. 2.",
          ["[paper:10.1038/nature.2020.1]"], False), ("Done [ev:d].", ["[ev:d]"], False)],
    ),
]  # fmt: skip


@pytest.mark.parametrize(("reply", "expected"), CLAIMS, ids=[f"claims{i}" for i in range(len(CLAIMS))])
def test_claims(reply: str, expected: list[tuple[str, list[str], bool]]) -> None:
    claims = extract_claims(reply, review_run_id="rr-1", turn_id="t-1")
    assert [(c.text, [x.raw for x in c.citations], c.numeric) for c in claims] == expected
    for c in claims:
        assert reply[c.sentence_start : c.sentence_end] == c.text
        assert (c.review_run_id, c.turn_id) == ("rr-1", "t-1")


def test_citation_fields_and_json() -> None:
    [claim] = extract_claims("Up 5% [DOI:10.1000/X] and [ev:a].", turn_id="t")
    doi, ev = claim.citations
    assert (doi.type, doi.id, doi.raw, doi.key) == ("doi", "10.1000/X", "[DOI:10.1000/X]", "doi:10.1000/X")
    assert "Up 5% [DOI:10.1000/X] and [ev:a]."[doi.start : doi.end] == doi.raw
    assert claim.to_json() == {
        "text": "Up 5% [DOI:10.1000/X] and [ev:a].",
        "citations": [
            {"type": "doi", "id": "10.1000/X", "raw": "[DOI:10.1000/X]", "start": 6, "end": 21},
            {"type": "ev", "id": "a", "raw": "[ev:a]", "start": 26, "end": 32},
        ],
        "reviewRunId": None,
        "turnId": "t",
        "numeric": True,
        "sentenceStart": 0,
        "sentenceEnd": 33,
    }
    assert isinstance(claim, ExtractedClaim) and ev.type == "ev"


def test_citation_tokens_skip_code_and_non_citations() -> None:
    text = "a [ev:1] `[ev:2]` [ev1] [1]\n```\n[ev:3]\n```\n[PMC:77](x) [pmc:8] [ev4](x)"
    tokens = citation_tokens(text)
    assert [(c.type, c.id, c.alias) for c in tokens] == [("ev", "1", None), ("ev", "1", "ev1"), ("pmc", "8", None)]
    assert [c.key for c in tokens] == ["ev:1", "ev1", "pmc:8"]
    assert CITATION.fullmatch("[run_1-x:a.b/c:d]") and not CITATION.fullmatch("[ev: a]")
    assert not CITATION.fullmatch("[2:3]") and not CITATION.fullmatch("[ev:]")


@pytest.mark.parametrize(
    ("sentence", "numeric"),
    [
        ("Accuracy is 0.91.", True),
        ("It took 3 mg of 1.5e-3 M solution.", True),
        ("About 1,000 samples.", True),
        ("增长了5%。", True),
        ("See Fig. 3, Eq. (4) and Section 3.2.", False),
        ("Released as v2.1.0 on 2024-01-31.", False),
        ("This is the 2nd attempt since 2019.", False),
        ("In (1) and (ii) we use IL-6 and p53.", False),
        ("2020年3月5日发表，见表2和第3章。", False),
        ("No numbers at all, three or 三.", False),
        ("The `x = 5` code and https://x.org/10 have digits.", False),
        ("Between 2010 and 2020 it doubled to 2000 units.", True),
    ],
)
def test_numeric_rule(sentence: str, numeric: bool) -> None:
    assert is_numeric(sentence) is numeric


def test_invalid_input() -> None:
    with pytest.raises(InvalidInputError) as err:
        extract_claims(b"bytes")  # type: ignore[arg-type]
    assert err.value.field == "reply"
    with pytest.raises(InvalidInputError) as err:
        extract_claims("x [ev:a].", review_run_id="")
    assert err.value.field == "reviewRunId"
    with pytest.raises(InvalidInputError) as err:
        extract_claims("x [ev:a].", turn_id=3)  # type: ignore[arg-type]
    assert err.value.field == "turnId"
    with pytest.raises(InvalidInputError):
        split_sentences(None)  # type: ignore[arg-type]
    assert extract_claims("") == [] and split_sentences("") == [] and citation_tokens("") == []


# --- properties ---------------------------------------------------------------------------------------

_WORDS = ["alpha", "Beta", "growth", "rate", "the", "数据", "结果", "显著", "π", "x"]
_NUMBERS = ["3.14", "1.5e-3", "v2.1.0", "95.5%", "1,000.5", "42", "2020", "0.91"]
_ABBREVIATIONS = ["e.g.", "i.e.", "et al.", "Fig.", "Eq.", "Dr.", "Mr.", "vs.", "cf.", "approx.", "No.", "Tab.",
                  "Sec.", "U.S.", "J.", "etc."]  # fmt: skip
_URLS = ["https://doi.org/10.1000/182.", "arxiv.org/abs/2401.01234", "www.x.org/a?b=1"]
_NON_CITATIONS = ["[1]", "[^1]", "[ev1](https://x.org/e)", "[2, 3]", "[0.5, 0.9]", "[text](https://x.org/a)",
                  "[https://x.org]"]  # fmt: skip
_ELLIPSES = ["...", "…", "……"]
_TERMINATORS = [".", "!", "?", "?!", "。", "！", "？", "；", "", ".”", "。」", ")."]
_TYPES = ["paper", "doi", "pmid", "pmc", "arxiv", "ev", "run", "artifact", "mcp", "url", "DOI", "Ev"]
_ID_CHARS = "abcXYZ019.-_/:%?!。"

citations = st.one_of(
    st.builds(
        lambda t, i: f"[{t}:{i}]",
        st.sampled_from(_TYPES),
        st.text(_ID_CHARS, min_size=1, max_size=12).filter(lambda s: not s.startswith("//")),
    ),
    st.builds(lambda f, n: f"[{f}{n}]", st.sampled_from(["ev", "EV", "evidence", "Artifact"]), st.integers(0, 99)),
)
inline_code = st.sampled_from(["a.b()", "x. Y", "[ev:in-code]", "1. 2", "[doi:10.1/x]. Z"]).map(lambda c: f"`{c}`")


@st.composite
def sentences(draw: st.DrawFn, expected: list[str]) -> str:
    """A sentence of fragments; citations outside code are appended to ``expected`` in order."""
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["word", "word", "number", "abbr", "url", "cite", "cite", "non", "code", "ell"]))
        if kind == "cite":
            token = draw(citations)
            expected.append(token)
            parts.append(token)
        elif kind == "code":
            parts.append(f" {draw(inline_code)} ")
        else:
            pool = {"word": _WORDS, "number": _NUMBERS, "abbr": _ABBREVIATIONS, "url": _URLS, "non": _NON_CITATIONS,
                    "ell": _ELLIPSES}[kind]  # fmt: skip
            parts.append(draw(st.sampled_from(pool)))
        parts.append(draw(st.sampled_from([" ", " ", ""])))
    return "".join(parts).strip() + draw(st.sampled_from(_TERMINATORS))


@st.composite
def replies(draw: st.DrawFn) -> tuple[str, list[str]]:
    expected: list[str] = []
    blocks: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["para", "para", "bullet", "ordered", "heading", "fence", "quote", "table"]))
        if kind == "fence":
            body = draw(
                st.lists(st.sampled_from(["x = 1. Y = 2.", "[ev:code-1] here.", "", "print('a.b')"]), max_size=3)
            )
            blocks.append("```py\n" + "\n".join(body) + "\n```")
            continue
        count = 1 if kind in ("heading", "table") else draw(st.integers(1, 4))
        text = "".join(draw(sentences(expected)) + draw(st.sampled_from([" ", "", "\n"])) for _ in range(count)).strip()
        if kind == "table":
            text = "| " + text.replace("\n", " ") + " |"
        prefix = {"para": "", "bullet": "- ", "ordered": "1. ", "heading": "## ", "quote": "> ", "table": ""}[kind]
        blocks.append(prefix + text)
    reply = draw(st.sampled_from(["", "\n", "  "])) + blocks[0]
    for block in blocks[1:]:
        reply += draw(st.sampled_from(["\n", "\n\n", "\n \n"])) + block
    return reply, expected


def _check_invariants(reply: str) -> None:
    tokens = citation_tokens(reply)
    claims = extract_claims(reply)
    found = Counter((c.raw, c.start, c.end) for c in tokens)
    assert found == Counter((c.raw, c.start, c.end) for claim in claims for c in claim.citations)
    for c in tokens:
        assert reply[c.start : c.end] == c.raw and (CITATION.fullmatch(c.raw) or CHIP.fullmatch(c.raw))
    last = 0
    for claim in claims:
        assert reply[claim.sentence_start : claim.sentence_end] == claim.text and claim.citations
        assert claim.sentence_start >= last
        last = claim.sentence_end
        for c in claim.citations:
            assert c.raw in claim.text and claim.sentence_start <= c.start < c.end <= claim.sentence_end
    previous = 0
    for s in split_sentences(reply):
        assert reply[s.start : s.end] == s.text == s.text.strip() and s.text and s.start >= previous
        previous = s.end


@given(replies())
def test_extraction_neither_loses_nor_invents_citations(case: tuple[str, list[str]]) -> None:
    reply, expected = case
    assert [c.raw for c in citation_tokens(reply)] == expected
    _check_invariants(reply)


_PIECES = ["a", "B", " ", "  ", "\n", "\n\n", ".", "!", "?", "。", "！", "？", "；", "…", "...", "[", "]", ":", "(",
           ")", "`", "```", "~~~", "#", "- ", "1. ", "> ", "|", "3", ".5", "e.g.", "J.", "[ev:a]", "[doi:10.1/x.y]",
           "[1]", "[ev1]", "[EV2]", "[ev:a。b]", "https://x.org/a.", "“", "”", "*", "\r\n", "数据", "\t"]  # fmt: skip


@given(st.lists(st.sampled_from(_PIECES), max_size=60).map("".join))
def test_invariants_hold_on_arbitrary_markdown_soup(reply: str) -> None:
    _check_invariants(reply)
    if "`" not in reply and "~~~" not in reply:
        expected = sorted([*CITATION.finditer(reply), *CHIP.finditer(reply)], key=lambda m: m.start())
        assert [c.raw for c in citation_tokens(reply)] == [m.group() for m in expected]


def test_extracting_from_a_one_megabyte_reply() -> None:
    unit = (
        "## Results\n\nAccuracy reached 0.91 [run:r1] on the test set, e.g. in Fig. 2. J. Smith et al. "
        "[paper:10.1038/nature.2020.1] saw 95.5% agreement [doi:10.1000/182]. See https://doi.org/10.1000/182. "
        "The code `a.b()` ran in v2.1.0.\n\n- Recall was 0.75 [ev:run-1.2].\n- No effect here.\n\n"
        "表达量提高了3倍[ev:run-7]。该基因在2020年被发现[pmid:12345]；结论一致……下一步。\n\n"
        "```python\nprint('[ev:ignored]. Not a claim.')\n```\n\n"
    )
    reps = 1_000_000 // len(unit.encode()) + 1
    reply = unit * reps
    claims = extract_claims(reply, turn_id="t")  # its speed: bench/run.py --only claims_extract
    assert len(claims) == 5 * reps
    assert sum(len(c.citations) for c in claims) == 6 * reps == len(citation_tokens(reply))
