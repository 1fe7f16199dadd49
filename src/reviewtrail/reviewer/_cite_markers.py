"""Inline citation markers of the Citation check (see :mod:`._citations`).

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
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from itertools import pairwise
from typing import Final

from reviewtrail.reviewer._cite_document import _Document, _Structure
from reviewtrail.reviewer._cite_placeholders import _BRACKET_PAIRS, _ET_AL, _YEAR
from reviewtrail.reviewer._cite_text import _is_cjk, _mask

__all__ = ["scan_markers"]

_MAX_CITATION_NUMBER = 999
_MAX_RANGE = 100

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
# What may precede a value list on its line: a name containing ``_``, ``=`` or ``:``, each
# optionally followed by a table cell separator.
_DATA_PREFIX = re.compile(r"(?:[^\W\d]\w*_\w+|\w+_|[=:])[ \t]*(?:\|[ \t]*)?\Z")


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
    # Never empty, and numbers[0] >= 1: every item matched and a leading zero was refused.
    if numbers[-1] > _MAX_CITATION_NUMBER or any(a >= b for a, b in pairwise(numbers)):
        return None
    return numbers


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
    last = name.rsplit(maxsplit=1)[-1]  # a surname match always ends in a name word
    if last[0].islower() or last.casefold() in _NOT_SURNAMES:
        return False
    return len(last) >= 2 or _is_cjk(last[0])


def _year_key(year: str) -> str:
    return re.sub(r"\s+", "", year).casefold()


_ENTRY_YEAR = re.compile(r"(?<!\d)((?:1[5-9]\d{2}|20\d{2})[a-z]?(?![A-Za-z\d])|n\.\s?d\.|in\s+press|forthcoming)")


def _surname_key(name: str) -> str:
    # A surname match never holds "等" (it is the "et al." of Chinese text, outside the name).
    return " ".join(name.split()).casefold()


@dataclass(slots=True)
class _Marker:
    kind: str  # numeric | fullwidth | footnote | author_year | superscript | inline_note
    raw: str
    start: int
    keys: list[str]
    tentative: bool = False


def scan_markers(doc: _Document, structure: _Structure) -> list[_Marker]:
    """The inline markers in the body of ``doc``, by offset (see the module docstring)."""
    text = doc.full
    notes, consumed = _notes_and_sup_tags(text, structure)
    text = _mask(text, consumed)
    markers = [
        *notes,
        *_footnotes(text, structure),
        *_numeric_groups(doc, structure, text),
        *_author_year_groups(text, structure),
        *_narrative_author_year(doc, structure, text),
        *_superscripts(text, structure),
    ]
    markers.sort(key=lambda mk: mk.start)
    return markers


def _notes_and_sup_tags(text: str, structure: _Structure) -> tuple[list[_Marker], list[tuple[int, int]]]:
    markers: list[_Marker] = []
    consumed: list[tuple[int, int]] = []
    for pattern in (_INLINE_NOTE, _SUP_TAG):
        for m in pattern.finditer(text):
            if not structure.is_body(m.start()):
                continue
            consumed.append(m.span())
            numbers = _parse_numbers(m["body"])
            if numbers is not None and _superscript_context(text, m.start()):
                markers.append(_Marker("superscript", m.group(), m.start(), [str(x) for x in numbers]))
            elif numbers is None and pattern is _INLINE_NOTE:
                markers.append(_Marker("inline_note", m.group(), m.start(), []))
    return markers, consumed


def _footnotes(text: str, structure: _Structure) -> list[_Marker]:
    return [
        _Marker("footnote", m.group(), m.start(), ["^" + m["label"].casefold()])
        for m in _FOOTNOTE_REF.finditer(text)
        if structure.is_body(m.start())
    ]


def _numeric_groups(doc: _Document, structure: _Structure, text: str) -> list[_Marker]:
    markers: list[_Marker] = []
    excluded_until = -1
    for m in _NUMERIC_GROUP.finditer(text):
        if _OPEN_CLOSE[m["open"]] != m["close"] or not structure.is_body(m.start()):
            continue
        numbers = _parse_numbers(m["body"])
        if numbers is None:
            continue
        if m["open"] == "[" and _index_like(text, m.start(), excluded_until):
            excluded_until = m.end()
            continue
        line_start = doc.lines.starts[doc.lines.line_of(m.start())]
        before = text[line_start : m.start()]
        if len(numbers) >= 2 and _DATA_PREFIX.search(before):
            continue  # a value list: ``y_values [1, 4, 9]``, ``x = [1, 2]``, ``scores: [1, 2]``
        kind = "numeric" if m["open"] == "[" else "fullwidth"
        if kind == "fullwidth" and not before.strip(" \t>"):
            continue  # a line-leading 【n】 labels a list item
        markers.append(_Marker(kind, m.group(), m.start(), [str(x) for x in numbers]))
    return markers


def _author_year_groups(text: str, structure: _Structure) -> list[_Marker]:
    markers: list[_Marker] = []
    for m in _AUTHOR_YEAR_GROUP.finditer(text):
        if _BRACKET_PAIRS[m["open"]] != m["close"] or not structure.is_body(m.start()):
            continue
        for item in re.split(r"[;；]", m["body"]):
            parsed = _AUTHOR_YEAR_ITEM.fullmatch(item)
            if parsed is None or not _valid_surname(parsed["first"]):
                continue
            if not parsed["tail"] and "," not in parsed["sep"] and "，" not in parsed["sep"]:
                continue
            key = f"{_surname_key(parsed['first'])} {_year_key(parsed['year'])}"
            markers.append(_Marker("author_year", m.group(), m.start() + 1 + m["body"].find(item), [key]))
    return markers


def _narrative_author_year(doc: _Document, structure: _Structure, text: str) -> list[_Marker]:
    markers: list[_Marker] = []
    for m in _NARRATIVE_YEAR.finditer(text):
        if not structure.is_body(m.start()):
            continue
        line_start = doc.lines.starts[doc.lines.line_of(m.start())]
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
    return markers


def _superscripts(text: str, structure: _Structure) -> list[_Marker]:
    markers: list[_Marker] = []
    for pattern in (_SUP_UNICODE, _SUP_CARET):
        for m in pattern.finditer(text):
            if not structure.is_body(m.start()) or not _superscript_context(text, m.start()):
                continue
            body = m["body"] if pattern is _SUP_CARET else m.group().translate(_SUPERSCRIPT_TABLE)
            numbers = _parse_numbers(body)
            if numbers is not None:
                markers.append(_Marker("superscript", m.group(), m.start(), [str(x) for x in numbers]))
    return markers


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
