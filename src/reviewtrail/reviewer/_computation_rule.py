"""The computation rule, without I/O: a run backs a number when it succeeded, is in the
artifact's lineage and recorded its environment.

:func:`decide_computation` turns :class:`ComputationFacts` (gathered by
:func:`reviewtrail.reviewer._computation.check_computation`) into the check's result and findings:

* the lineage could not be read, or is deeper than can be walked: ``inconclusive`` (a
  ``COMPUTATION_INCONCLUSIVE`` warning), and no claim is judged;
* a numeric claim that names no run (directly, or through execution evidence) is
  ``COMPUTATION_UNBACKED``;
* otherwise its runs are tried in the order cited: the first that backs it (:func:`run_problem`
  finds nothing) settles the claim; when none does, each run's problem is a finding
  (``COMPUTATION_RUN_FAILED``, ``COMPUTATION_OUTPUT_NOT_IN_LINEAGE``,
  ``COMPUTATION_ENV_NOT_RECORDED``, checked in that order);
* runs in the lineage that are not recorded here make the check ``inconclusive``; no numeric
  claim at all makes it ``skipped``; any error makes it ``failed``, else ``passed``.

Chip findings (:mod:`._chips`) are reported whatever the lineage says, after the others.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reviewtrail.errors import NotFoundError
from reviewtrail.reviewer._finding_codes import FindingCode
from reviewtrail.reviewer._records import CheckResult, ReviewFinding

__all__ = [
    "ClaimFacts",
    "ComputationFacts",
    "RunFacts",
    "claim_problems",
    "decide_computation",
    "error_at",
    "run_problem",
]


@dataclass(frozen=True)
class RunFacts:
    """What the rule needs to know of one cited run; ``status`` is None when no such run is recorded."""

    run_id: str
    status: str | None
    in_lineage: bool
    env_recorded: bool


@dataclass(frozen=True)
class ClaimFacts:
    """A numeric claim, the runs it names (in citation order) and the references it cites."""

    claim: Any  # has .text, .sentence_start, .sentence_end
    run_ids: tuple[str, ...]
    evidence_refs: tuple[str, ...]


@dataclass(frozen=True)
class ComputationFacts:
    artifact: str  # name@version
    lineage_error: str | None = None
    lineage_truncated: bool = False
    unrecorded_runs: int = 0  # runs in the lineage not recorded here
    uncited: Sequence[ReviewFinding] = ()  # numbers of a narrative text that cite nothing to check
    claims: Sequence[ClaimFacts] = ()  # the numeric claims with citations
    runs: Mapping[str, RunFacts] = field(default_factory=dict)


def run_problem(run: RunFacts, artifact: str) -> tuple[FindingCode, str] | None:
    """Why ``run`` does not back a number of ``artifact`` (code, message), or None when it does."""
    if run.status is None:  # as reading a record that is not there: the check cannot go on
        raise NotFoundError(f"no record with id {run.run_id!r}", field="id")
    if run.status != "succeeded":
        return "COMPUTATION_RUN_FAILED", f"run {run.run_id} ended {run.status}"
    if not run.in_lineage:
        return "COMPUTATION_OUTPUT_NOT_IN_LINEAGE", f"run {run.run_id} did not produce anything that reached {artifact}"
    if not run.env_recorded:
        return "COMPUTATION_ENV_NOT_RECORDED", f"run {run.run_id} has no recorded environment"
    return None


def claim_problems(claim: ClaimFacts, runs: Mapping[str, RunFacts], artifact: str) -> list[tuple[FindingCode, str]]:
    """Nothing when one of the claim's runs backs it; otherwise what is wrong with each (in order)."""
    if not claim.run_ids:
        return [("COMPUTATION_UNBACKED", "a numeric claim is not backed by any recorded execution")]
    problems = []
    for run_id in dict.fromkeys(claim.run_ids):
        problem = run_problem(runs[run_id], artifact)
        if problem is None:
            return []
        problems.append(problem)
    return problems


def error_at(claim: Any, code: FindingCode, check: str, message: str, refs: Iterable[str]) -> ReviewFinding:
    """An error finding of ``check`` located at ``claim``'s sentence, citing ``refs``."""
    location = {"excerpt": claim.text[:160], "sentenceStart": claim.sentence_start, "sentenceEnd": claim.sentence_end}
    return ReviewFinding.new(code, "error", check, message, location=location, evidence_refs=refs)


def _warning(message: str) -> ReviewFinding:
    return ReviewFinding.new(code="COMPUTATION_INCONCLUSIVE", severity="warning", check="computation", message=message)


def decide_computation(
    facts: ComputationFacts, chips: Sequence[ReviewFinding] = ()
) -> tuple[CheckResult, list[ReviewFinding]]:
    """The computation check's result and findings (see the module docs)."""
    if facts.lineage_error is not None:
        finding = _warning(f"the lineage of {facts.artifact} could not be read: {facts.lineage_error}")
        return CheckResult(check="computation", status="inconclusive", detail=facts.lineage_error), [finding, *chips]
    if facts.lineage_truncated:
        finding = _warning(f"the lineage of {facts.artifact} is deeper than can be walked")
        return CheckResult(check="computation", status="inconclusive", detail="lineage truncated"), [finding, *chips]
    findings = list(facts.uncited)
    for claim in facts.claims:
        for code, message in claim_problems(claim, facts.runs, facts.artifact):
            findings.append(error_at(claim.claim, code, "computation", message, claim.evidence_refs))
    if facts.unrecorded_runs:
        findings.append(_warning(f"{facts.unrecorded_runs} run(s) in the lineage are not recorded here"))
        return CheckResult(check="computation", status="inconclusive", detail="lineage incomplete"), [*findings, *chips]
    if not facts.uncited and not facts.claims:
        return CheckResult(check="computation", status="skipped", detail="no numeric claims"), [*findings, *chips]
    failed = any(f.severity == "error" for f in findings)
    return CheckResult(check="computation", status="failed" if failed else "passed"), [*findings, *chips]
