"""Quick-tier Citation check of the Reviewer Specialist: a pure function, no I/O.

Described in docs/architecture.md, "Reviewer Specialist".

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
* :mod:`._cite_document` -- the masked document the scanners share;
* :mod:`._cite_findings` -- resolution, findings, decision and statistics (pure steps);
* :mod:`._cite_report` -- the public result types.

:func:`check_citations` is a chain: build the masked document, parse its reference structure,
scan markers, placeholders and identifiers (each scanner takes the document and returns lists),
resolve the markers, then derive each rule's findings, the decision and the statistics.

Findings, severities and the decision
    ===============================  ========  ====================  ==========================================
    code                             severity  reason                when
    ===============================  ========  ====================  ==========================================
    ``CITATION_REFERENCE_MISSING``   error     ``dangling_marker``   a numeric, full-width or footnote marker
                                                                     with no matching entry (one finding per
                                                                     distinct key, at its first occurrence,
                                                                     ``occurrences`` counts them). Author-year
                                                                     markers and superscripts are never matched
                                                                     against entries, so never dangle.
    ``CITATION_REFERENCE_MISSING``   error     ``empty_references``  a reference section without entries
    ``CITATION_IDENTIFIER_MISSING``  error     ``placeholder_*``     a placeholder identifier (``DOI: TODO``)
                                               / ``empty_entry``     or link, or an empty or placeholder entry
                                                                     (one finding per entry, per body
                                                                     occurrence otherwise)
    ``CITATION_MARKER_MISSING``      warning   ``no_inline_markers`` reference entries, or an identifier (DOI,
                                                                     arXiv, PMID, PMC, Europe PMC) anywhere,
                                                                     but no inline marker anywhere: no counted
                                                                     academic marker and no bare URL or source
                                                                     link in body text. Provenance chips are
                                                                     never markers. One finding.
    ``ADVICE_ENTRY_UNCITED``         warning   ``uncited_entry``     an entry nothing in the body points at
    ``ADVICE_CITATION_NEEDED``       warning   ``placeholder_marker`` a bracketed request (``[citation needed]``,
                                                                     ``[TODO]``) or template marker
                                                                     (``(Author, Year)``)
    ===============================  ========  ====================  ==========================================

    ``ADVICE_*`` codes are our own advice beyond the reference's rules; they are advisory. Until
    rule version 2 they were reported as ``CITATION_MARKER_MISSING`` (uncited entries) and
    ``CITATION_IDENTIFIER_MISSING`` (bracketed requests) with the same reasons; recorded reviews
    keep the codes they were recorded with. Entries that are themselves placeholders get no
    ``uncited_entry`` advice on top. ``info`` is part of the :data:`Severity` contract but this
    check emits none. The decision is ``REVISE_AND_RETRY`` when any finding has a ``CITATION_*``
    code, whatever its severity; ``SKIPPED`` when the text cites nothing at all (no marker,
    placeholder, reference heading, entry, identifier or source link; provenance chips do not
    count); ``ACCEPT_AND_PROCEED`` otherwise (advice allowed).

Locations are 1-based line and column (in characters) of the original text; ``excerpt`` is
that line, stripped and cut to at most 120 characters around the column.
"""

from __future__ import annotations

from reviewtrail.reviewer._cite_document import _Document
from reviewtrail.reviewer._cite_findings import (
    _Scan,
    cites_anything,
    dangling_findings,
    decide,
    marker_missing_findings,
    placeholder_findings,
    resolve_markers,
    section_findings,
    statistics,
)
from reviewtrail.reviewer._cite_identifiers import _scan_identifiers
from reviewtrail.reviewer._cite_markers import scan_markers
from reviewtrail.reviewer._cite_placeholders import scan_placeholders
from reviewtrail.reviewer._cite_references import parse_references
from reviewtrail.reviewer._cite_report import CitationReport

__all__ = ["check_citations", "scan"]


def scan(text: str) -> _Scan:
    """Run every scanner over ``text``: the document, its structure, markers, placeholders, identifiers."""
    doc = _Document(text)
    structure = parse_references(doc)
    placeholders = scan_placeholders(doc, structure)
    idents = _scan_identifiers(placeholders.masked, doc.links)
    return _Scan(doc, structure, scan_markers(doc, structure), placeholders, idents)


def check_citations(text: str) -> CitationReport:
    """The Quick-tier Citation check of ``text`` (Markdown); see the module docstrings for every rule."""
    scanned = scan(text)
    resolution = resolve_markers(scanned)
    placeholder_found, placeholder_entries = placeholder_findings(scanned)
    findings = [
        *dangling_findings(scanned, resolution),
        *section_findings(scanned),
        *placeholder_found,
        *marker_missing_findings(scanned, resolution, placeholder_entries),
    ]
    findings.sort(key=lambda f: (f.location.line, f.location.column, f.code, f.key or ""))
    return CitationReport(
        decision=decide(findings, cites_anything(scanned, resolution)),
        findings=findings,
        stats=statistics(scanned, resolution, placeholder_entries),
    )
