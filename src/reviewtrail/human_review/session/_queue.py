"""The review queue: blinded cards, unresolved items first (docs/human-review.md, "The queue and
history").

A card is the item as every other read path resolves it (:func:`~._resolve.resolve_item`):
amendments followed by :mod:`._chains`, candidates recomputed and the frozen pair re-checked by
:mod:`._frozen`, each payload read by its msgspec model. ``review queue`` loads no pydantic.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import msgspec

from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.reads._bulk_resolve import Preloaded
from reviewtrail.human_review.reads._chains import Records, stricter
from reviewtrail.human_review.reads._listed import check_listed
from reviewtrail.human_review.records._projection import SKIP
from reviewtrail.human_review.records._record_names import DECISION, ITEM
from reviewtrail.human_review.rules._frozen import POSITIONS
from reviewtrail.human_review.rules._queue_rules import ItemState
from reviewtrail.human_review.session._skipped import check_state, skipped_open
from reviewtrail.ledger import Ledger, Privacy
from reviewtrail.store import Store

if TYPE_CHECKING:
    from reviewtrail.human_review.reads._resolve import ResolvedItem
    from reviewtrail.human_review.rules._item_rules import CandidateFacts

__all__ = ["QUEUE_MAX", "QueueCandidate", "QueueCard", "card", "queue_card", "review_queue"]

#: The most cards one queue call returns.
QUEUE_MAX = 1_000
_PAGE = 1_001


class QueueCandidate(msgspec.Struct, frozen=True):
    """A candidate as a reviewer sees it: its position and exact response (None when the item is
    invalid: its responses are withheld)."""

    position: str
    response: str | None

    def to_json(self) -> dict[str, Any]:
        return {"position": self.position, "response": self.response}


class QueueCard(msgspec.Struct, frozen=True):
    """One blinded review card. It never holds a run id, agent id, model, provider, adapter,
    catalog generation, output event id, digest or any other provenance."""

    item_id: str
    campaign_id: str
    campaign_version: int
    scenario_family: str
    prompt: str
    evidence: str | None
    criterion: dict[str, Any]
    candidates: tuple[QueueCandidate, QueueCandidate]
    valid: bool
    problems: tuple[str, ...]
    decided: bool
    # The privacy join of what the card shows: the strictest of the prompt's, the item's and each
    # candidate's run and output privacy in force ("sensitive" for a candidate not found). Not in
    # the card's JSON: a surface that serves cards to agents withholds any card that is not
    # public-source (docs/agents/).
    privacy: Privacy = "sensitive"

    def to_json(self) -> dict[str, Any]:
        return {
            "itemId": self.item_id,
            "campaign": {"id": self.campaign_id, "version": self.campaign_version},
            "scenarioFamily": self.scenario_family,
            "prompt": self.prompt,
            "evidence": self.evidence,
            "criterion": dict(self.criterion),
            "candidates": [c.to_json() for c in self.candidates],
            "valid": self.valid,
            "problems": list(self.problems),
            "decided": self.decided,
        }


def card(resolved: ResolvedItem, *, decided: bool) -> QueueCard:
    """The blinded card of an item resolved through its payload models: candidates in its display
    order; an invalid item shows why (in positions, never run or event ids) and withholds its
    responses."""
    from reviewtrail.human_review.reads._resolve import blinded_problems

    item, prompt = resolved.item, resolved.prompt
    candidates = []
    for position, run_id in zip(POSITIONS, item.display_order, strict=True):
        found = resolved.candidates.get(run_id)
        response = found[1] if found is not None and resolved.valid else None
        candidates.append(QueueCandidate(position, response))
    criterion = prompt.criterion
    return QueueCard(
        item_id=item.item_id,
        campaign_id=item.campaign.id,
        campaign_version=item.campaign.version,
        scenario_family=prompt.scenario_family,
        prompt=prompt.prompt,
        evidence=prompt.evidence,
        criterion={
            "id": criterion.id,
            "version": criterion.version,
            "label": criterion.label,
            "instructions": criterion.instructions,
            "allowedReasonCodes": list(criterion.allowed_reason_codes),
            "allowedResponseTags": list(criterion.allowed_response_tags),
        },
        candidates=(candidates[0], candidates[1]),
        valid=resolved.valid,
        problems=blinded_problems(resolved),
        decided=decided,
        privacy=_joined(
            resolved.prompt_privacy,
            resolved.item_privacy,
            *(level for run_id in item.display_order for level in _model_levels(resolved.candidates.get(run_id))),
        ),
    )


def queue_card(ledger: Records, item_id: str, *, decided: bool) -> QueueCard:
    """The blinded card of ``item_id``: ``card(resolve_item(ledger, item_id), decided=decided)``."""
    from reviewtrail.human_review.reads._resolve import resolve_item

    return card(resolve_item(ledger, item_id), decided=decided)


def _model_levels(found: tuple[CandidateFacts, str] | None) -> tuple[Privacy, Privacy]:
    """A candidate's run and output privacy in force; both sensitive when the candidate is not
    found: what cannot be read is never taken as public."""
    if found is None:
        return ("sensitive", "sensitive")
    return (found[0].run_privacy, found[0].output_privacy)


def _joined(*levels: Privacy) -> Privacy:
    out: Privacy = "public-source"
    for level in levels:
        out = stricter(out, level)
    return out


def review_queue(
    store: Store,
    campaign_id: str | None = None,
    version: int | None = None,
    *,
    limit: int = 20,
    include_decided: bool = True,
    reviewer: str | None = None,
) -> list[QueueCard]:
    """At most ``limit`` blinded cards: the open items first — never-judged ones, then those whose
    latest decision is a skip (with ``reviewer``: only those that reviewer did not skip), each part
    in queue-key order (:func:`~..records._projection.queue_key`, a fixed shuffle that interleaves
    prompts and families and never follows the order recorded) — then (with ``include_decided``)
    judged ones in the order the items were recorded. Only the items shown are resolved (their
    digests re-checked), and items are read page by page, so the first page costs the same however
    many items the store holds."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= QUEUE_MAX:
        raise InvalidInputError(f"must be a whole number from 1 to {QUEUE_MAX}, got {limit!r}", field="limit")
    if version is not None and campaign_id is None:
        raise InvalidInputError("a version needs a campaign", field="version")
    ledger = store.ledger
    size = min(_PAGE, limit + 1)
    with ledger.snapshot():  # every card from one state of the ledger
        wheres = _filters(ledger, campaign_id, version)
        chosen: list[tuple[str, ItemState]] = [
            (item, "never-judged") for item in _take(_items(ledger, wheres, size, open_only=True), limit)
        ]
        if len(chosen) < limit:
            campaigns = None if campaign_id is None else [(w["campaign_id"], w["campaign_version"]) for w in wheres]
            skipped = skipped_open(ledger, campaigns, reviewer)
            chosen += [(item, "skipped") for item in _take(skipped, limit - len(chosen))]
        if include_decided and len(chosen) < limit:
            done = _decided(ledger, _items(ledger, wheres, size, open_only=False), size)
            chosen += [(item, "judged") for item in _take(done, limit - len(chosen))]
        if not chosen:
            return []
        # The cards shown are resolved from one bulk read of what they rest on.
        ids = [item_id for item_id, _ in chosen]
        records = Preloaded(ledger, ids, ledger.rows_in("hr_items", "item_id", ids))
        for item_id, state in chosen:
            check_state(records, item_id, state)
        return [queue_card(records, item_id, decided=state == "judged") for item_id, state in chosen]


def _filters(ledger: Ledger, campaign_id: str | None, version: int | None) -> list[dict[str, Any]]:
    """The filters whose pages, merged by seq, give the queue's items: one per campaign version,
    so each page is served by the (campaign, version, seq) index without a sort."""
    if campaign_id is None:
        return [{}]
    if version is not None:
        return [{"campaign_id": campaign_id, "campaign_version": version}]
    versions: list[int] = []
    while True:  # the campaign's versions, one index seek each
        after = versions[-1] if versions else None
        rows = ledger.page(
            "hr_prompts", {"campaign_id": campaign_id}, order_by="campaign_version", after=after, limit=1
        )
        if not rows:
            return [{"campaign_id": campaign_id, "campaign_version": v} for v in versions]
        versions.append(rows[0]["campaign_version"])


def _take(items: Iterator[str], n: int) -> list[str]:
    out: list[str] = []
    if n <= 0:
        return out
    for item_id in items:
        out.append(item_id)
        if len(out) >= n:
            break
    return out


def _pages(ledger: Ledger, where: dict[str, Any], size: int, open_only: bool) -> Iterator[tuple[Any, str]]:
    """(order, item id) of the items matching ``where``: the never-judged ones from ``hr_open``
    in queue-key order (decided items have left it, so none is passed over), or every item in the
    order recorded (each page of ``hr_items`` held against the chain's item records in its
    range)."""
    table, order = ("hr_open", "queue_key") if open_only else ("hr_items", "seq")
    after = None
    while True:
        rows = ledger.page(table, where, order_by=order, after=after, limit=size)
        if not open_only:
            upto = rows[-1][order] if len(rows) == size else None
            campaign = (where["campaign_id"], where["campaign_version"]) if where else None
            check_listed(ledger, ITEM, table, {int(r[order]) for r in rows}, campaign, after=after or 0, upto=upto)
        yield from ((r[order], str(r["item_id"])) for r in rows)
        if len(rows) < size:
            return
        after = rows[-1][order]


def _items(ledger: Ledger, wheres: list[dict[str, Any]], size: int, *, open_only: bool) -> Iterator[str]:
    """Item ids in seq order (only the never-judged ones, in queue-key order, when ``open_only``)."""
    pages = [_pages(ledger, where, size, open_only) for where in wheres]
    for _, item_id in heapq.merge(*pages):
        yield item_id


def _decided(ledger: Ledger, items: Iterator[str], batch: int) -> Iterator[str]:
    """The judged items (latest decision record not a skip), in order, asked of the records
    ``batch`` items at a time (read only when fewer than ``limit`` items are open, so it passes
    over fewer than ``limit`` open items)."""
    while chunk := _take(items, batch):
        latest: dict[str, tuple[int, str]] = {}
        for env in ledger.records_about(chunk, type=DECISION):
            seen = latest.get(str(env.subject))
            if seen is None or env.seq > seen[0]:
                latest[str(env.subject)] = (env.seq, str(env.payload_value.get("disposition")))
        yield from (item_id for item_id in chunk if item_id in latest and latest[item_id][1] != SKIP)
