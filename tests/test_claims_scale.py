"""Claims extraction restructured for linear time and bounded memory equals a simple reference
formulation, kept here: the non-measurements blanked by one regular expression holding them all, a
heading's section number without the lookbehind, the citations of a reply as a sorted list of
matches, and the claims of record_claims built at once. (The resource limits: test_claims_limits.py.)
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewtrail.app import init_store
from reviewtrail.config import Settings
from reviewtrail.evidence import add_evidence, chip_citation, extract_claims, record_claims, resolve_citation
from reviewtrail.evidence._claims import citation_tokens
from reviewtrail.evidence._numeric import (
    _EVENT,
    _LITERATURE,
    _MONTH,
    _PART,
    _REF_NUMBERS,
    _SECTION_NUMBER,
    _YEAR,
    _blank_not_measurements,
    literature_markers,
)
from reviewtrail.evidence._records import ClaimCitation
from reviewtrail.evidence._sentences import CHIP, CITATION, CODE, URL, analyze, iter_sentences, split
from reviewtrail.store import Store

# --- the non-measurements: the merged search equals one regular expression -------------------------

_REFERENCE_IDENTIFIER = (
    r"(?i:\b(?:pmid|pmcid|pmc|doi|arxiv|isbn|issn)\b\s*:?\s*)[\w./-]*\d[\w./-]*|\b10\.\d{4,9}/[^\s,;)）]+"
)
REFERENCE_NOT_MEASUREMENTS = re.compile(
    "|".join(
        [
            rf"\b{_YEAR}[-/.]\d{{1,2}}[-/.]\d{{1,2}}\b",
            rf"\b\d{{1,2}}[-/.]\d{{1,2}}[-/.]{_YEAR}\b",
            rf"{_YEAR}\s*年(?:\s*\d{{1,2}}\s*月(?:\s*\d{{1,2}}\s*[日号])?)?",
            r"\d{1,2}\s*月\s*\d{1,2}\s*[日号]",
            rf"\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+{_YEAR})?\b",
            rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}(?:,?\s+{_YEAR})?\b",
            rf"\b{_MONTH},?\s+{_YEAR}\b",
            r"(?i:\b(?:in|since|until|till|from|before|after|during|circa|ca\.|c\.|between|through|as of"
            rf"|early|late|mid-?)\s+(?:the\s+)?){_YEAR}s?(?:\s*(?:-|–|—|to|and|through)\s*(?:{_YEAR}|\d\d)\b)?",
            rf"(?:\bet al\.?,?|\b[A-Z][A-Za-z'’-]+,)\s+{_YEAR}[a-z]?\b",
            rf"\(\s*{_YEAR}[a-z]?\s*\)",
            rf"\b{_YEAR}(?:'s|’s)?(?=\s+(?i:{_EVENT})\b)",
            r"(?i:\b(?:supplementary\s+)?(?:figs?|figures?|tabs?|tables?|eqs?|equations?|secs?|sections?|ch|chap"
            r"|chapters?|app|appendix|refs?|references?|nos?|nr|steps?|lines?|pages?|p|pp|items?)\b\.?)"
            rf"\s*{_PART}(?:\s*(?:[-–,]|and)\s*{_PART})*",
            r"(?:图|表|式|公式|第|章节)\s*S?\d+(?:\.\d+)*",
            r"[(（]\s*(?:\d{1,2}|[ivx]{1,4}|[a-h])\s*[)）]",
            _REF_NUMBERS,
            _REFERENCE_IDENTIFIER,
            r"\b\d{2}(?:\.\d+)?\s*%\s*(?i:CIs?|CrIs?|confidence\s+intervals?|credible\s+intervals?"
            r"|prediction\s+intervals?|uncertainty\s+intervals?)\b",
        ]
    )
)
REFERENCE_SECTION_NUMBER = re.compile(r"\s*(?:\d+(?:\.\d+)*\.?|[IVXLC]+\.|[A-Z]\.(?:\d+(?:\.\d+)*)?)(?=\s|$)")

PIECES = [
    *("A", "-", "'", "’", ",", ", ", " ", "  ", "\n", "\t", ":", ".", "/", "(", ")", "[", "]", "%", "–", "_"),
    *("2020", "2020a", "1999", "1", "12", "3.5", "5", "10.1234/x", "95%", "[1]", "[2, 3]", "[^a]", "【1】"),
    *("Smith", "Jones", "et al", "et al.", "Smith-Jones", "O'Neil", "x", "a", "b", "I", "IV", "S", "st", "'s"),
    *("doi", "DOI", "pmc", "pmcid", "PMID", "arXiv", "March", "Sept.", "CI", "confidence interval", "study"),
    *("Fig", "Fig.", "Table", "p", "pp", "in", "the", "in the", "and", "年", "月", "日", "第", "数据", "#"),
    *("II", "X.", "1.2", "2.", "C", "L"),
]
texts = st.lists(st.sampled_from(PIECES), max_size=16).map("".join)


@given(texts)
@settings(max_examples=3000)
def test_blanking_equals_one_regular_expression(text: str) -> None:
    assert _blank_not_measurements(text) == REFERENCE_NOT_MEASUREMENTS.sub(lambda m: " " * len(m.group()), text)


@given(texts)
@settings(max_examples=1000)
def test_a_heading_section_number_is_found_as_without_the_lookbehind(text: str) -> None:
    def blank(pattern: re.Pattern[str]) -> str:
        return pattern.sub(lambda m: " " * len(m.group()), text, count=1)

    assert blank(_SECTION_NUMBER) == blank(REFERENCE_SECTION_NUMBER)


# --- the citations of a reply, and the claims record_claims returns ----------------------------------

REPLY_PIECES = [
    *("Rose 5% [ev1]. ", "Fell [run:r-1] by 3. ", "[EV2] holds. ", "Cited [doi:10.1/x] twice [doi:10.1/x]. "),
    *("No citation here. ", "结果 92% [ev:e1]。", "e.g. ", "Dr. ", "Fig. 2 ", "[1] ", "`[ev3]` ", "[ev4](http://x) "),
    *("\n", "\n\n", "- ", "1. ", "## Head [ev5]\n", "| a [ev6] | b |\n", "|---|---|\n", "```\n[run:x]\n```\n"),
    *("> quoted [artifact:a@1].\n", "See doi [mcp:s/t/1] ", "https://x.org/[ev1] ", "[evidence7]", "!", "?"),
    *("[a link](https://a.org/x) ", "www.b.org ", "(Smith et al., 2020) ", "PMID: 123 ", "[2-4] ", "5 "),
]
replies = st.lists(st.sampled_from(REPLY_PIECES), max_size=14).map("".join)


@given(replies)
@settings(max_examples=400)
def test_tokens_and_sentences_equal_a_sorted_list_of_matches(reply: str) -> None:
    layout = analyze(reply)
    matches = [m for pattern in (CITATION, CHIP) for m in pattern.finditer(reply) if layout.kinds[m.start()] != CODE]
    spans = sorted(m.span() for m in matches)
    assert [(c.start, c.end) for c in citation_tokens(reply)] == spans
    assert list(iter_sentences(layout)) == split(layout)
    for claim in extract_claims(reply):
        inside = [s for s in spans if claim.sentence_start <= s[0] and s[1] <= claim.sentence_end]
        assert [(c.start, c.end) for c in claim.citations] == inside
        assert claim.text == reply[claim.sentence_start : claim.sentence_end]


def _reference_literature(layout: Any, start: int, end: int) -> list[str]:
    """literature_markers as a scan of every character, each URL checked against every marker."""
    text, kinds = layout.text, layout.kinds
    found = [(m.start(), m.group()) for m in _LITERATURE.finditer(text, start, end) if not kinds[m.start()]]
    i = start
    while i < end:
        if kinds[i] == URL:
            j = i
            while j < end and kinds[j] == URL:
                j += 1
            if not any(s <= i < s + len(g) for s, g in found):
                found.append((i, text[i:j]))
            i = j
        else:
            i += 1
    return [g for _, g in sorted(found)]


@given(replies)
@settings(max_examples=400)
def test_literature_markers_equal_a_scan_of_every_character(reply: str) -> None:
    layout = analyze(reply)
    for s in iter_sentences(layout):
        assert literature_markers(layout, s.start, s.end) == _reference_literature(layout, s.start, s.end)


@pytest.fixture(scope="module")
def evidence_store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("scale") / "store"
    store = init_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}"))
    evidence_id, _ = add_evidence(store, {"kind": "paper", "paperId": "doi:10.1/x"})
    yield store, {"ev1": evidence_id, "evidence7": "ev-not-recorded"}
    store.close()


def _reference_claims(store: Store, reply: str, aliases: dict[str, str]) -> list[dict[str, Any]]:
    """The claims as record_claims built them before: every Claim at once, citation by citation."""
    out = []
    for x in extract_claims(reply, turn_id="t1"):
        citations = []
        for c in x.citations:
            if c.alias is not None:
                citations.append(chip_citation(store, c, [aliases[c.alias]] if c.alias in aliases else []))
                continue
            target = resolve_citation(store, c.type, c.id)
            citations.append(ClaimCitation(type=c.type, id=c.id, raw=c.raw, resolved=target is not None, target=target))
        out.append(
            {
                "text": x.text,
                "citations": [msgspec.to_builtins(c) for c in citations],
                "numeric": x.numeric,
                "sentenceStart": x.sentence_start,
                "sentenceEnd": x.sentence_end,
            }
        )
    return out


@given(replies)
@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_record_claims_equals_claims_built_at_once(evidence_store: Any, reply: str) -> None:
    store, aliases = evidence_store
    result = record_claims(store, reply, turn_id="t1", aliases=aliases, dry_run=True)
    claims = list(result.claims)
    keys = ("text", "citations", "numeric", "sentenceStart", "sentenceEnd")
    got = [{k: c.payload_json()[k] for k in keys} for c in claims]
    assert got == _reference_claims(store, reply, aliases)
    assert [c.payload_json() for c in result.claims[::-1]] == [c.payload_json() for c in reversed(claims)]
    if claims:
        assert result.claims[-1] == claims[-1] and result.claims[0] == claims[0]
    unresolved = [(c.claim_id, x.raw) for c in claims for x in c.citations if not x.resolved]
    assert result.unresolved == unresolved and result.unresolved_count == len(unresolved)
    summaries = [(i, t, list(marks)) for i, t, marks in result.summaries()]
    assert summaries == [(c.claim_id, c.text, [(x.raw, x.resolved) for x in c.citations]) for c in claims]
    dumped = [{**c.payload_json(), "recordId": None} for c in claims]
    assert result.to_json()["claims"] == dumped
    written = "".join(json.JSONEncoder(ensure_ascii=False, indent=2).iterencode(result.to_json(stream=True)))
    assert written == json.dumps(result.to_json(), ensure_ascii=False, indent=2)
