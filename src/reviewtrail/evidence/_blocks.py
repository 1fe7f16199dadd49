"""Markdown blocks of a text, line by line, for sentence segmentation (the rules are in
:mod:`reviewtrail.evidence._sentences`): prose blocks with their role, and fenced code ranges."""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["Block", "Role", "scan_blocks"]

Role = Literal["prose", "quote", "heading", "cell", "header", "reference"]
Block = tuple[int, int, bool, str]  # (start, end, atomic, role); role "row"/"header-row" for a table row

_PREFIX = re.compile(r"(?:[ \t]*>)*[ \t]*")
_FENCE = re.compile(r"(`{3,}|~{3,})")
_RULE = re.compile(r"(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,}|=+")
_HEADING = re.compile(r"#{1,6}(?:[ \t]+|$)")
_LIST = re.compile(
    r"(?:(?P<bullet>[-*+•‣◦▪·])[ \t]+"
    r"|(?P<num>\d{1,3})[.)][ \t]+"
    r"|(?P<cnum>\d{1,3}|[一二三四五六七八九十]+)、[ \t]*"
    r"|[(（](?P<pnum>\d{1,3})[)）][ \t]*)"
    r"(?=\S)"
)
_DELIMITER_ROW = re.compile(r"\|?(?:[ \t]*:?-+:?[ \t]*\|)+(?:[ \t]*:?-+:?[ \t]*)?")
_REFERENCES_TITLE = re.compile(
    r"(?i:[\d.\s]*(?:references?|bibliography|works cited|literature cited|sources cited|citations)"
    r"|参考文献|引用文献|参考资料)[\s:：#*]*"
)
_BIBLIOGRAPHY_ENTRY = re.compile(r"\[\d+\][ \t]|\[\^[^\s\]]+\]:")


def scan_blocks(text: str) -> tuple[list[Block], list[tuple[int, int]]]:
    """Prose blocks (content ranges, atomic or not, with their role) and fenced code ranges, line by line."""
    blocks: list[Block] = []
    fences: list[tuple[int, int]] = []
    cur: list[int] | None = None  # [start, end, quote depth, is list item]
    fence: tuple[str, int, int] | None = None  # (fence char, fence length, start offset)
    pos, n = 0, len(text)
    in_references = False  # under a References heading, up to the next heading

    def close() -> None:
        nonlocal cur
        if cur is not None:
            blocks.append((cur[0], cur[1], False, _role(text, cur[0], cur[2], in_references)))
            cur = None

    while pos < n:
        nl = text.find("\n", pos)
        stop = n if nl < 0 else nl
        end = stop
        while end > pos and text[end - 1].isspace():
            end -= 1
        prefix = _PREFIX.match(text, pos, end)
        r = prefix.end() if prefix else pos
        depth = text.count(">", pos, r)
        if fence is not None:
            m = _FENCE.fullmatch(text, r, end)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= fence[1]:
                fences.append((fence[2], end))
                fence = None
        elif r >= end:
            close()
        elif (m := _FENCE.match(text, r, end)) and not (m.group(1)[0] == "`" and "`" in text[m.end() : end]):
            close()
            fence = (m.group(1)[0], len(m.group(1)), pos)
        elif text.startswith("|", r):
            close()
            if not _DELIMITER_ROW.fullmatch(text, r, end):
                header = _DELIMITER_ROW.fullmatch(_next_line(text, stop).strip())
                blocks.append((r, end, True, "header-row" if header else "row"))
        elif _RULE.fullmatch(text, r, end):
            close()
        elif m := _HEADING.match(text, r, end):
            close()
            in_references = _REFERENCES_TITLE.fullmatch(text, m.end(), end) is not None
            if m.end() < end:
                blocks.append((m.end(), end, True, "heading"))
        elif (m := _LIST.match(text, r, end)) and (cur is None or cur[3] or _interrupts(m)):
            close()
            cur = [m.end(), end, depth, 1]
        elif cur is not None and cur[2] == depth:
            cur[1] = end
        else:
            close()
            cur = [r, end, depth, 0]
        pos = stop + 1
    close()
    if fence is not None:
        fences.append((fence[2], n))
    return blocks, fences


def _next_line(text: str, stop: int) -> str:
    if stop >= len(text):
        return ""
    nl = text.find("\n", stop + 1)
    return text[stop + 1 : len(text) if nl < 0 else nl]


def _role(text: str, start: int, depth: int, in_references: bool) -> str:
    if depth:
        return "quote"
    if in_references or _BIBLIOGRAPHY_ENTRY.match(text, start):
        return "reference"
    return "prose"


def _interrupts(item: re.Match[str]) -> bool:
    """Whether a list item may interrupt a paragraph: a bullet, or a numbered item starting at 1."""
    return bool(item.group("bullet")) or (item.group("num") or item.group("cnum") or item.group("pnum")) in ("1", "一")
