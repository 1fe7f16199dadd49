"""Quick-tier Citation check of the Reviewer Specialist (seed 002 §4): a pure function, no I/O.

:func:`check_citations` reads a Markdown reply or document and recognizes its inline citation
markers, its reference sections and entries, its identifiers and its obvious placeholders, then
reports what is missing. The result is a :class:`CitationReport` whose ``to_json()`` is
``{decision, findings: [{code, severity, message, location, marker, key, reason, occurrences}], stats}``.

The rules live next to the code that applies them; each private module's docstring states its
part:

* :mod:`._cite_text` -- what is never looked at (code, math, HTML comments are blanked first);
* :mod:`._cite_identifiers` -- provenance chips, Markdown links and identifiers;
* :mod:`._cite_markers` -- inline markers;
* :mod:`._cite_references` -- reference sections and entries (:data:`REFERENCE_HEADINGS`);
* :mod:`._cite_placeholders` -- placeholders (:data:`PLACEHOLDER_VALUES`);
* :mod:`._cite_document` -- the masked document the scanners share.

This module holds the public result types and turns what the scanners found into findings and
a decision.

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
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from reviewtrail.reviewer._cite_document import _Entry
from reviewtrail.reviewer._cite_identifiers import IDENTIFIER_KINDS, _scan_identifiers
from reviewtrail.reviewer._cite_markers import _ENTRY_YEAR, _Marker, _MarkerScanner, _year_key
from reviewtrail.reviewer._cite_placeholders import _PURE_PLACEHOLDER, PLACEHOLDER_VALUES, _PlaceholderScanner
from reviewtrail.reviewer._cite_references import _NUMBERED_KINDS, REFERENCE_HEADINGS, _ReferenceParser
from reviewtrail.reviewer._cite_text import _is_cjk, _strip_punctuation

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
# The check
# --------------------------------------------------------------------------------------------


class _Checker(_ReferenceParser, _MarkerScanner, _PlaceholderScanner):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.findings: list[Finding] = []

    def add(self, code: FindingCode, severity: Severity, message: str, offset: int, **extra: Any) -> None:
        self.findings.append(Finding(code, severity, message, Location(*self.lines.position(offset)), **extra))

    def run(self) -> CitationReport:
        self.parse_structure()
        for entry in self.entries:
            lo, hi = self.lines.starts[entry.first_line], self.lines.end_of(entry.last_line)
            entry.has_link = any(c is not None for _, _, c in self._links_between(lo, hi))
        markers = self.scan_markers()
        body_placeholders, id_text = self.scan_placeholders()
        idents = _scan_identifiers(id_text, self.links)

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


def check_citations(text: str) -> CitationReport:
    """The Quick-tier Citation check of ``text`` (Markdown); see the module docstrings for every rule."""
    return _Checker(text).run()
