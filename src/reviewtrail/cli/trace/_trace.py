"""``reviewtrail trace``: save reviewer-call traces, install the helper, check and read traces."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from reviewtrail.cli import _everyday
from reviewtrail.cli._everyday_commands import everyday_command
from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json
from reviewtrail.cli.trace import _debug, _export

__all__ = ["EXIT_NOT_POSITIVE", "app", "family", "gate", "install_helper", "resolve_helper", "save", "verify"]

EXIT_NOT_POSITIVE = 8  # trace gate: the gate does not pass (documented with the exit codes)

app = typer.Typer(help="Reviewer-call traces in the .aris/traces layout.", no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]
ProjectOpt = Annotated[
    Path | None, typer.Option("--project-dir", help="Project root (default: git top level, else the current folder).")
]


save = app.command("save")(
    everyday_command(
        "trace",
        "save",
        """Save one reviewer call as a trace (drop-in for save_trace.sh; it accepts every flag of the reference helper).

    Family and independence flags are the caller's claims: recorded as declared_*, never used by the
    rules; a claim the rules contradict is named in declared_mismatches and warned about.

    Example: reviewtrail trace save --skill research-review --purpose initial-review --backend grok
    --executor codex --executor-model gpt-6-astra --reported-reviewer-model grok-4 --prompt-file p.txt
    --response-file r.md --status ok --verdict ready --review-completed --review-scope-complete
    """,
    )
)


@app.command("gate")
@handle_errors
def gate(
    score: Annotated[float | None, typer.Option("--score", help="The reviewer's score.")] = None,
    verdict: Annotated[str | None, typer.Option("--verdict", help="The reviewer's raw verdict.")] = None,
    min_score: Annotated[float, typer.Option("--min-score", help="The lowest passing score.")] = 6.0,
    positive_verdict: Annotated[
        list[str] | None,
        typer.Option("--positive-verdict", help="A verdict that passes (repeatable; default: ready and almost)."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """The skill's positive gate as one rule: positive when --score is at least --min-score AND
    --verdict is a passing one (without case). The default is /auto-review-loop's: score >= 6 and
    verdict ready or almost, so a raw 'ready' at score 5 is not positive. Exits 0 when positive and
    8 when not, so a caller can set --review-positive from it (or use 'trace save --gate').

    Example: reviewtrail trace gate --score 7 --verdict almost && echo --review-positive
    """
    from reviewtrail.tracing.rules import AUTO_REVIEW_LOOP_VERDICTS, positive_gate

    outcome = positive_gate(score, verdict, min_score=min_score, verdicts=positive_verdict or AUTO_REVIEW_LOOP_VERDICTS)
    if as_json:
        print_json(outcome.to_json())
    else:
        print(outcome.reason)
    if not outcome.positive:
        sys.stdout.flush()
        raise typer.Exit(EXIT_NOT_POSITIVE)


@app.command("install-helper")
@handle_errors
def install_helper(
    project_dir: ProjectOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Replace a different existing helper.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Write an executable .aris/tools/save_trace.sh that runs 'reviewtrail trace save "$@"',
    and add .aris/traces/ to the project's .gitignore (trace files stay local; no other line is
    touched, and a file that already ignores the folder is left as it is).

    Example: reviewtrail trace install-helper --project-dir ~/paper
    """
    from reviewtrail.tracing.files import install_helper as install

    installed = install(project_dir, force=force)
    if as_json:
        print_json(
            {
                "helper": str(installed.helper),
                "gitignore": str(installed.gitignore),
                "gitignoreChanged": installed.gitignore_changed,
            }
        )
    else:
        print(installed.helper)
        if installed.gitignore_changed:
            print(f"added .aris/traces/ to {installed.gitignore}", file=sys.stderr)


@app.command("resolve-helper")
@handle_errors
def resolve_helper(project_dir: ProjectOpt = None, as_json: JsonOpt = False) -> None:
    """Print the helper the resolver chain finds, or an empty line.

    Chain: .aris/tools/save_trace.sh, then tools/save_trace.sh, then <ARIS checkout>/tools/save_trace.sh,
    where the checkout is $ARIS_REPO, else the repo_root line of .aris/installed-skills.txt,
    else the path in ~/.aris/repo.

    Example: TRACE_HELPER=$(reviewtrail trace resolve-helper)
    """
    from reviewtrail.tracing.files import resolve_helper as resolve

    found = resolve(project_dir, _everyday.trace_env())
    if as_json:
        print_json({"helper": str(found) if found else None})
    else:
        print(found or "")


@app.command("family")
@handle_errors
def family(
    name: Annotated[str, typer.Argument(help="Model name, e.g. openrouter/anthropic/claude-sonnet-4.")],
    as_json: JsonOpt = False,
) -> None:
    """Print the model family of a model name alone (unknown when none or several match).

    Example: reviewtrail trace family deepseek-r1-distill-llama-70b
    """
    from reviewtrail.tracing.rules import model_family

    if as_json:
        print_json({"name": name, "family": model_family(name)})
    else:
        print(model_family(name))


@app.command("verify")
@handle_errors
def verify(
    path: Annotated[Path | None, typer.Argument(help="Project, skill or run folder.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Check every trace file against the shipped JSON Schemas and the protocol's rules, and,
    when a reviewtrail store exists for the project, against its ledger records (edited,
    deleted or added files and event lines, interrupted saves).

    Exits 0 when every file conforms, 4 with the list of problems otherwise.

    Example: reviewtrail trace verify .aris/traces/auto-review-loop
    """
    from reviewtrail.app import ProjectStores
    from reviewtrail.errors import EXIT_INTEGRITY
    from reviewtrail.tracing.commands import check_traces

    check = check_traces(path, ProjectStores())
    if as_json:
        print_json(check.to_json())
    elif check.problems:
        print(f"{len(check.problems)} problem(s) in {check.files_checked} files:")
        for p in check.problems:
            print(f"  - {p}")
    else:
        against = " and match the ledger" if check.ledger_checked else ""
        print(f"ok: {check.files_checked} trace files conform{against}")
    if check.problems:
        raise typer.Exit(EXIT_INTEGRITY)


_debug.register(app)
_export.register(app)
