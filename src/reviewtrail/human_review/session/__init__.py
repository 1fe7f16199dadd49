"""Reviewing: the review queue's blinded cards, what a reviewer may see of the candidates, recording a
decision, an item's history, and the interactive review session with its order of cards and its
leases (docs/human-review.md, "The queue and history", "Deciding" and "Review session")."""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.human_review.session._decide import DecisionResult as DecisionResult
    from reviewtrail.human_review.session._decide import decide as decide
    from reviewtrail.human_review.session._draw import draw_card as draw_card
    from reviewtrail.human_review.session._history import DecisionEntry as DecisionEntry
    from reviewtrail.human_review.session._history import History as History
    from reviewtrail.human_review.session._history import history as history
    from reviewtrail.human_review.session._lease import LEASE_FILE as LEASE_FILE
    from reviewtrail.human_review.session._lease import LEASE_SECONDS as LEASE_SECONDS
    from reviewtrail.human_review.session._lease import Leases as Leases
    from reviewtrail.human_review.session._lease import reviewer_holder as reviewer_holder
    from reviewtrail.human_review.session._queue import QUEUE_MAX as QUEUE_MAX
    from reviewtrail.human_review.session._queue import QueueCandidate as QueueCandidate
    from reviewtrail.human_review.session._queue import QueueCard as QueueCard
    from reviewtrail.human_review.session._queue import queue_card as queue_card
    from reviewtrail.human_review.session._queue import review_queue as review_queue
    from reviewtrail.human_review.session._queue_position import QueuePosition as QueuePosition
    from reviewtrail.human_review.session._queue_position import queue_position as queue_position
    from reviewtrail.human_review.session._reveal import CandidateProvenance as CandidateProvenance
    from reviewtrail.human_review.session._reveal import gated_provenance as gated_provenance
    from reviewtrail.human_review.session._reveal_gate import RevealGate as RevealGate
    from reviewtrail.human_review.session._reveal_gate import item_open as item_open
    from reviewtrail.human_review.session._reveal_gate import reveal_gate as reveal_gate
    from reviewtrail.human_review.session._second_judgments import ItemJudgments as ItemJudgments
    from reviewtrail.human_review.session._second_judgments import pending_second_judgment as pending_second_judgment
    from reviewtrail.human_review.session._second_judgments import pending_second_judgments as pending_second_judgments
    from reviewtrail.human_review.session._second_judgments import second_judgment_share as second_judgment_share
    from reviewtrail.human_review.session._second_judgments import second_judgments_due as second_judgments_due
    from reviewtrail.human_review.session._session import PICK_LABELS as PICK_LABELS
    from reviewtrail.human_review.session._session import REVEAL_MODES as REVEAL_MODES
    from reviewtrail.human_review.session._session import SESSION_KEYS as SESSION_KEYS
    from reviewtrail.human_review.session._session import DecisionUse as DecisionUse
    from reviewtrail.human_review.session._session import ReviewSession as ReviewSession
    from reviewtrail.human_review.session._session import SessionAction as SessionAction
    from reviewtrail.human_review.session._session import SessionProgress as SessionProgress
    from reviewtrail.human_review.session._session_order import interleave_families as interleave_families
    from reviewtrail.human_review.session._session_queue import SessionQueue as SessionQueue
    from reviewtrail.human_review.session._session_queue import campaign_progress as campaign_progress
    from reviewtrail.human_review.session._session_queue import decision_use as decision_use
    from reviewtrail.human_review.session._session_queue import next_open_card as next_open_card
    from reviewtrail.human_review.session._skipped import OwnCounts as OwnCounts
    from reviewtrail.human_review.session._skipped import own_counts as own_counts
else:
    __getattr__, __dir__ = _face.lazy(__name__)
