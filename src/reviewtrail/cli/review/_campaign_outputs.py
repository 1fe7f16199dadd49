"""``reviewtrail review export | export-verify`` and ``reviewtrail campaign coverage | standings |
receipt``: what a campaign version yields, for its owner."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from reviewtrail.cli import _everyday
from reviewtrail.cli._output import JSON_HELP, handle_errors, print_json, print_report, table
from reviewtrail.cli._progress import PROGRESS_HELP

if TYPE_CHECKING:
    from reviewtrail.human_review.export import ExportExclusion, ExportVerification
    from reviewtrail.human_review.quality import Coverage

__all__ = ["register", "register_review"]

JsonOpt = Annotated[bool, typer.Option("--json", help=JSON_HELP)]
CampaignArg = Annotated[str, typer.Argument(help="The campaign id.")]
VersionOpt = Annotated[int, typer.Option("--version", help="The campaign version.")]
TrustedKeysOpt = Annotated[Path | None, typer.Option("--trusted-keys", help=_everyday.TRUSTED_KEYS_HELP)]


@handle_errors
def export(
    campaign: CampaignArg,
    version: VersionOpt,
    out: Annotated[Path, typer.Option("--out", help="The dataset directory (created; manifest.json is kept there).")],
    progress: Annotated[
        bool | None, typer.Option("--progress/--no-progress", help=PROGRESS_HELP, show_default=False)
    ] = None,
    trusted_keys: TrustedKeysOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Export a campaign version's training examples: v4 rows, TRL and OpenAI preference files.

    Only active, externally eligible prefer and correct decisions on items that still bind what
    they froze are written; every other decision is reported with its reason. Each export adds
    three new files (numbered, never overwriting) to the directory's manifest.json.

    With --trusted-keys FILE (PEM public keys, concatenated), every record the export reads must be
    signed by one of those keys, not after its revocation: the first that is not stops the export
    with exit 4 naming its seq and type, and nothing is written. A malformed FILE is exit 2.

    Example: reviewtrail review export support-triage --version 1 --out datasets/triage --json

    Example: reviewtrail review export support-triage --version 1 --out datasets/triage --trusted-keys writers.pem
    """
    from reviewtrail.app import open_store
    from reviewtrail.cli._progress import phase_progress
    from reviewtrail.human_review.export import export_campaign

    trusted = None
    if trusted_keys is not None:
        from reviewtrail.ledger import load_trusted_keys

        trusted = load_trusted_keys(trusted_keys)
    with open_store() as store, phase_progress("exporting", progress) as tick:
        report = export_campaign(store, campaign, version, out, progress=tick, trusted_keys=trusted)
    if as_json:
        print_json(report.to_json())
        return
    print(f"{report.exported} example(s) exported from {report.items} item(s) at ledger head {report.ledger_head}")
    for entry in report.files:
        print(f"  {entry['name']}: {entry['rows']} row(s), sha256 {entry['sha256']}")
    if report.excluded:
        columns = ["item", "prompt", "decisions", "disposition", "field", "reason"]
        table("Left out", columns, left_out_rows(report.excluded), no_wrap=("item", "prompt"))


def left_out_rows(excluded: Sequence[ExportExclusion]) -> list[list[str]]:
    """The "Left out" table: one row per item and reason, so an item's superseded decisions are
    one row (how many, and their dispositions) rather than one row each, with the item's prompt
    label; first-seen order."""
    groups: dict[tuple[str, str, str], list[ExportExclusion]] = {}
    for entry in excluded:
        groups.setdefault((entry.item_id, entry.field, entry.reason), []).append(entry)
    rows = []
    for (item_id, field, reason), entries in groups.items():
        counts = Counter(e.disposition or "-" for e in entries)
        dispositions = ", ".join(d if n == 1 else f"{d} x{n}" for d, n in counts.items())
        rows.append([item_id, entries[0].prompt_label, str(len(entries)), dispositions, field, reason])
    return rows


@handle_errors
def export_verify(
    directory: Annotated[Path, typer.Argument(help="The dataset directory (the one holding manifest.json).")],
    as_json: JsonOpt = False,
) -> None:
    """Prove an export folder: its files against manifest.json, the manifest against the store.

    Each listed file must exist, be a regular file (not a symlink) and have the listed sha256,
    size and rows; each ledger head the manifest records must be a record of this store's chain;
    no training receipt may have bound a listed file with another sha256. A file named like an
    export that the manifest does not list is reported too. Exits 0 when the export holds, 4
    naming each file and what differs; a manifest no receipt names yet is only a note.

    Example: reviewtrail review export-verify datasets/triage --json
    """
    from reviewtrail.app import open_store
    from reviewtrail.human_review.export import verify_export

    with open_store() as store:
        result = verify_export(store, directory)
    listed = "; ".join(f"{p.name}: {p.problem}" for p in result.problems)
    failure = f"the export at {result.directory} does not hold: {listed}"
    print_report(result, as_json, _print_verification, failure=failure)


def _print_verification(result: ExportVerification) -> None:
    heads = ", ".join(f"seq {h['seq']}" for h in result.ledger_heads) or "none"
    print(f"{result.manifest}: sha256 {result.manifest_sha256}")
    print(f"{len(result.files)} file(s) checked; ledger heads in this store's chain: {heads}")
    for receipt in result.receipts:
        print(f"named by training receipt {receipt['recordId']} ({receipt['checkpoint']}, by {receipt['boundBy']})")
    for note in result.notes:
        print(f"note: {note}")
    if result.problems:
        table("Problems", ["file", "field", "problem"], [[p.name, p.field, p.problem] for p in result.problems])
    else:
        print("the export holds")


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _family_row(name: str, doc: dict[str, Any]) -> list[str]:
    runs, items, decisions = doc["runs"], doc["items"], doc["decisions"]
    exclusions = ", ".join(f"{code}: {n}" for code, n in runs["exclusions"].items())
    disp = ", ".join(f"{d}: {n}" for d, n in decisions["byDisposition"].items() if n)
    return [
        name,
        str(doc["prompts"]),
        f"{runs['completed']}/{runs['failed']}" + (f" ({exclusions})" if exclusions else ""),
        f"{items['valid']}/{items['invalid']}",
        disp or "-",
        str(decisions["inactive"]),
        _rate(decisions["judgeabilityRate"]),
        f"{decisions['evaluationOnly']}/{decisions['exportable']}",
    ]


def _print_coverage(result: Coverage) -> None:
    doc = result.to_json()
    columns = ["family", "prompts", "runs ok/failed", "items valid/invalid", "active decisions"]
    columns += ["inactive", "judgeable", "eval-only/exportable"]
    rows = [_family_row(f["family"], f) for f in doc["families"]] + [_family_row("(all)", doc["overall"])]
    training = "enabled" if result.training_enabled else "disabled"
    table(f"Coverage of {result.campaign_id} v{result.version} (training {training})", columns, rows)
    for fam in [*doc["families"], {"family": "(all)", **doc["overall"]}][:-1]:
        for bad in fam["items"]["invalidItems"]:
            about = f'{fam["family"]}, prompt "{bad["promptLabel"]}"'
            print(f"invalid item {bad['itemId']} ({about}): {'; '.join(bad['problems'])}")
    if doc["overall"]["items"]["selfIdentifying"]:
        flagged = doc["overall"]["items"]["selfIdentifying"]
        print(f"self-identifying items (left out of standings and position bias): {flagged}")
    if result.exported is not None:
        print(f"exported (in the given manifest): {result.exported}")
    for receipt in doc["trainingReceipts"]:
        print(f"training receipt {receipt['recordId']}: {receipt['checkpoint']} from {receipt['exportManifestSha256']}")
    if doc["reviewers"]:
        rows = [[r["reviewer"], str(r["recorded"]), str(r["active"])] for r in doc["reviewers"]]
        table("Decisions per reviewer", ["reviewer", "recorded", "active"], rows)
    _print_second_judgments(doc["secondJudgments"])
    agreed = doc["quality"]["agreement"]
    if agreed["pairs"]:
        print(
            f"owner only: reviewers agreed on {agreed['agreed']} of {agreed['pairs']} pair(s) of verdicts on "
            f"{agreed['items']} item(s) judged by two or more ({_rate(agreed['rate'])}; raw agreement on re-judged "
            "items, not chance-corrected)"
        )
    bias = doc["quality"]["positionBias"]
    bias_rows = [["(all)", *_bias_cells(bias["overall"])]]
    bias_rows += [[r["reviewer"], *_bias_cells(r)] for r in bias["reviewers"]]
    table(
        "Owner only: position bias (share of prefer choosing the first shown)",
        ["reviewer", "prefer", "share", "95% interval", "flag"],
        bias_rows,
    )


def _print_second_judgments(seconds: dict[str, Any]) -> None:
    """The second judgments asked for and, per reviewer and reviewer pair, how often a second
    judgment agreed with the decision it judged again (raw, and Cohen's kappa per pair)."""
    if not seconds["share"] and not seconds["pairs"]:
        return
    print(
        f"second judgments: share {seconds['share']:g}, {seconds['selected']} item(s) selected, "
        f"{seconds['waiting']} waiting; {seconds['agreed']} of {seconds['pairs']} agreed "
        f"({_rate(seconds['rate'])}, kappa {_kappa(seconds['kappa'])})"
    )
    rows = [[r["reviewer"], "", str(r["pairs"]), str(r["agreed"]), _rate(r["rate"]), ""] for r in seconds["byReviewer"]]
    rows += [
        [" & ".join(p["reviewers"]), "pair", str(p["pairs"]), str(p["agreed"]), _rate(p["rate"]), _kappa(p["kappa"])]
        for p in seconds["byReviewerPair"]
    ]
    if rows:
        table("Agreement with second judgments", ["reviewer", "", "pairs", "agreed", "rate", "kappa"], rows)


def _kappa(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _bias_cells(share: dict[str, Any]) -> list[str]:
    interval = share["interval"]
    span = "-" if interval is None else f"{interval['low']:.2f}-{interval['high']:.2f}"
    return [str(share["decisions"]), _rate(share["share"]), span, "flagged" if share["flagged"] else ""]


@handle_errors
def coverage(
    campaign: CampaignArg,
    version: VersionOpt,
    export_manifest: Annotated[
        Path | None,
        typer.Option(
            "--export-manifest",
            help="A dataset manifest: count the examples it lists for the campaign (the export is proven first).",
        ),
    ] = None,
    as_json: JsonOpt = False,
    trusted_keys: TrustedKeysOpt = None,
) -> None:
    """Show a campaign version's coverage per scenario family, and its owner-only quality section.

    Prompts, runs and exclusions, items (valid, invalid with reasons), active decisions by
    disposition, inactive decisions, judgeability, evaluation-only vs exportable, training
    receipts, decisions per reviewer; then, for the campaign owner only, how often reviewers who
    judged the same item agreed, and position bias overall and per reviewer.

    Example: reviewtrail campaign coverage support-triage --version 1 --json
    """
    from reviewtrail.human_review.quality import campaign_coverage

    with _everyday.trusted_store(trusted_keys) as store:
        result = campaign_coverage(store, campaign, version, export_manifest=export_manifest)
    if as_json:
        print_json(result.to_json())
        return
    _print_coverage(result)


@handle_errors
def standings(
    campaign: CampaignArg,
    version: VersionOpt,
    rounds: Annotated[int, typer.Option("--rounds", help="Bootstrap resamplings for the intervals.")] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap (same seed, same intervals).")] = 0,
    as_json: JsonOpt = False,
    trusted_keys: TrustedKeysOpt = None,
) -> None:
    """Fit Bradley–Terry standings of a campaign version's candidate agents (owner only).

    From the active prefer decisions on valid items, with 95% bootstrap intervals; ties are
    counted apart. Evaluation evidence only: standings never change eligibility.

    Example: reviewtrail campaign standings support-triage --version 1 --rounds 500 --json
    """
    from reviewtrail.human_review.quality import campaign_standings

    with _everyday.trusted_store(trusted_keys) as store:
        result = campaign_standings(store, campaign, version, rounds=rounds, seed=seed)
    if as_json:
        print_json(result.to_json())
        return
    rows = [
        [
            "-" if a.rank is None else str(a.rank),
            a.agent,
            "-" if a.score is None else f"{a.score:+.3f}",
            "-" if a.low is None or a.high is None else f"{a.low:+.3f} .. {a.high:+.3f}",
            f"{a.wins}/{a.losses}/{a.ties}",
        ]
        for a in result.agents
    ]
    title = f"Standings of {campaign} v{version}: {result.comparisons} comparison(s), {result.ties} tie(s)"
    table(title, ["rank", "agent", "score", "95% interval", "won/lost/tied"], rows)


def _load_eval(path: Path) -> dict[str, Any]:
    from reviewtrail.human_review.export import load_evaluation

    return load_evaluation(path)


@handle_errors
def receipt(
    campaign: CampaignArg,
    version: VersionOpt,
    export_manifest: Annotated[
        Path, typer.Option("--export-manifest", help="The manifest.json of the export trained on.")
    ],
    checkpoint: Annotated[str, typer.Option("--checkpoint", help="The trained checkpoint's reference.")],
    eval_file: Annotated[Path, typer.Option("--eval", help="Held-out evaluation results: a JSON object.")],
    as_json: JsonOpt = False,
) -> None:
    """Record that a checkpoint was trained from an exact export, with its held-out evaluation.

    The receipt binds the manifest by the SHA-256 of its bytes and each export file of the campaign
    version by name, SHA-256 and ledger head; it is private and never exported. An export that does
    not hold (as review export-verify proves it) is refused with exit 4 and nothing is recorded.
    Review never trains, promotes or activates anything.

    Example: reviewtrail campaign receipt triage --version 1 --export-manifest m.json --checkpoint c7 --eval e.json
    """
    from reviewtrail.app import open_store
    from reviewtrail.human_review.export import record_training_receipt

    evaluation = _load_eval(eval_file)
    with open_store() as store:
        result = record_training_receipt(
            store, campaign, version, export_manifest=export_manifest, checkpoint=checkpoint, evaluation=evaluation
        )
    if as_json:
        print_json(result.to_json())
        return
    print(f"training receipt {result.record_id}: {result.checkpoint} from manifest {result.export_manifest_sha256}")


def register(app: typer.Typer) -> None:
    """Add ``coverage``, ``standings`` and ``receipt`` to the ``campaign`` group."""
    app.command("coverage")(coverage)
    app.command("standings")(standings)
    app.command("receipt")(receipt)


def register_review(app: typer.Typer) -> None:
    """Add ``export`` and ``export-verify`` to the ``review`` group."""
    app.command("export")(export)
    app.command("export-verify")(export_verify)
