"""Claims (seed 002 §5): the sentences of an assistant reply that carry structured citations ``[TYPE:ID]``.

Pure: no I/O, no ledger. Recording lives in :mod:`reviewtrail.evidence._evidence`.

* :func:`split_sentences` — Markdown-aware English/Chinese sentences with offsets; the rules
  (sentence ends, abbreviations, blocks, code) are documented in :mod:`._sentences`.
* :data:`CITATION` — the structured-citation pattern. TYPE is a letter then letters, digits,
  ``_`` or ``-``; ID is non-empty, without whitespace, brackets or backticks, and not ``//...``.
  ``[1]``, ``[^1]``, ``[ev1]``, ``[2, 3]``, ``[0.5, 0.9]`` and link texts ``[doi:x](url)`` are not
  citations. Nothing inside fenced or inline code counts.
* :func:`citation_tokens` — every citation outside code, in order; TYPE lower-cased in
  :attr:`Citation.type`, the token exactly as written in :attr:`Citation.raw`.
* :func:`extract_claims` — one claim per sentence with at least one citation, in reply order.
  A citation written twice in one sentence is kept twice (each occurrence with its own
  offsets), so the tokens of all claims are exactly :func:`citation_tokens` of the reply.

``numeric`` (used by the Computation check) is true when, after blanking citations, inline code,
URLs and the non-measurements below, the sentence still holds a number written with digits
(``0.91``, ``95.5%``, ``1,000``, ``.05``, ``1.5e-3``, ``3 mg``, ``5倍``). Not measurements:

* digits glued to letters or to ``letter-`` (``p53``, ``H1N1``, ``v2``, ``COVID-19``, ``GPT-4``),
  version/IP-like numbers with two or more dots (``2.1.0``) and ordinals (``2nd``, ``第3``);
* dates: ``2024-01-31``, ``31/01/2024``, ``2024年3月5日``, ``3月5日``, ``March 5, 2024``,
  ``5 March 2024``, ``March 2024``; and years said to be years: after ``in``, ``since``,
  ``until``, ``from``, ``before``, ``after``, ``during``, ``circa``, ``between``, ``through``,
  ``as of``, ``early``/``late``/``mid-`` (with an optional ``-``/``to``/``and`` second year),
  ``(2020)``, ``Smith, 2020``, ``et al. 2020``;
* references to parts of a document: ``Fig. 3``, ``Table S2``, ``Eq. (4)``, ``Section 3.2``,
  ``p. 12``, ``pp. 3-9``, ``No. 5``, ``Step 2``, ``图3``, ``表2``, ``第3章``; enumerators ``(1)``, ``(ii)``.

Numbers spelled in words (``three``, ``三``) do not count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from reviewtrail.errors import InvalidInputError
from reviewtrail.evidence._sentences import BEFORE_NUMBER, CITATION, NEVER_END, Layout, Sentence, analyze, split

__all__ = [
    "BEFORE_NUMBER",
    "CITATION",
    "NEVER_END",
    "Citation",
    "ExtractedClaim",
    "Sentence",
    "citation_tokens",
    "extract_claims",
    "is_numeric",
    "split_sentences",
]


@dataclass(frozen=True, slots=True)
class Citation:
    """One ``[TYPE:ID]`` token: ``type`` lower-cased, ``raw`` as written, ``text[start:end] == raw``."""

    type: str
    id: str
    raw: str
    start: int
    end: int

    @property
    def key(self) -> str:
        """``type:id`` — the normalized token without brackets."""
        return f"{self.type}:{self.id}"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "id": self.id, "raw": self.raw, "start": self.start, "end": self.end}


@dataclass(frozen=True, slots=True)
class ExtractedClaim:
    """A sentence carrying at least one citation: ``reply[sentence_start:sentence_end] == text``."""

    text: str
    citations: list[Citation]
    sentence_start: int
    sentence_end: int
    review_run_id: str | None
    turn_id: str | None
    numeric: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "citations": [c.to_json() for c in self.citations],
            "reviewRunId": self.review_run_id,
            "turnId": self.turn_id,
            "numeric": self.numeric,
            "sentenceStart": self.sentence_start,
            "sentenceEnd": self.sentence_end,
        }


def split_sentences(text: str) -> list[Sentence]:
    """The sentences of ``text`` in order; fenced code blocks yield none."""
    return split(analyze(_check_text(text, "text")))


def citation_tokens(text: str) -> list[Citation]:
    """Every structured citation in ``text`` outside fenced and inline code, in order."""
    return [_citation(m) for m in analyze(_check_text(text, "text")).citations]


def extract_claims(reply: str, *, review_run_id: str | None = None, turn_id: str | None = None) -> list[ExtractedClaim]:
    """One claim per sentence of ``reply`` that carries a structured citation, in order."""
    _check_id(review_run_id, "reviewRunId")
    _check_id(turn_id, "turnId")
    layout = analyze(_check_text(reply, "reply"))
    cites = layout.citations
    claims: list[ExtractedClaim] = []
    i = 0
    for s in split(layout):
        while i < len(cites) and cites[i].start() < s.start:
            i += 1  # none by construction: every citation outside code lies in a sentence
        j = i
        while j < len(cites) and cites[j].end() <= s.end:
            j += 1
        if j > i:
            claims.append(
                ExtractedClaim(
                    text=s.text,
                    citations=[_citation(m) for m in cites[i:j]],
                    sentence_start=s.start,
                    sentence_end=s.end,
                    review_run_id=review_run_id,
                    turn_id=turn_id,
                    numeric=_numeric(layout, s.start, s.end),
                )
            )
        i = j
    return claims


def is_numeric(sentence: str) -> bool:
    """Whether ``sentence`` states a number (the rule in the module doc)."""
    layout = analyze(_check_text(sentence, "sentence"))
    return _numeric(layout, 0, len(sentence))


_YEAR = r"(?:1[89]|20)\d\d"
_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.?"
)
_PART = r"\(?S?\d+[A-Za-z]?(?:\.\d+)*\)?"
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
            r"(?i:\b(?:supplementary\s+)?(?:figs?|figures?|tabs?|tables?|eqs?|equations?|secs?|sections?|ch|chap"
            r"|chapters?|app|appendix|refs?|references?|nos?|nr|steps?|lines?|pages?|p|pp|items?)\b\.?)"
            rf"\s*{_PART}(?:\s*(?:[-–,]|and)\s*{_PART})*",
            r"(?:图|表|式|公式|第|章节)\s*S?\d+(?:\.\d+)*",
            r"[(（]\s*(?:\d{1,2}|[ivx]{1,4}|[a-h])\s*[)）]",
        ]
    )
)
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])(?<![A-Za-z]-)"  # not part of an identifier: p53, v2, COVID-19
    r"(?:\d(?:[\d,]*\d)?(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"
    r"(?!\.?\d)(?!(?:st|nd|rd|th)\b)"  # not a version (2.1.0), not an ordinal (2nd)
)
_MASKED = re.compile(rb"[^\x00]+")


def _numeric(layout: Layout, start: int, end: int) -> bool:
    text, parts, last = layout.text, [], start
    for m in _MASKED.finditer(layout.kinds, start, end):  # citations, code, URLs
        parts += [text[last : m.start()], " " * (m.end() - m.start())]
        last = m.end()
    parts.append(text[last:end])
    prose = _NOT_MEASUREMENTS.sub(lambda m: " " * len(m.group()), "".join(parts))
    return _NUMBER.search(prose) is not None


def _citation(m: re.Match[str]) -> Citation:
    return Citation(type=m.group("type").lower(), id=m.group("id"), raw=m.group(), start=m.start(), end=m.end())


def _check_text(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(f"must be a string, not {type(value).__name__}", field=field)
    return value


def _check_id(value: object, field: str) -> None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise InvalidInputError(f"must be a non-empty string or None, not {value!r}", field=field)
