"""Whether a sentence states a number to back, and which literature markers it carries
(docs/architecture.md, "Claims and evidence" and "Reviewer Specialist").

Pure functions over a :class:`~reviewtrail.evidence._sentences.Layout`.

A sentence is numeric when, after blanking citations, chips, inline code, URLs and the
non-measurements below, it still holds a number written with digits (``0.91``, ``95.5%``,
``1,000``, ``.05``, ``1.5e-3``, ``3 mg``, ``5倍``). Sentences with the role ``quote`` (copied
source text), ``header`` (a table's header cells) and ``reference`` (bibliography entries) are
never numeric; in a ``heading`` the leading section number (``3.1``, ``2.``, ``IV.``) is not a
number. Not measurements:

* digits glued to letters or to ``letter-`` (``p53``, ``H1N1``, ``v2``, ``COVID-19``, ``GPT-4``),
  version/IP-like numbers with two or more dots (``2.1.0``) and ordinals (``2nd``, ``第3``);
* dates: ``2024-01-31``, ``31/01/2024``, ``2024年3月5日``, ``3月5日``, ``March 5, 2024``,
  ``5 March 2024``, ``March 2024``; and years said to be years: after ``in``, ``since``,
  ``until``, ``from``, ``before``, ``after``, ``during``, ``circa``, ``between``, ``through``,
  ``as of``, ``early``/``late``/``mid-`` (with an optional ``-``/``to``/``and`` second year),
  ``(2020)``, ``Smith, 2020``, ``et al. 2020``, and a year naming a publication or an event
  (``the 2024 study``, ``2019 survey``, ``2021 census``, ``2020 guidelines``);
* references to parts of a document: ``Fig. 3``, ``Table S2``, ``Eq. (4)``, ``Section 3.2``,
  ``p. 12``, ``pp. 3-9``, ``No. 5``, ``Step 2``, ``图3``, ``表2``, ``第3章``; enumerators ``(1)``, ``(ii)``;
* reference numbers and identifiers: ``[12]``, ``[3-5]``, ``[7, 9]``, ``[^2]``, ``【1】``,
  ``PMID: 123``, ``PMCID``, ``DOI``, ``arXiv:2401.01234``, ``ISBN``, ``ISSN``, bare DOIs ``10.1000/182``;
* the names of intervals: ``95% CI``, ``95% confidence interval``, ``90% credible interval``.

Numbers spelled in words (``three``, ``三``) do not count.

Literature markers (:func:`literature_markers`) are the inline pointers to the literature other than
structured citations and chips: numeric markers ``[1]``, ``[2-4]``, ``【1】``, footnotes ``[^1]``,
author–year (``(Smith et al., 2020)``, ``Smith et al. (2020)``, ``张三等(2024``), identifiers
(``PMID: 123``, ``doi:10…``), Markdown links and bare URLs.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable

from reviewtrail.evidence._sentences import URL, Layout

__all__ = ["is_numeric_span", "literature_markers"]

_YEAR = r"(?:1[89]|20)\d\d"
_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.?"
)
_PART = r"\(?S?\d+[A-Za-z]?(?:\.\d+)*\)?"
_EVENT = (
    r"(?:study|studies|survey|report|paper|review|guidelines?|edition|census|cohort|season|election|update"
    r"|trial|conference|meeting|workshop|release|data\s?set|estimates?|meta-analysis|publication|article"
    r"|statement|consensus|classification|criteria|revision|version|wave|round)"
)
_REF_NUMBERS = r"\[\d+(?:\s*[-–,]\s*\d+)*\]|【\d+(?:\s*[-–,，]\s*\d+)*】|\[\^[^\s\[\]]+\]"
# A keyword, then (possessive: the run after it can start with neither a space nor a colon) the separator.
_ID_KEYWORD = r"(?i:\b(?:pmid|pmcid|pmc|doi|arxiv|isbn|issn)\b\s*+:?+\s*+)"
_DOI = r"\b10\.\d{4,9}/[^\s,;)）]+"
_IDENTIFIER = rf"{_ID_KEYWORD}[\w./-]*\d[\w./-]*|{_DOI}"
# The non-measurements, in the order they are tried at one position (module doc). Two of them are
# searched by hand (_name_year, _identifier), in their place in this order: as regular expressions
# their attempt at every capital or keyword inside one long run of letters and hyphens ("A-A-A-...")
# would scan to the end of the run again, which is quadratic.
_BEFORE_NAME_YEAR = re.compile(
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
            rf"\bet al\.?,?\s+{_YEAR}[a-z]?\b",  # never where a name starts (a capital): its place is kept
        ]
    )
)
# _name_year: rf"\b[A-Z][A-Za-z'’-]+,\s+{_YEAR}[a-z]?\b" (Smith, 2020)
_BEFORE_IDENTIFIER = re.compile(
    "|".join(
        [
            rf"\(\s*{_YEAR}[a-z]?\s*\)",
            rf"\b{_YEAR}(?:'s|’s)?(?=\s+(?i:{_EVENT})\b)",
            r"(?i:\b(?:supplementary\s+)?(?:figs?|figures?|tabs?|tables?|eqs?|equations?|secs?|sections?|ch|chap"
            r"|chapters?|app|appendix|refs?|references?|nos?|nr|steps?|lines?|pages?|p|pp|items?)\b\.?)"
            rf"\s*{_PART}(?:\s*(?:[-–,]|and)\s*{_PART})*",
            r"(?:图|表|式|公式|第|章节)\s*S?\d+(?:\.\d+)*",
            r"[(（]\s*(?:\d{1,2}|[ivx]{1,4}|[a-h])\s*[)）]",
            _REF_NUMBERS,
        ]
    )
)
# _identifier: the first branch of _IDENTIFIER (a keyword, then a run of [\w./-] holding a digit)
_AFTER_IDENTIFIER = re.compile(
    "|".join(
        [
            _DOI,  # the second branch of _IDENTIFIER: never where a keyword starts
            r"\b\d{2}(?:\.\d+)?\s*%\s*(?i:CIs?|CrIs?|confidence\s+intervals?|credible\s+intervals?"
            r"|prediction\s+intervals?|uncertainty\s+intervals?)\b",
        ]
    )
)
_NAME_RUN = re.compile(r"[A-Za-z'’-]+")
_NAME_START = re.compile(r"\b[A-Z](?=[A-Za-z'’-])")
_NAME_TAIL = re.compile(rf",\s+{_YEAR}[a-z]?\b")
_ID_HEAD = re.compile(_ID_KEYWORD)
_ID_RUN = re.compile(r"[\w./-]*")
_ID_TO_LAST_DIGIT = re.compile(r"[\w./-]*\d")
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])(?<![A-Za-z]-)"  # not part of an identifier: p53, v2, COVID-19
    r"(?:\d(?:[\d,]*\d)?(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"
    r"(?!\.?\d)(?!(?:st|nd|rd|th)\b)"  # not a version (2.1.0), not an ordinal (2nd)
)
# Never tried where an earlier start reads the same number to the same end (which it does whenever
# this one would match): after a space, a digit, a digit and a dot, or a Roman numeral's letter. The
# first match is the one without these lookbehinds; only the runs are not read again from each start.
_SECTION_NUMBER = re.compile(
    r"(?<!\s)\s*(?:(?<!\d)(?<!\d\.)\d+(?:\.\d+)*\.?|(?<![IVXLC])[IVXLC]+\.|[A-Z]\.(?:\d+(?:\.\d+)*)?)(?=\s|$)"
)
_MASKED = re.compile(rb"[^\x00]+")
_URL_RUN = re.compile(b"%c+" % URL)
_NAME = r"[A-Z][A-Za-z'’-]+"
_LITERATURE = re.compile(
    "|".join(
        [
            _REF_NUMBERS,
            rf"[(（]\s*{_NAME}(?:\s+et al\.?|\s+(?:and|&)\s+{_NAME})?,?\s+{_YEAR}[a-z]?(?:\s*[;,][^()（）]*)?[)）]",
            rf"\b{_NAME}\s+et al\.?,?\s*[(（]?\s*{_YEAR}",
            rf"[\u4e00-\u9fff]{{1,8}}等?\s*[(（]\s*{_YEAR}",
            _IDENTIFIER,
            r"\[[^\[\]\n]+\]\([^)\s]+\)",
        ]
    )
)


def _prose(layout: Layout, start: int, end: int) -> str:
    """The sentence with citations, chips, code and URLs blanked (offsets kept)."""
    text, out, last = layout.text, io.StringIO(), start
    for m in _MASKED.finditer(layout.kinds, start, end):
        out.write(text[last : m.start()])
        out.write(" " * (m.end() - m.start()))
        last = m.end()
    out.write(text[last:end])
    return out.getvalue()


def is_numeric_span(layout: Layout, start: int, end: int, role: str = "prose") -> bool:
    """Whether ``layout.text[start:end]``, a sentence with ``role``, states a number (module doc)."""
    if role in ("quote", "header", "reference"):
        return False
    prose = _prose(layout, start, end)
    if role == "heading":
        prose = _SECTION_NUMBER.sub(lambda m: " " * len(m.group()), prose, count=1)
    return _NUMBER.search(_blank_not_measurements(prose)) is not None


_Span = tuple[int, int] | None  # a match's (start, end), None: none at or after where it was looked for


def _blank_not_measurements(prose: str) -> str:
    """``prose`` with every non-measurement blanked: what one regular expression holding them all, in
    order, would substitute (leftmost match first; at one position the first of them that matches)."""
    name_year, identifier = _NameYear(prose), _Identifier(prose)
    finders: tuple[Callable[[int], _Span], ...] = (
        lambda pos: _span(_BEFORE_NAME_YEAR.search(prose, pos)),
        name_year.find,
        lambda pos: _span(_BEFORE_IDENTIFIER.search(prose, pos)),
        identifier.find,
        lambda pos: _span(_AFTER_IDENTIFIER.search(prose, pos)),
    )
    found: list[_Span | bool] = [False] * len(finders)  # False: not looked for yet
    out = io.StringIO()
    pos = 0
    while True:
        best: tuple[int, int] | None = None
        for k, find in enumerate(finders):
            span = found[k]
            if span is False or (isinstance(span, tuple) and span[0] < pos):
                span = found[k] = find(pos)
            if isinstance(span, tuple) and (best is None or span[0] < best[0]):
                best = span  # on a tie the earlier finder wins, as the earlier alternative would
        if best is None:
            out.write(prose[pos:])
            return out.getvalue()
        out.write(prose[pos : best[0]])
        out.write(" " * (best[1] - best[0]))
        pos = best[1]


def _span(m: re.Match[str] | None) -> _Span:
    return None if m is None else m.span()


class _NameYear:
    """``\\b[A-Z][A-Za-z'’-]+,\\s+YEAR[a-z]?\\b``: every start in a run of letters, apostrophes and
    hyphens reaches the same end of the run, so the run and what follows it are read once."""

    def __init__(self, prose: str) -> None:
        self.prose = prose
        self.run: tuple[int, int, int] = (0, 0, -1)  # the last run read: start, end, end of its tail or -1

    def find(self, pos: int) -> _Span:
        prose = self.prose
        while True:
            a, b, tail = self.run
            if not a <= pos < b:
                run = _NAME_RUN.search(prose, pos)
                if run is None:
                    return None
                a, b = run.span()
                m = _NAME_TAIL.match(prose, b)
                self.run = (a, b, tail := -1 if m is None else m.end())
            if tail >= 0 and (start := _NAME_START.search(prose, max(a, pos), b)) is not None:
                return start.start(), tail
            pos = b


class _Identifier:
    """The first branch of ``_IDENTIFIER``: a keyword, then the run of ``[\\w./-]`` after it, which must
    hold a digit; keywords inside one run share its end and its last digit, read once."""

    def __init__(self, prose: str) -> None:
        self.prose = prose
        self.run: tuple[int, int, int] = (0, 0, -1)  # the last run read: start, end, its last digit or -1

    def find(self, pos: int) -> _Span:
        for head in _ID_HEAD.finditer(self.prose, pos):
            t = head.end()
            a, b, digit = self.run
            if not a <= t < b:
                b = _ID_RUN.match(self.prose, t).end()  # type: ignore[union-attr]  # it matches the empty run
                last = _ID_TO_LAST_DIGIT.match(self.prose, t, b)
                a, digit = t, -1 if last is None else last.end() - 1
                self.run = (a, b, digit)
            if digit >= t:
                return head.start(), b
        return None


def literature_markers(layout: Layout, start: int, end: int) -> list[str]:
    """The literature markers in ``layout.text[start:end]`` outside code and citations, in order."""
    text, kinds = layout.text, layout.kinds
    found = [(m.start(), m.group()) for m in _LITERATURE.finditer(text, start, end) if not kinds[m.start()]]
    urls, k = [], 0  # the markers are in order and apart: one pointer finds the one a URL may lie in
    for run in _URL_RUN.finditer(kinds, start, end):
        i = run.start()
        while k < len(found) and found[k][0] + len(found[k][1]) <= i:
            k += 1
        if not (k < len(found) and found[k][0] <= i):  # not already inside a Markdown link
            urls.append((i, text[i : run.end()]))
    found += urls
    return [g for _, g in sorted(found)]
