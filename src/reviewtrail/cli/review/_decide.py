"""``reviewtrail review queue | decide | history``: terminal review of human review items."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from msgspec.structs import replace

from reviewtrail.cli import _everyday
from reviewtrail.cli._everyday_commands import everyday_command
from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json, read_text_file, table

if TYPE_CHECKING:
    from reviewtrail.human_review.session import CandidateProvenance, DecisionResult

__all__ = ["register"]

JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]
ReviewerOpt = Annotated[
    str | None,
    typer.Option(
        "--reviewer",
        help="Your reviewer id, recorded as who decided (default: REVIEWTRAIL_REVIEWER_ID, then reviewer_id in "
        "~/.config/reviewtrail/config.toml). Required: there is no shared default.",
    ),
]
TrustedKeysOpt = Annotated[Path | None, typer.Option("--trusted-keys", help=_everyday.TRUSTED_KEYS_HELP)]


def register(app: typer.Typer) -> None:
    """Add ``queue``, ``decide`` and ``history`` to the ``review`` group."""
    app.command("queue")(queue)
    app.command("decide")(decide)
    app.command("history")(history)


queue = everyday_command(
    "review",
    "queue",
    """Show review cards, open items first (never judged, then skipped), blinded: the prompt, the
    evidence, the criterion and candidates A and B, never who produced them. An item whose
    recorded runs, outputs or prompt changed after it was frozen is shown as invalid, its
    responses withheld.

    Example: reviewtrail review queue support-triage --version 1 --limit 5 --reviewer rev-07 --json
    """,
)


@handle_errors
def decide(
    item: Annotated[str, typer.Argument(help="The review item id (from 'review queue').")],
    prefer: Annotated[str | None, typer.Option("--prefer", help="Prefer candidate A or B.")] = None,
    strength: Annotated[str | None, typer.Option("--strength", help="With --prefer: slight or strong.")] = None,
    tie: Annotated[bool, typer.Option("--tie", help="Both are adequately equivalent.")] = False,
    correct: Annotated[
        Path | None, typer.Option("--correct", help="Neither is acceptable: a file holding the replacement response.")
    ] = None,
    underdetermined: Annotated[
        bool, typer.Option("--underdetermined", help="The evidence cannot identify the better one.")
    ] = False,
    malformed: Annotated[bool, typer.Option("--malformed", help="The item or its criterion is defective.")] = False,
    skip: Annotated[bool, typer.Option("--skip", help="No judgment.")] = False,
    reason: Annotated[list[str] | None, typer.Option("--reason", help="An allowed reason code (at most 2).")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="An allowed response tag (at most 2).")] = None,
    confidence: Annotated[float | None, typer.Option("--confidence", help="From 0 to 1.")] = None,
    note: Annotated[str | None, typer.Option("--note", help="A note (never exported).")] = None,
    use_for_training: Annotated[
        bool, typer.Option("--use-for-training", help="Offer a prefer or correct decision for training.")
    ] = False,
    supersedes: Annotated[
        str | None, typer.Option("--supersedes", help="The id of the decision this one replaces.")
    ] = None,
    submission_id: Annotated[
        str | None, typer.Option("--submission-id", help="Resubmitting an id returns its first result.")
    ] = None,
    reviewer: ReviewerOpt = None,
    second: Annotated[
        bool, typer.Option("--second", help="Record a second judgment of another reviewer's active decision.")
    ] = False,
    as_json: JsonOpt = False,
    trusted_keys: TrustedKeysOpt = None,
) -> None:
    """Record one decision on an item, as the reviewer you are: exactly one of --prefer A|B (with
    --strength), --tie, --correct FILE, --underdetermined, --malformed or --skip. The candidates'
    provenance is shown once the decision is recorded. An item that already has an active
    decision is refused (exit 6, naming it and its reviewer) unless --supersedes names it. With
    --second, the judgment is recorded as a second judgment of the item's active decision, for
    agreement only (the item must be selected for one and decided by another reviewer).

    Example: reviewtrail review decide 3f1c0b9e-... --reviewer rev-07 --prefer A --strength slight --reason wrong-policy
    """
    from reviewtrail.human_review.records import DISPOSITIONS
    from reviewtrail.human_review.rules import DecisionInput
    from reviewtrail.human_review.session import decide as record_decision

    given = (prefer is not None, tie, correct is not None, underdetermined, malformed, skip)
    decision = DecisionInput.chosen(
        dict(zip(DISPOSITIONS, given, strict=True)),
        preferred=prefer,
        strength=strength,
        confidence=confidence,
        reason_codes=reason or [],
        response_tags=tag or [],
        note=note,
        use_for_training=use_for_training,
        supersedes=supersedes,
    )
    if correct is not None:
        decision = replace(decision, replacement=read_text_file(correct, "correct", "correction"))
    who = reviewer_id(reviewer)
    with _everyday.trusted_store(trusted_keys) as store:
        result = record_decision(store, item, decision, submission_id=submission_id, reviewer=who, second=second)
    if as_json:
        print_json(result.to_json())
        return
    _print_result(result)


def _print_result(result: DecisionResult) -> None:
    again = " (resubmitted: already recorded, nothing appended)" if result.resubmitted else ""
    if result.compared_with is not None:
        print(f"second judgment {result.decision_id} by {result.reviewer}: {result.disposition}{again}")
        print(f"of decision {result.compared_with}, for agreement only (never the item's label)")
    else:
        state = "active" if result.active else "not active (a later decision is)"
        print(f"decision {result.decision_id} by {result.reviewer}: {result.disposition}, {state}{again}")
    print(f"on item {result.item_id} ({result.prompt_label})")
    if result.superseded:
        print(f"it leaves {result.superseded} earlier decision(s) inactive")
    if result.notice:
        print(f"it {result.notice}")
    _print_provenance(result.provenance)


def reviewer_id(given: str | None) -> str:
    """The reviewer id of a decision: ``--reviewer`` (blank is not given), else the settings'
    (:func:`reviewtrail.config.reviewer_id_setting`); checked, a missing one exit 5 with the fix."""
    from reviewtrail.config import reviewer_id_setting
    from reviewtrail.human_review.rules import check_reviewer_id

    if given is None or not given.strip():
        given, _ = reviewer_id_setting()
    return check_reviewer_id(given)


def _print_provenance(provenance: tuple[CandidateProvenance, ...]) -> None:
    from reviewtrail.human_review.session import CandidateProvenance

    table("Candidates", list(CandidateProvenance.COLUMNS), [p.cells() for p in provenance])


@handle_errors
def history(
    item: Annotated[str, typer.Argument(help="The review item id.")],
    as_json: JsonOpt = False,
    trusted_keys: TrustedKeysOpt = None,
) -> None:
    """Show an item's decisions: the active one, whether it is evaluation-only or export-eligible
    and why, how many earlier decisions it leaves inactive, and, once the item has a decision,
    who produced candidates A and B (a candidate whose response an open item still shows is
    withheld, saying when it is shown).

    Example: reviewtrail review history 3f1c0b9e-... --json
    """
    from reviewtrail.human_review.session import history as item_history

    with _everyday.trusted_store(trusted_keys) as store:
        found = item_history(store, item)
    if as_json:
        print_json(found.to_json())
        return
    if not found.valid:
        print("INVALID: " + "; ".join(found.problems))
    print(f"prompt: {found.prompt_label}")
    if found.active is None:
        print(f"item {found.item_id}: no decision yet (candidates blinded)")
        return
    active = found.active
    preferred = f" {active.preferred} ({active.strength})" if active.preferred else ""
    print(
        f"item {found.item_id}: active decision {active.decision_id} by {active.reviewer}: "
        f"{active.disposition}{preferred}"
    )
    print(f"{found.use}: {found.external.reason if found.external else ''}")
    print(f"it leaves {found.superseded} earlier decision(s) inactive; {len(found.decisions)} recorded")
    rows = [
        [str(d.seq), d.decision_id, d.reviewer, d.disposition, "yes" if d.active else "", d.supersedes or ""]
        for d in found.decisions
    ]
    table("Decisions", ["seq", "decision", "reviewer", "disposition", "active", "supersedes"], rows)
    _print_provenance(found.provenance)
