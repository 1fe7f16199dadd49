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

import re

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
_IDENTIFIER = r"(?i:\b(?:pmid|pmcid|pmc|doi|arxiv|isbn|issn)\b\s*:?\s*)[\w./-]*\d[\w./-]*|\b10\.\d{4,9}/[^\s,;)）]+"
_NOT_MEASUREMENTS = re.compile(
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
            _IDENTIFIER,
            r"\b\d{2}(?:\.\d+)?\s*%\s*(?i:CIs?|CrIs?|confidence\s+intervals?|credible\s+intervals?"
            r"|prediction\s+intervals?|uncertainty\s+intervals?)\b",
        ]
    )
)
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])(?<![A-Za-z]-)"  # not part of an identifier: p53, v2, COVID-19
    r"(?:\d(?:[\d,]*\d)?(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"
    r"(?!\.?\d)(?!(?:st|nd|rd|th)\b)"  # not a version (2.1.0), not an ordinal (2nd)
)
_SECTION_NUMBER = re.compile(r"\s*(?:\d+(?:\.\d+)*\.?|[IVXLC]+\.|[A-Z]\.(?:\d+(?:\.\d+)*)?)(?=\s|$)")
_MASKED = re.compile(rb"[^\x00]+")
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
    text, parts, last = layout.text, [], start
    for m in _MASKED.finditer(layout.kinds, start, end):
        parts += [text[last : m.start()], " " * (m.end() - m.start())]
        last = m.end()
    parts.append(text[last:end])
    return "".join(parts)


def is_numeric_span(layout: Layout, start: int, end: int, role: str = "prose") -> bool:
    """Whether ``layout.text[start:end]``, a sentence with ``role``, states a number (module doc)."""
    if role in ("quote", "header", "reference"):
        return False
    prose = _prose(layout, start, end)
    if role == "heading":
        prose = _SECTION_NUMBER.sub(lambda m: " " * len(m.group()), prose, count=1)
    prose = _NOT_MEASUREMENTS.sub(lambda m: " " * len(m.group()), prose)
    return _NUMBER.search(prose) is not None


def literature_markers(layout: Layout, start: int, end: int) -> list[str]:
    """The literature markers in ``layout.text[start:end]`` outside code and citations, in order."""
    text, kinds = layout.text, layout.kinds
    found = [(m.start(), m.group()) for m in _LITERATURE.finditer(text, start, end) if not kinds[m.start()]]
    i = start
    while i < end:
        if kinds[i] == URL:
            j = i
            while j < end and kinds[j] == URL:
                j += 1
            if not any(s <= i < s + len(g) for s, g in found):  # not already inside a Markdown link
                found.append((i, text[i:j]))
            i = j
        else:
            i += 1
    return [g for _, g in sorted(found)]
