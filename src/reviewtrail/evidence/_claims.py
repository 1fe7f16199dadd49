"""Claims: the sentences of a reply that carry structured citations ``[TYPE:ID]`` or chips
(docs/architecture.md, "Claims and evidence").

Pure: no I/O, no ledger. Recording lives in :mod:`reviewtrail.evidence._evidence`.

* :func:`split_sentences` — Markdown-aware English/Chinese sentences with offsets; the rules
  (sentence ends, abbreviations, blocks, code) are documented in :mod:`._sentences`.
* :data:`CITATION` — the structured-citation pattern. TYPE is a letter then letters, digits,
  ``_`` or ``-``; ID is non-empty, without whitespace, brackets or backticks, and not ``//...``.
  ``[1]``, ``[^1]``, ``[2, 3]``, ``[0.5, 0.9]`` and link texts ``[doi:x](url)`` are not
  citations. Nothing inside fenced or inline code counts.
* :func:`citation_tokens` — every citation and chip outside code, in order; TYPE lower-cased in
  :attr:`Citation.type`, the token exactly as written in :attr:`Citation.raw`.
* :func:`extract_claims` — one claim per sentence with at least one citation, in reply order.
  A citation written twice in one sentence is kept twice (each occurrence with its own
  offsets), so the tokens of all claims are exactly :func:`citation_tokens` of the reply.
* Provenance chips ``[evN]``, ``[evidenceN]``, ``[artifactN]`` (any case, :data:`CHIP`) are
  citations too: :attr:`Citation.alias` is the lower-cased chip (``ev1``), :attr:`Citation.type`
  its family and :attr:`Citation.id` its number. What a chip points at is a turn's alias map
  (:mod:`reviewtrail.evidence._aliases`), never the chip itself. :func:`chip_aliases` lists the
  distinct chips of a text.
* :func:`numeric_claims` — every sentence (or table cell) that states a number, with its citations
  and literature markers: the Computation check needs the numbers that cite nothing too.

``numeric`` (used by the Computation check) follows the rule in :mod:`reviewtrail.evidence._numeric`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from reviewtrail.errors import InvalidInputError
from reviewtrail.evidence._numeric import is_numeric_span, literature_markers
from reviewtrail.evidence._sentences import (
    CHIP,
    CITATION,
    Layout,
    Sentence,
    analyze,
    iter_sentences,
    split,
)

__all__ = [
    "Citation",
    "ClaimSpan",
    "ExtractedClaim",
    "NumericClaim",
    "chip_aliases",
    "citation_at",
    "citation_tokens",
    "claim_spans",
    "extract_claims",
    "is_numeric",
    "iter_claims",
    "numeric_claims",
    "split_sentences",
]


@dataclass(frozen=True, slots=True)
class Citation:
    """One ``[TYPE:ID]`` token or chip: ``type`` lower-cased, ``raw`` as written, ``text[start:end] == raw``.

    A chip (``[EV1]``) has ``alias="ev1"``, ``type="ev"``, ``id="1"``; a ``[TYPE:ID]`` token has no alias.
    """

    type: str
    id: str
    raw: str
    start: int
    end: int
    alias: str | None = None

    @property
    def key(self) -> str:
        """``type:id`` — the normalized token without brackets; a chip's alias."""
        return self.alias if self.alias is not None else f"{self.type}:{self.id}"

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"type": self.type, "id": self.id, "raw": self.raw, "start": self.start, "end": self.end}
        if self.alias is not None:
            doc["alias"] = self.alias
        return doc


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
    """Every structured citation and chip in ``text`` outside fenced and inline code, in order."""
    layout = analyze(_check_text(text, "text"))
    return _citations(layout, 0, len(layout.tokens) // 2)


def chip_aliases(text: str) -> list[str]:
    """The distinct chips of ``text`` outside code, lower-cased, in order of first use."""
    layout = analyze(_check_text(text, "text"))
    citations = (citation_at(text, layout.tokens[k], layout.tokens[k + 1]) for k in range(0, len(layout.tokens), 2))
    return list(dict.fromkeys(c.alias for c in citations if c.alias is not None))


def extract_claims(reply: str, *, review_run_id: str | None = None, turn_id: str | None = None) -> list[ExtractedClaim]:
    """One claim per sentence of ``reply`` that carries a structured citation or a chip, in order."""
    return list(iter_claims(reply, review_run_id=review_run_id, turn_id=turn_id))


def iter_claims(
    reply: str, *, review_run_id: str | None = None, turn_id: str | None = None
) -> Iterator[ExtractedClaim]:
    """:func:`extract_claims` one claim at a time: the arguments are checked before the first is given."""
    layout, spans = claim_spans(reply, review_run_id=review_run_id, turn_id=turn_id)
    return (
        ExtractedClaim(
            text=layout.text[span.start : span.end],
            citations=_citations(layout, span.first, span.stop),
            sentence_start=span.start,
            sentence_end=span.end,
            review_run_id=review_run_id,
            turn_id=turn_id,
            numeric=span.numeric,
        )
        for span in spans
    )


@dataclass(frozen=True, slots=True)
class ClaimSpan:
    """A claim as offsets: its sentence is ``text[start:end]``, its citations the tokens ``first`` to
    ``stop`` (exclusive) of :attr:`Layout.tokens <reviewtrail.evidence._sentences.Layout.tokens>`."""

    start: int
    end: int
    first: int
    stop: int
    numeric: bool


def claim_spans(
    reply: str, *, review_run_id: str | None = None, turn_id: str | None = None
) -> tuple[Layout, Iterator[ClaimSpan]]:
    """The layout of ``reply`` and its claims as offsets, one at a time (arguments checked first)."""
    _check_id(review_run_id, "reviewRunId")
    _check_id(turn_id, "turnId")
    layout = analyze(_check_text(reply, "reply"))
    spans = (
        ClaimSpan(s.start, s.end, i, j, is_numeric_span(layout, s.start, s.end, s.role))
        for s, i, j in _with_tokens(layout)
        if j > i
    )
    return layout, spans


@dataclass(frozen=True, slots=True)
class NumericClaim:
    """A sentence or table cell stating a number: ``text[start:end] == self.text``."""

    text: str
    sentence_start: int
    sentence_end: int
    citations: list[Citation]  # structured citations and chips
    literature: list[str]  # literature markers: [1], (Smith, 2020), links, identifiers

    @property
    def support(self) -> str:
        """``cited`` (citations or chips), ``literature`` (only literature markers) or ``none``."""
        return "cited" if self.citations else "literature" if self.literature else "none"


def numeric_claims(text: str) -> list[NumericClaim]:
    """Every sentence or table cell of ``text`` that states a number, cited or not, in order."""
    layout = analyze(_check_text(text, "text"))
    return [
        NumericClaim(
            text=s.text,
            sentence_start=s.start,
            sentence_end=s.end,
            citations=_citations(layout, i, j),
            literature=literature_markers(layout, s.start, s.end),
        )
        for s, i, j in _with_tokens(layout)
        if is_numeric_span(layout, s.start, s.end, s.role)
    ]


def is_numeric(sentence: str) -> bool:
    """Whether ``sentence`` states a number (the rule in :mod:`reviewtrail.evidence._numeric`)."""
    layout = analyze(_check_text(sentence, "sentence"))
    return any(is_numeric_span(layout, s.start, s.end, s.role) for s in iter_sentences(layout))


def _citations(layout: Layout, first: int, stop: int) -> list[Citation]:
    """Tokens ``first`` to ``stop`` (exclusive) of ``layout`` as citations."""
    tokens = layout.tokens
    return [citation_at(layout.text, tokens[2 * k], tokens[2 * k + 1]) for k in range(first, stop)]


def _with_tokens(layout: Layout) -> Iterator[tuple[Sentence, int, int]]:
    """Each sentence with the range of citations and chips inside it (every token outside code lies in one)."""
    tokens, n = layout.tokens, len(layout.tokens) // 2
    i = 0
    for s in iter_sentences(layout):
        while i < n and tokens[2 * i] < s.start:
            i += 1  # none by construction
        j = i
        while j < n and tokens[2 * j + 1] <= s.end:
            j += 1
        yield s, i, j
        i = j


def citation_at(text: str, start: int, end: int) -> Citation:
    """The citation or chip that :func:`citation_tokens` found at ``text[start:end]``, read again."""
    m = CHIP.fullmatch(text, start, end) or CITATION.fullmatch(text, start, end)
    if m is None:
        raise ValueError(f"no citation at {start}:{end}")
    return _citation(m)


def _citation(m: re.Match[str]) -> Citation:
    if m.re is CHIP:
        family, number = m.group("family").lower(), m.group("number")
        return Citation(type=family, id=number, raw=m.group(), start=m.start(), end=m.end(), alias=family + number)
    return Citation(type=m.group("type").lower(), id=m.group("id"), raw=m.group(), start=m.start(), end=m.end())


def _check_text(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(f"must be a string, not {type(value).__name__}", field=field)
    return value


def _check_id(value: object, field: str) -> None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise InvalidInputError(f"must be a non-empty string or None, not {value!r}", field=field)
