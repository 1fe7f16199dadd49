"""Materializing review items: freeze every pair of pairable candidate runs of each prompt of a
campaign version as a ``stream.thought.review.item.created@1`` record (docs/human-review.md,
"Materialize").

Pairs are formed only between the pairable runs of one prompt (its trigger), one per declared
agent (:func:`pairable_runs`), so never between two runs of the same agent. The item id is
deterministic over the prompt, the criterion and the unordered pair: an item already recorded is
reported as already present and not appended again, so materializing twice appends nothing.
Each item records which of its candidates' texts name a candidate's identity
(``selfIdentification``, docs/human-review.md, "Self-identifying candidates"); the report lists
the items created with such a candidate.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from reviewtrail.errors import ConflictError
from reviewtrail.human_review.campaigns._campaigns import require_campaign
from reviewtrail.human_review.campaigns._run_batch import item_record
from reviewtrail.human_review.reads._resolve import prompt_ref, run_facts, runs_over
from reviewtrail.human_review.records._projection import queue_key
from reviewtrail.human_review.records._record_names import ACTOR
from reviewtrail.human_review.rules._item_rules import item_id
from reviewtrail.human_review.rules._labels import prompt_label
from reviewtrail.human_review.rules._run_rules import Exclusion, RunFacts, pairable_runs
from reviewtrail.ledger import Ledger, NewRecord
from reviewtrail.store import Store

__all__ = ["MATERIALIZE_BATCH", "MaterializeReport", "PromptMaterialized", "materialize"]

#: Items appended per ledger batch.
MATERIALIZE_BATCH = 500


@dataclass
class PromptMaterialized:
    """What materializing did for one prompt (named by its id and its short label,
    :func:`~._labels.prompt_label`): the items it created and found already recorded (item ids),
    the items created whose candidates name a candidate's identity, the runs it excluded (by run
    id, with their exclusions), the declared agents with no pairable run, and, when no item can be
    formed, why."""

    prompt_event_id: str
    scenario_family: str
    prompt_label: str = ""
    created: list[str] = field(default_factory=list)
    already_present: list[str] = field(default_factory=list)
    self_identifying: list[str] = field(default_factory=list)
    excluded: dict[str, list[Exclusion]] = field(default_factory=dict)
    agents_without_run: list[str] = field(default_factory=list)
    no_item_reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "promptEventId": self.prompt_event_id,
            "promptLabel": self.prompt_label,
            "scenarioFamily": self.scenario_family,
            "created": list(self.created),
            "alreadyPresent": list(self.already_present),
            "selfIdentifying": list(self.self_identifying),
            "excludedRuns": {run: [e.to_json() for e in found] for run, found in self.excluded.items()},
            "agentsWithoutPairableRun": list(self.agents_without_run),
            "noItemReason": self.no_item_reason,
        }


@dataclass(frozen=True)
class MaterializeReport:
    """The result of :func:`materialize`, per prompt in the order the prompts were recorded."""

    campaign_id: str
    version: int
    prompts: list[PromptMaterialized]

    @property
    def created(self) -> int:
        return sum(len(p.created) for p in self.prompts)

    @property
    def already_present(self) -> int:
        return sum(len(p.already_present) for p in self.prompts)

    @property
    def self_identifying(self) -> int:
        return sum(len(p.self_identifying) for p in self.prompts)

    @property
    def excluded_runs(self) -> int:
        return sum(len(p.excluded) for p in self.prompts)

    def to_json(self) -> dict[str, Any]:
        return {
            "campaignId": self.campaign_id,
            "version": self.version,
            "created": self.created,
            "alreadyPresent": self.already_present,
            "selfIdentifying": self.self_identifying,
            "excludedRuns": self.excluded_runs,
            "prompts": [p.to_json() for p in self.prompts],
        }


def materialize(store: Store, campaign_id: str, version: int, *, actor: str = ACTOR) -> MaterializeReport:
    """Freeze every unordered pair of distinct declared agents' pairable runs, for each prompt of
    the campaign version, as a review item; items already recorded are reported, not appended.
    A campaign version with no prompt is :class:`NotFoundError` (field ``campaign``)."""
    require_campaign(store.ledger, campaign_id, version)
    rows = sorted(
        store.ledger.rows("hr_prompts", campaign_id=campaign_id, campaign_version=version), key=lambda r: r["seq"]
    )
    reports: list[PromptMaterialized] = []
    pending: list[tuple[PromptMaterialized, str, NewRecord]] = []
    for row in rows:
        report, new = _prompt_items(store.ledger, row["record_id"], row["scenario_family"], actor)
        reports.append(report)
        pending.extend((report, made, record) for made, record in new)
    # Recorded in queue-key order, not per prompt in the agents' declared pair order: the order
    # items are recorded in (which every listing by seq follows) says nothing of who is paired.
    order = {made: n for n, (_, made, _) in enumerate(pending)}
    pending.sort(key=lambda entry: queue_key(entry[1]))
    for start in range(0, len(pending), MATERIALIZE_BATCH):
        _append_items(store, pending[start : start + MATERIALIZE_BATCH])
    for report in reports:  # each report lists its items in pair order, as before
        for made_ids in (report.created, report.self_identifying):
            made_ids.sort(key=order.__getitem__)
    return MaterializeReport(campaign_id, version, reports)


def _prompt_items(
    ledger: Ledger, prompt_event_id: str, family: str, actor: str
) -> tuple[PromptMaterialized, list[tuple[str, NewRecord]]]:
    """The report of one prompt so far and the item records still to append (by item id)."""
    ref, now = prompt_ref(ledger, prompt_event_id)
    report = PromptMaterialized(prompt_event_id, family, prompt_label(ref.prompt.prompt))
    if now.content.id != ref.event_id:
        report.no_item_reason = f"the prompt was corrected by {now.content.id}; its runs are not paired"
        return report, []
    facts = [f for f in (run_facts(ledger, run) for run in runs_over(ledger, prompt_event_id)) if f is not None]
    pairable, report.excluded = pairable_runs(facts, ref)
    declared = ref.prompt.candidate_agent_ids
    report.agents_without_run = [a for a in declared if a not in pairable]
    paired = [pairable[a] for a in declared if a in pairable]
    if len(paired) < 2:
        report.no_item_reason = _why_no_item(len(paired), len(declared))
        return report, []
    new: list[tuple[str, NewRecord]] = []
    criterion = ref.prompt.criterion
    for a, b in _pairs(paired):
        made = item_id(ref.event_id, criterion.id, criterion.version, a, b)
        if ledger.rows("hr_items", item_id=made):
            report.already_present.append(made)
        else:
            new.append((made, item_record(ledger, ref, now.privacy, a, b)))
    return report, new


def _pairs(paired: list[RunFacts]) -> Iterable[tuple[str, str]]:
    for first, second in combinations(paired, 2):
        yield first.run.run_id, second.run.run_id


def _why_no_item(pairable: int, declared: int) -> str:
    return (
        f"{pairable} pairable run(s) among the {declared} declared agents; "
        "an item needs the runs of two distinct declared agents over the prompt"
    )


def _append_items(store: Store, batch: list[tuple[PromptMaterialized, str, NewRecord]]) -> None:
    """Append one batch of items. When a concurrent materialize recorded one of them first (the
    ``hr_items`` key refuses the batch with a conflict), re-read which are recorded now and
    append the rest once more, so the result is the same as if it had run alone."""
    try:
        store.append([record for _, _, record in batch])
    except ConflictError:
        recorded = {made for _, made, _ in batch if store.ledger.rows("hr_items", item_id=made)}
        for report, made, _ in batch:
            if made in recorded:
                report.already_present.append(made)
        batch = [entry for entry in batch if entry[1] not in recorded]
        if batch:
            store.append([record for _, _, record in batch])  # a second conflict is raised as is
    for report, made, record in batch:
        report.created.append(made)
        if record.payload.get("selfIdentification"):
            report.self_identifying.append(made)
