"""Every finding code the Reviewer Specialist's own rules emit (docs/architecture.md, "Reviewer
Specialist"). Pure.

New findings take a :data:`FindingCode` (:meth:`ReviewFinding.new` refuses any other); the
record field stays a string, so reviews recorded with codes this version no longer emits still
load, and an LLM reviewer's findings keep the codes it chose (they are its words, not a rule's).
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = ["CITATION_CODES", "FINDING_CODES", "CitationCode", "FindingCode", "check_finding_code"]

#: The citation check's codes (``_citations``): the three ``CITATION_*`` and two advice codes.
CitationCode = Literal[
    "CITATION_IDENTIFIER_MISSING",
    "CITATION_REFERENCE_MISSING",
    "CITATION_MARKER_MISSING",
    "ADVICE_ENTRY_UNCITED",
    "ADVICE_CITATION_NEEDED",
]

FindingCode = Literal[
    CitationCode,
    # evidence chips resolved through alias maps (_chips, _chip_rule)
    "CITATION_EVIDENCE_ALIAS_UNRESOLVED",
    "CITATION_EVIDENCE_ALIAS_AMBIGUOUS",
    "CITATION_EVIDENCE_NODE_MISSING",
    "CITATION_EVIDENCE_CHAIN_BROKEN",
    # recorded claims (_computation)
    "CITATION_UNRESOLVED",
    "FULL_TEXT_NOT_RETRIEVED",
    # the computation rule (_computation_rule)
    "COMPUTATION_RUN_FAILED",
    "COMPUTATION_OUTPUT_NOT_IN_LINEAGE",
    "COMPUTATION_ENV_NOT_RECORDED",
    "COMPUTATION_UNBACKED",
    "COMPUTATION_NUMERIC_CLAIM_UNSUPPORTED",
    "COMPUTATION_NUMERIC_CLAIM_EVIDENCE_MISSING",
    "COMPUTATION_INCONCLUSIVE",
    # structure and text (_quick)
    "ARTIFACT_JSON_INVALID",
    "REVIEW_TEXT_UNREADABLE",
    # the LLM tiers' own findings about the call (_llm)
    "LLM_REVIEW_UNPARSEABLE",
    "LLM_FINDING",
]

CITATION_CODES: Final[frozenset[str]] = frozenset(get_args(CitationCode))
FINDING_CODES: Final[frozenset[str]] = frozenset(get_args(FindingCode))


def check_finding_code(code: str) -> FindingCode:
    """``code`` when it is a :data:`FindingCode`; otherwise :class:`ValueError` naming it."""
    if code not in FINDING_CODES:
        raise ValueError(f"{code!r} is not a finding code of the reviewer's rules")
    return code  # type: ignore[return-value]
