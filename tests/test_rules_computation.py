"""The computation rule (reviewer._computation_rule): a run backs a number when it succeeded, is in
the artifact's lineage and recorded its environment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.errors import NotFoundError
from reviewtrail.reviewer._computation_rule import (
    ClaimFacts,
    ComputationFacts,
    RunFacts,
    claim_problems,
    decide_computation,
    run_problem,
)
from reviewtrail.reviewer._records import ReviewFinding

ART = "report.md@2"


@dataclass(frozen=True)
class _Claim:
    text: str = "Accuracy was 0.91 [run:r1]."
    sentence_start: int = 0
    sentence_end: int = 27


def _run(run_id: str = "r1", status: str | None = "succeeded", lineage: bool = True, env: bool = True) -> RunFacts:
    return RunFacts(run_id=run_id, status=status, in_lineage=lineage, env_recorded=env)


_RUNS = st.builds(
    _run,
    st.sampled_from(["r1", "r2", "r3"]),
    st.sampled_from(["succeeded", "failed", "cancelled"]),
    st.booleans(),
    st.booleans(),
)


@given(_RUNS)
def test_a_run_backs_a_number_exactly_when_it_succeeded_is_in_the_lineage_and_recorded_its_environment(
    run: RunFacts,
) -> None:
    problem = run_problem(run, ART)
    assert (problem is None) == (run.status == "succeeded" and run.in_lineage and run.env_recorded)
    if run.status != "succeeded":  # checked in this order: status, lineage, environment
        assert problem == ("COMPUTATION_RUN_FAILED", f"run {run.run_id} ended {run.status}")
    elif not run.in_lineage:
        assert problem == (
            "COMPUTATION_OUTPUT_NOT_IN_LINEAGE",
            f"run {run.run_id} did not produce anything that reached {ART}",
        )
    elif not run.env_recorded:
        assert problem == ("COMPUTATION_ENV_NOT_RECORDED", f"run {run.run_id} has no recorded environment")


def test_a_run_that_is_not_recorded_ends_the_check_as_reading_it_would() -> None:
    with pytest.raises(NotFoundError, match="no record with id 'gone'"):
        run_problem(_run("gone", status=None), ART)


@given(st.lists(_RUNS, min_size=1, max_size=4))
def test_one_backing_run_settles_a_claim_else_every_cited_run_is_a_problem(runs: list[RunFacts]) -> None:
    table = {r.run_id: r for r in runs}  # the last facts of each id win, as a gathered mapping would hold
    ids = tuple(r.run_id for r in runs)
    problems = claim_problems(ClaimFacts(claim=_Claim(), run_ids=ids, evidence_refs=()), table, ART)
    distinct = list(dict.fromkeys(ids))
    if any(run_problem(table[i], ART) is None for i in distinct):
        assert problems == []
    else:
        assert problems == [run_problem(table[i], ART) for i in distinct]


def test_a_run_after_the_backing_one_is_never_looked_at() -> None:
    claim = ClaimFacts(claim=_Claim(), run_ids=("r1", "gone"), evidence_refs=())
    assert claim_problems(claim, {"r1": _run("r1"), "gone": _run("gone", status=None)}, ART) == []


def test_a_claim_naming_no_run_is_unbacked() -> None:
    claim = ClaimFacts(claim=_Claim(), run_ids=(), evidence_refs=("[1]",))
    facts = ComputationFacts(artifact=ART, claims=[claim])
    check, findings = decide_computation(facts)
    assert check.status == "failed"
    [f] = findings
    assert (f.code, f.severity, f.check, f.evidence_refs) == ("COMPUTATION_UNBACKED", "error", "computation", ["[1]"])
    assert f.location == {"excerpt": _Claim().text, "sentenceStart": 0, "sentenceEnd": 27}


_CHIP = ReviewFinding(code="CITATION_EVIDENCE_ALIAS_UNRESOLVED", severity="error", check="citation", message="[ev1]")
_UNCITED = ReviewFinding(
    code="COMPUTATION_NUMERIC_CLAIM_UNSUPPORTED", severity="error", check="computation", message="0.5"
)


def test_an_unreadable_or_truncated_lineage_is_inconclusive_and_judges_no_claim() -> None:
    claim = ClaimFacts(claim=_Claim(), run_ids=(), evidence_refs=())
    check, findings = decide_computation(
        ComputationFacts(artifact=ART, lineage_error="disk on fire", claims=[claim]), [_CHIP]
    )
    assert (check.status, check.detail) == ("inconclusive", "disk on fire")
    assert [f.code for f in findings] == ["COMPUTATION_INCONCLUSIVE", _CHIP.code]
    assert findings[0].message == f"the lineage of {ART} could not be read: disk on fire"
    assert findings[0].severity == "warning"
    check, findings = decide_computation(ComputationFacts(artifact=ART, lineage_truncated=True, claims=[claim]))
    assert (check.status, check.detail) == ("inconclusive", "lineage truncated")
    assert [f.message for f in findings] == [f"the lineage of {ART} is deeper than can be walked"]


@given(
    st.integers(0, 2),
    st.integers(0, 2),
    st.lists(st.sampled_from(["r1", "r2"]), max_size=2),
    st.sampled_from(["succeeded", "failed"]),
    st.booleans(),
)
def test_the_checks_status(uncited: int, unrecorded: int, ids: list[str], status: str, chips: bool) -> None:
    runs = {i: _run(i, status=status) for i in ids}
    claims = [ClaimFacts(claim=_Claim(), run_ids=tuple(ids), evidence_refs=())] if ids or uncited == 1 else []
    facts = ComputationFacts(
        artifact=ART, unrecorded_runs=unrecorded, uncited=[_UNCITED] * uncited, claims=claims, runs=runs
    )
    check, findings = decide_computation(facts, [_CHIP] if chips else [])
    if chips:  # chip findings come last, whatever else happened
        assert findings[-1] == _CHIP and _CHIP not in findings[:-1]
    own = findings[:-1] if chips else findings
    errors = [f for f in own if f.severity == "error"]
    if unrecorded:
        assert (check.status, check.detail) == ("inconclusive", "lineage incomplete")
        assert own[-1].message == f"{unrecorded} run(s) in the lineage are not recorded here"
    elif not uncited and not claims:
        assert (check.status, check.detail, own) == ("skipped", "no numeric claims", [])
    else:
        assert check.status == ("failed" if errors else "passed")
    assert len(errors) == uncited + sum(len(claim_problems(c, runs, ART)) for c in claims)


def test_a_claim_backed_by_its_second_run_passes() -> None:
    claim = ClaimFacts(_Claim(), ("r1", "r2"), ())
    facts: Any = ComputationFacts(artifact=ART, claims=[claim], runs={"r1": _run("r1", "failed"), "r2": _run("r2")})
    assert decide_computation(facts) == (decide_computation(facts)[0], [])
    assert decide_computation(facts)[0].status == "passed"
