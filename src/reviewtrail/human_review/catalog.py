"""What human review adds to the application's record catalog, declared without its payload models
and without the functions that make its query tables' rows: the names of its record types, and its
query tables with the record types that make rows of them. :mod:`reviewtrail.app` reads this module
alone when it builds the catalog; the models load when a record of these types is validated or made,
the row functions when a record of these types is given to the tables."""

from __future__ import annotations

from reviewtrail.human_review.records._record_names import (
    CAMPAIGN,
    DECISION,
    ITEM,
    PROMPT,
    RECEIPT,
    RECLASSIFICATION,
    RESPONSE,
    RUN,
    SECOND_JUDGMENT,
    TRAINING_RECEIPT,
)
from reviewtrail.human_review.records._tables import DECLARED

__all__ = ["PROJECTIONS", "RECORD_TYPE_NAMES"]

PROJECTIONS = (DECLARED,)
RECORD_TYPE_NAMES = frozenset(
    [PROMPT, RESPONSE, ITEM, DECISION, CAMPAIGN, RUN, RECEIPT, RECLASSIFICATION, TRAINING_RECEIPT, SECOND_JUDGMENT]
)
