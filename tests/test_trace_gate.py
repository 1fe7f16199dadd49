"""The skill's positive gate as one rule (``trace gate``, ``trace save --gate``): for
/auto-review-loop, score >= 6 AND verdict ready/almost; a raw ``ready`` at score 5 is not
positive (seed 000)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import run_cli as run
from reviewtrail.errors import InvalidInputError
from reviewtrail.tracing.rules import positive_gate

VERDICTS = st.sampled_from(["ready", "almost", "READY", " Almost ", "not ready", "clean", "PASS", "", None])
SCORES = st.one_of(st.none(), st.floats(min_value=-5, max_value=15, allow_nan=False), st.integers(0, 10).map(float))


@given(SCORES, VERDICTS)
def test_positive_exactly_when_the_score_and_the_verdict_both_pass(score: float | None, verdict: str | None) -> None:
    outcome = positive_gate(score, verdict)
    passes = score is not None and score >= 6 and (verdict or "").strip().lower() in {"ready", "almost"}
    assert outcome.positive is passes
    assert outcome.reason.startswith("positive" if passes else "not positive")


@given(st.floats(0, 10, allow_nan=False), st.floats(0, 10, allow_nan=False), st.sampled_from(["pass", "clean", "x"]))
def test_the_threshold_and_verdicts_are_parameters(score: float, threshold: float, verdict: str) -> None:
    outcome = positive_gate(score, verdict, min_score=threshold, verdicts=["PASS", "clean"])
    assert outcome.positive is (score >= threshold and verdict in {"pass", "clean"})


@pytest.mark.parametrize(
    ("score", "verdict", "positive", "reason"),
    [
        (6, "ready", True, "positive: score 6 >= 6 and verdict ready"),
        (5, "ready", False, "not positive: score 5 < 6"),  # a raw ready at score 5
        (9.5, "not ready", False, "not positive: verdict 'not ready' is not one of ready, almost"),
        (None, "almost", False, "not positive: no score given"),
        (7, "", False, "not positive: no verdict given"),
        (None, None, False, "not positive: no score given; no verdict given"),
    ],
)
def test_known_answers(score: float | None, verdict: str | None, positive: bool, reason: str) -> None:
    outcome = positive_gate(score, verdict)
    assert (outcome.positive, outcome.reason) == (positive, reason)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"score": math.nan}, "score"),
        ({"score": math.inf}, "score"),
        ({"min_score": math.nan}, "min-score"),
        ({"verdicts": ["", "  "]}, "positive-verdict"),
    ],
)
def test_refusals_name_the_field(kwargs: dict[str, object], field: str) -> None:
    args = {"score": 7.0, "verdict": "ready"} | kwargs
    with pytest.raises(InvalidInputError) as caught:
        positive_gate(args.pop("score"), args.pop("verdict"), **args)  # type: ignore[arg-type]
    assert caught.value.field == field


def test_the_command_exits_0_when_positive_and_8_when_not() -> None:
    code, out, _ = run("trace", "gate", "--score", "7", "--verdict", "Almost")
    assert (code, out.strip()) == (0, "positive: score 7 >= 6 and verdict almost")
    code, out, _ = run("trace", "gate", "--score", "5", "--verdict", "ready", "--json")
    assert code == 8 and json.loads(out)["positive"] is False and json.loads(out)["minScore"] == 6
    code, out, _ = run(
        "trace", "gate", "--score", "3", "--verdict", "pass", "--min-score", "3", "--positive-verdict", "PASS"
    )
    assert code == 0
    code, _, err = run("trace", "gate", "--score", "nan", "--verdict", "ready")
    assert code == 2 and "score" in err


BASE = [
    "trace", "save", "--skill", "auto-review-loop", "--purpose", "round-1", "--executor", "codex",
    "--executor-model", "gpt-5", "--reported-reviewer-model", "claude-opus-4", "--response", "Score: 7/10",
    "--review-completed", "--review-scope-complete", "--json",
]  # fmt: skip


def saved_positive(out: str) -> bool:
    meta = json.loads(Path(json.loads(out)["meta_path"]).read_text())
    return bool(meta["review_positive"])


def test_save_with_the_gate_sets_review_positive_from_the_rule(trace_project: Path) -> None:
    project = trace_project
    code, out, err = run(*BASE, "--project-dir", str(project), "--verdict", "ready", "--gate", "--score", "7")
    assert code == 0, err
    assert saved_positive(out) is True
    code, out, err = run(*BASE, "--project-dir", str(project), "--verdict", "ready", "--gate", "--score", "5")
    assert code == 0, err
    assert saved_positive(out) is False


def test_save_refuses_a_positive_the_gate_does_not_grant_and_a_score_without_the_gate(trace_project: Path) -> None:
    project = trace_project
    args = [*BASE, "--project-dir", str(project), "--verdict", "ready"]
    code, _, err = run(*args, "--gate", "--score", "5", "--review-positive")
    assert code == 2 and "review-positive" in err and "score 5 < 6" in err
    code, _, err = run(*args, "--score", "7")
    assert code == 2 and "score" in err
    assert not (project / ".aris" / "traces").exists()
