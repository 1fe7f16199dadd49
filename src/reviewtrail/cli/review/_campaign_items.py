"""``reviewtrail campaign materialize | reclassify | correct-output``: freeze review items and amend
the records under them by appending."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json, read_text_file, table
from reviewtrail.cli.review._campaign_labels import short_id

__all__ = ["register"]

JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]


@handle_errors
def materialize(
    campaign: Annotated[str, typer.Argument(help="The campaign id.")],
    version: Annotated[int, typer.Option("--version", help="The campaign version.")],
    as_json: JsonOpt = False,
) -> None:
    """Freeze the blinded review items of a campaign version from its settled candidate runs.

    Every pair of pairable runs of distinct declared agents over one prompt becomes one item;
    items already recorded are reported, not appended again. Excluded runs are listed with why.

    Example: reviewtrail campaign materialize support-triage --version 1 --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.human_review.campaigns import materialize as run

    with open_store() as store:
        report = run(store, campaign, version)
    if as_json:
        print_json(report.to_json())
        return
    rows = []
    for p in report.prompts:
        why = "; ".join(f"{run_id}: {', '.join(e.code for e in found)}" for run_id, found in p.excluded.items())
        rows.append(
            [
                p.prompt_label,
                short_id(p.prompt_event_id),
                p.scenario_family,
                str(len(p.created)),
                str(len(p.already_present)),
                why,
                p.no_item_reason or "",
            ]
        )
    columns = ["prompt", "id", "family", "created", "present", "excluded runs", "no item because"]
    table("Prompts", columns, rows, no_wrap=("prompt", "id"))
    print(
        f"{report.created} item(s) created; {report.already_present} already present; "
        f"{report.excluded_runs} run(s) excluded"
    )
    if report.self_identifying:
        print(
            f"{report.self_identifying} item(s) created with a candidate whose text names a candidate's "
            "agent, model, provider or adapter: shown to reviewers, left out of standings and position bias"
        )


@handle_errors
def reclassify(
    record: Annotated[str, typer.Argument(help="The id of a prompt, run, context-receipt or output record.")],
    privacy: Annotated[str, typer.Option("--privacy", help="The new, stricter level: private or sensitive.")],
    reason: Annotated[str, typer.Option("--reason", help="Why the record is reclassified (recorded).")],
    as_json: JsonOpt = False,
) -> None:
    """Make a record's privacy stricter by appending a reclassification that supersedes it.

    Privacy never becomes more open. Items over the record become invalid, with the reason.

    Example: reviewtrail campaign reclassify 01J9Z3K4Q8 --privacy sensitive --reason "names a customer" --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.human_review.campaigns import reclassify as run

    with open_store() as store:
        done = run(store, record, privacy, reason=reason)
    _show(done.to_json(), as_json)


@handle_errors
def correct_output(
    output_event: Annotated[str, typer.Argument(help="The id of a candidate's review-response output record.")],
    response_file: Annotated[
        Path, typer.Option("--response-file", help="A UTF-8 file holding the corrected response.")
    ],
    as_json: JsonOpt = False,
) -> None:
    """Correct a candidate's output by appending a new output record that supersedes it.

    Items that froze the earlier output become invalid, with the reason; nothing is rebound.

    Example: reviewtrail campaign correct-output 01J9Z3K4Q8 --response-file fixed.txt --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.human_review.campaigns import correct_output as run

    text = read_text_file(response_file, "response-file", "response")
    with open_store() as store:
        done = run(store, output_event, text)
    _show(done.to_json(), as_json)


def _show(value: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(value)
        return
    print(f"{value['kind']} {value['targetId']} amended by {value['recordId']} (privacy {value['privacy']})")


def register(app: typer.Typer) -> None:
    """Add ``materialize``, ``reclassify`` and ``correct-output`` to the ``campaign`` group."""
    app.command("materialize")(materialize)
    app.command("reclassify")(reclassify)
    app.command("correct-output")(correct_output)
