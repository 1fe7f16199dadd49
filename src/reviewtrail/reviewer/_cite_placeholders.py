"""Placeholders of the Citation check (see :mod:`._citations`).

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
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from reviewtrail.reviewer._cite_document import _Document, _Structure
from reviewtrail.reviewer._cite_text import _mask

__all__ = ["PLACEHOLDER_VALUES", "scan_placeholders"]

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


@dataclass(slots=True)
class _Placeholders:
    """What :func:`scan_placeholders` found: body placeholders ``(offset, raw, reason)``, the
    placeholders of each entry (by entry index) and the text with every placeholder blanked."""

    body: list[tuple[int, str, str]]
    in_entries: dict[int, list[str]]
    masked: str


def scan_placeholders(doc: _Document, structure: _Structure) -> _Placeholders:
    """The placeholders of ``doc``: those in body text, those inside reference entries."""
    text = doc.full
    found: list[tuple[int, str, str]] = []
    in_entries: dict[int, list[str]] = {}
    spans: list[tuple[int, int]] = []

    def place(start: int, raw: str, reason: str, end: int) -> None:
        spans.append((start, end))
        owner = structure.owner_at(start)
        if owner >= 0:
            in_entries.setdefault(owner, []).append(raw)
        elif owner == -1:
            found.append((start, raw, reason))

    for start, end, raw, reason in _bracketed_placeholders(doc, structure, text):
        place(start, raw, reason, end)
    for m in _ENTRY_BARE_PLACEHOLDER.finditer(_mask(text, spans)):
        owner = structure.owner_at(m.start())
        if owner >= 0:
            in_entries.setdefault(owner, []).append(m.group())
            spans.append(m.span())
    for entry in structure.entries:
        if _ENTRY_TEMPLATE_AUTHOR.match(entry.text):
            in_entries.setdefault(entry.index, []).append(entry.text.split()[0])
    for start, raw, classified in doc.links:
        if classified is not None and classified[0] == "placeholder":
            owner = structure.owner_at(start)
            if owner >= 0:
                in_entries.setdefault(owner, []).append(raw)
            elif owner == -1:
                found.append((start, raw, "placeholder_link"))
    found.sort()
    return _Placeholders(found, in_entries, _mask(text, spans))


def _bracketed_placeholders(doc: _Document, structure: _Structure, text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, raw, reason) of labelled identifiers, bracketed requests and template markers."""
    out: list[tuple[int, int, str, str]] = []
    for m in _LABELED_PLACEHOLDER.finditer(text):
        in_entry = structure.owner_at(m.start()) >= 0
        if _ENTRY_LABEL_ONLY.match(m["label"]) and not in_entry:
            continue
        if m["empty"] is not None and m["label"].lower().startswith(("source", "来源", "出处")):
            continue
        out.append((m.start(), m.end(), m.group().strip(), "placeholder_identifier"))
    for pattern, generic in ((_PLACEHOLDER_SPECIFIC, False), (_PLACEHOLDER_GENERIC, True)):
        for m in pattern.finditer(text):
            if _BRACKET_PAIRS[m["open"]] != m["close"]:
                continue
            if generic:
                line_start = doc.lines.starts[doc.lines.line_of(m.start())]
                before = text[line_start : m.start()]
                if not re.sub(r"^[ \t>]*(?:[-*+]|\d+[.)])?[ \t]*", "", before).strip():
                    continue
            out.append((m.start(), m.end(), m.group(), "placeholder_marker"))
    for m in _PLACEHOLDER_AUTHOR_YEAR.finditer(text):
        if _BRACKET_PAIRS[m["open"]] == m["close"]:
            out.append((m.start(), m.end(), m.group(), "placeholder_marker"))
    return out
