"""Text plumbing of the Citation check: lines, offsets, masking (see :mod:`._citations`).

What is never looked at
    Fenced code blocks (````` and ``~~~``, any indentation, an unclosed fence runs to the end),
    inline code spans (CommonMark backtick runs, within one paragraph), ``<code>``/``<pre>``
    elements, HTML comments, doctest blocks (a ``>>>`` prompt line up to the next blank line) and
    TeX math (``$$..$$``, ``\\[..\\]``, ``\\(..\\)``, and ``$..$`` by Pandoc's rule: no space
    inside the dollars, no digit right after the closing one). Their
    characters are blanked before anything else runs, so a fake citation in code cites nothing.
    Images ``![alt](src)`` are not sources. Indented (4-space) code blocks are *not* recognized:
    in replies they are indistinguishable from list continuations.

Locations are computed by :class:`_Lines` (1-based line and column in characters; the excerpt is
the stripped line, cut to at most 120 characters around the column).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable

# The package's citation modules use these; nothing outside the reviewer does.
__all__ = [
    "_DISPLAY_MATH",
    "_DOCTEST",
    "_HTML_CODE",
    "_INLINE_MATH",
    "_Lines",
    "_code_span_spans",
    "_fence_spans",
    "_indent",
    "_is_cjk",
    "_mask",
    "_nested_bracket_spans",
    "_quote_label",
    "_quote_len",
    "_spans",
    "_strip_punctuation",
]

_EXCERPT_WIDTH = 120

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

    def position(self, offset: int) -> tuple[int, int, str]:
        """(line, column, excerpt) of ``offset``: the fields of a :class:`Location`."""
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
        return index + 1, column + 1, excerpt


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


def _is_cjk(char: str) -> bool:
    return "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff"


def _quote_label(text: str) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= 40 else text[:40] + "…")


def _strip_punctuation(text: str) -> str:
    return re.sub(r"[\s\W_]+", " ", text).strip() if text else ""
