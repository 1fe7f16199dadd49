"""``reviewtrail trace``: save reviewer-call traces, install the helper, check and read traces."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reviewtrail.cli import _trace_debug, _trace_export
from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json

app = typer.Typer(help="Reviewer-call traces in the .aris/traces layout.", no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]
ProjectOpt = Annotated[
    Path | None, typer.Option("--project-dir", help="Project root (default: git top level, else the current folder).")
]
Text = Annotated[str | None, typer.Option()]


@app.command("save")
@handle_errors
def save(
    skill: Annotated[str, typer.Option("--skill", help="Skill name (letters, digits, '-', '_').")],
    purpose: Annotated[str, typer.Option("--purpose", help="Call purpose, e.g. round-1-review.")],
    backend: Annotated[str | None, typer.Option("--backend", help="Reviewer backend/route, e.g. grok.")] = None,
    tool: Annotated[str | None, typer.Option("--tool", help="Tool used for the call, e.g. mcp__grok__grok.")] = None,
    executor: Annotated[str | None, typer.Option("--executor", help="Executing host, e.g. codex.")] = None,
    executor_model: Annotated[str | None, typer.Option("--executor-model", help="The executor's actual model.")] = None,
    requested_reviewer_model: Annotated[
        str | None, typer.Option("--requested-reviewer-model", help="Reviewer model that was asked for.")
    ] = None,
    reported_reviewer_model: Annotated[
        str | None,
        typer.Option("--reported-reviewer-model", help="Model the backend reported."),
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="Legacy caller-supplied model field.")] = None,
    effort: Annotated[str | None, typer.Option("--effort", help="Reasoning effort used.")] = None,
    thread_id: Annotated[str | None, typer.Option("--thread-id", help="Reviewer session/thread id.")] = None,
    agent_id: Annotated[str | None, typer.Option("--agent-id", help="Native agent id.")] = None,
    prompt_file: Annotated[Path | None, typer.Option("--prompt-file", help="Prompt file ('-': stdin).")] = None,
    response_file: Annotated[
        Path | None,
        typer.Option("--response-file", help="Response file, kept byte for byte."),
    ] = None,
    prompt: Annotated[str | None, typer.Option("--prompt", help="The prompt text.")] = None,
    response: Annotated[str | None, typer.Option("--response", help="The response text.")] = None,
    status: Annotated[str, typer.Option("--status", help="ok, fallback_used, success, completed, error...")] = "ok",
    verdict: Annotated[str | None, typer.Option("--verdict", help="The reviewer's raw verdict.")] = None,
    review_completed: Annotated[bool, typer.Option("--review-completed", help="Finished, successful review.")] = False,
    review_scope_complete: Annotated[
        bool, typer.Option("--review-scope-complete", help="Only when the requested inputs were actually covered.")
    ] = False,
    review_positive: Annotated[
        bool, typer.Option("--review-positive", help="Only after the skill's own positive gate succeeded.")
    ] = False,
    trace_mode: Annotated[str | None, typer.Option("--trace-mode", help="full (default), meta or off.")] = None,
    files_referenced: Annotated[
        list[str] | None,
        typer.Option("--files-referenced", help="File the review covered (repeatable)."),
    ] = None,
    duration_ms: Annotated[int | None, typer.Option("--duration-ms", min=0, help="How long the call took.")] = None,
    identity_validated: Annotated[
        bool,
        typer.Option(
            "--identity-validated", hidden=True, help="Kept for old callers; grants nothing (use --native-evidence)."
        ),
    ] = False,
    fallback_reason: Annotated[
        str | None, typer.Option("--fallback-reason", help="Why a fallback reviewer route was used.")
    ] = None,
    reviewer_profile: Annotated[
        str | None, typer.Option("--reviewer-profile", help="The reviewer profile the skill selected.")
    ] = None,
    memory_hash: Annotated[
        str | None, typer.Option("--memory-hash", help="Hash of the reviewer memory given with the prompt.")
    ] = None,
    executor_family: Annotated[
        str | None,
        typer.Option("--executor-family", help="Caller's claimed executor family: recorded, never used by the rules."),
    ] = None,
    reviewer_family: Annotated[
        str | None,
        typer.Option("--reviewer-family", help="Caller's claimed reviewer family: recorded, never used by the rules."),
    ] = None,
    independence_verified: Annotated[
        str | None,
        typer.Option(
            "--independence-verified", help="Caller's claim (true/false/unverified): recorded, never used by the rules."
        ),
    ] = None,
    native_evidence: Annotated[
        Path | None,
        typer.Option(
            "--native-evidence",
            help="Host-session evidence (aris.copilot-native.evidence/v1) of a --backend copilot-native review; "
            "validated before anything is written.",
        ),
    ] = None,
    reviewer_kind: Annotated[str, typer.Option("--reviewer-kind", help="model (default) or deterministic.")] = "model",
    input_tokens: Annotated[int | None, typer.Option("--input-tokens", min=0, help="Prompt tokens, if known.")] = None,
    output_tokens: Annotated[int | None, typer.Option("--output-tokens", min=0, help="Response tokens.")] = None,
    skill_args: Annotated[
        str | None,
        typer.Option("--skill-args", help="Skill arguments ('--- trace: MODE' applies)."),
    ] = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="Join this run (YYYY-MM-DD_runNN).")] = None,
    project_dir: ProjectOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Save one reviewer call as a trace (drop-in for save_trace.sh; it accepts every flag of the reference helper).

    Family and independence flags are the caller's claims: recorded as declared_*, never used by the
    rules; a claim the rules contradict is named in declared_mismatches and warned about.

    Example: reviewtrail trace save --skill research-review --purpose initial-review --backend grok
    --executor codex --executor-model gpt-6-astra --reported-reviewer-model grok-4 --prompt-file p.txt
    --response-file r.md --status ok --verdict ready --review-completed --review-scope-complete
    """
    from reviewtrail.app import ProjectStores
    from reviewtrail.tracing._cli_support import read_prompt, read_response, split_files, warn_claims
    from reviewtrail.tracing._documents import ReviewCall
    from reviewtrail.tracing._native_evidence import validate_native_evidence
    from reviewtrail.tracing._record import record_call

    call = ReviewCall(
        skill=skill,
        purpose=purpose,
        prompt=read_prompt(prompt, prompt_file),
        response=read_response(response, response_file),
        backend=backend,
        tool=tool,
        executor=executor,
        executor_model=executor_model,
        requested_reviewer_model=requested_reviewer_model,
        reported_reviewer_model=reported_reviewer_model,
        model=model,
        effort=effort,
        thread_id=thread_id,
        agent_id=agent_id,
        status=status,
        verdict=verdict,
        review_completed=review_completed,
        review_scope_complete=review_scope_complete,
        review_positive=review_positive,
        files_referenced=split_files(files_referenced),
        duration_ms=duration_ms,
        reviewer_kind=reviewer_kind,  # type: ignore[arg-type]  # validated by ReviewCall.validate
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        fallback_reason=fallback_reason,
        reviewer_profile=reviewer_profile,
        memory_hash=memory_hash,
        declared_executor_family=executor_family,
        declared_reviewer_family=reviewer_family,
        declared_independence_verified=independence_verified,
        native_evidence=validate_native_evidence(native_evidence) if native_evidence is not None else None,
    )
    result = record_call(
        call,
        project_dir=project_dir,
        mode=trace_mode,
        skill_args=skill_args,
        run_id=run_id,
        env=_trace_env(),
        store=ProjectStores(),
    )
    warn_claims(call, identity_flag=identity_validated)
    if as_json:
        print_json(result.to_json())
    elif result.mode == "off":
        print("trace mode off: nothing written")
    else:
        print(f"{result.run_path}/{result.meta_path.name if result.meta_path else ''} ({result.acceptance_status})")


@app.command("install-helper")
@handle_errors
def install_helper(
    project_dir: ProjectOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Replace a different existing helper.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Write an executable .aris/tools/save_trace.sh that runs 'reviewtrail trace save "$@"'.

    Example: reviewtrail trace install-helper --project-dir ~/paper
    """
    from reviewtrail.tracing import install_helper

    path = install_helper(project_dir, force=force)
    if as_json:
        print_json({"helper": str(path)})
    else:
        print(path)


@app.command("resolve-helper")
@handle_errors
def resolve_helper(project_dir: ProjectOpt = None, as_json: JsonOpt = False) -> None:
    """Print the helper the resolver chain finds, or an empty line.

    Chain: .aris/tools/save_trace.sh, then tools/save_trace.sh, then <ARIS checkout>/tools/save_trace.sh,
    where the checkout is $ARIS_REPO, else the repo_root line of .aris/installed-skills.txt,
    else the path in ~/.aris/repo.

    Example: TRACE_HELPER=$(reviewtrail trace resolve-helper)
    """
    from reviewtrail.tracing import resolve_helper

    found = resolve_helper(project_dir, _trace_env())
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
    from reviewtrail.tracing._families import model_family

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
    from reviewtrail.errors import EXIT_INTEGRITY
    from reviewtrail.tracing._layout import project_root
    from reviewtrail.tracing._verify import trace_scope, verify_traces

    target = path if path is not None else project_root(None)
    checked, problems = verify_traces(target)
    project, skill, run_id = trace_scope(target)
    ledger_checked = _ledger_problems(project, skill, run_id)
    if ledger_checked is not None:
        problems += ledger_checked
    if as_json:
        print_json(
            {
                "ok": not problems,
                "filesChecked": checked,
                "ledgerChecked": ledger_checked is not None,
                "problems": problems,
            }
        )
    elif problems:
        print(f"{len(problems)} problem(s) in {checked} files:")
        for p in problems:
            print(f"  - {p}")
    else:
        against = " and match the ledger" if ledger_checked is not None else ""
        print(f"ok: {checked} trace files conform{against}")
    if problems:
        raise typer.Exit(EXIT_INTEGRITY)


def _trace_env() -> dict[str, str]:
    """The trace settings of the environment (ARIS_TRACE_*, ARIS_REPO, HOME), by variable name."""
    import os

    from reviewtrail.config import trace_settings

    return trace_settings(os.environ).environ()


def _ledger_problems(project: Path, skill: str | None, run_id: str | None) -> list[str] | None:
    """Problems against the store's records, or None when the project has no store."""
    from reviewtrail.config import load_settings

    settings = load_settings(cwd=project)
    if not settings.store_exists:
        return None
    from reviewtrail.app import open_store
    from reviewtrail.tracing._ledger_check import ledger_problems

    with open_store(settings) as store:
        return ledger_problems(store, project, skill=skill, run_id=run_id, report_unreadable=False)


_trace_debug.register(app)
_trace_export.register(app)
