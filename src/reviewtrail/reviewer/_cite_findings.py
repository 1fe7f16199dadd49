"""The steps of the Citation check after scanning (see :mod:`._citations`): what the markers
resolve to, the findings of each rule, the decision and the statistics. Every step is a pure
function of what the scanners returned (:class:`_Scan`) and of earlier steps' results."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

from reviewtrail.reviewer._cite_document import _Document, _Entry, _Structure
from reviewtrail.reviewer._cite_identifiers import IDENTIFIER_KINDS, _Ident
from reviewtrail.reviewer._cite_markers import _ENTRY_YEAR, _Marker, _year_key
from reviewtrail.reviewer._cite_placeholders import _PURE_PLACEHOLDER, _Placeholders
from reviewtrail.reviewer._cite_references import _NUMBERED_KINDS
from reviewtrail.reviewer._cite_report import (
    ADVICE_CITATION_NEEDED,
    ADVICE_ENTRY_UNCITED,
    CITATION_IDENTIFIER_MISSING,
    CITATION_MARKER_MISSING,
    CITATION_REFERENCE_MISSING,
    Decision,
    Finding,
    Location,
    Severity,
    is_citation_code,
)
from reviewtrail.reviewer._cite_text import _is_cjk, _Lines, _strip_punctuation
from reviewtrail.reviewer._finding_codes import CitationCode

__all__ = [
    "_Resolution",
    "_Scan",
    "cites_anything",
    "dangling_findings",
    "decide",
    "has_inline_marker",
    "marker_missing_findings",
    "placeholder_findings",
    "resolve_markers",
    "section_findings",
    "statistics",
]

#: Kinds whose unresolved keys are reported; author-year markers and superscripts never are.
_MATCHED_KINDS: Final = frozenset({"numeric", "fullwidth", "footnote"})
_HOW_TO_CITE: Final = (
    "Add a numbered marker such as [1] right after each supported claim and make sure [1] maps to the "
    "same numbered reference entry. [evidenceN] is an internal provenance tag, not a replacement for an "
    "academic citation."
)


@dataclass(frozen=True, slots=True)
class _Scan:
    """Everything the scanners found in one document."""

    doc: _Document
    structure: _Structure
    markers: list[_Marker]
    placeholders: _Placeholders
    idents: list[_Ident]

    @property
    def lines(self) -> _Lines:
        return self.doc.lines


@dataclass(slots=True)
class _Resolution:
    """Markers that count, unresolved keys by (group, key), and the indexes of cited entries."""

    counted: list[_Marker] = field(default_factory=list)
    dangling: dict[tuple[str, str], list[_Marker]] = field(default_factory=dict)
    cited: set[int] = field(default_factory=set)


def _finding(lines: _Lines, code: CitationCode, severity: Severity, message: str, offset: int, **extra: Any) -> Finding:
    return Finding(code, severity, message, Location(*lines.position(offset)), **extra)


# --------------------------------------------------------------------------------------------
# Resolution
# --------------------------------------------------------------------------------------------


def _identifiers_by_owner(scan: _Scan) -> tuple[dict[int, set[str]], set[str]]:
    """Normalized identifiers of each entry, and those in body text."""
    in_entries: dict[int, set[str]] = {}
    body: set[str] = set()
    for ident in scan.idents:
        owner = scan.structure.owner_at(ident.start)
        if owner >= 0:
            in_entries.setdefault(owner, set()).add(ident.norm)
        elif owner == -1:
            body.add(ident.norm)
    return in_entries, body


class _Resolver:
    """Marker keys to entries: numbered keys, footnote labels, the n-th unnumbered entry, author-year."""

    def __init__(self, entries: list[_Entry]) -> None:
        self.numbered: dict[str, list[_Entry]] = {}
        self.footnotes: dict[str, list[_Entry]] = {}
        self.unnumbered: list[_Entry] = []
        self.by_year: dict[str, list[_Entry]] = {}
        self.cache: dict[str, list[_Entry]] = {}
        for entry in entries:
            if entry.kind in _NUMBERED_KINDS and entry.key is not None:
                self.numbered.setdefault(entry.key, []).append(entry)
            elif entry.kind == "footnote" and entry.key is not None:
                self.footnotes.setdefault(entry.key, []).append(entry)
            else:
                self.unnumbered.append(entry)
            for year in {_year_key(y) for y in _ENTRY_YEAR.findall(entry.text)}:
                self.by_year.setdefault(year, []).append(entry)

    def __call__(self, kind: str, key: str) -> list[_Entry]:
        if kind == "footnote":
            return self.footnotes.get(key, [])
        if kind in {"numeric", "fullwidth", "superscript"}:
            if self.numbered:
                return self.numbered.get(key, [])
            position = int(key) - 1
            return [self.unnumbered[position]] if position < len(self.unnumbered) else []
        cached = self.cache.get(key)
        if cached is None:
            cached = self.cache[key] = self._author_year(key)
        return cached

    def _author_year(self, key: str) -> list[_Entry]:
        surname, _, year = key.rpartition(" ")
        candidates = list(self.by_year.get(year, []))
        if re.fullmatch(r"\d{4}", year):
            for other, entries in self.by_year.items():
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
        return list(found.values())


def resolve_markers(scan: _Scan) -> _Resolution:
    """Which markers count, which keys dangle (numeric and footnote markers only: author-year
    markers and superscripts are never reported), and which entries are cited."""
    resolve = _Resolver(scan.structure.entries)
    result = _Resolution()
    for marker in scan.markers:
        if marker.kind == "inline_note":
            result.counted.append(marker)
            continue
        hits = [resolve(marker.kind, key) for key in marker.keys]
        if marker.tentative and not any(hits):
            continue
        result.counted.append(marker)
        group = "footnote" if marker.kind == "footnote" else "n"
        for key, found in zip(marker.keys, hits, strict=True):
            result.cited.update(entry.index for entry in found)
            if not found and marker.kind in _MATCHED_KINDS:
                result.dangling.setdefault((group, key), []).append(marker)
    in_entries, body_ids = _identifiers_by_owner(scan)
    result.cited.update(index for index, ids in in_entries.items() if ids & body_ids)
    return result


# --------------------------------------------------------------------------------------------
# Findings
# --------------------------------------------------------------------------------------------


def dangling_findings(scan: _Scan, resolution: _Resolution) -> list[Finding]:
    out = []
    for (group, key), where in resolution.dangling.items():
        first = where[0]
        if group == "footnote":
            message = f"footnote {first.raw!r} has no definition ([{key}]: ...)"
        else:
            message = f"citation marker {first.raw!r} points at reference {key}, which no reference entry defines"
        if len(where) > 1:
            message += f"; cited {len(where)} times"
        out.append(
            _finding(
                scan.lines,
                CITATION_REFERENCE_MISSING,
                "error",
                message,
                first.start,
                marker=first.raw,
                key=key,
                reason="dangling_marker",
                occurrences=len(where),
            )
        )
    return out


def section_findings(scan: _Scan) -> list[Finding]:
    out = []
    for section in scan.structure.sections:
        if not section.entries:
            note = " (only a placeholder)" if section.placeholder_lines else ""
            offset = scan.lines.starts[section.heading_line]
            message = f"reference section {section.title!r} has no entries{note}"
            out.append(
                _finding(scan.lines, CITATION_REFERENCE_MISSING, "error", message, offset, reason="empty_references")
            )
    return out


def _entry_problem(entry: _Entry, has_link: bool, placeholders: list[str]) -> tuple[str, str] | None:
    """(reason, what is wrong) when an entry is empty, only a placeholder, or has a placeholder identifier."""
    raw_text = entry.text.strip()
    bare = _strip_punctuation(raw_text)
    if not raw_text and not has_link:
        return "empty_entry", "is empty"
    if not has_link and (not bare or _PURE_PLACEHOLDER.fullmatch(bare) or _PURE_PLACEHOLDER.fullmatch(raw_text)):
        return "placeholder_entry", f"is only a placeholder ({raw_text!r})"
    if placeholders:
        shown = ", ".join(repr(p) for p in dict.fromkeys(placeholders))
        return "placeholder_identifier", f"has a placeholder instead of an identifier: {shown}"
    return None


def placeholder_findings(scan: _Scan) -> tuple[list[Finding], set[int]]:
    """Findings for placeholders in the body and in entries, and the indexes of placeholder entries.
    A bracketed request such as ``[citation needed]`` is our own advice (``ADVICE_CITATION_NEEDED``)."""
    out = []
    for offset, raw, reason in scan.placeholders.body:
        code: CitationCode = ADVICE_CITATION_NEEDED if reason == "placeholder_marker" else CITATION_IDENTIFIER_MISSING
        severity: Severity = "warning" if code == ADVICE_CITATION_NEEDED else "error"
        marker = raw if reason != "placeholder_identifier" else None
        message = f"placeholder instead of a source: {raw!r}"
        out.append(_finding(scan.lines, code, severity, message, offset, marker=marker, reason=reason))
    placeholder_entries: set[int] = set()
    for entry in scan.structure.entries:
        lo, hi = scan.lines.starts[entry.first_line], scan.lines.end_of(entry.last_line)
        has_link = any(c is not None for _, _, c in scan.doc._links_between(lo, hi))
        placeholders = scan.placeholders.in_entries.get(entry.index, [])
        problem = _entry_problem(entry, has_link, placeholders)
        if problem is None:
            continue
        reason, what = problem
        placeholder_entries.add(entry.index)
        out.append(
            _finding(
                scan.lines,
                CITATION_IDENTIFIER_MISSING,
                "error",
                f"reference entry {entry.label} {what}",
                entry.start,
                key=entry.key,
                reason=reason,
                occurrences=max(1, len(placeholders)),
            )
        )
    return out, placeholder_entries


def has_inline_marker(scan: _Scan, resolution: _Resolution) -> bool:
    """An academic marker that counts, or a bare URL or source link in body text."""
    if any(mk.kind != "inline_note" for mk in resolution.counted):
        return True
    return any(ident.inline and scan.structure.is_body(ident.start) for ident in scan.idents)


def marker_missing_findings(scan: _Scan, resolution: _Resolution, placeholder_entries: set[int]) -> list[Finding]:
    """``CITATION_MARKER_MISSING`` when reference entries or an identifier (DOI, arXiv, PMID, PMC,
    Europe PMC) exist anywhere but no inline marker does; otherwise advice on each uncited entry."""
    entries = scan.structure.entries
    if has_inline_marker(scan, resolution):
        return [
            _finding(
                scan.lines,
                ADVICE_ENTRY_UNCITED,
                "warning",
                f"reference entry {entry.label} is never cited in the text",
                entry.start,
                key=entry.key,
                reason="uncited_entry",
            )
            for entry in entries
            if entry.index not in resolution.cited and entry.index not in placeholder_entries
        ]
    academic = [ident for ident in scan.idents if ident.kind != "url"]
    if entries:
        sections = scan.structure.sections
        first = min(entries, key=lambda e: e.start).start
        anchor = scan.lines.starts[sections[0].heading_line] if sections and sections[0].entries else first
        what = f"{len(entries)} reference entr{'y' if len(entries) == 1 else 'ies'} but no inline citation marker"
        message, occurrences = f"{what} in the text points at any of them. {_HOW_TO_CITE}", len(entries)
    elif academic:
        anchor = academic[0].start
        source = academic[0].raw.strip()
        message = f"the text names a source ({source}) but has no inline citation marker. {_HOW_TO_CITE}"
        occurrences = len(academic)
    else:
        return []
    return [
        _finding(
            scan.lines,
            CITATION_MARKER_MISSING,
            "warning",
            message,
            anchor,
            reason="no_inline_markers",
            occurrences=occurrences,
        )
    ]


# --------------------------------------------------------------------------------------------
# Decision and statistics
# --------------------------------------------------------------------------------------------


def _source_links(scan: _Scan) -> int:
    return sum(1 for _, _, c in scan.doc.links if c is not None and c[0] != "placeholder")


def cites_anything(scan: _Scan, resolution: _Resolution) -> bool:
    """Does the text cite anything at all (provenance chips do not count)?"""
    structure = scan.structure
    return bool(
        resolution.counted
        or scan.placeholders.body
        or structure.sections
        or structure.entries
        or scan.idents
        or _source_links(scan)
    )


def decide(findings: list[Finding], cites: bool) -> Decision:
    """``REVISE_AND_RETRY`` on any ``CITATION_*`` finding whatever its severity; ``SKIPPED`` when the
    text cites nothing; ``ACCEPT_AND_PROCEED`` otherwise (advice allowed)."""
    if any(is_citation_code(f.code) for f in findings):
        return "REVISE_AND_RETRY"
    return "ACCEPT_AND_PROCEED" if cites else "SKIPPED"


def statistics(scan: _Scan, resolution: _Resolution, placeholder_entries: set[int]) -> dict[str, Any]:
    by_kind = dict.fromkeys(("numeric", "fullwidth", "footnote", "author_year", "superscript", "inline_note"), 0)
    for mk in resolution.counted:
        by_kind[mk.kind] += 1
    id_counts = dict.fromkeys(IDENTIFIER_KINDS, 0)
    for ident in scan.idents:
        id_counts[ident.kind] += 1
    doc, structure = scan.doc, scan.structure
    return {
        "characters": len(doc.original),
        "lines": len(doc.lines),
        "code_blocks": doc.code_blocks,
        "markers": by_kind,
        "reference_sections": len(structure.sections),
        "reference_entries": len(structure.entries),
        "cited_entries": len(resolution.cited),
        "dangling_markers": len(resolution.dangling),
        "identifiers": id_counts,
        "placeholders": len(scan.placeholders.body) + len(placeholder_entries),
        "links": _source_links(scan),
        "provenance_chips": doc.chip_count,
    }
