"""Reading a campaign version's items as they stand, for export, coverage and standings
(docs/human-review.md, "Exporting a campaign" and "Coverage").

Every item is resolved through :func:`resolve_item` (its frozen digests re-checked; a campaign's
items a page at a time over a page preloaded in bulk, :func:`campaign_item_states`), its
decisions are read and checked, and its active decision gets its exportable facts exactly as
export builds them, so coverage's "exportable" and export's rows can never disagree.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import msgspec

from reviewtrail.errors import IntegrityError
from reviewtrail.human_review.reads._bulk_resolve import Preloaded
from reviewtrail.human_review.reads._chains import Records, current
from reviewtrail.human_review.reads._listed import ITEM_PAGE, check_listed
from reviewtrail.human_review.reads._resolve import ResolvedItem, active_decision, item_decisions, resolve_item
from reviewtrail.human_review.records._record_names import CAMPAIGN, ITEM
from reviewtrail.human_review.rules._decision_rules import ActiveDecision, DecisionFact, Refusal
from reviewtrail.human_review.rules._eligibility import ChainPrivacy, Eligibility, quality_eligible
from reviewtrail.human_review.rules._export_rows import ExampleFacts, example_facts, example_refusal
from reviewtrail.ledger import Envelope, Ledger, Privacy

__all__ = [
    "CampaignTraining",
    "ItemState",
    "campaign_item_pages",
    "campaign_item_states",
    "campaign_training",
    "campaign_training_history",
    "item_state",
    "latest_settings",
    "training_when_decided",
]

# A record an example rests on that cannot be read is taken as the strictest level (fail closed).
_UNKNOWN: Privacy = "sensitive"


def campaign_item_pages(ledger: Ledger, campaign_id: str, version: int) -> Iterator[list[dict[str, Any]]]:
    """The ``hr_items`` rows of a campaign version in the order they were recorded, a page at a
    time, as stored (with ``rt_seq``): give each page to :class:`Preloaded`, which holds every row
    against the item's records. Each page is also held against the chain's item records
    (:func:`_check_page`), so an item whose row was deleted is refused (exit 4), never silently
    left out."""
    where = {"campaign_id": campaign_id, "campaign_version": version}
    after = None
    while True:
        # Unchecked here: Preloaded holds every row against the item records it reads anyway.
        rows = ledger.page("hr_items", where, order_by="seq", after=after, limit=ITEM_PAGE, check=False)
        full = len(rows) == ITEM_PAGE
        _check_page(ledger, (campaign_id, version), rows, after=after or 0, upto=rows[-1]["seq"] if full else None)
        if rows:
            yield rows
        if not full:
            return
        after = rows[-1]["seq"]


def _check_page(
    ledger: Ledger, campaign: tuple[str, int], rows: list[dict[str, Any]], *, after: int, upto: int | None
) -> None:
    """Every item record in ``(after, upto]`` (to the head when ``upto`` is None) must be on the
    page or be an item of another campaign version."""
    check_listed(ledger, ITEM, "hr_items", {int(r["seq"]) for r in rows}, campaign, after=after, upto=upto)


def campaign_item_states(
    ledger: Ledger, campaign_id: str, version: int, *, training_enabled: bool
) -> Iterator[ItemState]:
    """:func:`item_state` of every item of a campaign version, in the order recorded: each page
    of items is read in a few bulk reads of the records (:class:`Preloaded`) and resolved by the
    same rules. ``training_enabled``: whether the campaign's training is enabled now (the caller
    read it in the same state); whether it was when each decision was recorded is read here from
    the campaign's settings records (:func:`campaign_training_history`)."""
    training = campaign_training_history(ledger, campaign_id, version)
    for rows in campaign_item_pages(ledger, campaign_id, version):
        item_ids = [str(row["item_id"]) for row in rows]
        records = Preloaded(ledger, item_ids, rows)
        for item_id in item_ids:
            yield item_state(records, item_id, training_enabled=training_enabled, training=training)


@dataclass(frozen=True)
class CampaignTraining:
    """A campaign version's training settings as the chain gives them: ``changes`` holds the seq
    and ``trainingEnabled`` of each of its settings records, in seq order (none: disabled)."""

    changes: tuple[tuple[int, bool], ...] = ()

    @property
    def enabled(self) -> bool:
        """Whether training is enabled now: the latest settings record says so."""
        return bool(self.changes) and self.changes[-1][1]

    def when(self, seq: int) -> bool:
        """Whether the settings in force when the record at ``seq`` was appended (the latest
        settings record before it) enabled training."""
        enabled = False
        for at, value in self.changes:
            if at >= seq:
                break
            enabled = value
        return enabled


def campaign_training_history(ledger: Ledger, campaign_id: str, version: int) -> CampaignTraining:
    """Every settings record of a campaign version, read from the chain (each checked), never
    from the ``hr_campaigns`` query table. That table's row must still be the one the latest
    record gives: a row deleted, or pointed back at older settings, is refused (exit 4)."""
    records = _settings_records(ledger, campaign_id, version)
    _check_settings_row(ledger, campaign_id, version, records[-1] if records else None)
    return CampaignTraining(
        tuple((env.seq, env.payload_value.get("trainingEnabled", False) is True) for env in records)
    )


def _check_settings_row(ledger: Ledger, campaign_id: str, version: int, latest: Envelope | None) -> None:
    rows = ledger.stored_rows("hr_campaigns", campaign_id=campaign_id, version=version)
    stored = [(r.get("record_id"), r.get("seq"), r.get("training_enabled")) for r in rows]
    given = (
        [] if latest is None else [(latest.id, latest.seq, int(latest.payload_value.get("trainingEnabled") is True))]
    )
    if stored != given:
        raise IntegrityError(
            f"query table hr_campaigns does not hold the latest settings of campaign {campaign_id} v{version} "
            f"({'no settings record' if latest is None else 'record ' + latest.id}); run 'reviewtrail verify'",
            field="hr_campaigns",
        )


def campaign_training(ledger: Ledger, campaign_id: str, version: int) -> bool:
    """Whether the campaign version's training is enabled: the latest settings record of that
    version in the chain (none: disabled). Read from the records about the campaign, not from the
    ``hr_campaigns`` query table, so a row pointed back at older settings changes nothing."""
    settings = latest_settings(ledger, campaign_id, version)
    return bool(settings is not None and settings.payload_value.get("trainingEnabled", False))


def training_when_decided(ledger: Ledger, campaign_id: str, version: int, seq: int) -> bool:
    """Whether the settings in force when the decision at ``seq`` was recorded enabled training:
    a decision recorded while it was disabled (the canary) stays evaluation-only."""
    return campaign_training_history(ledger, campaign_id, version).when(seq)


def latest_settings(ledger: Ledger, campaign_id: str, version: int) -> Envelope | None:
    """The latest settings record of a campaign version, read from the chain (each checked)."""
    found = _settings_records(ledger, campaign_id, version)
    return found[-1] if found else None


def _settings_records(ledger: Ledger, campaign_id: str, version: int) -> list[Envelope]:
    """The settings records of a campaign version in seq order, read from the chain (checked)."""
    return [
        env
        for env in ledger.records_about([campaign_id], type=CAMPAIGN)
        if isinstance(payload := env.payload_value, dict)
        and payload.get("campaignId") == campaign_id
        and payload.get("version") == version
    ]


class ItemState(msgspec.Struct, frozen=True):
    """One item as it stands: resolved, its recorded decisions, its active decision, and for the
    active decision who recorded it, its quality eligibility and its exportable facts with the
    reason it is not a training example (None: it is one)."""

    resolved: ResolvedItem
    decisions: tuple[DecisionFact, ...]
    active: ActiveDecision | None
    actor: str | None
    example: ExampleFacts | None
    refusal: Refusal | None
    quality: Eligibility | None = None

    @property
    def actors(self) -> tuple[str, ...]:
        """Who recorded each of ``decisions`` (the records' actors), in order."""
        return tuple([fact.actor for fact in self.decisions])

    @property
    def item_id(self) -> str:
        return self.resolved.item.item_id

    @property
    def exportable(self) -> bool:
        return self.example is not None and self.refusal is None


def item_state(
    ledger: Records, item_id: str, *, training_enabled: bool, training: CampaignTraining | None = None
) -> ItemState:
    """Resolve ``item_id`` and decide what its active decision may become (``ledger``: the live
    ledger, or a page of it preloaded). ``training``: the campaign's settings records, which say
    whether training was enabled when the active decision was recorded (None: taken as
    ``training_enabled``)."""
    resolved = resolve_item(ledger, item_id)
    facts = item_decisions(ledger, resolved.item, resolved.prompt)
    active = active_decision(facts, item_id)
    if active is None:
        return ItemState(resolved, tuple(facts), None, None, None, None)
    env = ledger.get(active.decision.decision_id)
    decision_privacy = current(ledger, env).privacy
    when = training.when(active.decision.seq) if training is not None else training_enabled
    example = example_facts(
        resolved.prompt,
        resolved.item,
        active.decision.decision,
        resolved.candidates,
        active=True,
        training_enabled=training_enabled,
        privacy=chain_privacy(resolved, decision_privacy),
        problems=resolved.candidate_problems,
        enabled_when_decided=when,
        fits=active.decision.valid,  # held to check_decision by item_decisions, as every counted decision
    )
    quality = quality_eligible(active.decision.decision, training_enabled=training_enabled, enabled_when_decided=when)
    return ItemState(resolved, tuple(facts), active, env.actor, example, example_refusal(example), quality)


def chain_privacy(resolved: ResolvedItem, decision: Privacy) -> ChainPrivacy:
    """The privacy in force of every record an example of ``resolved`` rests on; a candidate that
    no longer resolves counts as sensitive."""
    run_a, run_b = resolved.item.run_ids()
    a, b = resolved.candidates.get(run_a), resolved.candidates.get(run_b)
    return ChainPrivacy(
        prompt=resolved.prompt_privacy,
        item=resolved.item_privacy,
        run_a=a[0].run_privacy if a else _UNKNOWN,
        run_b=b[0].run_privacy if b else _UNKNOWN,
        output_a=a[0].output_privacy if a else _UNKNOWN,
        output_b=b[0].output_privacy if b else _UNKNOWN,
        decision=decision,
    )
