"""Quick-tier Citation check of the Reviewer Specialist (seed 002 §4): a pure function, no I/O.

:func:`check_citations` reads a Markdown reply or document and recognizes its inline citation
markers, its reference sections and entries, its identifiers and its obvious placeholders, then
reports what is missing. The result is a :class:`CitationReport` whose ``to_json()`` is
``{decision, findings: [{code, severity, message, location, marker, key, reason, occurrences}], stats}``.

What is never looked at
    Fenced code blocks (````` and ``~~~``, any indentation, an unclosed fence runs to the end),
    inline code spans (CommonMark backtick runs, within one paragraph), ``<code>``/``<pre>``
    elements, HTML comments, doctest blocks (a ``>>>`` prompt line up to the next blank line) and
    TeX math (``$$..$$``, ``\\[..\\]``, ``\\(..\\)``, and ``$..$`` by Pandoc's rule: no space
    inside the dollars, no digit right after the closing one). Their
    characters are blanked before anything else runs, so a fake citation in code cites nothing.
    Images ``![alt](src)`` are not sources. Indented (4-space) code blocks are *not* recognized:
    in replies they are indistinguishable from list continuations.

Provenance chips (not academic citations; counted in ``stats["provenance_chips"]`` only)
    ``[ev]``, ``[ev1]``, ``[evidence2]``, ``[ev:run-1]``, every structured tag ``[TYPE:ID]``
    (TYPE a letter then letters/digits/``_``/``-``, ID without spaces or brackets; lists such as
    ``[ev1, ev2]`` too) and tool markers ``【4:0†source】``. ``[TYPE:ID]`` tags are the evidence
    citations of the Claims model, checked by the Computation check. Not chips: a URL in
    brackets (``[https://...]``) and a tag whose ID is a placeholder (``[doi:TBD]``,
    ``[citation:TODO]``), which is a placeholder marker.

Inline markers (only in body text: not inside reference sections or entries)
    numeric
        ``[1]``, ``[1, 2]``, ``[1-3]``, ``[1–3]``, ``[1,3-5]``, ``[1; 2]``. Every number is 1..999
        without a leading zero, a range goes up by at most 100, and the expanded list is strictly
        increasing -- so ``[0.5, 0.9]``, ``[3.2 ± 0.1]``, ``[-1, 1]``, ``[0, 1]``, ``[5, 3, 8]``,
        ``[1 2 3]`` and ``[2020]`` are data, not citations. Also not citations: nested bracket
        groups (matrix literals ``[[1, 2], [3, 4]]``), groups after ``=``, ``{`` or ``∈``,
        call arguments (``f([1, 2])``), index expressions (a group right after a one-character
        word or a word containing ``_``: ``x[1]``, ``my_list[2]``, and the groups chained after
        them), checkboxes ``[x]``.
        ``[text][1]`` (a reference-style link to ``[1]: ...``) cites entry 1.
    full-width
        ``【1】``, ``［1, 2］``, ``〔1-3〕`` with ASCII or full-width digits and separators
        (``，``, ``、``, ``；``, ``～``); same number rules. At the start of a line they label a
        list item and are not markers.
    footnote
        ``[^label]`` (label compared case-insensitively); defined by ``[^label]: ...`` at the
        start of a line. Pandoc inline notes ``^[text]`` are self-contained (they resolve
        themselves); ``^[1]`` is a superscript numeric marker.
    author-year
        parenthetical ``(Smith, 2020)``, ``(Smith et al., 2020a)``, ``(Smith & Jones, 2019;
        Lee, 2021)``, ``(see Smith, 2020, p. 4)``, ``（张三等，2020）`` and the same inside square
        brackets; narrative ``Smith et al. (2020)``, ``Smith and Jones (2019)``, ``张三等（2020）``.
        A single author without "et al." needs the comma in the parenthetical form; capitalized
        non-names (months, "In", "Figure", "Version", ...) are never authors. The single-name
        narrative form ``Smith (2020)`` is ambiguous with ``Apple (2020)``: it counts only when
        it resolves to a reference entry, and is otherwise ignored.
    superscript
        ``¹``, ``¹²``, ``¹⁻³``, ``¹,²``, ``<sup>1</sup>``, ``<sup>[1,2]</sup>``, ``^1``, ``^1^``,
        ``^[1]``. They must follow a word of at least three letters (any CJK character counts)
        or closing punctuation (``. , ; : ! ? " ” ’ 。 ， ； ： ！ ？ 」 』 %``): never a digit (``10⁶``,
        ``10^6``), a short word (``m²``, ``x^2``, ``cm³``) or a bracket (``(a+b)²``).
    Numeric, full-width and superscript markers share one namespace: ``[2]`` and ``²`` both
    cite entry 2.

Markdown links
    ``[text](url)`` is not a marker (its text is not scanned); an absolute ``http(s)``/``ftp``
    URL, ``doi:``/``www.`` target counts as an inline source and is classified like any other
    identifier. Relative paths and ``mailto:`` are not sources. A fragment link ``[1](#ref-1)``
    keeps its text, so it is the marker ``[1]``. A link whose target is a placeholder (empty,
    ``#``, ``TODO``, ``TBD``, ``url``, ``link``, ``xxx``, ``...``, ``?``, ``https://doi.org/TODO``)
    is a placeholder source.

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

Identifiers (``stats["identifiers"]``)
    ``doi`` -- ``10.NNNN/...``, ``doi:10...``, ``https://doi.org/10...``; ``arxiv`` --
    ``arXiv:2401.01234v2``, ``arxiv.org/abs/...``, old style ``hep-th/9901001`` (known archive
    names only); ``pmid`` -- ``PMID: 123``, ``pubmed.ncbi.nlm.nih.gov/123``; ``pmc`` --
    ``PMC1234567``, ``PMCID: ...``, NCBI PMC article URLs; ``europepmc`` -- ``europepmc.org/...``,
    ``MED/12345``, ``PPR/...``, ``PMC/PMC...``; ``url`` -- any other ``http(s)://``/``www.`` URL.

Placeholders (:data:`PLACEHOLDER_VALUES` and the patterns below)
    * An identifier label -- ``DOI``, ``PMID``, ``PMCID``, ``arXiv``, ``ISBN``, ``ISSN``; in
      reference entries also ``URL``, ``Link``, ``Source``, ``Available at``, ``链接``, ``网址``,
      ``来源``, ``出处`` -- followed by a placeholder value (``DOI: TODO``, ``PMID: tbd``,
      ``arXiv: ???``, ``doi: xxx``, ``doi:10.xxxx/xxxxx``, ``DOI：待补充``) or by nothing
      (``DOI:`` at the end of a line).
    * Bracketed requests: ``[citation needed]``, ``[source needed]``, ``[ref needed]``,
      ``[needs citation]``, ``(citation needed)``, ``[需要引用]``, ``[来源请求]``, ``【来源待补充】``;
      and, when text precedes them on their line (a line-leading ``[TODO]`` is a task, not a
      citation): ``[?]``, ``[??]``, ``[cite]``, ``[citation]``, ``[ref]``, ``[source]``,
      ``[TODO]``, ``[TBD]``, ``[xxx]``, ``[待补充]``, ``【待补充】``, ``[引用]``, ``[来源]``.
    * Template author-year: ``(Author, Year)``, ``(Author et al., 2020)``, ``(Smith, YYYY)``,
      ``(作者，年份)``, ``[Name, 20XX]``.
    * Inside a reference entry only: the bare words ``TODO``, ``TBD``, ``TBA``, ``FIXME``,
      ``xxx``, ``??``, ``待补充``, ``待定``, ``待查``, ``待确认``, ``占位``, a year ``(Year)``,
      an entry starting ``Author,``/``作者``; an entry that is *only* a placeholder
      (``[3] TBD``) or empty (``[3]``).
    Bare ``TBD``/``TODO``/``待补充`` in body text ("release date: TBD") are not citation
    placeholders.

Findings, severities and the decision
    ===============================  ========  ====================  ==========================================
    code                             severity  reason                when
    ===============================  ========  ====================  ==========================================
    ``CITATION_REFERENCE_MISSING``   error     ``dangling_marker``   an inline marker with no matching entry
                                                                     (one finding per distinct key, at its first
                                                                     occurrence, ``occurrences`` counts them)
    ``CITATION_REFERENCE_MISSING``   error     ``empty_references``  a reference section without entries
    ``CITATION_IDENTIFIER_MISSING``  error     ``placeholder_*``     a placeholder identifier, marker, link or
                                               / ``empty_entry``     entry (one finding per entry, per body
                                                                     occurrence otherwise)
    ``CITATION_MARKER_MISSING``      warning   ``uncited_entry``     an entry nothing in the body points at
    ``CITATION_MARKER_MISSING``      warning   ``no_inline_markers`` entries exist but the body has no marker
                                                                     and no link to any of them (one finding
                                                                     instead of one per entry)
    ===============================  ========  ====================  ==========================================

    Entries that are themselves placeholders get no ``uncited_entry`` warning on top. ``info``
    is part of the :data:`Severity` contract but this check emits none. The decision is
    ``SKIPPED`` when the text cites nothing at all (no marker, placeholder, reference heading,
    entry, identifier or source link; provenance chips do not count), ``REVISE_AND_RETRY`` when
    any finding is an error, and ``ACCEPT_AND_PROCEED`` otherwise (warnings allowed).

Locations are 1-based line and column (in characters) of the original text; ``excerpt`` is
that line, stripped and cut to at most 120 characters around the column.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, Final, Literal

__all__ = [
    "CITATION_IDENTIFIER_MISSING",
    "CITATION_MARKER_MISSING",
    "CITATION_REFERENCE_MISSING",
    "PLACEHOLDER_VALUES",
    "REFERENCE_HEADINGS",
    "CitationReport",
    "Decision",
    "Finding",
    "FindingCode",
    "Location",
    "Severity",
    "check_citations",
]

CITATION_IDENTIFIER_MISSING: Final = "CITATION_IDENTIFIER_MISSING"
CITATION_REFERENCE_MISSING: Final = "CITATION_REFERENCE_MISSING"
CITATION_MARKER_MISSING: Final = "CITATION_MARKER_MISSING"

FindingCode = Literal["CITATION_IDENTIFIER_MISSING", "CITATION_REFERENCE_MISSING", "CITATION_MARKER_MISSING"]
Severity = Literal["error", "warning", "info"]
Decision = Literal["ACCEPT_AND_PROCEED", "REVISE_AND_RETRY", "SKIPPED"]

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

#: Values that, after an identifier label (``DOI: ...``), mean "no identifier yet".
#: Also matched: any token containing ``xxx`` (``10.xxxx/xxxxx``), ``<...>``/``{...}`` templates
#: and runs of ``?``, ``…`` or ``...``.
PLACEHOLDER_VALUES: Final[tuple[str, ...]] = (
    "todo",
    "tbd",
    "tba",
    "tbc",
    "tk",
    "fixme",
    "placeholder",
    "pending",
    "unknown",
    "missing",
    "none",
    "null",
    "n/a",
    "待补充",
    "待定",
    "待查",
    "待确认",
    "暂无",
    "未知",
    "缺失",
    "无",
)

_EXCERPT_WIDTH = 120
_MAX_CITATION_NUMBER = 999
_MAX_RANGE = 100


# --------------------------------------------------------------------------------------------
# Public result types
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Location:
    """1-based ``line`` and ``column`` (characters) in the checked text, and the line's excerpt."""

    line: int
    column: int
    excerpt: str

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "column": self.column, "excerpt": self.excerpt}


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem. ``marker`` is the inline marker as written (None for entry and section findings);
    ``key`` the normalized thing that is missing or uncited (``"3"``, ``"^note"``, ``"smith 2020a"``);
    ``reason`` the rule that fired (see the module docstring); ``occurrences`` how often it fired
    (dangling markers are reported once per key)."""

    code: FindingCode
    severity: Severity
    message: str
    location: Location
    marker: str | None = None
    key: str | None = None
    reason: str = ""
    occurrences: int = 1

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "location": self.location.to_json(),
            "marker": self.marker,
            "key": self.key,
            "reason": self.reason,
            "occurrences": self.occurrences,
        }


@dataclass(frozen=True, slots=True)
class CitationReport:
    """The outcome of :func:`check_citations`; ``findings`` are ordered by location."""

    decision: Decision
    findings: list[Finding]
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def codes(self) -> list[str]:
        """The finding codes, sorted, with multiplicity."""
        return sorted(f.code for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "findings": [f.to_json() for f in self.findings],
            "stats": _copy_stats(self.stats),
        }


def _copy_stats(stats: dict[str, Any]) -> dict[str, Any]:
    return {k: dict(v) if isinstance(v, dict) else v for k, v in stats.items()}


# --------------------------------------------------------------------------------------------
# Text plumbing: lines, offsets, masking
# --------------------------------------------------------------------------------------------

_NOT_NEWLINE = re.compile(r"[^\n]")


def _blank(segment: str) -> str:
    return _NOT_NEWLINE.sub(" ", segment)


def _mask(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with every span's characters (except newlines) replaced by spaces; same length."""
    ordered = sorted(spans)
    if not ordered:
        return text
    out: list[str] = []
    pos = 0
    for begin, end in ordered:
        if end <= pos:
            continue
        cut = max(begin, pos)
        out.append(text[pos:cut])
        out.append(_blank(text[cut:end]))
        pos = end
    out.append(text[pos:])
    return "".join(out)


class _Lines:
    """Line starts of a text, offset to (line, column) conversion and excerpts."""

    def __init__(self, original: str) -> None:
        self.original = original
        self.starts = [0]
        self.starts.extend(m.end() for m in re.finditer("\n", original))

    def __len__(self) -> int:
        return len(self.starts)

    def line_of(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1

    def end_of(self, index: int) -> int:
        """Offset of the end of line ``index`` (its newline excluded)."""
        if index + 1 < len(self.starts):
            return self.starts[index + 1] - 1
        return len(self.original)

    def get(self, text: str, index: int) -> str:
        return text[self.starts[index] : self.end_of(index)]

    def location(self, offset: int) -> Location:
        index = self.line_of(offset)
        start = self.starts[index]
        line = self.original[start : self.end_of(index)].replace("\r", "")
        column = offset - start
        stripped = line.strip()
        lead = len(line) - len(line.lstrip())
        excerpt = stripped
        if len(stripped) > _EXCERPT_WIDTH:
            centre = max(0, column - lead)
            begin = max(0, min(centre - _EXCERPT_WIDTH // 2, len(stripped) - _EXCERPT_WIDTH))
            excerpt = stripped[begin : begin + _EXCERPT_WIDTH]
            excerpt = ("…" if begin else "") + excerpt + ("…" if begin + _EXCERPT_WIDTH < len(stripped) else "")
        return Location(line=index + 1, column=column + 1, excerpt=excerpt)


_QUOTE_PREFIX = re.compile(r"[ \t]{0,3}>(?:[ \t]?>)*[ \t]?")


def _quote_len(line: str) -> int:
    m = _QUOTE_PREFIX.match(line)
    return m.end() if m else 0


_FENCE_OPEN = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)")
_FENCE_CLOSE = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*")


def _fence_spans(text: str, lines: _Lines) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    n = len(lines)
    i = 0
    while i < n:
        line = lines.get(text, i)
        if "`" not in line and "~" not in line:
            i += 1
            continue
        opened = _FENCE_OPEN.match(line, _quote_len(line))
        if opened is None or (opened[1][0] == "`" and "`" in opened[2]):
            i += 1
            continue
        char, size = opened[1][0], len(opened[1])
        end = len(text)
        j = i + 1
        while j < n:
            inner = lines.get(text, j)
            if char in inner:
                closed = _FENCE_CLOSE.fullmatch(inner, _quote_len(inner))
                if closed is not None and closed[1][0] == char and len(closed[1]) >= size:
                    end = lines.end_of(j)
                    break
            j += 1
        spans.append((lines.starts[i], end))
        i = j + 1
    return spans


_BACKTICKS = re.compile(r"`+")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def _code_span_spans(text: str) -> list[tuple[int, int]]:
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)]
    if not runs:
        return []
    breaks = [m.start() for m in _PARAGRAPH_BREAK.finditer(text)]
    following = [-1] * len(runs)
    last_of_length: dict[int, int] = {}
    for k in range(len(runs) - 1, -1, -1):
        size = runs[k][1] - runs[k][0]
        following[k] = last_of_length.get(size, -1)
        last_of_length[size] = k
    spans: list[tuple[int, int]] = []
    k = 0
    while k < len(runs):
        j = following[k]
        if j != -1:
            b = bisect_left(breaks, runs[k][1])
            if b >= len(breaks) or breaks[b] >= runs[j][0]:
                spans.append((runs[k][0], runs[j][1]))
                k = j + 1
                continue
        k += 1
    return spans


_DOCTEST = re.compile(r"^[ \t]*>>>[ \t].*(?:\n[ \t]*\S.*)*", re.MULTILINE)
_HTML_CODE = re.compile(r"<!--[\s\S]*?-->|<(pre|code)\b[^>]*>[\s\S]*?</\1\s*>", re.IGNORECASE)
_NO_PARAGRAPH_BREAK = r"(?:(?!\n[ \t]*\n)[\s\S])"
_DISPLAY_MATH = re.compile(
    rf"\$\${_NO_PARAGRAPH_BREAK}+?\$\$|\\\[{_NO_PARAGRAPH_BREAK}+?\\\]|\\\({_NO_PARAGRAPH_BREAK}+?\\\)"
)
_INLINE_MATH = re.compile(r"(?<![\\$\w])\$(?=[^\s$])[^$\n]*?[^\s$\\]\$(?![\d$])")


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


# --------------------------------------------------------------------------------------------
# Placeholders, chips, links
# --------------------------------------------------------------------------------------------

_PH_WORDS = "|".join(re.escape(v) for v in PLACEHOLDER_VALUES if v.isascii())
_PH_CJK = "|".join(re.escape(v) for v in PLACEHOLDER_VALUES if not v.isascii())
_PH_VALUE = (
    rf"(?:(?i:{_PH_WORDS})(?![\w/])|(?:{_PH_CJK})|(?i:[\w./:-]*xxx[\w./:-]*)|\?+|…+|\.{{3,}}"
    r"|<[^<>\n]{0,40}>|\{[^{}\n]{0,40}\})"
)
_ID_LABELS = r"doi|pmid|pmcid|pmc\s*id|arxiv(?:\s*id)?|isbn|issn"
_ENTRY_LABELS = r"url|link|source|available\s+(?:at|from)|retrieved\s+from|链接|网址|网站|来源|出处"
_LABELED_PLACEHOLDER = re.compile(
    rf"(?<![\w.])(?P<label>(?i:{_ID_LABELS}|{_ENTRY_LABELS}))"
    rf"(?:[ \t]*[:：][ \t]*(?:(?P<value>{_PH_VALUE})|(?P<empty>(?=[ \t]*(?:$|\n|[;；,，)）]))))"
    rf"|[ \t]+(?P<value2>{_PH_VALUE}))",
    re.MULTILINE,
)
_ENTRY_LABEL_ONLY = re.compile(rf"(?i:{_ENTRY_LABELS})\Z")

_PH_SPECIFIC = (
    r"(?i:citations?\s+(?:needed|required|missing|wanted)"
    r"|(?:sources?|refs?|references?)\s+(?:needed|required|missing|wanted)"
    r"|needs?\s+(?:a\s+)?(?:citation|source|reference)s?"
    r"|(?:citation|cite|source|ref|reference)s?\s*[:：]\s*(?:todo|tbd|tba|xxx+|\?+|待补充|待定))"
    r"|需要引用|需要来源|需要引證|来源请求|來源請求|请求来源|引用请求|需要出处|缺少引用|缺少来源"
    r"|引用待补充|来源待补充|出处待补充|文献待补充|参考文献待补充|待引用"
)
_PH_GENERIC = r"(?i:cite|citation|ref|refs|reference|source|todo|tbd|tba|xxx+|\?+)|待补充|待定|引用|来源|出处"
_BRACKET_PAIRS: Final[dict[str, str]] = {"[": "]", "【": "】", "［": "］", "〔": "〕", "(": ")", "（": "）"}
_PLACEHOLDER_SPECIFIC = re.compile(rf"(?P<open>[\[【［(（])\s*(?:{_PH_SPECIFIC})\s*(?P<close>[\]】］)）])")
_PLACEHOLDER_GENERIC = re.compile(rf"(?P<open>[\[【［])\s*(?:{_PH_GENERIC})\s*(?P<close>[\]】］])")

_YEAR = r"(?:1[5-9]\d{2}|20\d{2})[a-z]?"
_PH_AUTHOR = r"(?i:author|authors|author\s+name|name|surname|last\s*name|first\s*author)|作者|著者|姓名|某某"
_PH_YEAR = r"(?i:year|yyyy|xxxx|\d{2}xx)|年份|年代|出版年"
_ET_AL = r"(?:\s*(?i:et\.?\s*al\.?)|\s*等人?)"
_PLACEHOLDER_AUTHOR_YEAR = re.compile(
    rf"(?P<open>[\[(（])\s*(?:(?:{_PH_AUTHOR}){_ET_AL}?\s*[,，]?\s*(?:{_PH_YEAR}|{_YEAR}|n\.d\.)"
    rf"|[^\W\d_][^\W\d_'’\-]*{_ET_AL}?\s*[,，]\s*(?:{_PH_YEAR}))\s*(?P<close>[\])）])"
)
_ENTRY_BARE_PLACEHOLDER = re.compile(
    r"(?<![\w-])(?i:todo|tbd|tba|fixme|xxx+)(?![\w-])|\?{2,}|待补充|待定|待查|待确认|占位"
    r"|\((?i:year|yyyy|xxxx|\d{2}xx)\)|（年份）"
)
_ENTRY_TEMPLATE_AUTHOR = re.compile(r"\s*(?:(?i:authors?)\s*[,.:]|作者\s*[,，.:：])")
_PURE_PLACEHOLDER = re.compile(
    r"(?i:todo|tbd|tba|tbc|fixme|xxx+|\?+|…+|\.+|none|n/?a|pending|placeholder|"
    r"to\s+be\s+(?:added|completed|determined|confirmed|provided)|coming\s+soon|"
    r"(?:references?|citations?|sources?)\s*(?:to\s+be\s+added|tbd|todo|pending|needed))"
    r"|无|暂无|待补充|待定|待查|待确认|略|空|占位|未提供|参考文献待补充|引用待补充|来源待补充"
)

_CHIP_ONE = (
    r"(?:(?i:ev|evidence)(?:\d[\w.\-]*|[-_:.][\w.:/\-]+)?"
    r"|(?!(?i:https?|ftp|mailto|www)\b)[A-Za-z][\w\-]{0,40}:"
    r"(?!(?i:todo|tbd|tba|xxx+|\?+|待补充|待定|none|n/a)\])(?!//)[^\s\[\]`]{1,200})"
)
_CHIP = re.compile(rf"\[\s*{_CHIP_ONE}(?:\s*[,;]\s*{_CHIP_ONE})*\s*\](?!\()|【[^】\n]*†[^】\n]*】")

_LINK = re.compile(
    r"(?P<bang>!?)\[(?P<text>(?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"
    r"\(\s*(?P<target><[^<>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
)
_PLACEHOLDER_TARGETS: Final[frozenset[str]] = frozenset(
    {"", "#", "todo", "tbd", "tba", "url", "link", "...", "…", "?", "??", "???", "none", "null", "placeholder"}
    | {"http://", "https://", "待补充", "链接"}
)


# --------------------------------------------------------------------------------------------
# Identifiers
# --------------------------------------------------------------------------------------------

_URL_EXCLUDED = r"\s<>\"'\[\]{}|\\^`\u3000-\u303f\uff00-\uffef\u4e00-\u9fff"
_URL = re.compile(
    r"(?i)(?<![\w@./])(?:(?:https?|ftp)://|www\.|(?:dx\.)?doi\.org/|arxiv\.org/|europepmc\.org/"
    rf"|pubmed\.ncbi\.nlm\.nih\.gov/)[^{_URL_EXCLUDED}]+"
)
_TRAILING = ".,;:!?*_'\""
_ARXIV_ARCHIVES = (
    "hep-th|hep-ph|hep-ex|hep-lat|gr-qc|astro-ph|cond-mat|quant-ph|math-ph|math|nucl-th|nucl-ex|physics|"
    "nlin|cs|q-bio|q-fin|stat|solv-int|chao-dyn|patt-sol|adap-org|cmp-lg|comp-gas|alg-geom|dg-ga|funct-an|"
    "q-alg|mtrl-th|supr-con|acc-phys|ao-sci|atom-ph|bayes-an|chem-ph|plasm-ph"
)
_ARXIV_ID = rf"(?:\d{{4}}\.\d{{4,5}}|(?:{_ARXIV_ARCHIVES})(?:\.[A-Za-z]{{2}})?/\d{{7}})(?:v\d+)?"
_IDENTIFIER_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("pmc", re.compile(r"(?i)(?<![\w.])pmc\s*id\s*[:：]?\s*(?:pmc)?(?P<id>\d{4,9})\b")),
    ("europepmc", re.compile(r"(?<![\w/])(?P<id>(?:MED|PPR|AGR|CBA|CTX|ETH|HIR|PAT|NBK|PMC)/(?:PMC)?\d{2,12})\b")),
    ("pmc", re.compile(r"(?<![\w/])PMC(?P<id>\d{4,9})\b")),
    ("pmid", re.compile(r"(?i)(?<![\w.])pmid\s*[:：]?\s*(?P<id>\d{1,9})\b")),
    ("arxiv", re.compile(rf"(?i)(?<![\w.])arxiv\s*[:：]?\s*(?P<id>{_ARXIV_ID})(?!\w)")),
    ("arxiv", re.compile(rf"(?<![\w/.\-])(?P<id>(?:{_ARXIV_ARCHIVES})(?:\.[A-Z]{{2}})?/\d{{7}}(?:v\d+)?)(?!\w)")),
    ("doi", re.compile(rf"(?i)(?<![\w./])(?:doi\s*[:：]\s*)?(?P<id>10\.\d{{4,9}}/[^{_URL_EXCLUDED}]+)")),
)
IDENTIFIER_KINDS: Final[tuple[str, ...]] = ("doi", "arxiv", "pmid", "pmc", "europepmc", "url")


def _trim(value: str) -> str:
    """Strip trailing punctuation and unbalanced closing brackets from a URL or DOI."""
    while value:
        last = value[-1]
        if last in _TRAILING or (last == ")" and value.count("(") < value.count(")")):
            value = value[:-1]
        else:
            break
    return value


_VERSION_SUFFIX = re.compile(r"v\d+\Z")


def _normalize_identifier(kind: str, value: str) -> str:
    if kind == "doi":
        return "doi:" + value.lower()
    if kind == "arxiv":
        return "arxiv:" + _VERSION_SUFFIX.sub("", value.lower())
    if kind in {"pmid", "pmc"}:
        return f"{kind}:{int(value)}"
    if kind == "europepmc":
        return "europepmc:" + value.upper()
    url = re.sub(r"(?i)^(?:https?|ftp)://", "", value)
    url = re.sub(r"(?i)^www\.", "", url)
    return "url:" + url.rstrip("/").lower()


_DOI_PATH = re.compile(r"10\.\d{4,9}/\S+")
_PLACEHOLDER_SEGMENT = re.compile(r"(?i)(?:^|[/.=])(?:todo|tbd|tba|x{3,}|placeholder|\.\.\.|…)(?:$|[/.?#&])")


def _classify_url(url: str) -> tuple[str, str] | None:
    """(kind, normalized) of a URL; ``("placeholder", url)`` for a placeholder; None for a non-source."""
    bare = re.sub(r"(?i)^(?:https?|ftp)://", "", url)
    host, _, path = bare.partition("/")
    host = host.lower()
    if not host or _PLACEHOLDER_SEGMENT.search(bare) or host in {"todo", "tbd", "url", "link", "placeholder"}:
        return ("placeholder", url)
    if host.endswith("doi.org"):
        doi = re.sub(r"(?i)^doi:", "", path)
        if _DOI_PATH.fullmatch(doi) and "xxx" not in doi.lower():
            return ("doi", _normalize_identifier("doi", doi))
        return ("placeholder", url)
    if host.endswith("arxiv.org"):
        m = re.search(rf"(?:abs|pdf)/(?P<id>{_ARXIV_ID})", path)
        if m:
            return ("arxiv", _normalize_identifier("arxiv", m["id"]))
    if "ncbi.nlm.nih.gov" in host:
        m = re.search(r"(?i)PMC(\d{4,9})", path)
        if m:
            return ("pmc", _normalize_identifier("pmc", m[1]))
        m = re.match(r"(?:pubmed/)?(\d{1,9})\b", path)
        if m and "pubmed" in host + path:
            return ("pmid", _normalize_identifier("pmid", m[1]))
    if host.endswith("europepmc.org"):
        m = re.search(r"(?i)\b(MED|PMC|PPR|AGR|CBA|CTX|ETH|HIR|PAT|NBK)/(\w+)", path)
        if m:
            return ("europepmc", _normalize_identifier("europepmc", f"{m[1]}/{m[2]}"))
    return ("url", _normalize_identifier("url", url))


def _classify_target(target: str) -> tuple[str, str] | None:
    """A link target as a source: (kind, normalized), ``("placeholder", ...)``, or None (not a source)."""
    t = target.strip().strip("<>").strip()
    if t.lower() in _PLACEHOLDER_TARGETS or re.fullmatch(r"(?i)x{3,}|\?+|\.{2,}", t):
        return ("placeholder", t)
    if t.startswith("#"):
        return None
    if re.match(r"(?i)(?:https?|ftp)://|www\.", t):
        return _classify_url(_trim(t))
    m = re.fullmatch(r"(?i)doi:\s*(.+)", t)
    if m:
        doi = m[1]
        if _DOI_PATH.fullmatch(doi) and "xxx" not in doi.lower():
            return ("doi", _normalize_identifier("doi", doi))
        return ("placeholder", t)
    if _DOI_PATH.fullmatch(t):
        return ("doi", _normalize_identifier("doi", t))
    return None


# --------------------------------------------------------------------------------------------
# Inline markers
# --------------------------------------------------------------------------------------------

_OPEN_CLOSE: Final[dict[str, str]] = {"[": "]", "【": "】", "［": "］", "〔": "〕"}
_NUMERIC_GROUP = re.compile(r"(?P<open>[\[【［〔])(?P<body>[ \t]*\d[\d \t,，、;；\-–—~～]*?)(?P<close>[\]】］〕])")
_LIST_SEPARATORS = re.compile(r"[,，、;；]")
_NUMERIC_ITEM = re.compile(r"(\d+)(?:\s*[-–—~～]\s*(\d+))?")
_FOOTNOTE_REF = re.compile(r"\[\^(?P<label>[^\]\s]+)\]")
_INLINE_NOTE = re.compile(r"\^\[(?P<body>[^\[\]\n]+)\]")
_SUP_TAG = re.compile(r"(?i)<sup>\s*\[?\s*(?P<body>\d[\d\s,\-–]*?)\s*\]?\s*</sup>")
_SUP_UNICODE = re.compile(r"[⁰¹²³⁴⁵⁶⁷⁸⁹]+(?:[,˒⁻\-–][⁰¹²³⁴⁵⁶⁷⁸⁹]+)*(?![⁰¹²³⁴⁵⁶⁷⁸⁹\w])")
_SUP_CARET = re.compile(r"\^(?P<body>\d{1,3}(?:[,\-–]\d{1,3})*)\^?(?![\w^])")
_SUPERSCRIPT_TABLE = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻˒", "0123456789-,")
_SUP_PUNCTUATION = frozenset(".,;:!?\"'”’。，；：！？」』%")


def _is_zero_digit(char: str) -> bool:
    return unicodedata.digit(char, -1) == 0


def _parse_numbers(body: str) -> list[int] | None:
    """The citation numbers of ``1, 3-5`` or None when it is not a citation list (see module docs)."""
    numbers: list[int] = []
    for raw in _LIST_SEPARATORS.split(body):
        item = raw.strip()
        m = _NUMERIC_ITEM.fullmatch(item)
        if m is None or _is_zero_digit(m[1][0]):
            return None
        first = int(m[1])
        if m[2] is None:
            numbers.append(first)
            continue
        if _is_zero_digit(m[2][0]):
            return None
        last = int(m[2])
        if not first < last or last - first > _MAX_RANGE:
            return None
        numbers.extend(range(first, last + 1))
    if not numbers or numbers[0] < 1 or numbers[-1] > _MAX_CITATION_NUMBER:
        return None
    if any(a >= b for a, b in pairwise(numbers)):
        return None
    return numbers


def _is_cjk(char: str) -> bool:
    return "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff"


def _superscript_context(text: str, pos: int) -> bool:
    """May a superscript at ``pos`` be a citation (see module docs)?"""
    if pos == 0:
        return False
    before = text[pos - 1]
    if before in _SUP_PUNCTUATION:
        return True
    if not before.isalpha():
        return False
    j = pos - 1
    while j >= 0 and text[j].isalpha():
        if _is_cjk(text[j]):
            return True
        j -= 1
    return pos - 1 - j >= 3


_NOT_SURNAMES_TEXT = """
january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday
sunday spring summer autumn fall winter in on at the a an and or of for from to by since until before
after during as per circa ca see also cf eg ie year years fy fiscal quarter census version release
released published updated revised founded established copyright edition table figure fig section
chapter page vol no est total author authors name surname lastname note notes source sources data
"""
_NOT_SURNAMES: Final[frozenset[str]] = frozenset(_NOT_SURNAMES_TEXT.split())
_PARTICLES = (
    r"(?:(?:van|von|der|den|de|del|della|di|da|du|le|la|dos|das|ter|ten|al|el|bin|ibn"
    r"|Van|Von|De|Del|Di|Da|Du|Le|La)\s+)"
)
_NAME_WORD = r"(?:[^\W\d_\u3400-\u9fff]+(?:[-'’][^\W\d_\u3400-\u9fff]+)*|(?:(?!等)[\u3400-\u9fff]){1,4})"
_SURNAME = rf"{_PARTICLES}{{0,3}}{_NAME_WORD}"
_AUTHORS = (
    rf"(?P<first>{_SURNAME})"
    rf"(?P<tail>{_ET_AL}|(?:\s*[,，]\s*{_SURNAME})*\s*[,，]?\s*(?:&|and|和|与|及|、)\s*{_SURNAME})?"
)
_YEARS = rf"(?P<year>{_YEAR}|n\.\s?d\.|in\s+press|forthcoming)(?:\s*[,，]\s*(?:{_YEAR}))*"
_PAGES = r"(?:\s*[,，:]\s*(?:pp?\.?\s*|第\s*)?\d+(?:\s*[-–]\s*\d+)?\s*页?)?"
_PREFIX_WORDS = r"(?:(?i:e\.g\.|see\s+also|see|cf\.|i\.e\.|also|as\s+cited\s+in)|参见|參見|见)\s*,?\s*"
_AUTHOR_YEAR_ITEM = re.compile(rf"\s*(?:{_PREFIX_WORDS})?{_AUTHORS}(?P<sep>\s*[,，]?\s*){_YEARS}{_PAGES}\s*")
_AUTHOR_YEAR_GROUP = re.compile(r"(?P<open>[(（\[])(?P<body>[^()（）\[\]\n]{4,300})(?P<close>[)）\]])")
_NARRATIVE_YEAR = re.compile(rf"[(（]\s*(?P<years>{_YEAR}(?:\s*[,;，；]\s*{_YEAR})*){_PAGES}\s*[)）]")
_NARRATIVE_AUTHORS = re.compile(rf"(?<![\w\-'’])(?:{_AUTHORS})\s*\Z")


def _valid_surname(name: str) -> bool:
    words = name.split()
    last = words[-1] if words else ""
    if not last or last[0].islower() or last.casefold() in _NOT_SURNAMES:
        return False
    return not (len(last) < 2 and not _is_cjk(last[0]))


def _year_key(year: str) -> str:
    return re.sub(r"\s+", "", year).casefold()


_ENTRY_YEAR = re.compile(r"(?<!\d)((?:1[5-9]\d{2}|20\d{2})[a-z]?(?![A-Za-z\d])|n\.\s?d\.|in\s+press|forthcoming)")


def _surname_key(name: str) -> str:
    name = re.sub(r"(?:等人|等)\Z", "", name.strip())
    return " ".join(name.split()).casefold()


# --------------------------------------------------------------------------------------------
# Structure: headings, sections, entries
# --------------------------------------------------------------------------------------------

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
    has_link: bool = False
    identifiers: set[str] = field(default_factory=set)
    placeholders: list[str] = field(default_factory=list)
    cited: bool = False


@dataclass(slots=True)
class _Section:
    heading_line: int
    title: str
    entries: list[int] = field(default_factory=list)
    placeholder_lines: int = 0


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


def _indent(line: str) -> int:
    width = 0
    for char in line:
        if char == " ":
            width += 1
        elif char == "\t":
            width += 4
        else:
            break
    return width


# --------------------------------------------------------------------------------------------
# The check
# --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Marker:
    kind: str  # numeric | fullwidth | footnote | author_year | superscript | inline_note
    raw: str
    start: int
    keys: list[str]
    tentative: bool = False


@dataclass(slots=True)
class _Ident:
    kind: str
    norm: str
    start: int
    raw: str


class _Checker:
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
        self.full = _mask(self.full, self._nested_bracket_spans(self.full))
        n = len(self.lines)
        self.owner = [-1] * n  # -1 body, -2 section heading or prose, >= 0 entry index
        self.entries: list[_Entry] = []
        self.sections: list[_Section] = []
        self.findings: list[Finding] = []

    # ---- masking helpers ------------------------------------------------------------------

    @staticmethod
    def _nested_bracket_spans(text: str) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        stack: list[list[int]] = []
        for m in re.finditer(r"[\[\]\n]", text):
            char = m.group()
            if char == "\n":
                stack.clear()
            elif char == "[":
                if stack:
                    stack[-1][1] = 1
                stack.append([m.start(), 0])
            elif stack:
                start, has_child = stack.pop()
                if has_child and not stack:
                    spans.append((start, m.end()))
        return spans

    def _line(self, text: str, index: int) -> str:
        line = self.lines.get(text, index)
        return line[_quote_len(line) :] if ">" in line[:8] else line

    # ---- structure -------------------------------------------------------------------------

    def parse_structure(self) -> None:
        n = len(self.lines)
        i = 0
        while i < n:
            content = self._line(self.textual, i)
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
        line = self.lines.get(self.textual, i)
        offset = self.lines.starts[i] + (len(line) - len(line.lstrip()))
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
        n = len(self.lines)
        while j < n:
            content = self._line(self.textual, j)
            if content.strip() and _indent(content) >= 2:
                self._extend(entry, j, content)
                j += 1
                continue
            if not content.strip() and j + 1 < n:
                nxt = self._line(self.textual, j + 1)
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
        n = len(self.lines)
        section_index = len(self.sections)
        self.sections.append(_Section(i, self._line(self.textual, i).strip()))
        self.owner[i] = -2
        j = i + 1
        if level == 7 and j < n:
            underline = self._line(self.textual, j)
            if underline.strip() and _SETEXT.fullmatch(underline):
                self.owner[j] = -2
                j += 1
        current: _Entry | None = None
        seen_list = False
        blank = False
        while j < n:
            content = self._line(self.textual, j)
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
                and _SETEXT.fullmatch(self._line(self.textual, j + 1))
                and self._line(self.textual, j + 1).strip()
            ):
                break
            has_link = any(c is not None for _, _, c in self._links_on_line(j))
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

    def _links_on_line(self, j: int) -> list[tuple[int, str, tuple[str, str] | None]]:
        return self._links_between(self.lines.starts[j], self.lines.end_of(j))

    def _links_between(self, lo: int, hi: int) -> list[tuple[int, str, tuple[str, str] | None]]:
        return self.links[bisect_left(self.link_starts, lo) : bisect_right(self.link_starts, hi)]

    def _renumber_lazy_ordered(self, section: _Section) -> None:
        ordered = [self.entries[k] for k in section.entries if self.entries[k].kind == "ordered"]
        if len(ordered) >= 2 and len({e.key for e in ordered}) == 1 and ordered[0].key is not None:
            first = int(ordered[0].key)
            for offset, entry in enumerate(ordered):
                entry.key = str(first + offset)

    # ---- markers ---------------------------------------------------------------------------

    def _is_body(self, offset: int) -> bool:
        return self.owner[self.lines.line_of(offset)] == -1

    def scan_markers(self) -> list[_Marker]:
        text = self.full
        markers: list[_Marker] = []
        consumed: list[tuple[int, int]] = []

        for m in _INLINE_NOTE.finditer(text):
            if not self._is_body(m.start()):
                continue
            consumed.append(m.span())
            numbers = _parse_numbers(m["body"])
            if numbers is not None and _superscript_context(text, m.start()):
                markers.append(_Marker("superscript", m.group(), m.start(), [str(x) for x in numbers]))
            elif numbers is None:
                markers.append(_Marker("inline_note", m.group(), m.start(), []))
        for m in _SUP_TAG.finditer(text):
            if not self._is_body(m.start()):
                continue
            consumed.append(m.span())
            numbers = _parse_numbers(m["body"])
            if numbers is not None and _superscript_context(text, m.start()):
                markers.append(_Marker("superscript", m.group(), m.start(), [str(x) for x in numbers]))
        text = _mask(text, consumed)

        for m in _FOOTNOTE_REF.finditer(text):
            if self._is_body(m.start()):
                markers.append(_Marker("footnote", m.group(), m.start(), ["^" + m["label"].casefold()]))

        excluded_until = -1
        for m in _NUMERIC_GROUP.finditer(text):
            if _OPEN_CLOSE[m["open"]] != m["close"] or not self._is_body(m.start()):
                continue
            numbers = _parse_numbers(m["body"])
            if numbers is None:
                continue
            if m["open"] == "[" and self._index_like(text, m.start(), excluded_until):
                excluded_until = m.end()
                continue
            kind = "numeric" if m["open"] == "[" else "fullwidth"
            if kind == "fullwidth":
                line_start = self.lines.starts[self.lines.line_of(m.start())]
                if not text[line_start : m.start()].strip(" \t>"):
                    continue  # a line-leading 【n】 labels a list item
            markers.append(_Marker(kind, m.group(), m.start(), [str(x) for x in numbers]))

        for m in _AUTHOR_YEAR_GROUP.finditer(text):
            if _BRACKET_PAIRS[m["open"]] != m["close"] or not self._is_body(m.start()):
                continue
            for item in re.split(r"[;；]", m["body"]):
                parsed = _AUTHOR_YEAR_ITEM.fullmatch(item)
                if parsed is None or not _valid_surname(parsed["first"]):
                    continue
                if not parsed["tail"] and "," not in parsed["sep"] and "，" not in parsed["sep"]:
                    continue
                key = f"{_surname_key(parsed['first'])} {_year_key(parsed['year'])}"
                markers.append(_Marker("author_year", m.group(), m.start() + 1 + m["body"].find(item), [key]))

        for m in _NARRATIVE_YEAR.finditer(text):
            if not self._is_body(m.start()):
                continue
            line_start = self.lines.starts[self.lines.line_of(m.start())]
            window = text[max(line_start, m.start() - 80) : m.start()]
            names = _NARRATIVE_AUTHORS.search(window)
            while names is not None and not _valid_surname(names["first"]):
                names = _NARRATIVE_AUTHORS.search(window, names.end("first"))
            if names is None:
                continue
            first = names["first"]
            if _is_cjk(first[-1]) and not names["tail"]:
                continue
            years = re.findall(rf"{_YEAR}", m["years"])
            start = m.start() - len(window) + names.start()
            keys = [f"{_surname_key(first)} {_year_key(y)}" for y in years]
            markers.append(_Marker("author_year", text[start : m.end()], start, keys, tentative=not names["tail"]))

        for pattern in (_SUP_UNICODE, _SUP_CARET):
            for m in pattern.finditer(text):
                if not self._is_body(m.start()) or not _superscript_context(text, m.start()):
                    continue
                body = m["body"] if pattern is _SUP_CARET else m.group().translate(_SUPERSCRIPT_TABLE)
                numbers = _parse_numbers(body)
                if numbers is not None:
                    markers.append(_Marker("superscript", m.group(), m.start(), [str(x) for x in numbers]))
        markers.sort(key=lambda mk: mk.start)
        return markers

    @staticmethod
    def _index_like(text: str, start: int, excluded_until: int) -> bool:
        """Is the ``[`` at ``start`` an index, a data literal or a chained index (module docs)?"""
        if start > 0 and text[start - 1] == "]" and excluded_until == start:
            return True
        j = start - 1
        while j >= 0 and text[j] in " \t":
            j -= 1
        if j >= 0 and text[j] in "=[{∈":
            return True
        if start > 1 and text[start - 1] == "(" and (text[start - 2].isalnum() or text[start - 2] == "_"):
            return True  # a call argument: f([1, 2])
        k = start
        while k > 0 and (text[k - 1].isalnum() or text[k - 1] == "_"):
            k -= 1
        token = text[k:start]
        return bool(token) and (len(token) == 1 or "_" in token)

    # ---- placeholders and identifiers -------------------------------------------------------

    def scan_placeholders(self) -> tuple[list[tuple[int, str, str]], str]:
        """Body placeholders (offset, raw, reason); entry placeholders go to the entries.
        Returns the text with every placeholder blanked (for the identifier scan)."""
        text = self.full
        found: list[tuple[int, str, str]] = []
        spans: list[tuple[int, int]] = []

        def place(start: int, raw: str, reason: str, end: int) -> None:
            spans.append((start, end))
            owner = self.owner[self.lines.line_of(start)]
            if owner >= 0:
                self.entries[owner].placeholders.append(raw)
            elif owner == -1:
                found.append((start, raw, reason))

        for m in _LABELED_PLACEHOLDER.finditer(text):
            label = m["label"]
            in_entry = self.owner[self.lines.line_of(m.start())] >= 0
            if _ENTRY_LABEL_ONLY.match(label) and not in_entry:
                continue
            if m["empty"] is not None and m["label"].lower().startswith(("source", "来源", "出处")):
                continue
            place(m.start(), m.group().strip(), "placeholder_identifier", m.end())
        for pattern, generic in ((_PLACEHOLDER_SPECIFIC, False), (_PLACEHOLDER_GENERIC, True)):
            for m in pattern.finditer(text):
                if _BRACKET_PAIRS[m["open"]] != m["close"]:
                    continue
                if generic:
                    line_start = self.lines.starts[self.lines.line_of(m.start())]
                    before = text[line_start : m.start()]
                    if not re.sub(r"^[ \t>]*(?:[-*+]|\d+[.)])?[ \t]*", "", before).strip():
                        continue
                place(m.start(), m.group(), "placeholder_marker", m.end())
        for m in _PLACEHOLDER_AUTHOR_YEAR.finditer(text):
            if _BRACKET_PAIRS[m["open"]] == m["close"]:
                place(m.start(), m.group(), "placeholder_marker", m.end())
        for m in _ENTRY_BARE_PLACEHOLDER.finditer(_mask(text, spans)):
            owner = self.owner[self.lines.line_of(m.start())]
            if owner >= 0:
                self.entries[owner].placeholders.append(m.group())
                spans.append(m.span())
        for entry in self.entries:
            if _ENTRY_TEMPLATE_AUTHOR.match(entry.text):
                entry.placeholders.append(entry.text.split()[0])
        for start, raw, classified in self.links:
            if classified is not None and classified[0] == "placeholder":
                owner = self.owner[self.lines.line_of(start)]
                if owner >= 0:
                    self.entries[owner].placeholders.append(raw)
                elif owner == -1:
                    found.append((start, raw, "placeholder_link"))
        found.sort()
        return found, _mask(text, spans)

    def scan_identifiers(self, text: str) -> list[_Ident]:
        idents: list[_Ident] = []
        spans: list[tuple[int, int]] = []
        for m in _URL.finditer(text):
            raw = _trim(m.group())
            classified = _classify_url(raw)
            spans.append(m.span())
            if classified is not None and classified[0] != "placeholder":
                idents.append(_Ident(classified[0], classified[1], m.start(), raw))
        text = _mask(text, spans)
        for kind, pattern in _IDENTIFIER_PATTERNS:
            spans = []
            for m in pattern.finditer(text):
                value = _trim(m["id"]) if kind == "doi" else m["id"]
                idents.append(_Ident(kind, _normalize_identifier(kind, value), m.start(), m.group()))
                spans.append(m.span())
            if spans:
                text = _mask(text, spans)
        for start, raw, classified in self.links:
            if classified is not None and classified[0] != "placeholder":
                idents.append(_Ident(classified[0], classified[1], start, raw))
        idents.sort(key=lambda x: x.start)
        return idents

    # ---- findings --------------------------------------------------------------------------

    def add(self, code: FindingCode, severity: Severity, message: str, offset: int, **extra: Any) -> None:
        self.findings.append(Finding(code, severity, message, self.lines.location(offset), **extra))

    def run(self) -> CitationReport:
        self.parse_structure()
        for entry in self.entries:
            lo, hi = self.lines.starts[entry.first_line], self.lines.end_of(entry.last_line)
            entry.has_link = any(c is not None for _, _, c in self._links_between(lo, hi))
        markers = self.scan_markers()
        body_placeholders, id_text = self.scan_placeholders()
        idents = self.scan_identifiers(id_text)

        body_ids: set[str] = set()
        for ident in idents:
            owner = self.owner[self.lines.line_of(ident.start)]
            if owner >= 0:
                self.entries[owner].identifiers.add(ident.norm)
            elif owner == -1:
                body_ids.add(ident.norm)

        numbered: dict[str, list[_Entry]] = {}
        footnotes: dict[str, list[_Entry]] = {}
        unnumbered: list[_Entry] = []
        for entry in self.entries:
            if entry.kind in _NUMBERED_KINDS and entry.key is not None:
                numbered.setdefault(entry.key, []).append(entry)
            elif entry.kind == "footnote" and entry.key is not None:
                footnotes.setdefault(entry.key, []).append(entry)
            else:
                unnumbered.append(entry)
        by_year: dict[str, list[_Entry]] = {}
        for entry in self.entries:
            for year in {_year_key(y) for y in _ENTRY_YEAR.findall(entry.text)}:
                by_year.setdefault(year, []).append(entry)
        self._author_year_cache: dict[str, list[_Entry]] = {}

        def resolve(kind: str, key: str) -> list[_Entry]:
            if kind == "footnote":
                return footnotes.get(key, [])
            if kind in {"numeric", "fullwidth", "superscript"}:
                if numbered:
                    return numbered.get(key, [])
                position = int(key) - 1
                return [unnumbered[position]] if position < len(unnumbered) else []
            return self._resolve_author_year(key, by_year)

        dangling: dict[tuple[str, str], list[_Marker]] = {}
        counted: list[_Marker] = []
        for marker in markers:
            if marker.kind == "inline_note":
                counted.append(marker)
                continue
            group = "footnote" if marker.kind == "footnote" else "author_year" if marker.kind == "author_year" else "n"
            hits = [resolve(marker.kind, key) for key in marker.keys]
            if marker.tentative and not any(hits):
                continue
            counted.append(marker)
            for key, found in zip(marker.keys, hits, strict=True):
                for entry in found:
                    entry.cited = True
                if not found:
                    dangling.setdefault((group, key), []).append(marker)
        for entry in self.entries:
            if entry.identifiers & body_ids:
                entry.cited = True

        for (group, key), where in dangling.items():
            first = where[0]
            if group == "footnote":
                message = f"footnote {first.raw!r} has no definition ([{key}]: ...)"
            elif group == "author_year":
                message = f"citation {first.raw!r} matches no reference entry (looked for {key!r})"
            else:
                message = f"citation marker {first.raw!r} points at reference {key}, which no reference entry defines"
            if len(where) > 1:
                message += f"; cited {len(where)} times"
            self.add(
                CITATION_REFERENCE_MISSING,
                "error",
                message,
                first.start,
                marker=first.raw,
                key=key,
                reason="dangling_marker",
                occurrences=len(where),
            )
        for section in self.sections:
            if not section.entries:
                offset = self.lines.starts[section.heading_line]
                note = " (only a placeholder)" if section.placeholder_lines else ""
                self.add(
                    CITATION_REFERENCE_MISSING,
                    "error",
                    f"reference section {section.title!r} has no entries{note}",
                    offset,
                    reason="empty_references",
                )
        for offset, raw, reason in body_placeholders:
            self.add(
                CITATION_IDENTIFIER_MISSING,
                "error",
                f"placeholder instead of a source: {raw!r}",
                offset,
                marker=raw if reason != "placeholder_identifier" else None,
                reason=reason,
            )
        placeholder_entries: set[int] = set()
        for entry in self.entries:
            raw_text = entry.text.strip()
            bare = _strip_punctuation(raw_text)
            if not raw_text and not entry.has_link:
                reason, what = "empty_entry", "is empty"
            elif not entry.has_link and (
                not bare or _PURE_PLACEHOLDER.fullmatch(bare) or _PURE_PLACEHOLDER.fullmatch(raw_text)
            ):
                reason, what = "placeholder_entry", f"is only a placeholder ({entry.text.strip()!r})"
            elif entry.placeholders:
                shown = ", ".join(repr(p) for p in dict.fromkeys(entry.placeholders))
                reason, what = "placeholder_identifier", f"has a placeholder instead of an identifier: {shown}"
            else:
                continue
            placeholder_entries.add(entry.index)
            self.add(
                CITATION_IDENTIFIER_MISSING,
                "error",
                f"reference entry {entry.label} {what}",
                entry.start,
                key=entry.key,
                reason=reason,
                occurrences=max(1, len(entry.placeholders)),
            )
        real_markers = [mk for mk in counted if mk.kind != "inline_note"]
        if self.entries and not real_markers and not any(e.cited for e in self.entries):
            first_entry = min(self.entries, key=lambda e: e.start)
            anchor = (
                self.lines.starts[self.sections[0].heading_line]
                if self.sections and self.sections[0].entries
                else first_entry.start
            )
            self.add(
                CITATION_MARKER_MISSING,
                "warning",
                f"{len(self.entries)} reference entr{'y' if len(self.entries) == 1 else 'ies'} but no inline "
                "citation marker in the text points at any of them",
                anchor,
                reason="no_inline_markers",
                occurrences=len(self.entries),
            )
        else:
            for entry in self.entries:
                if entry.cited or entry.index in placeholder_entries:
                    continue
                self.add(
                    CITATION_MARKER_MISSING,
                    "warning",
                    f"reference entry {entry.label} is never cited in the text",
                    entry.start,
                    key=entry.key,
                    reason="uncited_entry",
                )

        self.findings.sort(key=lambda f: (f.location.line, f.location.column, f.code, f.key or ""))
        source_links = sum(1 for _, _, c in self.links if c is not None and c[0] != "placeholder")
        cites_anything = bool(counted or body_placeholders or self.sections or self.entries or idents or source_links)
        if not cites_anything:
            decision: Decision = "SKIPPED"
        elif any(f.severity == "error" for f in self.findings):
            decision = "REVISE_AND_RETRY"
        else:
            decision = "ACCEPT_AND_PROCEED"
        by_kind = dict.fromkeys(("numeric", "fullwidth", "footnote", "author_year", "superscript", "inline_note"), 0)
        for mk in counted:
            by_kind[mk.kind] += 1
        id_counts = dict.fromkeys(IDENTIFIER_KINDS, 0)
        for ident in idents:
            id_counts[ident.kind] += 1
        stats: dict[str, Any] = {
            "characters": len(self.original),
            "lines": len(self.lines),
            "code_blocks": self.code_blocks,
            "markers": by_kind,
            "reference_sections": len(self.sections),
            "reference_entries": len(self.entries),
            "cited_entries": sum(e.cited for e in self.entries),
            "dangling_markers": len(dangling),
            "identifiers": id_counts,
            "placeholders": len(body_placeholders) + len(placeholder_entries),
            "links": source_links,
            "provenance_chips": self.chip_count,
        }
        return CitationReport(decision=decision, findings=self.findings, stats=stats)

    def _resolve_author_year(self, key: str, by_year: dict[str, list[_Entry]]) -> list[_Entry]:
        cached = self._author_year_cache.get(key)
        if cached is not None:
            return cached
        surname, _, year = key.rpartition(" ")
        candidates = list(by_year.get(year, []))
        if re.fullmatch(r"\d{4}", year):
            for other, entries in by_year.items():
                if other != year and other.startswith(year):
                    candidates.extend(entries)
        found: dict[int, _Entry] = {}
        cjk = bool(surname) and _is_cjk(surname[-1])
        word = re.compile(rf"(?<!\w){re.escape(surname)}(?!\w)")
        for entry in candidates:
            haystack = entry.text.casefold()
            if cjk:
                hit = surname in haystack or any(surname[-k:] in haystack for k in range(min(len(surname), 4), 1, -1))
            else:
                hit = word.search(haystack) is not None
            if hit:
                found[entry.index] = entry
        result = list(found.values())
        self._author_year_cache[key] = result
        return result


def _quote_label(text: str) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= 40 else text[:40] + "…")


def _strip_punctuation(text: str) -> str:
    return re.sub(r"[\s\W_]+", " ", text).strip() if text else ""


def check_citations(text: str) -> CitationReport:
    """The Quick-tier Citation check of ``text`` (Markdown); see the module docstring for every rule."""
    return _Checker(text).run()
