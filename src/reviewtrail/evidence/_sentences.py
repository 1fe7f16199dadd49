"""Markdown-aware sentence segmentation of English and Chinese text, for claim extraction
(docs/architecture.md, "Claims and evidence").

Pure functions over a string; every offset is a character offset into that string.

Blocks (one line at a time, CommonMark-like):

* A blank line (or a quote line with nothing after ``>``) ends the current paragraph.
* A fenced code block (a line starting with ```` ``` ```` or ``~~~``, up to a closing fence of the
  same character and at least the same length, or to the end of the text) is never split and
  yields no sentence: code is not prose. Indented (four-space) code is *not* recognised.
* A heading (``#`` to ``######``) is exactly one sentence, never split (``# 1. Introduction``).
* A table row (a line starting with ``|``) yields one sentence per cell, never split: each cell is its
  own claim, so a citation in one cell never belongs to another. Cells are separated by ``|``
  except an escaped ``\\|`` or one inside inline code or a citation. A row followed by a delimiter
  row (``|---|:--:|``) is the header: its cells have the role ``header``. The delimiter row yields
  nothing.
* A list item (``-``, ``*``, ``+``, ``•``, ``‣``, ``◦``, ``▪``, ``·`` bullets; ``1.``, ``1)``,
  ``1、``, ``一、``, ``(1)``, ``（1）`` with at most three digits) starts a new block that ends at
  the next block start; plain lines after it continue it. A numbered marker interrupts a
  paragraph only when its number is 1 (CommonMark), so ``in\\n2. place`` stays one sentence.
* A thematic break (``---``, ``***``, ``___``, setext ``===``) ends the current block.
* Any other line continues the current block (a soft wrap) when the ``>`` quote depth is unchanged.

Every sentence has a role (:attr:`Sentence.role`): ``heading``, ``cell``, ``header`` (a header
cell), ``quote`` (inside a ``>`` block quote), ``reference`` (a bibliography entry: a block under a
heading named References, Bibliography, Works cited, Literature cited, 参考文献 or 引用文献 up to the
next heading, or a block starting with ``[N]`` or ``[^N]:``) or ``prose``.

The markers (indentation, ``>``, bullet, number, ``#``) are not part of a sentence; a
continuation line keeps its own indentation and ``>`` inside the sentence text. A piece with
no letter or digit (``---``, a stray ``.``, a table's ``|---|`` row) is not a sentence.

Sentence ends inside a block:

* ``。``, ``！``, ``？`` always end a sentence (with any ``!?.`` run glued to them).
  ``；`` does **not**: like the English ``;`` it joins clauses of one sentence, and a clause
  after it usually leans on the first one's subject. ``：`` does not either.
* ``!`` and ``?`` end a sentence when followed (after closing quotes/brackets/emphasis) by
  whitespace, the end of the block or a CJK character.
* ``.`` does too, except: after an abbreviation in :data:`NEVER_END`; after one in
  :data:`BEFORE_NUMBER` when a digit follows; after a single capital letter other than ``I``
  (an initial: ``J. Smith``); after a dotted letter sequence (``U.S.``, ``e.g.``, ``a.k.a.``).
* No English end (``.!?``) ends a sentence when the next non-space character is a lower-case
  ASCII letter (``approx. three``, ``(really?) no``) or another dot (``. . .``).
* An ellipsis (``...``, ``…``, ``……``) never ends a sentence by itself.
* Numbers (``3.14``, ``1.5e-3``, ``v2.1.0``, ``1,000.5``), URLs and DOIs
  (``https://doi.org/10.1000/182.`` — the last dot is the sentence's), structured citations
  ``[TYPE:ID]`` and inline code (```a.b()```) are never split: a dot inside them is not
  followed by whitespace or is masked.
* Provenance chips ``[evN]``, ``[evidenceN]`` and ``[artifactN]`` (any case) are masked like
  citations (:data:`CHIP`).
* Closing quotes, brackets and emphasis after the end (``.”``, ``。」``, ``.)``, ``.**``) stay
  with the sentence, and so do citations and footnote marks placed after it (``Rose 5%. [ev:a]
  Next.``, ``真。[ev:a]\\n``, ``True.[1]``) when what follows them is the end of the block or
  whitespace before a non-lower-case character (``Done. [ev:a] reports x.`` gives the
  citation to the second sentence, whose subject it is).

Known limits (deliberate, documented): ``vitamin C. Then`` and ``in the U.S. The`` are not
split; ``etc.``, ``Inc.``, ``Jr.``, ``Ph.D.`` end a sentence when a capitalised word follows;
a sentence starting with a lower-case word (``mRNA``) after a ``.`` is joined to the previous
one; fullwidth ``．`` and ``【】`` brackets are ordinary characters.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from reviewtrail.evidence._blocks import Block, Role, scan_blocks

__all__ = [
    "BEFORE_NUMBER",
    "CHIP",
    "CITATION",
    "CITE",
    "CODE",
    "NEVER_END",
    "URL",
    "Layout",
    "Sentence",
    "analyze",
    "iter_sentences",
    "split",
]

#: Lower-cased words (without the final dot) after which ``.`` never ends a sentence.
NEVER_END: frozenset[str] = frozenset(
    {
        # titles
        "mr", "mrs", "ms", "dr", "prof", "st", "mt", "gen", "rev", "hon",
        # Latin and editorial
        "e.g", "i.e", "cf", "vs", "viz", "al", "approx", "ca", "resp", "incl", "esp", "ibid", "ed", "eds",
        "a.k.a", "ph.d",
        # parts of a document
        "fig", "figs", "eq", "eqs", "tab", "tabs", "sec", "secs", "ref", "refs", "vol", "vols", "ch", "chap",
        "app", "suppl", "supp", "para", "sect",
    }
)  # fmt: skip

#: Lower-cased words after which ``.`` does not end a sentence when a digit follows (``No. 5``, ``pp. 3-9``).
BEFORE_NUMBER: frozenset[str] = frozenset({"no", "nos", "nr", "p", "pp", "art", "ex"})

CODE, CITE, URL = 1, 2, 3  # per-character kinds in Layout.kinds; 0 is prose

_TYPE = r"[A-Za-z][A-Za-z0-9_-]*"
_ID = r"(?!//)[^\s\[\]`]+"
#: A structured citation ``[TYPE:ID]``: TYPE starts with a letter; ID has no whitespace, brackets or
#: backticks and does not start with ``//`` (``[https://x.org]`` is a bracketed URL); not a link text
#: (``[doi:x](https://...)``). ``[1]``, ``[^1]``, ``[ev1]``, ``[2, 3]`` have no colon and are not citations.
CITATION = re.compile(rf"\[(?P<type>{_TYPE}):(?P<id>{_ID})\](?!\()")

#: A provenance chip ``[evN]``, ``[evidenceN]`` or ``[artifactN]`` in any case; not a link text.
CHIP = re.compile(r"\[(?P<family>(?i:evidence|ev|artifact))(?P<number>[0-9]+)\](?!\()")

_REF = (
    rf"(?:\[{_TYPE}:{_ID}\](?!\()|\[\^[^\s\[\]`]+\]|\[\d+(?:\s*[,–-]\s*\d+)*\]"
    r"|\[(?i:evidence|ev|artifact)[0-9]+\](?!\())"
)
_REF_CHAIN = re.compile(rf"\s*{_REF}(?:[ \t,;，；]*{_REF})*")
_URL = re.compile(r"(?:https?|ftp)://[^\s<>\[\]\"'`]+|\bwww\.[^\s<>\[\]\"'`]+|\bdoi:10\.\d+/[^\s<>\[\]\"'`]+")
_URL_TAIL = ".,;:!?)'\"*_"

_TICKS = re.compile(r"`+")

_TERM = re.compile(r"[.!?。！？]+")
_STRONG = re.compile(r"[。！？]")
_CLOSERS = re.compile(r"[\"'”’)\]}」』）》】*_~]*")
_LEADING = re.compile(r"^[^A-Za-z0-9]+")  # stripped from the word before a dot: "(e.g", "**Fig", "数据Fig"
_NONSPACE = re.compile(r"\S")
_WORD = re.compile(r"\w")
_DOTTED = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]")


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence: ``source[start:end] == text``, trimmed of whitespace and block markers."""

    text: str
    start: int
    end: int
    role: Role = "prose"


@dataclass(slots=True)
class Layout:
    """What :func:`analyze` learns about a text: prose blocks, per-character kinds, citations outside code."""

    text: str
    kinds: bytearray  # 0 prose, CODE, CITE or URL, per character
    blocks: list[Block]  # each prose block's content, in order
    tokens: array[int]  # start, end of each CITATION and CHIP match outside code, in order: flat pairs


def analyze(text: str) -> Layout:
    kinds = bytearray(len(text))
    blocks, fences = scan_blocks(text)
    for s, e in fences:
        kinds[s:e] = bytes((CODE,)) * (e - s)
    for s, e, _, _ in blocks:
        _mark_inline_code(text, kinds, s, e)
    tokens = _merge(_outside_code(CITATION, text, kinds), _outside_code(CHIP, text, kinds))
    for k in range(0, len(tokens), 2):
        s, e = tokens[k], tokens[k + 1]
        kinds[s:e] = bytes((CITE,)) * (e - s)
    for m in _URL.finditer(text):
        s, e = m.start(), m.end()
        while e > s and text[e - 1] in _URL_TAIL:
            e -= 1
        if not kinds[s]:
            kinds[s:e] = bytes((URL,)) * (e - s)
    return Layout(text, kinds, blocks, tokens)


def _outside_code(pattern: re.Pattern[str], text: str, kinds: bytearray) -> array[int]:
    out = array("q")
    for m in pattern.finditer(text):
        if not kinds[m.start()]:
            out.extend(m.span())
    return out


def _merge(a: array[int], b: array[int]) -> array[int]:
    """Two ordered arrays of (start, end) pairs as one (citations and chips never overlap)."""
    out = array("q")
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] < b[j]:
            out.extend(a[i : i + 2])
            i += 2
        else:
            out.extend(b[j : j + 2])
            j += 2
    out.extend(a[i:])
    out.extend(b[j:])
    return out


def split(layout: Layout) -> list[Sentence]:
    return list(iter_sentences(layout))


def iter_sentences(layout: Layout) -> Iterator[Sentence]:
    """The sentences of ``layout.text`` in order, one at a time (no list of every sentence is held)."""
    text, kinds = layout.text, layout.kinds
    for start, end, atomic, role in layout.blocks:
        if role in ("row", "header-row"):
            cell_role: Role = "header" if role == "header-row" else "cell"
            for s, e in _cells(text, kinds, start, end):
                yield from _emit(text, s, e, cell_role)
            continue
        seg = start
        for m in () if atomic else _TERM.finditer(text, start, end):
            if m.start() < seg or kinds[m.start()] or kinds[m.end() - 1]:
                continue
            cut = _boundary(text, m, end)
            if cut is not None:
                yield from _emit(text, seg, cut, role)  # type: ignore[arg-type]  # a block role is a Role here
                seg = cut
        yield from _emit(text, seg, end, role)  # type: ignore[arg-type]


def _cells(text: str, kinds: bytearray, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The cells of a table row: ranges between ``|`` that are not escaped, in code or in a citation."""
    seg = start
    i = text.find("|", start, end)
    while i >= 0:
        if not kinds[i] and (i == start or text[i - 1] != "\\"):
            if i > seg:
                yield seg, i
            seg = i + 1
        i = text.find("|", i + 1, end)
    if seg < end:
        yield seg, end


def _mark_inline_code(text: str, kinds: bytearray, start: int, end: int) -> None:
    """A backtick run opens a code span closed by the next run of the same length in the block."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(text, start, end)]
    by_length: dict[int, list[int]] = {}
    for i, (s, e) in enumerate(runs):
        by_length.setdefault(e - s, []).append(i)
    i = 0
    while i < len(runs):
        s, e = runs[i]
        same = by_length[e - s]
        k = bisect_right(same, i)
        if k == len(same):
            i += 1
            continue
        j = same[k]
        kinds[s : runs[j][1]] = bytes((CODE,)) * (runs[j][1] - s)
        i = j + 1


def _boundary(text: str, m: re.Match[str], end: int) -> int | None:
    """Where the sentence whose end mark is ``m`` stops, or ``None`` when ``m`` ends no sentence."""
    run = m.group()
    after = _CLOSERS.match(text, m.end(), end)
    p = after.end() if after else m.end()
    cut = _absorb_refs(text, p, end)
    if _STRONG.search(run) is not None:
        return cut
    if cut == p and p < end and not (text[p].isspace() or _is_cjk(text[p])):
        return None
    if "!" not in run and "?" not in run and (len(run) > 1 or _abbreviation(text, m, end)):
        return None  # dots only: an ellipsis or an abbreviation
    nxt = _NONSPACE.search(text, cut, end)
    if nxt is not None and (nxt.group() in ".…" or "a" <= nxt.group() <= "z"):
        return None
    return cut


def _abbreviation(text: str, m: re.Match[str], end: int) -> bool:
    dot = m.start()
    s, lo = dot, max(0, dot - 32)
    while s > lo and not text[s - 1].isspace():
        s -= 1
    word = _LEADING.sub("", text[s:dot])
    if not word:
        return False
    low = word.lower()
    if low in NEVER_END or _DOTTED.fullmatch(word):
        return True
    if len(word) == 1 and "A" <= word <= "Z" and word != "I":
        return True
    if low in BEFORE_NUMBER:
        nxt = _NONSPACE.search(text, m.end(), end)
        return nxt is not None and nxt.group().isdigit()
    return False


def _absorb_refs(text: str, p: int, end: int) -> int:
    """Citations and footnote marks right after a sentence end belong to it (see the module doc)."""
    chain = _REF_CHAIN.match(text, p, end)
    if chain is None:
        return p
    a = chain.end()
    if (term := _TERM.match(text, a, end)) is not None:
        closers = _CLOSERS.match(text, term.end(), end)
        a = closers.end() if closers else term.end()
    if a >= end:
        return a
    if text[a].isspace():
        nxt = _NONSPACE.search(text, a, end)
        if nxt is None or not "a" <= nxt.group() <= "z":
            return a
    return p


def _is_cjk(c: str) -> bool:
    o = ord(c)
    return 0x3040 <= o <= 0x9FFF or 0xAC00 <= o <= 0xD7AF or 0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x2FA1F


def _emit(text: str, s: int, e: int, role: Role = "prose") -> Iterator[Sentence]:
    first = _NONSPACE.search(text, s, e)
    if first is None:
        return
    s = first.start()
    while text[e - 1].isspace():
        e -= 1
    if _WORD.search(text, s, e) is not None:
        yield Sentence(text[s:e], s, e, role)
