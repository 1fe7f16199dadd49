"""Reading human review's records as they stand now: its query tables held against their records,
payloads read through their models, amendments followed, candidates recomputed, items resolved one at a
time or a page in bulk, and a campaign version's items with their active decisions
(docs/human-review.md, "Reads that gate")."""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.human_review.reads._chains import Current as Current
    from reviewtrail.human_review.reads._chains import current as current
    from reviewtrail.human_review.reads._chains import stricter as stricter
    from reviewtrail.human_review.reads._resolve import ResolvedItem as ResolvedItem
    from reviewtrail.human_review.reads._resolve import active_decision as active_decision
    from reviewtrail.human_review.reads._resolve import candidate_facts as candidate_facts
    from reviewtrail.human_review.reads._resolve import item_decisions as item_decisions
    from reviewtrail.human_review.reads._resolve import prompt_ref as prompt_ref
    from reviewtrail.human_review.reads._resolve import resolve_item as resolve_item
    from reviewtrail.human_review.reads._resolve import run_candidate as run_candidate
    from reviewtrail.human_review.reads._resolve import run_facts as run_facts
    from reviewtrail.human_review.reads._resolve import runs_over as runs_over
else:
    __getattr__, __dir__ = _face.lazy(__name__)
