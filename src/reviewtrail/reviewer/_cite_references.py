"""Reference sections and entries of the Citation check (see :mod:`._citations`).

Reference sections
    A heading whose title (NFKC, emphasis, leading numbering such as ``7.``/``VII.``/``六、``/
    ``第五章``, leading emoji and trailing colon removed, case-folded) is one of
    :data:`REFERENCE_HEADINGS`. The heading is an ATX heading (``#``..``######``), a line that
    is entirely bold (``**References**``, ``__参考文献：__``) or the keyword alone on its line
    (``References:``, ``参考文献``, optionally with a setext underline); list items are never
    headings. A section ends at an ATX heading of the same or a higher level (any ATX heading
    or bold line when the section's own heading is not ATX), at a thematic break, at another
    reference heading, before a setext heading, or at an unindented line that is not an entry
    after a blank line once list entries have been seen.

Reference entries
    In a section: ``[1] ...``, ``[1]: ...``, ``【1】...``, ``1. ...``, ``1) ...``, ``1、...``,
    ``(1) ...`` (numbered; an ordered list typed ``1. 1. 1.`` is renumbered 1, 2, 3), footnote
    definitions, bullets (``-``, ``*``, ``+``, ``•``), and plain lines (one entry per line) that
    look like a reference: a year, "et al.", a link or an identifier. Indented lines continue
    the previous entry, as do unindented lines directly after a numbered or bullet entry. Other
    plain lines are prose; a plain line that is nothing but a placeholder (``TBD``, ``待补充``)
    is a placeholder for the whole section, not an entry. Outside any section: footnote
    definitions and lines starting ``[n]`` followed by text (headingless reference lists; a
    line-leading ``【n】`` outside a section is a Chinese list bullet, not an entry). Numeric
    markers resolve to numbered entries; when the document has no numbered entry at all,
    ``[n]`` resolves to the n-th unnumbered (bullet or plain) entry.
    Author-year markers resolve to any entry whose text holds the first author's surname (as a
    word, case-insensitively) and the year (``2020`` also matches ``2020a``). An entry is also
    cited when a link or identifier in the body (normalized DOI, arXiv id, PMID, PMC id, URL)
    appears in it.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from reviewtrail.reviewer._cite_document import _Document, _Entry, _Section, _Structure
from reviewtrail.reviewer._cite_markers import _OPEN_CLOSE
from reviewtrail.reviewer._cite_placeholders import _PURE_PLACEHOLDER, _YEAR
from reviewtrail.reviewer._cite_text import _indent, _quote_label, _strip_punctuation

__all__ = ["REFERENCE_HEADINGS", "parse_references"]

#: Normalized titles (see the module docstring) that open a reference section.
REFERENCE_HEADINGS: Final[frozenset[str]] = frozenset(
    {
        "references",
        "reference",
        "reference list",
        "list of references",
        "bibliography",
        "works cited",
        "work cited",
        "cited works",
        "sources",
        "source",
        "sources and references",
        "references and sources",
        "citations",
        "literature",
        "literature cited",
        "references and notes",
        "notes and references",
        "参考文献",
        "引用文献",
        "参考资料",
        "文献",
        "参考文献列表",
        "主要参考文献",
        "参考书目",
        "引文",
        "引用",
        "来源",
        "资料来源",
        "参考来源",
        "參考文獻",
        "參考資料",
        "引用文獻",
        "資料來源",
        "來源",
    }
)


_ATX = re.compile(r"[ \t]{0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_BOLD_LINE = re.compile(r"[ \t]{0,3}(\*\*|__)(?=\S)(.+?)(?<=\S)\1[ \t]*[:：]?[ \t]*")
_THEMATIC = re.compile(r"[ \t]{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_SETEXT = re.compile(r"[ \t]{0,3}(?:=+|-+)[ \t]*")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+•·・▪●]|\d{1,9}[.)、．]|[(（]\d{1,4}[)）])(?:[ \t]|$)")
_TITLE_NUMBERING = re.compile(
    r"(?:\d+(?:\.\d+)*\.?|(?i:[ivxlcdm]+)\.|[一二三四五六七八九十百]+[、.．]|第[一二三四五六七八九十百\d]+[章节部分篇])\s*"
)
_EDGE_SYMBOLS = re.compile(r"^[^\w]+|[^\w]+$")

_E_FOOTNOTE = re.compile(r"[ \t]{0,3}\[\^(?P<key>[^\]\s]+)\]:[ \t]?(?P<text>.*)")
_E_BRACKET = re.compile(
    r"[ \t]{0,3}(?P<open>[\[【［〔])(?P<key>\d{1,4})(?P<close>[\]】］〕])(?!\()(?::)?[ \t]*(?P<text>.*)"
)
_E_ORDERED = re.compile(r"[ \t]{0,3}(?P<key>\d{1,4})(?:[.)](?=[ \t]|$)|[、．])[ \t]*(?P<text>.*)")
_E_PAREN = re.compile(r"[ \t]{0,3}[(（](?P<key>\d{1,4})[)）][ \t]*(?P<text>.*)")
_E_BULLET = re.compile(r"[ \t]{0,3}[-*+•·・▪●][ \t]+(?P<text>.*)")
_LOOKS_LIKE_REFERENCE = re.compile(
    rf"(?<!\d){_YEAR}(?!\d)|(?i:et\.?\s*al\b|https?://|www\.|doi|arxiv|pmid|pmc\d|10\.\d{{4}})|等[,，.]"
)

_NUMBERED_KINDS: Final = frozenset({"numbered", "ordered"})
_LIST_KINDS: Final = frozenset({"numbered", "ordered", "footnote", "bullet"})


def _normalize_title(title: str) -> str:
    t = unicodedata.normalize("NFKC", title)
    t = re.sub(r"[*_`~]", "", t)
    t = " ".join(t.split())
    t = _TITLE_NUMBERING.sub("", t, count=1) if _TITLE_NUMBERING.match(t) else t
    return _EDGE_SYMBOLS.sub("", t).casefold()


def _heading(content: str) -> tuple[int, str] | None:
    """(level, title) of an ATX heading (1-6) or an all-bold line (7)."""
    if content.lstrip().startswith("#"):
        m = _ATX.fullmatch(content)
        if m:
            return len(m[1]), m[2] or ""
    if "**" in content or "__" in content:
        m = _BOLD_LINE.fullmatch(content)
        if m:
            return 7, m[2]
    return None


def _is_reference_heading(content: str) -> int | None:
    """Level (1-6 ATX, 7 otherwise) when ``content`` opens a reference section."""
    heading = _heading(content)
    if heading is not None:
        return heading[0] if _normalize_title(heading[1]) in REFERENCE_HEADINGS else None
    stripped = content.strip()
    if not stripped or len(stripped) > 60 or _LIST_ITEM.match(content):
        return None
    return 7 if _normalize_title(stripped) in REFERENCE_HEADINGS else None


def parse_references(doc: _Document) -> _Structure:
    """The reference sections and entries of ``doc`` and which line belongs to what."""
    parser = _Parser(doc)
    parser.parse_structure()
    return _Structure(doc.lines, parser.owner, parser.entries, parser.sections)


class _Parser:
    def __init__(self, doc: _Document) -> None:
        self.doc = doc
        self.owner = [-1] * len(doc.lines)  # -1 body, -2 section heading or prose, >= 0 entry index
        self.entries: list[_Entry] = []
        self.sections: list[_Section] = []

    def parse_structure(self) -> None:
        n = len(self.doc.lines)
        i = 0
        while i < n:
            content = self.doc._line(self.doc.textual, i)
            if not content.strip():
                i += 1
                continue
            level = _is_reference_heading(content)
            if level is not None:
                i = self._parse_section(i, level)
                continue
            if "[" in content or "【" in content or "［" in content or "〔" in content:
                start = self._entry_start(content, in_section=False)
                if start is not None:
                    i = self._add_entry(i, start, section=None)
                    continue
            i += 1

    def _entry_start(self, content: str, *, in_section: bool) -> tuple[str, str | None, str, str] | None:
        """(kind, key, label, text) when ``content`` starts a reference entry."""
        m = _E_FOOTNOTE.match(content)
        if m:
            return "footnote", "^" + m["key"].casefold(), f"[^{m['key']}]", m["text"]
        m = _E_BRACKET.match(content)
        if m and _OPEN_CLOSE[m["open"]] == m["close"] and (in_section or (m["open"] == "[" and m["text"].strip())):
            return "numbered", str(int(m["key"])), f"{m['open']}{m['key']}{m['close']}", m["text"]
        if not in_section:
            return None
        m = _E_ORDERED.match(content)
        if m:
            return "ordered", str(int(m["key"])), content.strip().split()[0], m["text"] or ""
        m = _E_PAREN.match(content)
        if m:
            return "numbered", str(int(m["key"])), f"({m['key']})", m["text"]
        m = _E_BULLET.match(content)
        if m:
            return "bullet", None, _quote_label(m["text"]), m["text"]
        return None

    def _new_entry(self, i: int, start: tuple[str, str | None, str, str], section: int | None) -> _Entry:
        kind, key, label, text = start
        line = self.doc.lines.get(self.doc.textual, i)
        offset = self.doc.lines.starts[i] + (len(line) - len(line.lstrip()))
        entry = _Entry(len(self.entries), kind, key, label, i, i, offset, text.strip())
        self.entries.append(entry)
        self.owner[i] = entry.index
        if section is not None:
            self.sections[section].entries.append(entry.index)
        return entry

    def _add_entry(self, i: int, start: tuple[str, str | None, str, str], section: int | None) -> int:
        """A headingless entry: its line plus indented continuation lines."""
        entry = self._new_entry(i, start, section)
        return self._continue_indented(entry, i + 1)

    def _continue_indented(self, entry: _Entry, j: int) -> int:
        n = len(self.doc.lines)
        while j < n:
            content = self.doc._line(self.doc.textual, j)
            if content.strip() and _indent(content) >= 2:
                self._extend(entry, j, content)
                j += 1
                continue
            if not content.strip() and j + 1 < n:
                nxt = self.doc._line(self.doc.textual, j + 1)
                if nxt.strip() and _indent(nxt) >= 4:
                    self._extend(entry, j + 1, nxt)
                    j += 2
                    continue
            break
        return j

    def _extend(self, entry: _Entry, j: int, content: str) -> None:
        entry.text = f"{entry.text}\n{content.strip()}" if entry.text else content.strip()
        entry.last_line = j
        self.owner[j] = entry.index

    def _parse_section(self, i: int, level: int) -> int:
        n = len(self.doc.lines)
        section_index = len(self.sections)
        self.sections.append(_Section(i, self.doc._line(self.doc.textual, i).strip()))
        self.owner[i] = -2
        j = i + 1
        if level == 7 and j < n:
            underline = self.doc._line(self.doc.textual, j)
            if underline.strip() and _SETEXT.fullmatch(underline):
                self.owner[j] = -2
                j += 1
        current: _Entry | None = None
        seen_list = False
        blank = False
        while j < n:
            content = self.doc._line(self.doc.textual, j)
            if not content.strip():
                blank = True
                j += 1
                continue
            heading = _heading(content)
            if heading is not None:
                if _normalize_title(heading[1]) in REFERENCE_HEADINGS or heading[0] <= level:
                    break
                self.owner[j] = -2
                current, blank = None, False
                j += 1
                continue
            if _is_reference_heading(content) is not None or _THEMATIC.fullmatch(content):
                break
            start = self._entry_start(content, in_section=True)
            if start is not None:
                current = self._new_entry(j, start, section_index)
                seen_list, blank = True, False
                j += 1
                continue
            if current is not None and (_indent(content) >= 2 or (not blank and current.kind in _LIST_KINDS)):
                self._extend(current, j, content)
                blank = False
                j += 1
                continue
            if seen_list and blank:
                break
            if (
                j + 1 < n
                and _SETEXT.fullmatch(self.doc._line(self.doc.textual, j + 1))
                and self.doc._line(self.doc.textual, j + 1).strip()
            ):
                break
            has_link = any(c is not None for _, _, c in self.doc._links_on_line(j))
            stripped = content.strip()
            if _LOOKS_LIKE_REFERENCE.search(stripped) or has_link:
                current = self._new_entry(j, ("plain", None, _quote_label(stripped), stripped), section_index)
            elif _PURE_PLACEHOLDER.fullmatch(_strip_punctuation(stripped)) or not _strip_punctuation(stripped):
                self.sections[section_index].placeholder_lines += 1
                self.owner[j] = -2
                current = None
            else:
                self.owner[j] = -2
                current = None
            blank = False
            j += 1
        self._renumber_lazy_ordered(self.sections[section_index])
        return j

    def _renumber_lazy_ordered(self, section: _Section) -> None:
        ordered = [self.entries[k] for k in section.entries if self.entries[k].kind == "ordered"]
        if len(ordered) >= 2 and len({e.key for e in ordered}) == 1 and ordered[0].key is not None:
            first = int(ordered[0].key)
            for offset, entry in enumerate(ordered):
                entry.key = str(first + offset)
