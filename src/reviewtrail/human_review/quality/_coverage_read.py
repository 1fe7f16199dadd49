"""Campaign coverage and standings read from a store (docs/human-review.md, "Coverage" and
"Standings and position bias"). The counting is in :mod:`._coverage`; this module reads the
prompts, runs, items and decisions of one campaign version from one consistent state.

Position bias and standings are evaluation evidence for the campaign owner only: they are never
shown on a reviewer's surface and never change any decision's eligibility.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from reviewtrail._struct import read
from reviewtrail.errors import IntegrityError, InvalidInputError
from reviewtrail.human_review.campaigns._campaigns import require_campaign
from reviewtrail.human_review.export._export_job import campaign_files
from reviewtrail.human_review.export._export_verify import prove_export_manifest, read_export_manifest
from reviewtrail.human_review.quality._agreement import ReviewerDecision, agreement, reviewer_tallies, verdict
from reviewtrail.human_review.quality._coverage import Coverage, ItemCoverageFacts, PromptCoverageFacts, coverage_of
from reviewtrail.human_review.quality._judgment_read import JudgmentTally
from reviewtrail.human_review.quality._position_bias import position_bias
from reviewtrail.human_review.quality._standings import STANDINGS_ROUNDS, Comparison, Standings, fit_standings
from reviewtrail.human_review.reads._bulk_resolve import Preloaded
from reviewtrail.human_review.reads._campaign_read import ItemState, campaign_item_states, campaign_training
from reviewtrail.human_review.reads._listed import check_listed
from reviewtrail.human_review.reads._resolve import prompt_ref, run_facts, runs_over
from reviewtrail.human_review.records._record_names import PROMPT, RUN, TRAINING_RECEIPT
from reviewtrail.human_review.records._run_records import TrainingReceipt
from reviewtrail.human_review.rules._export_rows import TRAINING_EXAMPLE_V4
from reviewtrail.human_review.rules._labels import prompt_label
from reviewtrail.human_review.rules._reviewers import reviewer_label
from reviewtrail.human_review.rules._run_rules import RunFacts, pairable_runs
from reviewtrail.human_review.session._decide import counted_when_recorded
from reviewtrail.human_review.session._second_judgments import second_judgment_share
from reviewtrail.ledger import Ledger
from reviewtrail.store import Store

__all__ = ["campaign_coverage", "campaign_standings", "read_manifest"]


def read_manifest(path: Path, *, field: str) -> Any:
    """A dataset manifest file parsed as JSON (refused with ``field`` when it is not)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InvalidInputError(f"{path} does not exist", field=field) from exc
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InvalidInputError(f"{path} is not a JSON dataset manifest: {exc}", field=field) from exc


def _prompt_facts(ledger: Ledger, campaign_id: str, version: int) -> Iterator[tuple[str, PromptCoverageFacts]]:
    """Each prompt of the campaign version with its runs, read from the records: the prompts
    about the campaign, and every candidate run of the campaign version (the ``hr_runs`` rows
    held against the chain: a row missing, edited or pointed elsewhere is refused, exit 4)."""
    prompts = [
        env
        for env in ledger.records_about([campaign_id], type=PROMPT)
        if _names_campaign(env.payload_value, (campaign_id, version))
    ]
    stored = ledger.stored_rows("hr_runs", campaign_id=campaign_id, campaign_version=version)
    check_listed(ledger, RUN, "hr_runs", {int(r["seq"]) for r in stored}, (campaign_id, version))
    records = Preloaded(ledger, [], run_ids=[str(r["run_id"]) for r in stored], record_ids=[env.id for env in prompts])
    _hold_runs(records, stored)
    for env in prompts:
        ref, _ = prompt_ref(records, env.id)
        statuses: dict[str, str] = {}
        found: list[RunFacts] = []
        for run_id in runs_over(records, ref.event_id):
            facts = run_facts(records, run_id)
            statuses[run_id] = facts.run.status if facts is not None else "unresolved"
            if facts is not None:
                found.append(facts)
        pairable, exclusions = pairable_runs(found, ref)
        yield ref.event_id, PromptCoverageFacts(ref.prompt.scenario_family, statuses, len(pairable), exclusions)


def _names_campaign(payload: Any, campaign: tuple[str, int]) -> bool:
    named = payload.get("campaign") if isinstance(payload, dict) else None
    return isinstance(named, dict) and (named.get("id"), named.get("version")) == campaign


def _hold_runs(records: Preloaded, stored: list[dict[str, Any]]) -> None:
    """Each stored ``hr_runs`` row must be one its run's records give."""
    for row in stored:
        given = records.rows("hr_runs", run_id=row["run_id"])
        if {k: v for k, v in row.items() if k != "rt_seq"} not in given:
            raise IntegrityError(
                f"query table hr_runs: row for record {row.get('record_id')} is not one the chain gives; "
                "run 'reviewtrail verify'",
                field="hr_runs",
            )


def _item_facts(state: ItemState, family: str, training: bool, waiting: bool = False) -> ItemCoverageFacts:
    active = state.active.decision.decision if state.active is not None else None
    return ItemCoverageFacts(
        family=family,
        item_id=state.item_id,
        problems=state.resolved.problems,
        recorded=len(state.decisions),
        active=active.disposition if active is not None else None,
        waiting=waiting,
        quality_eligible=state.quality is not None and state.quality.eligible,  # the canary rule applied
        exportable=state.exportable,
        self_identifying=state.resolved.item.self_identifying(),
        prompt_label=prompt_label(state.resolved.prompt.prompt) if state.resolved.problems else "",
    )


def _reviewer_decisions(state: ItemState) -> list[ReviewerDecision]:
    """Each decision of the item with its reviewer (None: recorded before reviewer ids), whether
    it counted when it was recorded, whether it is active, and its verdict."""
    active_id = state.active.decision.decision_id if state.active is not None else None
    facts = list(state.decisions)
    out = []
    for fact, actor in zip(facts, state.actors, strict=True):
        label = reviewer_label(actor)
        out.append(
            ReviewerDecision(
                reviewer=None if label != actor else actor,
                seq=fact.seq,
                counted=counted_when_recorded(facts, fact),
                active=fact.decision_id == active_id,
                verdict=verdict(fact.decision.disposition, fact.decision.preferred),
            )
        )
    return out


def _chose_first(state: ItemState) -> tuple[str, bool, bool] | None:
    if state.active is None or state.active.decision.decision.disposition != "prefer":
        return None
    preferred = state.active.decision.decision.preferred
    item = state.resolved.item
    return reviewer_label(state.actor), preferred == item.display_order[0], bool(item.self_identifying())


def _receipts(ledger: Ledger, campaign_id: str, version: int) -> list[dict[str, Any]]:
    """The campaign version's training receipts, read from the records about the campaign (each
    checked), never from the ``hr_training_receipts`` query table."""
    out = []
    for env in ledger.records_about([campaign_id], type=TRAINING_RECEIPT):
        receipt = read(TrainingReceipt, env.payload)
        if (receipt.campaign.id, receipt.campaign.version) != (campaign_id, version):
            continue
        out.append(
            {
                "recordId": env.id,
                "time": env.time,
                "checkpoint": receipt.checkpoint,
                "exportManifestSha256": receipt.export_manifest_sha256,
                "evaluation": receipt.evaluation,
                "privacy": env.privacy,
            }
        )
    return out


def campaign_coverage(store: Store, campaign_id: str, version: int, *, export_manifest: Path | None = None) -> Coverage:
    """The coverage of a campaign version per scenario family and overall (see :mod:`._coverage`
    for every definition), its training receipts and, for the campaign owner only, its position
    bias overall and per reviewer (the decision record's actor). With ``export_manifest``,
    ``exported`` is the number of v4 examples that manifest lists for this campaign version, once
    the export is proven (``._export_verify``: a listed file that differs, a ledger head that is
    no record of this store's chain or a file a receipt bound with another SHA-256 is refused with
    :class:`~reviewtrail.errors.IntegrityError`, field ``export-manifest``)."""
    ledger = store.ledger
    require_campaign(ledger, campaign_id, version)
    manifest: dict[str, Any] | None = None
    if export_manifest is not None:
        data, manifest = read_export_manifest(export_manifest, field="export-manifest")
        prove_export_manifest(store, export_manifest, data, manifest).check(field="export-manifest")
    with ledger.snapshot():
        training = campaign_training(ledger, campaign_id, version)
        families: dict[str, str] = {}
        prompts = []
        for event_id, facts in _prompt_facts(ledger, campaign_id, version):
            families[event_id] = facts.family
            prompts.append(facts)
        items, choices, decided = [], [], []

        def judged(state: ItemState, waiting: bool) -> None:
            family = families.get(state.resolved.item.prompt_event_id, state.resolved.prompt.scenario_family)
            items.append(_item_facts(state, family, training, waiting))

        seconds = JudgmentTally(ledger, second_judgment_share(ledger, campaign_id, version), judged=judged)
        for state in campaign_item_states(ledger, campaign_id, version, training_enabled=training):
            seconds.add(state)
            if state.decisions:
                decided.append(_reviewer_decisions(state))
            choice = _chose_first(state)
            if choice is not None:
                choices.append(choice)
        second_judgments = seconds.result()  # every item's facts are made once this has read them all
        result = coverage_of(campaign_id, version, prompts, items, training_enabled=training)
        result.receipts = _receipts(ledger, campaign_id, version)
        result.second_judgments = second_judgments
    if manifest is not None:
        listed = campaign_files(manifest, campaign_id, version)
        result.exported = sum(int(e.get("rows", 0)) for e in listed if e.get("schemaVersion") == TRAINING_EXAMPLE_V4)
    result.reviewers = {reviewer_label(name or None): t for name, t in reviewer_tallies(decided).items()}
    result.quality = {"positionBias": position_bias(choices).to_json(), "agreement": agreement(decided).to_json()}
    return result


def campaign_standings(
    store: Store, campaign_id: str, version: int, *, rounds: int = STANDINGS_ROUNDS, seed: int = 0
) -> Standings:
    """Bradley–Terry standings of a campaign version's candidate agents from the active ``prefer``
    decisions on valid items (ties counted apart); every agent the prompts declare is listed."""
    ledger = store.ledger
    require_campaign(ledger, campaign_id, version)
    comparisons: list[Comparison] = []
    ties: list[tuple[str, str, bool]] = []
    agents: set[str] = set()
    with ledger.snapshot():
        training = campaign_training(ledger, campaign_id, version)
        for state in campaign_item_states(ledger, campaign_id, version, training_enabled=training):
            agents.update(state.resolved.prompt.candidate_agent_ids)
            if state.active is None or not state.resolved.valid:
                continue
            decision = state.active.decision.decision
            by_run = {run: pair[0].run["agent"]["id"] for run, pair in state.resolved.candidates.items()}
            first, second = (by_run[run] for run in state.resolved.item.run_ids())
            if first == second:
                continue  # not a comparison between two agents
            flagged = bool(state.resolved.item.self_identifying())  # left out of the fit, counted
            if decision.disposition == "prefer":
                winner = by_run[decision.preferred or ""]
                comparisons.append(Comparison(winner, second if winner == first else first, flagged))
            elif decision.disposition == "tie":
                ties.append((first, second, flagged))
    return fit_standings(comparisons, ties=ties, agents=sorted(agents), rounds=rounds, seed=seed)
