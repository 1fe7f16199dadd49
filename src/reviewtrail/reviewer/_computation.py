"""Quick tier, Computation: numeric claims must rest on recorded, successful, environment-recorded
executions whose output reached the artifact. When the lineage cannot be read the check says it
was inconclusive instead of passing or failing.

In a narrative artifact (Markdown, plain text, HTML, TeX) every number is a claim to back: one
that cites nothing at all is ``COMPUTATION_NUMERIC_CLAIM_UNSUPPORTED``, one that cites only the
literature (``[1]``, ``(Smith, 2020)``, a link) and no evidence is
``COMPUTATION_NUMERIC_CLAIM_EVIDENCE_MISSING``. Provenance chips are checked here too
(:mod:`reviewtrail.reviewer._chips`). The rule itself is :mod:`._computation_rule`; this module
gathers the facts it decides on."""

from __future__ import annotations

import re
from typing import Any

from reviewtrail._struct import read
from reviewtrail.errors import NotFoundError
from reviewtrail.evidence import (
    Claim,
    ClaimCitation,
    extract_claims,
    full_text_retrieved,
    get_evidence,
    links_of,
    numeric_claims,
    resolve_citation,
)
from reviewtrail.media import media_kind
from reviewtrail.provenance.artifacts import VersionInfo, lineage
from reviewtrail.reviewer._chips import artifact_aliases, check_chips, resolve_chip
from reviewtrail.reviewer._computation_rule import ClaimFacts, ComputationFacts, RunFacts, decide_computation, error_at
from reviewtrail.reviewer._finding_codes import FindingCode
from reviewtrail.reviewer._records import CheckResult, ReviewFinding
from reviewtrail.store import Store

__all__ = [
    "artifact_claims",
    "check_computation",
    "check_full_text",
    "check_uncited_numbers",
    "check_unresolved",
    "computation_facts",
]

_FULL_TEXT = re.compile(r"full[- ]text|read the (?:whole|entire|full) (?:paper|article)|全文", re.IGNORECASE)


def _resolve_all(store: Store, citations: list[Any], mapping: dict[str, list[str]]) -> list[ClaimCitation]:
    out = []
    for c in citations:
        if getattr(c, "alias", None) is not None:
            out.append(resolve_chip(store, c, mapping))
            continue
        target = resolve_citation(store, c.type, c.id)
        out.append(ClaimCitation(type=c.type, id=c.id, raw=c.raw, resolved=target is not None, target=target))
    return out


def artifact_claims(store: Store, info: VersionInfo, text: str | None) -> list[tuple[Claim | None, Any]]:
    """Claims found in the artifact's own text (resolved now) and claims recorded with evidence pointing at it."""
    v = info.version
    mapping = artifact_aliases(store, info)
    out: list[tuple[Claim | None, Any]] = []
    if text is not None:
        for x in extract_claims(text):
            out.append((None, (x, _resolve_all(store, x.citations, mapping))))
    for row in store.ledger.rows("ev_items", kind="artifact", key=f"{v.artifact_id}@{v.version}"):
        for link_row in store.ledger.rows("ev_links", evidence_id=row["evidence_id"]):
            rows = store.ledger.rows("ev_claims", claim_id=link_row["claim_id"])
            if rows:
                claim = read(Claim, store.ledger.get(rows[0]["record_id"]).payload)
                # Resolve again now: a target recorded after the claim counts.
                out.append((claim, (claim, _resolve_all(store, claim.citations, mapping))))
    return out


def _narrative(info: VersionInfo) -> bool:
    return media_kind(str(info.version.content.get("mediaType", ""))) == "narrative"


def check_uncited_numbers(info: VersionInfo, text: str | None) -> list[ReviewFinding]:
    """Numbers in a narrative artifact that cite nothing, or only the literature (module doc)."""
    if text is None or not _narrative(info):
        return []
    out = []
    for n in numeric_claims(text):
        if n.support == "cited":
            continue  # a claim: checked against its executions below
        excerpt = n.text[:300]
        code: FindingCode
        if n.support == "literature":
            code = "COMPUTATION_NUMERIC_CLAIM_EVIDENCE_MISSING"
            message = (
                f"numeric claim {excerpt!r} cites only the literature ({', '.join(n.literature)}) and no evidence; "
                "map it to recorded evidence with a chip ([ev1]) or cite [ev:ID] / [run:ID]"
            )
        else:
            code = "COMPUTATION_NUMERIC_CLAIM_UNSUPPORTED"
            message = f"numeric claim {excerpt!r} cites nothing; cite the run or evidence it comes from"
        out.append(error_at(n, code, "computation", message, n.literature))
    return out


def check_computation(store: Store, info: VersionInfo, text: str | None) -> tuple[CheckResult, list[ReviewFinding]]:
    """The computation check (:mod:`._computation_rule`): gather the facts, then decide."""
    pairs = artifact_claims(store, info, text)
    chips = check_chips(store, pairs)  # citation findings, reported whatever the lineage says
    return decide_computation(computation_facts(store, info, text, pairs), chips)


def computation_facts(
    store: Store, info: VersionInfo, text: str | None, pairs: list[tuple[Claim | None, Any]]
) -> ComputationFacts:
    """What the computation rule needs: the lineage, the numeric claims and the runs they name."""
    v = info.version
    artifact = f"{v.name}@{v.version}"
    try:
        graph = lineage(store, v.name, v.version, v.project_id)
    except Exception as exc:
        return ComputationFacts(artifact=artifact, lineage_error=str(exc))
    if graph.truncated:
        return ComputationFacts(artifact=artifact, lineage_truncated=True)
    runs = [n for n in graph.nodes.values() if n.kind == "execution_run"]
    in_lineage = {n.record_id for n in runs if n.attributes}
    claims = [
        _claim_facts(store, recorded, claim, citations) for recorded, (claim, citations) in pairs if claim.numeric
    ]
    return ComputationFacts(
        artifact=artifact,
        unrecorded_runs=sum(1 for n in runs if not n.attributes),
        uncited=check_uncited_numbers(info, text),
        claims=claims,
        runs={run_id: _run_facts(store, run_id, in_lineage) for c in claims for run_id in c.run_ids},
    )


def _claim_facts(store: Store, recorded: Claim | None, claim: Any, citations: list[ClaimCitation]) -> ClaimFacts:
    """The runs a numeric claim names: cited runs, execution evidence it cites ([ev:ID]), and for a
    recorded claim the execution evidence that supports it."""
    run_ids = [c.target.split(":", 1)[1] for c in citations if c.target and c.target.startswith("execution:")]
    for c in citations:
        if c.target and c.target.startswith("evidence:"):
            item = get_evidence(store, c.target.split(":", 1)[1])
            if item.origin.kind == "execution":
                run_ids.append(item.origin.run_id)
    evidence_refs = [c.raw for c in citations]
    if recorded is not None:
        for link, item in links_of(store, recorded.claim_id):
            if link.relation == "supports" and item.origin.kind == "execution":
                run_ids.append(item.origin.run_id)
                evidence_refs.append(f"evidence:{item.evidence_id}")
    return ClaimFacts(claim=claim, run_ids=tuple(run_ids), evidence_refs=tuple(evidence_refs))


def _run_facts(store: Store, run_id: str, in_lineage: set[str | None]) -> RunFacts:
    try:
        run = store.ledger.get(run_id).payload_value
    except NotFoundError:
        return RunFacts(run_id=run_id, status=None, in_lineage=False, env_recorded=False)
    return RunFacts(
        run_id=run_id,
        status=str(run["status"]),
        in_lineage=run_id in in_lineage,
        env_recorded=run.get("envSnapshot") is not None,
    )


def check_full_text(store: Store, pairs: list[tuple[Claim | None, Any]]) -> list[ReviewFinding]:
    """Claims that say the full text was read, citing a paper whose PDF was never extracted."""
    out = []
    for _recorded, (claim, citations) in pairs:
        if not _FULL_TEXT.search(claim.text):
            continue
        for cit in citations:
            if cit.target and cit.target.startswith("evidence:"):
                item = get_evidence(store, cit.target.split(":", 1)[1])
                if item.origin.kind in ("paper", "mcp-record") and not full_text_retrieved(store, item.origin.paper_id):
                    message = f"claims the full text was read, but {cit.raw} was never extracted"
                    out.append(error_at(claim, "FULL_TEXT_NOT_RETRIEVED", "citation", message, [cit.raw]))
    return out


def check_unresolved(pairs: list[tuple[Claim | None, Any]]) -> list[ReviewFinding]:
    """Structured citations that resolve to nothing recorded: reported, never dropped (chips are
    checked with their alias maps by :func:`check_computation`)."""
    out = []
    for _recorded, (claim, citations) in pairs:
        for cit in citations:
            if not cit.resolved and cit.alias is None:
                message = f"{cit.raw} resolves to nothing recorded in this store"
                out.append(error_at(claim, "CITATION_UNRESOLVED", "citation", message, [cit.raw]))
    return out
