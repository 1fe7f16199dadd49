"""Quick tier, Computation: numeric claims must rest on recorded, successful, environment-recorded
executions whose output reached the artifact. When the lineage cannot be read the check says it
was inconclusive instead of passing or failing.

In a narrative artifact (Markdown, plain text, HTML, TeX) every number is a claim to back: one
that cites nothing at all is ``COMPUTATION_NUMERIC_CLAIM_UNSUPPORTED``, one that cites only the
literature (``[1]``, ``(Smith, 2020)``, a link) and no evidence is
``COMPUTATION_NUMERIC_CLAIM_EVIDENCE_MISSING``. Provenance chips are checked here too
(:mod:`reviewtrail.reviewer._chips`)."""

from __future__ import annotations

import re
from typing import Any

from reviewtrail.evidence import (
    Claim,
    extract_claims,
    full_text_retrieved,
    get_evidence,
    links_of,
    numeric_claims,
    resolve_citation,
)
from reviewtrail.evidence._records import ClaimCitation
from reviewtrail.provenance import VersionInfo, lineage
from reviewtrail.reviewer._chips import artifact_aliases, check_chips, resolve_chip
from reviewtrail.reviewer._records import CheckResult, ReviewFinding
from reviewtrail.store import Store

__all__ = [
    "NARRATIVE_MEDIA_TYPES",
    "artifact_claims",
    "check_computation",
    "check_full_text",
    "check_uncited_numbers",
    "check_unresolved",
]

_FULL_TEXT = re.compile(r"full[- ]text|read the (?:whole|entire|full) (?:paper|article)|全文", re.IGNORECASE)
#: Media types whose numbers are claims a reader takes as stated facts.
NARRATIVE_MEDIA_TYPES = frozenset(
    {"text/markdown", "text/x-markdown", "text/plain", "text/html", "application/x-tex", "text/x-tex"}
)


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
                claim = Claim.model_validate(store.ledger.get(rows[0]["record_id"]).payload_value)
                # Resolve again now: a target recorded after the claim counts.
                out.append((claim, (claim, _resolve_all(store, claim.citations, mapping))))
    return out


def _narrative(info: VersionInfo) -> bool:
    return str(info.version.content.get("mediaType", "")).split(";", 1)[0].strip().lower() in NARRATIVE_MEDIA_TYPES


def check_uncited_numbers(info: VersionInfo, text: str | None) -> list[ReviewFinding]:
    """Numbers in a narrative artifact that cite nothing, or only the literature (module doc)."""
    if text is None or not _narrative(info):
        return []
    out = []
    for n in numeric_claims(text):
        if n.support == "cited":
            continue  # a claim: checked against its executions below
        excerpt = n.text[:300]
        if n.support == "literature":
            code = "COMPUTATION_NUMERIC_CLAIM_EVIDENCE_MISSING"
            message = (
                f"numeric claim {excerpt!r} cites only the literature ({', '.join(n.literature)}) and no evidence; "
                "map it to recorded evidence with a chip ([ev1]) or cite [ev:ID] / [run:ID]"
            )
        else:
            code = "COMPUTATION_NUMERIC_CLAIM_UNSUPPORTED"
            message = f"numeric claim {excerpt!r} cites nothing; cite the run or evidence it comes from"
        out.append(
            ReviewFinding(
                code=code,
                severity="error",
                check="computation",
                message=message,
                location=_location(n),
                evidence_refs=list(n.literature),
            )
        )
    return out


def _location(claim: Any) -> dict[str, Any]:
    text = claim.text
    return {"excerpt": text[:160], "sentenceStart": claim.sentence_start, "sentenceEnd": claim.sentence_end}


def check_computation(store: Store, info: VersionInfo, text: str | None) -> tuple[CheckResult, list[ReviewFinding]]:
    v = info.version
    pairs = artifact_claims(store, info, text)
    chips = check_chips(store, pairs)  # citation findings, reported whatever the lineage says
    try:
        graph = lineage(store, v.name, v.version, v.project_id)
    except Exception as exc:
        finding = ReviewFinding(
            code="COMPUTATION_INCONCLUSIVE",
            severity="warning",
            check="computation",
            message=f"the lineage of {v.name}@{v.version} could not be read: {exc}",
        )
        return CheckResult(check="computation", status="inconclusive", detail=str(exc)), [finding, *chips]
    unreadable = [n for n in graph.nodes.values() if n.kind == "execution_run" and not n.attributes]
    if any("lineage truncated" in note for note in graph.notes):
        finding = ReviewFinding(
            code="COMPUTATION_INCONCLUSIVE",
            severity="warning",
            check="computation",
            message=f"the lineage of {v.name}@{v.version} is deeper than can be walked",
        )
        return CheckResult(check="computation", status="inconclusive", detail="lineage truncated"), [finding, *chips]
    runs_in_lineage = {n.record_id for n in graph.nodes.values() if n.kind == "execution_run" and n.attributes}
    findings = check_uncited_numbers(info, text)
    numeric = len(findings)
    for recorded, (claim, citations) in pairs:
        if not claim.numeric:
            continue
        numeric += 1
        run_ids = [c.target.split(":", 1)[1] for c in citations if c.target and c.target.startswith("execution:")]
        for c in citations:  # [ev:ID] pointing at execution evidence backs a number too
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
        if not run_ids:
            findings.append(
                ReviewFinding(
                    code="COMPUTATION_UNBACKED",
                    severity="error",
                    check="computation",
                    message="a numeric claim is not backed by any recorded execution",
                    location=_location(claim),
                    evidence_refs=evidence_refs,
                )
            )
            continue
        problems = []
        for run_id in dict.fromkeys(run_ids):
            run = store.ledger.get(run_id).payload_value
            if run["status"] != "succeeded":
                problems.append(("COMPUTATION_RUN_FAILED", f"run {run_id} ended {run['status']}"))
            elif run_id not in runs_in_lineage:
                problems.append(
                    (
                        "COMPUTATION_OUTPUT_NOT_IN_LINEAGE",
                        f"run {run_id} did not produce anything that reached {v.name}@{v.version}",
                    )
                )
            elif run.get("envSnapshot") is None:
                problems.append(("COMPUTATION_ENV_NOT_RECORDED", f"run {run_id} has no recorded environment"))
            else:
                problems = []
                break
        for code, message in problems:
            findings.append(
                ReviewFinding(
                    code=code,
                    severity="error",
                    check="computation",
                    message=message,
                    location=_location(claim),
                    evidence_refs=evidence_refs,
                )
            )
    if unreadable:
        findings.append(
            ReviewFinding(
                code="COMPUTATION_INCONCLUSIVE",
                severity="warning",
                check="computation",
                message=f"{len(unreadable)} run(s) in the lineage are not recorded here",
            )
        )
        return CheckResult(check="computation", status="inconclusive", detail="lineage incomplete"), findings + chips
    if numeric == 0:
        return CheckResult(check="computation", status="skipped", detail="no numeric claims"), findings + chips
    failed = any(f.severity == "error" for f in findings)
    return CheckResult(check="computation", status="failed" if failed else "passed"), findings + chips


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
                    out.append(
                        ReviewFinding(
                            code="FULL_TEXT_NOT_RETRIEVED",
                            severity="error",
                            check="citation",
                            message=f"claims the full text was read, but {cit.raw} was never extracted",
                            location=_location(claim),
                            evidence_refs=[cit.raw],
                        )
                    )
    return out


def check_unresolved(pairs: list[tuple[Claim | None, Any]]) -> list[ReviewFinding]:
    """Structured citations that resolve to nothing recorded: reported, never dropped (chips are
    checked with their alias maps by :func:`check_computation`)."""
    out = []
    for _recorded, (claim, citations) in pairs:
        for cit in citations:
            if not cit.resolved and cit.alias is None:
                out.append(
                    ReviewFinding(
                        code="CITATION_UNRESOLVED",
                        severity="error",
                        check="citation",
                        message=f"{cit.raw} resolves to nothing recorded in this store",
                        location=_location(claim),
                        evidence_refs=[cit.raw],
                    )
                )
    return out
