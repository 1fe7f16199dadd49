"""The result types of the Citation check (see :mod:`._citations`): codes, severities, decisions,
:class:`Location`, :class:`Finding` and :class:`CitationReport`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

from reviewtrail.reviewer._finding_codes import CitationCode

__all__ = [
    "ADVICE_CITATION_NEEDED",
    "ADVICE_ENTRY_UNCITED",
    "CITATION_IDENTIFIER_MISSING",
    "CITATION_MARKER_MISSING",
    "CITATION_REFERENCE_MISSING",
    "CitationReport",
    "Decision",
    "Finding",
    "Location",
    "Severity",
    "is_citation_code",
]

CITATION_IDENTIFIER_MISSING: Final = "CITATION_IDENTIFIER_MISSING"
CITATION_REFERENCE_MISSING: Final = "CITATION_REFERENCE_MISSING"
CITATION_MARKER_MISSING: Final = "CITATION_MARKER_MISSING"
#: Our own advice beyond the reference's rules: advisory (warnings), never a ``CITATION_*`` code.
ADVICE_ENTRY_UNCITED: Final = "ADVICE_ENTRY_UNCITED"
ADVICE_CITATION_NEEDED: Final = "ADVICE_CITATION_NEEDED"

Severity = Literal["error", "warning", "info"]
Decision = Literal["ACCEPT_AND_PROCEED", "REVISE_AND_RETRY", "SKIPPED"]


def is_citation_code(code: str) -> bool:
    """Does a finding with this code make the decision ``REVISE_AND_RETRY`` (whatever its severity)?"""
    return code.startswith("CITATION_")


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

    code: CitationCode
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
