"""The chip rule, without I/O: what is wrong with a provenance chip (``[ev1]``), from its
resolved citation and, when it names recorded evidence, that evidence's chain problem
(gathered by :func:`reviewtrail.reviewer._chips.check_chips`; the codes are listed there)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reviewtrail.evidence import ClaimCitation
from reviewtrail.reviewer._finding_codes import FindingCode
from reviewtrail.reviewer._records import ReviewFinding

__all__ = ["ChipFacts", "chip_findings", "chip_problem", "needs_chain"]


@dataclass(frozen=True)
class ChipFacts:
    """One distinct chip: its citation, the claim it was found in, and the chain problem of the
    evidence it names (None when the chain is whole, or was not looked at: see :func:`needs_chain`)."""

    citation: ClaimCitation
    claim: Any  # has .text, .sentence_start, .sentence_end
    chain_problem: str | None = None


def needs_chain(cit: ClaimCitation) -> bool:
    """Whether the rule looks at the chain of the evidence ``cit`` names (it resolved, unambiguously)."""
    ambiguous = cit.target is not None and cit.target.startswith("ambiguous:")
    return not ambiguous and cit.evidence_id is not None and cit.resolved


def chip_problem(cit: ClaimCitation, chain_problem: str | None) -> tuple[FindingCode, str] | None:
    """(code, message) of what is wrong with the chip, or None when it leads back to its evidence."""
    chip = f"[{cit.alias}]"
    if cit.target is not None and cit.target.startswith("ambiguous:"):
        ids = cit.target.split(":", 1)[1].replace(",", ", ")
        return "CITATION_EVIDENCE_ALIAS_AMBIGUOUS", f"{chip} is mapped to different evidence: {ids}"
    if cit.evidence_id is None:
        return "CITATION_EVIDENCE_ALIAS_UNRESOLVED", f"{chip} has no alias map giving it an evidence id"
    if not cit.resolved:
        return "CITATION_EVIDENCE_NODE_MISSING", f"{chip} points at evidence {cit.evidence_id}, which is not recorded"
    if chain_problem is not None:
        return "CITATION_EVIDENCE_CHAIN_BROKEN", f"{chip} points at evidence {cit.evidence_id}, but {chain_problem}"
    return None


def chip_findings(chips: Sequence[ChipFacts]) -> list[ReviewFinding]:
    """One error finding per chip that does not lead back to recorded evidence, in order."""
    out: list[ReviewFinding] = []
    for fact in chips:
        found = chip_problem(fact.citation, fact.chain_problem)
        if found is None:
            continue
        cit, claim = fact.citation, fact.claim
        out.append(
            ReviewFinding.new(
                code=found[0],
                severity="error",
                check="citation",
                message=found[1],
                location={"excerpt": claim.text[:160], "sentenceStart": claim.sentence_start,
                          "sentenceEnd": claim.sentence_end},
                evidence_refs=[cit.raw] + ([f"evidence:{cit.evidence_id}"] if cit.evidence_id else []),
            )
        )  # fmt: skip
    return out
