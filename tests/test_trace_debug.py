"""Debugging with traces: ls, show, diff and divergence over hand-built trace folders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from reviewtrail.cli.trace._debug import register
from reviewtrail.errors import InvalidInputError, NotFoundError
from reviewtrail.tracing.commands._debug import diff_calls, divergence, list_runs, parse_score, show_run
from reviewtrail.tracing.files._reader import find_run

RUN_ID = "2026-04-15_run01"
LOOP = "auto-review-loop"

ROUND_1 = """# Round 1 review

Score: 5/10
Verdict: not ready

The method section is clear and the ablations are thorough.

However, the main table is missing the strongest baseline.
I cannot judge the claimed gain without it.
"""

ROUND_2 = """# Round 2 review

**Score**: 7 / 10
Verdict: almost

The method section is clear and the ablations are thorough.

The new baseline row closes my earlier gap; the gain holds.
"""

ROUND_3 = """# Round 3 review

Overall score: 4

The method section is clear and the ablations are thorough.

But the new seed sweep shows the gain is within noise.
My main concern is that Table 1 reports a single seed.
Concerns about reproducibility remain.

Nothing else changed.
"""


def write_json(path: Path, doc: dict[str, Any]) -> None:
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")


def make_run(project: Path, skill: str, run_id: str, *, started_at: str = "2026-04-15T14:30:00+08:00") -> Path:
    run = project / ".aris" / "traces" / skill / run_id
    run.mkdir(parents=True)
    write_json(
        run / "run.meta.json",
        {
            "skill": skill,
            "run_id": run_id,
            "started_at": started_at,
            "executor": "codex",
            "executor_model": "gpt-6-astra",
            "reviewer_backend": "grok",
            "project_dir": str(project),
        },
    )
    return run


def add_call(
    run: Path,
    number: int,
    purpose: str,
    *,
    response: str | None,
    verdict: str,
    status: str = "ok",
    acceptance: str = "provisional",
    mode: str = "full",
    complete: bool = True,
) -> None:
    stem = f"{number:03d}-{purpose}"
    common = {
        "call_number": number,
        "purpose": purpose,
        "reviewer_model": "grok-4",
        "reviewer_model_source": "backend-reported",
        "review_independence": "cross-family",
        "acceptance_status": acceptance,
        "review_completed": True,
        "review_scope_complete": True,
        "review_positive": False,
        "verdict": verdict,
    }
    request = {**common, "timestamp": f"2026-04-15T14:3{number}:00+08:00", "tool": "mcp__grok__grok"}
    if mode == "full":
        request["prompt"] = f"Review round {number}."
    else:
        request.update(prompt_sha256="ab" * 32, prompt_bytes=15)
    write_json(run / f"{stem}.request.json", request)
    if response is not None:
        (run / f"{stem}.response.md").write_bytes(response.encode("utf-8"))
    if complete:
        meta = {
            **common,
            "timestamp": f"2026-04-15T14:4{number}:00+08:00",
            "status": status,
            "duration_ms": 1000 * number,
            "thread_id": f"thread-{number}",
            "model_family": "xai",
            "trace_mode": mode,
        }
        write_json(run / f"{stem}.meta.json", meta)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """auto-review-loop run01: score 5 -> 7 -> 4, verdicts change, a meta-mode call and an incomplete call.

    research-review also has a run01 (so the bare run id is ambiguous) and a run02.
    """
    loop = make_run(tmp_path, LOOP, RUN_ID)
    add_call(loop, 1, "round-1-review", response=ROUND_1, verdict="not ready", acceptance="provisional")
    add_call(loop, 2, "round-2-review", response=ROUND_2, verdict="almost", acceptance="provisional")
    add_call(loop, 3, "round-3-review", response=ROUND_3, verdict="not ready", acceptance="accepted")
    add_call(loop, 4, "round-4-review", response=None, verdict="ready", mode="meta", acceptance="accepted")
    add_call(loop, 5, "round-5-review", response=ROUND_3, verdict="ready", complete=False)
    other = make_run(tmp_path, "research-review", RUN_ID, started_at="2026-04-15T09:00:00+08:00")
    add_call(other, 1, "initial-review", response="Score: 8/10\n\nLooks fine.\n", verdict="ready")
    add_call(other, 2, "follow-up", response="Score: 8/10\n\nLooks fine.\n", verdict="ready", status="error")
    make_run(tmp_path, "research-review", "2026-04-16_run02")
    return tmp_path


@pytest.fixture
def loop_run(project: Path) -> Any:
    return find_run(project, f"{LOOP}/{RUN_ID}")


# --- list_runs ---------------------------------------------------------------------------------


def test_list_runs_summarises_every_run(project: Path) -> None:
    runs = list_runs(project)
    assert [(r.skill, r.run_id) for r in runs] == [
        (LOOP, RUN_ID),
        ("research-review", RUN_ID),
        ("research-review", "2026-04-16_run02"),
    ]
    loop = runs[0]
    assert loop.path == f".aris/traces/{LOOP}/{RUN_ID}"
    assert (loop.started_at, loop.executor, loop.reviewer_backend) == ("2026-04-15T14:30:00+08:00", "codex", "grok")
    assert (loop.calls, loop.complete) == (5, 4)
    assert loop.last_status == "incomplete"
    assert loop.acceptance == {"accepted": 2, "provisional": 2}
    assert loop.verdicts == ("not ready", "almost", "not ready", "ready", "ready")
    assert runs[1].last_status == "error"
    empty = runs[2]
    assert (empty.calls, empty.complete, empty.last_status, empty.acceptance, empty.verdicts) == (0, 0, None, {}, ())
    doc = loop.to_json()
    assert doc["run_id"] == RUN_ID and doc["last_status"] == "incomplete" and doc["verdicts"][1] == "almost"
    json.dumps([r.to_json() for r in runs])


def test_list_runs_filters_by_skill_and_handles_no_traces(project: Path, tmp_path: Path) -> None:
    assert [r.run_id for r in list_runs(project, "research-review")] == [RUN_ID, "2026-04-16_run02"]
    assert list_runs(project, "no-such-skill") == []
    assert list_runs(tmp_path / "elsewhere") == []
    with pytest.raises(InvalidInputError):
        list_runs(project, "../x")


# --- show_run ----------------------------------------------------------------------------------


def test_show_run_has_one_row_per_call(loop_run: Any) -> None:
    view = show_run(loop_run)
    assert view.meta is not None and view.meta["executor_model"] == "gpt-6-astra"
    assert [c.number for c in view.calls] == [1, 2, 3, 4, 5]
    first = view.calls[0]
    assert (first.purpose, first.status, first.verdict) == ("round-1-review", "ok", "not ready")
    assert first.timestamp == "2026-04-15T14:41:00+08:00"  # the meta's (finish) time, not the request's
    assert (first.reviewer_model, first.reviewer_model_source) == ("grok-4", "backend-reported")
    assert (first.review_independence, first.acceptance_status) == ("cross-family", "provisional")
    assert first.duration_ms == 1000
    assert first.has_response and first.complete and first.trace_mode == "full"
    meta_mode = view.calls[3]
    assert not meta_mode.has_response and meta_mode.trace_mode == "meta"
    incomplete = view.calls[4]
    assert not incomplete.complete and incomplete.status is None and incomplete.duration_ms is None
    assert incomplete.verdict == "ready" and incomplete.timestamp == "2026-04-15T14:35:00+08:00"  # from the request
    doc = view.to_json()
    assert doc["calls"][0]["reviewer_model_source"] == "backend-reported"
    assert doc["meta"]["reviewer_backend"] == "grok"  # run.meta.json passes through as saved
    json.dumps(doc)


# --- diff_calls --------------------------------------------------------------------------------


def test_diff_calls_is_a_unified_diff_with_file_labels(loop_run: Any) -> None:
    result = diff_calls(loop_run, 2, 3)
    assert not result.identical
    lines = result.diff.splitlines()
    assert lines[0] == "--- 002-round-2-review.response.md"
    assert lines[1] == "+++ 003-round-3-review.response.md"
    assert "-**Score**: 7 / 10" in lines and "+Overall score: 4" in lines
    assert "+But the new seed sweep shows the gain is within noise." in lines
    assert " The method section is clear and the ablations are thorough." in lines
    narrow = diff_calls(loop_run, 2, 3, context=0)
    assert " The method section is clear and the ablations are thorough." not in narrow.diff.splitlines()
    assert result.to_json()["from_file"] == "002-round-2-review.response.md"


def test_diff_calls_identical_and_missing_final_newline(project: Path) -> None:
    same = diff_calls(find_run(project, f"research-review/{RUN_ID}"), 1, 2)
    assert same.identical and same.diff == ""
    assert same.to_json()["identical"] is True
    run = make_run(project, "claim-check", "2026-04-17_run01")
    add_call(run, 1, "a", response="one\ntwo", verdict="x")
    add_call(run, 2, "b", response="one\nthree", verdict="x")
    result = diff_calls(find_run(project, "claim-check/2026-04-17_run01"), 1, 2)
    assert result.diff.endswith("+three\n\\ No newline at end of file\n")
    assert "-two\n\\ No newline at end of file\n" in result.diff


def test_diff_calls_errors(loop_run: Any) -> None:
    with pytest.raises(InvalidInputError) as err:
        diff_calls(loop_run, 3, 4)
    assert err.value.field == "b" and "call 004" in str(err.value) and "meta mode" in str(err.value)
    with pytest.raises(InvalidInputError) as err:
        diff_calls(loop_run, 4, 2)
    assert err.value.field == "a"
    with pytest.raises(InvalidInputError) as err:
        diff_calls(loop_run, 4, 4)
    assert "call 004" in str(err.value) and " have " in str(err.value)
    with pytest.raises(NotFoundError):
        diff_calls(loop_run, 1, 9)
    with pytest.raises(InvalidInputError) as err:
        diff_calls(loop_run, 1, 2, context=-1)
    assert err.value.field == "context"


# --- divergence --------------------------------------------------------------------------------


def test_divergence_lines_up_rounds(loop_run: Any) -> None:
    result = divergence(loop_run)
    assert [(r.number, r.verdict, r.score) for r in result.rounds] == [
        (1, "not ready", 5.0),
        (2, "almost", 7.0),
        (3, "not ready", 4.0),
        (4, "ready", None),
        (5, "ready", 4.0),
    ]
    assert [r.has_text for r in result.rounds] == [True, True, True, False, True]
    assert [r.status for r in result.rounds] == ["ok", "ok", "ok", "ok", None]
    assert result.rounds[2].acceptance_status == "accepted"
    assert [(s.previous, s.current, s.changed) for s in result.steps] == [
        (1, 2, True),
        (2, 3, True),
        (3, 4, True),  # verdict changed; the score is unknown in meta mode
        (4, 5, False),
    ]
    assert result.first_change == 2


def test_divergence_finds_the_new_paragraphs_and_hedges(loop_run: Any) -> None:
    step = divergence(loop_run).steps[1]  # round 2 -> round 3: score 7 -> 4, almost -> not ready
    assert step.score_changed and step.verdict_changed
    assert (step.score_before, step.score_after) == (7.0, 4.0)
    assert (step.verdict_before, step.verdict_after) == ("almost", "not ready")
    texts = [p.text for p in step.new_paragraphs]
    assert "The method section is clear and the ablations are thorough." not in texts  # present verbatim before
    cause = next(p for p in step.new_paragraphs if p.text.startswith("But the new seed sweep"))
    assert (cause.start_line, cause.end_line) == (7, 9)
    assert cause.hedges == ("but", "concern", "concerns")
    assert cause.hedge_lines == (7, 8, 9)
    quiet = next(p for p in step.new_paragraphs if p.text == "Nothing else changed.")
    assert quiet.hedges == () and quiet.start_line == 11
    lines = ROUND_3.split("\n")
    for p in step.new_paragraphs:  # line numbers point into the current response.md
        assert "\n".join(lines[p.start_line - 1 : p.end_line]) == p.text
    first = divergence(loop_run).steps[0]
    hedged = [p for p in first.new_paragraphs if p.hedges]
    assert hedged == []  # round 2 dropped round 1's "However ... missing ... cannot" paragraph
    doc = step.to_json()
    assert doc["changed"] is True and doc["new_paragraphs"][0]["start_line"] == 1


def test_divergence_with_meta_mode_calls_says_so(loop_run: Any) -> None:
    steps = divergence(loop_run).steps
    into_meta, out_of_meta = steps[2], steps[3]
    assert into_meta.new_paragraphs == () and into_meta.note and "call 004" in into_meta.note
    assert "meta mode" in into_meta.note
    assert not into_meta.score_changed and into_meta.verdict_changed
    assert out_of_meta.new_paragraphs == () and out_of_meta.note and "call 004" in out_of_meta.note
    assert not out_of_meta.changed  # ready -> ready, score unknown before


def test_divergence_of_a_run_with_one_or_no_calls(project: Path) -> None:
    empty = divergence(find_run(project, "2026-04-16_run02"))
    assert empty.rounds == () and empty.steps == () and empty.first_change is None
    same = divergence(find_run(project, f"research-review/{RUN_ID}"))
    assert [s.changed for s in same.steps] == [False] and same.steps[0].new_paragraphs == ()


def test_verdicts_compare_case_insensitively(project: Path) -> None:
    run = make_run(project, "claim-check", "2026-04-17_run01")
    add_call(run, 1, "a", response="Verdict: PASS", verdict="PASS")
    add_call(run, 2, "b", response="Verdict: pass", verdict="pass")
    (step,) = divergence(find_run(project, "claim-check/2026-04-17_run01")).steps
    assert not step.verdict_changed and not step.changed
    assert [p.text for p in step.new_paragraphs] == ["Verdict: pass"]


# --- parse_score -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("Score: 6/10", 6.0),
        ("score = 7.5", 7.5),
        ("**Score**: 5 / 10", 5.0),
        ("Overall score: 8", 8.0),
        ("**Score:** 6/10", 6.0),
        ("__Score__: 4", 4.0),
        ("Score (out of 10): 7", 7.0),
        ("Final Score = 2.5", 2.5),
        ("Novelty score: 3/10\n\nOverall score: 6/10", 6.0),
        ("Score: 6/10\n\nIf fixed, I would raise the score: 8", 6.0),
        ("No score given.", None),
        ("scores: 5", None),
        ("f1_score: 0.81", None),
        ("underscore = 3", None),
        ("", None),
    ],
)
def test_parse_score_forms(text: str, score: float | None) -> None:
    assert parse_score(text) == score


@given(
    n=st.one_of(st.integers(0, 10), st.decimals(0, 10, places=1).map(float)),
    label=st.sampled_from(["Score", "score", "**Score**", "Overall score", "SCORE"]),
    sep=st.sampled_from([": ", ":", " = ", "=", ":** "]),
    tail=st.sampled_from(["/10", " / 10", "", "/10.", " out of 10"]),
    before=st.text(st.characters(codec="utf-8"), max_size=40).filter(lambda s: "score" not in s.lower()),
    after=st.text(max_size=40).filter(lambda s: "score" not in s.lower()),
)
def test_parse_score_round_trips(n: float, label: str, sep: str, tail: str, before: str, after: str) -> None:
    text = f"{before}\n{label}{sep}{n}{tail}\n{after}"
    assert parse_score(text) == float(n)


# --- CLI ---------------------------------------------------------------------------------------


@pytest.fixture
def cli(project: Path) -> Any:
    app = typer.Typer(rich_markup_mode=None)
    register(app)
    runner = CliRunner()

    def invoke(*args: str) -> tuple[int, str, str]:
        result = runner.invoke(app, [*args, "--project-dir", str(project)], env={"COLUMNS": "200"})
        return result.exit_code, result.stdout, result.stderr

    return invoke


def test_cli_help_has_examples() -> None:
    app = typer.Typer(rich_markup_mode=None)
    register(app)
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    assert set(commands) == {"ls", "show", "diff", "divergence"}
    for name, cmd in commands.items():
        assert f"Example: reviewtrail trace {name}" in cmd.help
        assert any("--json" in p.opts for p in cmd.params)
        assert any("--project-dir" in p.opts for p in cmd.params)


def test_cli_ls(cli: Any, tmp_path: Path) -> None:
    code, out, _ = cli("ls")
    assert code == 0 and RUN_ID in out and "auto-review-loop" in out
    code, out, _ = cli("ls", "--json")
    assert code == 0 and [r["skill"] for r in json.loads(out)] == [LOOP, "research-review", "research-review"]
    code, out, _ = cli("ls", "--skill", "research-review", "--json")
    assert [r["run_id"] for r in json.loads(out)] == [RUN_ID, "2026-04-16_run02"]
    code, out, _ = cli("ls", "--skill", "nothing-here")
    assert code == 0 and out.strip() == "no traces"
    code, _, err = cli("ls", "--skill", "../x")
    assert code == 2 and "skill" in err


def test_cli_ls_with_no_traces_at_all(tmp_path: Path) -> None:
    app = typer.Typer(rich_markup_mode=None)
    register(app)
    result = CliRunner().invoke(app, ["ls", "--project-dir", str(tmp_path)])
    assert result.exit_code == 0 and result.stdout == "no traces\n"
    result = CliRunner().invoke(app, ["ls", "--project-dir", str(tmp_path), "--json"])
    assert json.loads(result.stdout) == []


def test_cli_show(cli: Any) -> None:
    code, out, _ = cli("show", f"{LOOP}/{RUN_ID}")
    assert code == 0 and "executor_model: gpt-6-astra" in out and "round-1-review" in out and "incomplete" in out
    code, out, _ = cli("show", f"{LOOP}/{RUN_ID}", "--json")
    doc = json.loads(out)
    assert doc["run_id"] == RUN_ID and len(doc["calls"]) == 5 and doc["calls"][3]["has_response"] is False


def test_cli_show_accepts_a_bare_unique_run_id_and_a_path(cli: Any, project: Path) -> None:
    code, out, _ = cli("show", "2026-04-16_run02", "--json")
    assert code == 0 and json.loads(out)["skill"] == "research-review"
    code, out, _ = cli("show", str(project / ".aris" / "traces" / LOOP / RUN_ID), "--json")
    assert code == 0 and json.loads(out)["skill"] == LOOP


def test_cli_diff(cli: Any) -> None:
    code, out, _ = cli("diff", f"{LOOP}/{RUN_ID}", "2", "3")
    assert code == 0 and out.startswith("--- 002-round-2-review.response.md\n+++ 003-round-3-review.response.md\n")
    assert "+Overall score: 4\n" in out
    code, out, _ = cli("diff", f"{LOOP}/{RUN_ID}", "2", "3", "-U", "0", "--json")
    assert code == 0 and json.loads(out)["identical"] is False
    code, out, _ = cli("diff", f"research-review/{RUN_ID}", "1", "2")
    assert code == 0 and "identical" in out
    code, out, _ = cli("diff", f"research-review/{RUN_ID}", "1", "2", "--json")
    doc = json.loads(out)
    assert doc["identical"] is True and doc["diff"] == ""


def test_cli_diff_errors(cli: Any) -> None:
    code, out, err = cli("diff", f"{LOOP}/{RUN_ID}", "3", "4")
    assert code == 2 and "call 004" in err and "meta mode" in err
    code, out, _ = cli("diff", f"{LOOP}/{RUN_ID}", "3", "4", "--json")
    assert code == 2 and json.loads(out)["error"]["field"] == "b"
    code, _, err = cli("diff", f"{LOOP}/{RUN_ID}", "1", "42")
    assert code == 3 and "042" in err


def test_cli_divergence(cli: Any) -> None:
    code, out, _ = cli("divergence", f"{LOOP}/{RUN_ID}")
    assert code == 0
    assert "002 -> 003: CHANGED (score 7 -> 4, verdict almost -> not ready)" in out
    assert "[but, concern, concerns on lines 7, 8, 9]" in out
    assert "    But the new seed sweep shows the gain is within noise." in out
    assert "004 -> 005: no change in score or verdict" in out and "meta mode" in out
    assert "first changed at call 002" in out
    code, out, _ = cli("divergence", f"{LOOP}/{RUN_ID}", "--json")
    doc = json.loads(out)
    assert doc["first_change"] == 2 and [s["changed"] for s in doc["steps"]] == [True, True, True, False]
    assert doc["rounds"][3]["score"] is None and doc["rounds"][3]["has_text"] is False


@pytest.mark.parametrize("command", [["show"], ["divergence"], ["diff", "__RUN__", "1", "2"]])
def test_cli_run_errors(cli: Any, command: list[str]) -> None:
    def call(ref: str, *extra: str) -> tuple[int, str, str]:
        args = [ref if a == "__RUN__" else a for a in command]
        if "__RUN__" not in command:
            args.append(ref)
        return cli(*args, *extra)  # type: ignore[no-any-return]

    code, _, err = call("2026-01-01_run09")
    assert code == 3 and "no trace run" in err
    code, _, err = call(f"{LOOP}/2026-01-01_run09")
    assert code == 3
    code, _, err = call("../x")
    assert code == 2
    code, _, err = call("not-a-run")
    assert code == 2
    code, _, err = call(RUN_ID)
    assert code == 2 and "several skills" in err
    code, out, _ = call(RUN_ID, "--json")
    assert code == 2 and json.loads(out)["error"]["type"] == "InvalidInputError"
