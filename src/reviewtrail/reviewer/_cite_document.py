"""The checked document of the Citation check (see :mod:`._citations`): the original text, its
masked views (code, math, chips, links blanked) and its Markdown links (:class:`_Document`); and
the structure the reference parser finds in it (:class:`_Structure`: which line belongs to the
body, a reference section or an entry, and the entries and sections).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from reviewtrail.reviewer._cite_identifiers import _CHIP, _LINK, _classify_target
from reviewtrail.reviewer._cite_text import (
    _DISPLAY_MATH,
    _DOCTEST,
    _HTML_CODE,
    _INLINE_MATH,
    _code_span_spans,
    _fence_spans,
    _Lines,
    _mask,
    _nested_bracket_spans,
    _quote_len,
    _spans,
)


@dataclass(slots=True)
class _Entry:
    index: int
    kind: str  # numbered | ordered | footnote | bullet | plain
    key: str | None
    label: str
    first_line: int
    last_line: int
    start: int  # offset of the entry's first character (its label)
    text: str = ""


@dataclass(slots=True)
class _Section:
    heading_line: int
    title: str
    entries: list[int] = field(default_factory=list)
    placeholder_lines: int = 0


__all__ = ["_Document", "_Entry", "_Section", "_Structure"]


class _Document:
    def __init__(self, text: str) -> None:
        self.original = text
        self.lines = _Lines(text)
        working = text.replace("\r", " ")
        fences = _fence_spans(working, self.lines)
        self.code_blocks = len(fences)
        clean = _mask(working, fences)
        clean = _mask(clean, _code_span_spans(clean))
        clean = _mask(clean, _spans(_HTML_CODE, clean))
        clean = _mask(clean, _spans(_DOCTEST, clean))
        clean = _mask(clean, _spans(_DISPLAY_MATH, clean))
        clean = _mask(clean, _spans(_INLINE_MATH, clean))
        chips = _spans(_CHIP, clean)
        self.chip_count = len(chips)
        clean = _mask(clean, chips)
        self.links: list[tuple[int, str, tuple[str, str] | None]] = []  # (start, the link as written, classification)
        full_spans: list[tuple[int, int]] = []
        textual_spans: list[tuple[int, int]] = []
        for m in _LINK.finditer(clean):
            if m["bang"]:
                full_spans.append(m.span())
                textual_spans.append(m.span())
                continue
            classified = _classify_target(m["target"])
            if classified is None and m["target"].strip().startswith("#"):
                fragment = (m.end("text") + 1, m.end())
                full_spans.append(fragment)
                textual_spans.append(fragment)
                continue
            full_spans.append(m.span())
            textual_spans.extend([(m.start(), m.start("text")), (m.end("text"), m.end())])
            self.links.append((m.start(), m.group(), classified))
        self.link_starts = [start for start, _, _ in self.links]
        self.full = _mask(clean, full_spans)
        self.textual = _mask(clean, textual_spans)
        self.full = _mask(self.full, _nested_bracket_spans(self.full))

    def _line(self, text: str, index: int) -> str:
        line = self.lines.get(text, index)
        return line[_quote_len(line) :] if ">" in line[:8] else line

    def _links_on_line(self, j: int) -> list[tuple[int, str, tuple[str, str] | None]]:
        return self._links_between(self.lines.starts[j], self.lines.end_of(j))

    def _links_between(self, lo: int, hi: int) -> list[tuple[int, str, tuple[str, str] | None]]:
        return self.links[bisect_left(self.link_starts, lo) : bisect_right(self.link_starts, hi)]


@dataclass(slots=True)
class _Structure:
    """What the reference parser found: ``owner[line]`` is -1 for body lines, -2 for section
    headings and prose inside a section, and the entry index for an entry's lines."""

    lines: _Lines
    owner: list[int]
    entries: list[_Entry] = field(default_factory=list)
    sections: list[_Section] = field(default_factory=list)

    def owner_at(self, offset: int) -> int:
        return self.owner[self.lines.line_of(offset)]

    def is_body(self, offset: int) -> bool:
        return self.owner_at(offset) == -1
