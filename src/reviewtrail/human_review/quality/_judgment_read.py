"""The pairs of decisions and second judgments of a campaign version, read from a store while its
coverage is read (docs/human-review.md, "Agreement"). The arithmetic is
:mod:`._judgment_agreement`; the rules of which second judgments count are
:mod:`.._second_judgments` (rules).
"""

from __future__ import annotations

from collections.abc import Callable

from reviewtrail.human_review.quality._judgment_agreement import (
    JudgmentAgreement,
    JudgmentPair,
    judgment_agreement,
    position_verdict,
)
from reviewtrail.human_review.reads._campaign_read import ItemState
from reviewtrail.human_review.reads._listed import ITEM_PAGE
from reviewtrail.human_review.records._record_names import SECOND_JUDGMENT
from reviewtrail.human_review.rules._reviewers import reviewer_label
from reviewtrail.human_review.session._second_judgments import ItemJudgments, judgments_of
from reviewtrail.ledger import Envelope, Ledger

__all__ = ["JudgmentTally", "item_pairs"]


def item_pairs(judged: ItemJudgments) -> list[JudgmentPair]:
    """One pair per counted second judgment with a verdict whose judged decision has one."""
    order = judged.resolved.item.display_order
    decisions = {f.decision_id: f.decision for f in judged.decisions}
    out = []
    for second in judged.counted:
        first = decisions[second.judgment.compared_with]
        v1 = position_verdict(first.disposition, first.preferred, order)
        v2 = position_verdict(second.judgment.disposition, second.judgment.preferred, order)
        if v1 is None or v2 is None:
            continue
        who = reviewer_label(judged.decided_by[second.judgment.compared_with])
        out.append(JudgmentPair(who, reviewer_label(second.reviewer), v1, v2))
    return out


class JudgmentTally:
    """Adds the items of a campaign version one at a time (in one consistent state of ``ledger``),
    reading their second judgments a page of items at a time."""

    def __init__(
        self, ledger: Ledger, share: float, *, judged: Callable[[ItemState, bool], None] | None = None
    ) -> None:
        """``judged``: called with each item added, in order, and whether it waits for a second
        judgment, once its second judgments are read."""
        self._ledger = ledger
        self._share = share
        self._judged = judged
        self._held: list[ItemState] = []
        self.pairs: list[JudgmentPair] = []
        self.selected = 0
        self.waiting = 0

    def add(self, state: ItemState) -> None:
        self._held.append(state)
        if len(self._held) >= ITEM_PAGE:
            self._flush()

    def _flush(self) -> None:
        held, self._held = self._held, []
        ids = [s.item_id for s in held if s.decisions]
        seconds: dict[str, list[Envelope]] = {}
        for env in self._ledger.records_about(ids, type=SECOND_JUDGMENT) if ids else ():
            seconds.setdefault(str(env.subject), []).append(env)
        for state in held:
            judged = judgments_of(state.resolved, state.decisions, state.actors, seconds.get(state.item_id, []),
                                  self._share)  # fmt: skip
            self.selected += judged.selected
            self.waiting += judged.waiting
            self.pairs += item_pairs(judged)
            if self._judged is not None:
                self._judged(state, judged.waiting)

    def result(self) -> JudgmentAgreement:
        self._flush()
        return judgment_agreement(self.pairs, selected=self.selected, waiting=self.waiting, share=self._share)
