"""``reviewtrail campaign run`` and ``campaign import-runs``: candidate runs over a campaign's
prompts, run here or imported."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json, read_text_file, table
from reviewtrail.cli._progress import PROGRESS_HELP
from reviewtrail.cli.review._campaign_labels import short_id

if TYPE_CHECKING:
    from reviewtrail.human_review.campaigns import ImportRunsReport, RunEntry, RunProgress, RunReport

__all__ = ["register"]

JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]
ProgressOpt = Annotated[bool | None, typer.Option("--progress/--no-progress", help=PROGRESS_HELP, show_default=False)]


@handle_errors
def run(
    campaign: Annotated[str, typer.Argument(help="The campaign id.")],
    version: Annotated[int, typer.Option("--version", help="The campaign version.")],
    agents: Annotated[
        Path, typer.Option("--agents", help="The agents file (YAML or JSON): each agent's identity and backend.")
    ],
    progress: ProgressOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run each declared candidate agent over each prompt of a campaign version.

    Each run is recorded with its prompt manifest, context receipt and output. A failed call or an
    invalid response is recorded too, and never paired. Agents that already have a pairable run
    over a prompt are skipped, so running again fills only what is missing. API keys are read from
    the environment variables the agents file names.

    Example: reviewtrail campaign run support-triage --version 1 --agents agents.yaml --json
    """
    import os

    from reviewtrail.app import open_store
    from reviewtrail.cli._progress import phase_progress
    from reviewtrail.human_review.campaigns import parse_agents_file, run_campaign

    configured = parse_agents_file(read_text_file(agents, "agents", "agents"), agents.name)
    with open_store() as store, phase_progress("running", progress) as tick:
        report = run_campaign(store, campaign, version, configured, env=dict(os.environ), progress=_ticker(tick))
    if as_json:
        print_json(report.to_json())
        return
    _print_run(report)


def _ticker(tick: Callable[[str, int, int], None] | None) -> RunProgress | None:
    if tick is None:
        return None

    def advance(done: int, total: int, entry: RunEntry) -> None:
        tick("runs", 1, total)

    return advance


def _print_run(report: RunReport) -> None:
    shown = [e for e in report.entries if e.status != "already-present"]
    if shown:
        rows = [
            [e.scenario_family, e.prompt_label, short_id(e.prompt_event_id), e.agent_id, e.status, e.problem or ""]
            for e in shown
        ]
        table(
            "Candidate runs", ["family", "prompt", "id", "agent", "status", "problem"], rows, no_wrap=("prompt", "id")
        )
    counts = report.to_json()["counts"]
    print(", ".join(f"{n} {status.replace('-', ' ')}" for status, n in counts.items()))


@handle_errors
def import_runs(
    file: Annotated[Path, typer.Argument(help="A JSONL file, one run with its receipt and outputs per line.")],
    as_json: JsonOpt = False,
) -> None:
    """Import candidate runs produced elsewhere, with their context receipts and outputs.

    Every line is checked first (its shape, that its trigger is a recorded review prompt, that its
    privacy is no more open than the prompt's); a bad line refuses the whole file. Runs that fail a
    pairing condition are recorded as evidence of their exclusion and never paired. Runs already
    recorded are reported, not appended again.

    Example: reviewtrail campaign import-runs runs.jsonl --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.human_review.campaigns import import_runs as import_file

    text = read_text_file(file, "file", "runs")
    with open_store() as store:
        report = import_file(store, text)
    if as_json:
        print_json(report.to_json())
        return
    _print_import(report)


def _print_import(report: ImportRunsReport) -> None:
    rows = [
        [
            str(r.line),
            r.run_id,
            r.agent_id,
            r.prompt_label,
            r.status,
            "yes" if r.pairable else "no",
            ", ".join(e.code for e in r.exclusions),
        ]
        for r in report.runs
    ]
    table(
        "Imported runs",
        ["line", "run", "agent", "prompt", "status", "pairable", "exclusions"],
        rows,
        no_wrap=("prompt",),
    )
    doc = report.to_json()
    print(f"{doc['imported']} imported, {doc['alreadyPresent']} already present, {doc['excluded']} excluded")


def register(app: typer.Typer) -> None:
    """Add ``run`` and ``import-runs`` to the ``campaign`` group."""
    app.command("run")(run)
    app.command("import-runs")(import_runs)
