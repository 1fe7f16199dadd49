"""``reviewtrail trace ls|show|diff|divergence``: read saved reviewer traces when a verdict is surprising."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json, table

if TYPE_CHECKING:
    from pathlib import Path

    from reviewtrail.tracing.commands import Divergence, RunView, Step
    from reviewtrail.tracing.files import TraceRun

__all__ = ["diff", "divergence", "ls", "register", "show"]

JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]
ProjectOpt = Annotated[
    str | None,
    typer.Option("--project-dir", help="Project holding .aris/traces (default: the git top level, else the cwd)."),
]
RunArg = Annotated[str, typer.Argument(help="'<skill>/<run id>', a run id if unique, or a run folder.")]


def register(app: typer.Typer) -> None:
    """Add ``ls``, ``show``, ``diff`` and ``divergence`` to ``app`` (mounted as ``reviewtrail trace``)."""
    app.command("ls")(ls)
    app.command("show")(show)
    app.command("diff")(diff)
    app.command("divergence")(divergence)


@handle_errors
def ls(
    skill: Annotated[str | None, typer.Option("--skill", help="Only runs of this skill.")] = None,
    project_dir: ProjectOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List trace runs: calls, completion, last status, acceptance and verdicts.

    Example: reviewtrail trace ls --skill auto-review-loop --json
    """
    from reviewtrail.tracing.commands import list_runs

    runs = list_runs(_project(project_dir), skill)
    if as_json:
        print_json([r.to_json() for r in runs])
        return
    if not runs:
        print("no traces")
        return
    table(
        "trace runs",
        ["run", "started", "executor", "backend", "calls", "last status", "acceptance", "verdicts"],
        [
            [
                f"{r.skill}/{r.run_id}",
                _time(r.started_at),
                r.executor or "",
                r.reviewer_backend or "",
                f"{r.complete}/{r.calls}",
                r.last_status or "",
                ", ".join(f"{k} {v}" for k, v in r.acceptance.items()),
                " → ".join(v or "?" for v in r.verdicts),
            ]
            for r in runs
        ],
        no_wrap=("run", "calls"),
    )


@handle_errors
def show(run: RunArg, project_dir: ProjectOpt = None, as_json: JsonOpt = False) -> None:
    """Show a run's metadata and one row per reviewer call.

    Example: reviewtrail trace show auto-review-loop/2026-04-15_run01
    """
    from reviewtrail.tracing.commands import show_run

    view = show_run(_find(project_dir, run))
    if as_json:
        print_json(view.to_json())
    else:
        _print_view(view)


@handle_errors
def diff(
    run: RunArg,
    a: Annotated[int, typer.Argument(help="Call number of the older response, e.g. 2.")],
    b: Annotated[int, typer.Argument(help="Call number of the newer response, e.g. 3.")],
    context: Annotated[int, typer.Option("-U", "--context", min=0, help="Lines of context.")] = 3,
    project_dir: ProjectOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Unified diff of call A's response.md against call B's (needs full-mode traces).

    Example: reviewtrail trace diff auto-review-loop/2026-04-15_run01 2 3
    """
    from reviewtrail.tracing.commands import diff_calls

    result = diff_calls(_find(project_dir, run), a, b, context)
    if as_json:
        print_json(result.to_json())
    elif result.identical:
        print(f"{result.from_file} and {result.to_file} are identical")
    else:
        typer.echo(result.diff, nl=False)


@handle_errors
def divergence(run: RunArg, project_dir: ProjectOpt = None, as_json: JsonOpt = False) -> None:
    """Line up the rounds and show where the score or verdict changed, with the new paragraphs that explain it.

    Example: reviewtrail trace divergence 2026-04-15_run01 --json
    """
    from reviewtrail.tracing.commands import divergence as find_divergence

    result = find_divergence(_find(project_dir, run))
    if as_json:
        print_json(result.to_json())
    else:
        _print_divergence(result)


def _project(project_dir: str | None) -> Path:
    from reviewtrail.tracing.files import existing_project_root

    return existing_project_root(project_dir)


def _find(project_dir: str | None, ref: str) -> TraceRun:
    from reviewtrail.tracing.files import find_run

    return find_run(_project(project_dir), ref)


def _time(value: str | None) -> str:
    return (value or "")[:19].replace("T", " ")


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def _print_view(view: RunView) -> None:
    print(f"run: {view.skill}/{view.run_id}")
    print(f"path: {view.path}")
    for key, value in (view.meta or {}).items():
        print(f"{key}: {value}")
    if not view.calls:
        print("no calls")
        return
    table(
        "calls",
        ["#", "purpose", "time", "status", "verdict", "reviewer (source)", "independence", "acceptance", "ms", "resp"],
        [
            [
                f"{c.number:03d}",
                c.purpose,
                _time(c.timestamp),
                c.status or ("" if c.complete else "incomplete"),
                c.verdict or "",
                f"{c.reviewer_model or '?'} ({c.reviewer_model_source or '?'})",
                c.review_independence or "",
                c.acceptance_status or "",
                "" if c.duration_ms is None else str(c.duration_ms),
                "yes" if c.has_response else "no",
            ]
            for c in view.calls
        ],
        no_wrap=("#",),
    )


def _print_divergence(result: Divergence) -> None:
    table(
        f"rounds of {result.run}",
        ["#", "purpose", "verdict", "score", "status", "acceptance"],
        [
            [
                f"{r.number:03d}",
                r.purpose,
                r.verdict or "",
                _num(r.score) if r.has_text else "(no text)",
                r.status or ("" if r.complete else "incomplete"),
                r.acceptance_status or "",
            ]
            for r in result.rounds
        ],
        no_wrap=("#",),
    )
    for step in result.steps:
        _print_step(step)
    print()
    if result.first_change is None:
        print("the assessment never changed" if result.steps else "only one round: nothing to compare")
    else:
        print(f"the assessment first changed at call {result.first_change:03d}: read its new paragraphs above")


def _print_step(step: Step) -> None:
    changes = []
    if step.score_changed:
        changes.append(f"score {_num(step.score_before)} -> {_num(step.score_after)}")
    if step.verdict_changed:
        changes.append(f"verdict {step.verdict_before} -> {step.verdict_after}")
    head = f"{step.previous:03d} -> {step.current:03d}: "
    print()
    print(head + ("CHANGED (" + ", ".join(changes) + ")" if step.changed else "no change in score or verdict"))
    if step.note:
        print(f"  {step.note}")
    for p in step.new_paragraphs:
        hedges = f"  [{', '.join(p.hedges)} on lines {', '.join(map(str, p.hedge_lines))}]" if p.hedges else ""
        where = f"line {p.start_line}" if p.start_line == p.end_line else f"lines {p.start_line}-{p.end_line}"
        print(f"  new, {where}:{hedges}")
        for line in p.text.splitlines():
            print(f"    {line}")
