"""The Quick-tier checks of one artifact version, chosen by its media kind (see :mod:`._media`):

* narrative: the citation check (:func:`check_citations`) and the numeric claims of its text;
* JSON: the structure check (``ARTIFACT_JSON_INVALID``, an error, when the text does not parse)
  and no narrative checks;
* every kind: the computation check of claims recorded with evidence pointing at the artifact,
  unresolved structured citations and full-text claims without an extraction.

The citation check is recorded for every kind (``skipped`` when it does not apply).
"""

from __future__ import annotations

import json
from typing import Literal

from reviewtrail.media import MediaKind
from reviewtrail.provenance.artifacts import VersionInfo
from reviewtrail.reviewer._citations import check_citations
from reviewtrail.reviewer._computation import artifact_claims, check_computation, check_full_text, check_unresolved
from reviewtrail.reviewer._records import CheckResult, ReviewFinding
from reviewtrail.store import Store

__all__ = ["check_structure", "quick_checks"]

_STATUS: dict[str, Literal["passed", "failed", "skipped"]] = {
    "ACCEPT_AND_PROCEED": "passed",
    "REVISE_AND_RETRY": "failed",
    "SKIPPED": "skipped",
}


def _unreadable(check: str, info: VersionInfo, why: str) -> tuple[CheckResult, list[ReviewFinding]]:
    message = f"{info.version.name}@{info.version.version}: {why}"
    finding = ReviewFinding.new(code="REVIEW_TEXT_UNREADABLE", severity="warning", check=check, message=message)
    return CheckResult(check=check, status="inconclusive", detail=why), [finding]


def check_citation(text: str) -> tuple[CheckResult, list[ReviewFinding]]:
    report = check_citations(text)
    check = CheckResult(check="citation", status=_STATUS[report.decision], detail=report.decision)
    findings = [
        ReviewFinding.new(
            code=f.code, severity=f.severity, check="citation", message=f.message, location=f.location.to_json()
        )
        for f in report.findings
    ]
    return check, findings


def check_structure(text: str) -> tuple[CheckResult, list[ReviewFinding]]:
    """A JSON artifact must parse; ``ARTIFACT_JSON_INVALID`` (an error) says where it does not."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        line = text.splitlines()[exc.lineno - 1] if text.splitlines() else ""
        finding = ReviewFinding.new(
            code="ARTIFACT_JSON_INVALID",
            severity="error",
            check="structure",
            message=f"the JSON does not parse: {exc.msg} at line {exc.lineno} column {exc.colno}",
            location={"line": exc.lineno, "column": exc.colno, "excerpt": line.strip()[:120]},
        )
        return CheckResult(check="structure", status="failed", detail="not valid JSON"), [finding]
    return CheckResult(check="structure", status="passed"), []


def quick_checks(
    store: Store, info: VersionInfo, kind: MediaKind, text: str | None, unreadable: str | None
) -> tuple[list[CheckResult], list[ReviewFinding]]:
    """The Quick-tier checks and their findings (see the module docstring)."""
    checks: list[CheckResult] = []
    findings: list[ReviewFinding] = []
    narrative = text if kind == "narrative" else None
    if kind != "narrative":
        checks.append(CheckResult(check="citation", status="skipped", detail=f"not a narrative artifact ({kind})"))
    elif unreadable is not None:
        check, found = _unreadable("citation", info, unreadable)
        checks.append(check)
        findings += found
    elif text is not None:
        check, found = check_citation(text)
        checks.append(check)
        findings += found
    if kind == "json":
        if text is None:
            check, found = _unreadable("structure", info, unreadable or "the text could not be read")
        else:
            check, found = check_structure(text)
        checks.append(check)
        findings += found
    if kind == "narrative" and unreadable is not None:
        message = f"the claims could not be read: {unreadable}"
        checks.append(CheckResult(check="computation", status="inconclusive", detail=unreadable))
        findings.append(
            ReviewFinding.new(code="COMPUTATION_INCONCLUSIVE", severity="warning", check="computation", message=message)
        )
    else:
        computation, comp_findings = check_computation(store, info, narrative)
        checks.append(computation)
        findings += comp_findings
    pairs = artifact_claims(store, info, narrative)
    findings += check_unresolved(pairs) + check_full_text(store, pairs)
    return checks, findings
