"""``reviewtrail campaign``: human review campaigns, their prompts and settings."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json, read_text_file, table

if TYPE_CHECKING:
    from reviewtrail.human_review.campaigns import ImportResult

__all__ = ["app"]

app = typer.Typer(help="Human review campaigns: prompts to judge and their settings.", no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]


@app.command("import")
@handle_errors
def import_(
    file: Annotated[Path, typer.Argument(help="A campaign file: JSONL (.jsonl) or YAML (.yaml, .yml).")],
    as_json: JsonOpt = False,
) -> None:
    """Import a campaign file, one review prompt per entry.

    Every entry is checked first; a bad entry is reported with its line and field, and then
    nothing of the file is recorded. Prompts already recorded are reported, not appended again.

    Example: reviewtrail campaign import prompts.yaml --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.human_review.campaigns import import_campaign

    text = read_text_file(file, "file", "campaign")
    with open_store() as store:
        result = import_campaign(store, text, name=file.name)
    if as_json:
        print_json(result.to_json())
        return
    _print_import(result)


def _print_import(result: ImportResult) -> None:
    """What the file held, in file order, by the prompts' labels: at most :data:`ROWS_SHOWN` rows."""
    from reviewtrail.cli.review._campaign_labels import ROWS_SHOWN, more_line, short_id

    entries = sorted(
        [(p, "imported") for p in result.imported] + [(p, "already present") for p in result.already_present],
        key=lambda entry: entry[0].line,
    )
    rows = [
        [str(p.line), p.prompt_label, p.scenario_family, short_id(p.record_id), status]
        for p, status in entries[:ROWS_SHOWN]
    ]
    if rows:
        table("Prompts", ["line", "prompt", "family", "id", "status"], rows, no_wrap=("prompt", "id"))
        more = more_line(len(entries))
        if more is not None:
            print(more)
    print(f"{len(result.imported)} prompt(s) imported; {len(result.already_present)} already present")


@app.command("settings")
@handle_errors
def settings(
    campaign: Annotated[str, typer.Argument(help="The campaign id.")],
    version: Annotated[int, typer.Option("--version", help="The campaign version.")],
    training: Annotated[
        bool | None,
        typer.Option(
            "--training/--no-training",
            help="Enable or disable training use of its decisions (default: disabled). Omit to show.",
        ),
    ] = None,
    second_share: Annotated[
        float | None,
        typer.Option(
            "--second-judgment-share",
            help="The share of items (0 to 1) that get a second reviewer's judgment, for agreement "
            "(default: 0). Omit to show.",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Show a campaign version's settings, or record whether its decisions may be used for training
    and the share of items that get a second judgment.

    Example: reviewtrail campaign settings support-triage --version 1 --training --second-judgment-share 0.1
    """
    from reviewtrail.app import open_store
    from reviewtrail.human_review.campaigns import campaign_settings

    with open_store() as store:
        view = campaign_settings(store, campaign, version, training=training, second_judgment_share=second_share)
    if as_json:
        print_json(view.to_json())
        return
    state = "enabled" if view.training_enabled else "disabled"
    note = " (recorded)" if view.changed else ""
    share = f"; second-judgment share {view.second_judgment_share:g}" if view.second_judgment_share else ""
    print(f"{view.campaign_id} v{view.version}: training {state}{share}{note}")


@app.command("ls")
@handle_errors
def ls(as_json: JsonOpt = False) -> None:
    """List campaigns with their prompt counts per scenario family and training setting.

    Example: reviewtrail campaign ls --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.human_review.campaigns import list_campaigns

    with open_store() as store:
        found = list_campaigns(store)
    if as_json:
        print_json([c.to_json() for c in found])
        return
    rows = [
        [
            c.campaign_id,
            str(c.version),
            c.label or "",
            str(c.prompts),
            ", ".join(f"{family}: {n}" for family, n in c.prompts_by_family.items()),
            "yes" if c.training_enabled else "no",
        ]
        for c in found
    ]
    table("Campaigns", ["campaign", "version", "label", "prompts", "by family", "training"], rows)
