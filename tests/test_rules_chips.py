"""The chip rule (reviewer._chip_rule): what is wrong with a provenance chip, from gathered facts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.evidence import ClaimCitation
from reviewtrail.reviewer._chip_rule import ChipFacts, chip_findings, chip_problem, needs_chain


@dataclass(frozen=True)
class _Claim:
    text: str = "Accuracy was 0.91 [ev1]."
    sentence_start: int = 3
    sentence_end: int = 27


def _chip(evidence_id: str | None, resolved: bool, target: str | None, alias: str = "ev1") -> ClaimCitation:
    return ClaimCitation.read(
        {"type": "chip", "id": alias, "raw": f"[{alias}]", "resolved": resolved, "target": target,
         "alias": alias, "evidenceId": evidence_id}
    )  # fmt: skip


_CHIPS = st.builds(
    _chip,
    st.sampled_from([None, "e1"]),
    st.booleans(),
    st.sampled_from([None, "evidence:e1", "ambiguous:e1,e2"]),
)


@given(_CHIPS, st.sampled_from([None, "its execution run r1 is not recorded"]))
def test_each_chip_has_the_first_problem_in_order(cit: ClaimCitation, chain: str | None) -> None:
    found = chip_problem(cit, chain)
    if cit.target == "ambiguous:e1,e2":
        assert found == ("CITATION_EVIDENCE_ALIAS_AMBIGUOUS", "[ev1] is mapped to different evidence: e1, e2")
    elif cit.evidence_id is None:
        assert found == ("CITATION_EVIDENCE_ALIAS_UNRESOLVED", "[ev1] has no alias map giving it an evidence id")
    elif not cit.resolved:
        assert found == ("CITATION_EVIDENCE_NODE_MISSING", "[ev1] points at evidence e1, which is not recorded")
    elif chain is not None:
        assert found == ("CITATION_EVIDENCE_CHAIN_BROKEN", f"[ev1] points at evidence e1, but {chain}")
    else:
        assert found is None
    # The chain is looked at exactly when it can decide.
    assert needs_chain(cit) == (cit.target != "ambiguous:e1,e2" and cit.evidence_id is not None and cit.resolved)
    if not needs_chain(cit):
        assert chip_problem(cit, chain) == chip_problem(cit, None)


def test_findings_are_errors_of_the_citation_check_in_order() -> None:
    facts = [
        ChipFacts(_chip("e1", True, "evidence:e1"), _Claim(), None),
        ChipFacts(_chip(None, False, None, alias="ev2"), _Claim(), None),
        ChipFacts(_chip("e3", True, "evidence:e3", alias="ev3"), _Claim(text="x" * 200), "its content is missing"),
    ]
    findings: list[Any] = chip_findings(facts)
    assert [(f.code, f.severity, f.check) for f in findings] == [
        ("CITATION_EVIDENCE_ALIAS_UNRESOLVED", "error", "citation"),
        ("CITATION_EVIDENCE_CHAIN_BROKEN", "error", "citation"),
    ]
    assert findings[0].evidence_refs == ["[ev2]"] and findings[1].evidence_refs == ["[ev3]", "evidence:e3"]
    assert findings[1].location == {"excerpt": "x" * 160, "sentenceStart": 3, "sentenceEnd": 27}
