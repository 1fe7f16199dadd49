"""Human review custody: review prompts, candidate responses, blinded review items, decisions and
the pure rules that decide activity, privacy and training eligibility (docs/human-review.md).

Each part is a package with its own public API; import the one you use::

    from reviewtrail.human_review.records import ReviewPrompt, new_prompt_record  # record types, bounds, query tables
    from reviewtrail.human_review.rules import item_id, check_decision  # the pure rules
    from reviewtrail.human_review.reads import resolve_item  # the records as they stand now
    from reviewtrail.human_review.campaigns import import_campaign, run_campaign  # campaigns and their runs
    from reviewtrail.human_review.session import review_queue, decide, history  # reviewing
    from reviewtrail.human_review.export import export_campaign, verify_export  # the training export
    from reviewtrail.human_review.quality import campaign_coverage, judgment_agreement  # campaign quality

Here stand only the record types (and their names) and query tables, which the composition root takes
from every package.
"""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.human_review.catalog import RECORD_TYPE_NAMES as RECORD_TYPE_NAMES
    from reviewtrail.human_review.records._projection import PROJECTIONS as PROJECTIONS
    from reviewtrail.human_review.records._record_types import RECORD_TYPES as RECORD_TYPES
else:
    __getattr__, __dir__ = _face.lazy(__name__)
