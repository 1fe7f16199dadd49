"""Second judgments read and recorded (docs/human-review.md, "Second judgments"): the share a
campaign asks for, the items that wait for one, the items a reviewer is due to judge again, and
the record of one. The rules are :mod:`.._second_judgments` (rules); this module reads the records
they apply to, always from the chain (``records_about``), never from a query table.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from reviewtrail._struct import read
from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.reads._bulk_resolve import Preloaded
from reviewtrail.human_review.reads._campaign_read import campaign_item_pages, latest_settings
from reviewtrail.human_review.reads._chains import Records
from reviewtrail.human_review.reads._resolve import ResolvedItem, item_decisions, resolve_item
from reviewtrail.human_review.records._record_names import SECOND_JUDGMENT
from reviewtrail.human_review.records._records import ReviewDecision, SecondJudgment, new_second_judgment_record
from reviewtrail.human_review.rules._decision_rules import DecisionFact, active_decisions, check_decision
from reviewtrail.human_review.rules._second_judgments import (
    SecondJudgmentFact,
    counted_second_judgments,
    due_second_judgment,
    selected_for_second_judgment,
    waits_for_second_judgment,
)
from reviewtrail.ledger import Envelope, Ledger, Privacy
from reviewtrail.store import Store

__all__ = [
    "DUE_MAX",
    "ItemJudgments",
    "item_judgments",
    "judgments_of",
    "pending_second_judgment",
    "pending_second_judgments",
    "record_second_judgment",
    "second_judgment_due_for",
    "second_judgment_facts",
    "second_judgment_share",
    "second_judgments_due",
]

#: At most this many items in one answer of :func:`second_judgments_due`.
DUE_MAX = 1_000


def second_judgment_share(ledger: Ledger, campaign_id: str, version: int) -> float:
    """The share of items the campaign version asks a second judgment of: the settings in force,
    read from the chain (0 without settings or without the field)."""
    settings = latest_settings(ledger, campaign_id, version)
    value = settings.payload_value.get("secondJudgmentShare") if settings is not None else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def second_judgment_facts(envs: Iterable[Envelope], resolved: ResolvedItem) -> list[SecondJudgmentFact]:
    """The second judgments among ``envs`` about the item, each checked by the decision rules."""
    out = []
    for env in envs:
        if env.type != SECOND_JUDGMENT or env.subject != resolved.item.item_id:
            continue
        judgment = read(SecondJudgment, env.payload)
        valid = check_decision(judgment.as_decision(), resolved.item, resolved.prompt.criterion) is None
        out.append(SecondJudgmentFact(env.id, env.seq, env.actor, judgment, valid))
    return sorted(out, key=lambda f: f.seq)


@dataclass(frozen=True)
class ItemJudgments:
    """One item's decisions (with their reviewers), active decision and second judgments, and
    whether the campaign selected it for a second judgment."""

    resolved: ResolvedItem
    decisions: tuple[DecisionFact, ...]
    decided_by: dict[str, str]  # decision record id -> its reviewer (the record's actor)
    seconds: tuple[SecondJudgmentFact, ...]
    selected: bool

    @property
    def active(self) -> tuple[str, str, str] | None:
        """The active decision as (record id, reviewer, disposition), or None."""
        found = active_decisions(self.decisions).get(self.resolved.item.item_id)
        if found is None:
            return None
        fact = found.decision
        return fact.decision_id, self.decided_by[fact.decision_id], fact.decision.disposition

    @property
    def counted(self) -> list[SecondJudgmentFact]:
        return counted_second_judgments(self.seconds, self.decided_by)

    @property
    def waiting(self) -> bool:
        """Whether the item waits for a second judgment (it stays open until one is recorded)."""
        active = self.active
        return waits_for_second_judgment(self.selected, active[2] if active else None, self.counted)

    def due(self, reviewer: str) -> str | None:
        """The active decision ``reviewer`` is due to judge again, or None."""
        return due_second_judgment(
            reviewer, selected=self.selected, active=self.active, seconds=self.seconds, decided_by=self.decided_by
        )


def item_judgments(
    records: Records, resolved: ResolvedItem, seconds: Iterable[Envelope], share: float
) -> ItemJudgments:
    """:class:`ItemJudgments` of a resolved item (``seconds``: the records about it of the second
    judgment type, read from the chain; ``share``: the campaign's share in force)."""
    facts = item_decisions(records, resolved.item, resolved.prompt)
    return judgments_of(resolved, facts, [records.get(f.decision_id).actor for f in facts], seconds, share)


def judgments_of(
    resolved: ResolvedItem,
    facts: Sequence[DecisionFact],
    actors: Sequence[str],
    seconds: Iterable[Envelope],
    share: float,
) -> ItemJudgments:
    """:class:`ItemJudgments` of an item whose decisions and their reviewers (``actors``, in the
    same order) are read already."""
    item = resolved.item
    decided_by = {f.decision_id: actor for f, actor in zip(facts, actors, strict=True)}
    selected = selected_for_second_judgment(item.campaign.id, item.campaign.version, item.item_id, share)
    return ItemJudgments(resolved, tuple(facts), decided_by, tuple(second_judgment_facts(seconds, resolved)), selected)


def _page_judgments(ledger: Ledger, rows: list[dict[str, object]], share: float) -> Iterable[ItemJudgments]:
    ids = [str(r["item_id"]) for r in rows]
    records = Preloaded(ledger, ids, rows)
    seconds: dict[str, list[Envelope]] = {}
    for env in ledger.records_about(ids, type=SECOND_JUDGMENT):
        seconds.setdefault(str(env.subject), []).append(env)
    for item_id in ids:
        yield item_judgments(records, resolve_item(records, item_id), seconds.get(item_id, []), share)


def pending_second_judgments(ledger: Ledger, item_ids: Sequence[str], *, snapshot: bool = True) -> frozenset[str]:
    """Which of ``item_ids`` wait for a second judgment (selected, actively judged, no second
    judgment with a verdict yet): such an item is open. Read in one consistent state: a snapshot
    of its own, or (``snapshot=False``) the one the caller holds."""
    out: set[str] = set()
    with ledger.snapshot() if snapshot else contextlib.nullcontext():
        rows = ledger.rows_in("hr_items", "item_id", item_ids)
        shares: dict[tuple[str, int], float] = {}
        for row in rows:
            key = (str(row["campaign_id"]), int(row["campaign_version"]))
            if key not in shares:
                shares[key] = second_judgment_share(ledger, *key)
        wanted = [r for r in rows if shares[(str(r["campaign_id"]), int(r["campaign_version"]))] > 0]
        for campaign, share in shares.items():
            page = [r for r in wanted if (str(r["campaign_id"]), int(r["campaign_version"])) == campaign]
            if page:
                out.update(j.resolved.item.item_id for j in _page_judgments(ledger, page, share) if j.waiting)
    return frozenset(out)


def pending_second_judgment(ledger: Ledger, item_id: str, *, snapshot: bool = True) -> bool:
    """Whether ``item_id`` waits for a second judgment (so it is open: its candidates' producers
    are not revealed to anyone while it does); ``snapshot`` as :func:`pending_second_judgments`."""
    return item_id in pending_second_judgments(ledger, [item_id], snapshot=snapshot)


def second_judgments_due(store: Store, campaign_id: str, version: int, reviewer: str, *, limit: int = 50) -> list[str]:
    """The ids of at most ``limit`` items of the campaign version that ``reviewer`` is due to judge
    again, in the order the items were recorded: selected, actively judged by another reviewer,
    with no second judgment yet and none by ``reviewer``. Only the selected items of each page
    are read, so a small share reads little."""
    if not 1 <= limit <= DUE_MAX:
        raise InvalidInputError(f"must be 1 to {DUE_MAX}", field="limit")
    ledger = store.ledger
    out: list[str] = []
    with ledger.snapshot():
        share = second_judgment_share(ledger, campaign_id, version)
        if share <= 0:
            return out
        for rows in campaign_item_pages(ledger, campaign_id, version):
            chosen = [r for r in rows if selected_for_second_judgment(campaign_id, version, str(r["item_id"]), share)]
            if not chosen:
                continue
            for judged in _page_judgments(ledger, chosen, share):
                if judged.resolved.valid and judged.due(reviewer) is not None:
                    out.append(judged.resolved.item.item_id)
                    if len(out) == limit:
                        return out
    return out


def second_judgment_due_for(ledger: Ledger, item_id: str, reviewer: str) -> bool:
    """Whether ``reviewer`` is due to judge ``item_id`` again now, by the rule of
    :func:`second_judgments_due` (read within the caller's snapshot, if any)."""
    rows = ledger.rows_in("hr_items", "item_id", [item_id])
    if not rows:
        return False
    campaign_id, version = str(rows[0]["campaign_id"]), int(rows[0]["campaign_version"])
    share = second_judgment_share(ledger, campaign_id, version)
    if not selected_for_second_judgment(campaign_id, version, item_id, share):
        return False
    return any(j.resolved.valid and j.due(reviewer) is not None for j in _page_judgments(ledger, rows, share))


def record_second_judgment(
    store: Store, decision: ReviewDecision, compared_with: str, privacy: Privacy, *, actor: str
) -> Envelope:
    """Append ``actor``'s second judgment of the decision ``compared_with``, with the judgment
    fields of ``decision`` (already checked against the item; ``useForTraining`` is not kept)."""
    judgment = SecondJudgment.of_decision(decision, compared_with)
    [env] = store.append([new_second_judgment_record(judgment, privacy, actor=actor)])
    return env
