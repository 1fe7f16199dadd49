"""Pure rules of second judgments (docs/human-review.md, "Second judgments"): which items a
campaign asks a second judgment of, which second judgments count, and when an item still waits
for one. Nothing here reads a store.

- An item is *selected* when the keyed hash of its campaign, version and item id, read as a
  number in [0, 1), is below the campaign's ``secondJudgmentShare``. The choice depends on nothing
  a reviewer does, every surface computes the same one, and raising the share only adds items.
- A second judgment *counts* when it passes the decision rules against its item, names a decision
  of that item recorded by another reviewer, is the first record of its submission id and is its
  reviewer's first second judgment of the item.
- An item *waits for a second judgment* while it is selected, has an active decision that is a
  judgment (not ``skip``) and no counted second judgment with a verdict (a ``skip`` gives none).
- A reviewer is *due* a second judgment of an item while it waits for one, its active decision is
  another reviewer's, and the reviewer recorded no second judgment of it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from reviewtrail.canonical import canonical_json
from reviewtrail.human_review.records._projection import SKIP
from reviewtrail.human_review.records._records import SecondJudgment

__all__ = [
    "SELECTION_KEY",
    "SecondJudgmentFact",
    "counted_second_judgments",
    "due_second_judgment",
    "selected_for_second_judgment",
    "selection_point",
    "waits_for_second_judgment",
]

#: The key of the selection hash: it separates this choice from every other hash of an item id.
SELECTION_KEY = "reviewtrail.human-review.second-judgment.v1"
_SCALE = float(1 << 64)


def selection_point(campaign_id: str, version: int, item_id: str) -> float:
    """Where an item falls in [0, 1): the first 8 bytes of SHA-256 over the RFC 8785 bytes of
    ``[SELECTION_KEY, campaignId, version, itemId]``, big-endian, divided by 2**64."""
    digest = hashlib.sha256(canonical_json([SELECTION_KEY, campaign_id, version, item_id])).digest()
    return int.from_bytes(digest[:8], "big") / _SCALE


def selected_for_second_judgment(campaign_id: str, version: int, item_id: str, share: float | None) -> bool:
    """Whether the campaign asks a second judgment of the item (``share``: the settings in force)."""
    return bool(share) and selection_point(campaign_id, version, item_id) < float(share or 0.0)


@dataclass(frozen=True)
class SecondJudgmentFact:
    """A recorded second judgment: its record id, seq, reviewer (the record's actor), payload and
    whether it passed the decision rules against its item."""

    record_id: str
    seq: int
    reviewer: str
    judgment: SecondJudgment
    valid: bool = True


def counted_second_judgments(
    seconds: Iterable[SecondJudgmentFact], decided_by: Mapping[str, str]
) -> list[SecondJudgmentFact]:
    """The second judgments of one item that count, in seq order. ``decided_by``: each decision
    record id of the item -> its reviewer."""
    out: list[SecondJudgmentFact] = []
    submissions: set[str] = set()
    judges: set[str] = set()
    for fact in sorted(seconds, key=lambda f: f.seq):
        duplicate = fact.judgment.submission_id in submissions
        submissions.add(fact.judgment.submission_id)
        first = decided_by.get(fact.judgment.compared_with)
        if not fact.valid or duplicate or first is None or first == fact.reviewer or fact.reviewer in judges:
            continue
        judges.add(fact.reviewer)
        out.append(fact)
    return out


def waits_for_second_judgment(
    selected: bool, active_disposition: str | None, counted: Iterable[SecondJudgmentFact]
) -> bool:
    """Whether an item still waits for a second judgment (so it stays open)."""
    if not selected or active_disposition in (None, SKIP):
        return False
    return not any(f.judgment.disposition != SKIP for f in counted)


def due_second_judgment(
    reviewer: str,
    *,
    selected: bool,
    active: tuple[str, str, str] | None,
    seconds: Iterable[SecondJudgmentFact],
    decided_by: Mapping[str, str],
) -> str | None:
    """The id of the active decision ``reviewer`` is due to judge again, or None. ``active``: the
    item's active decision as (record id, reviewer, disposition); ``seconds``: every second
    judgment recorded on the item."""
    recorded = list(seconds)
    if active is None or active[1] == reviewer:
        return None
    counted = counted_second_judgments(recorded, decided_by)
    if not waits_for_second_judgment(selected, active[2], counted):
        return None
    if any(f.reviewer == reviewer for f in recorded):
        return None
    return active[0]
