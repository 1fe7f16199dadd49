"""Quick tier: provenance chips (``[ev1]``, ``[evidence2]``, ``[artifact3]``) and the evidence they point at.

A chip resolves through the alias maps recorded for the reviewed artifact version (by its
content digest or by naming the version; see :mod:`reviewtrail.evidence._aliases`). Each
distinct chip is checked once; the codes, all errors:

* ``CITATION_EVIDENCE_ALIAS_UNRESOLVED`` — no alias map gives the chip an evidence id;
* ``CITATION_EVIDENCE_ALIAS_AMBIGUOUS`` — the maps that apply give it different evidence ids;
* ``CITATION_EVIDENCE_NODE_MISSING`` — it is mapped to an evidence id that is not recorded;
* ``CITATION_EVIDENCE_CHAIN_BROKEN`` — the evidence is recorded but does not lead back to what it
  names (its run or artifact version is not recorded, or the content is missing or damaged).

The rule is :mod:`._chip_rule`; this module resolves chips and gathers the facts it decides on.
"""

from __future__ import annotations

from typing import Any

import msgspec

from reviewtrail.evidence import ClaimCitation, alias_maps_for, chain_problem, chip_citation, get_evidence
from reviewtrail.provenance.artifacts import VersionInfo
from reviewtrail.reviewer._chip_rule import ChipFacts, chip_findings, needs_chain
from reviewtrail.reviewer._records import ReviewFinding
from reviewtrail.store import Store

__all__ = ["artifact_aliases", "check_chips", "chip_facts", "resolve_chip"]


def artifact_aliases(store: Store, info: VersionInfo) -> dict[str, list[str]]:
    """The evidence ids each alias is mapped to for this artifact version (its content or the version)."""
    v = info.version
    return alias_maps_for(store, digest=str(v.content.get("digest")), artifact_id=v.artifact_id, version=v.version)


def resolve_chip(store: Store, chip: Any, mapping: dict[str, list[str]]) -> ClaimCitation:
    """A chip from the text, or one recorded with a claim (which keeps the mapping its turn gave it)."""
    recorded = getattr(chip, "evidence_id", None)
    ids = [recorded] if recorded else mapping.get(chip.alias, [])
    resolved = chip_citation(store, chip, ids)
    if len(ids) > 1:  # keep every candidate visible to the check below
        return msgspec.structs.replace(resolved, evidence_id=None, target="ambiguous:" + ",".join(ids))
    return resolved


def check_chips(store: Store, pairs: list[tuple[Any, Any]]) -> list[ReviewFinding]:
    """One finding per distinct chip (alias and mapping) that does not lead back to recorded evidence:
    the chips are gathered with their evidence's chain problems, then :func:`chip_findings` decides."""
    return chip_findings(chip_facts(store, pairs))


def chip_facts(store: Store, pairs: list[tuple[Any, Any]]) -> list[ChipFacts]:
    """Each distinct chip of the claims, first occurrence first; the chain of its evidence is read
    only when the rule looks at it (:func:`needs_chain`)."""
    out: list[ChipFacts] = []
    seen: set[tuple[str | None, str | None, str | None]] = set()
    for _recorded, (claim, citations) in pairs:
        for cit in citations:
            key = (cit.alias, cit.evidence_id, cit.target)
            if cit.alias is None or key in seen:
                continue
            seen.add(key)
            problem = chain_problem(store, get_evidence(store, cit.evidence_id)) if needs_chain(cit) else None
            out.append(ChipFacts(citation=cit, claim=claim, chain_problem=problem))
    return out
