"""What tracing adds to the application's record catalog, declared without its payload models: two
record types and no query table. :mod:`reviewtrail.app` reads this module alone when it builds the
catalog; the models load when a record of these types is validated or made."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reviewtrail.ledger import Projection

__all__ = ["PROJECTIONS", "RECORD_TYPE_NAMES", "SAVE_BEGUN_TYPE", "TRACE_RECORD_TYPE"]

TRACE_RECORD_TYPE = "trace.review-call@1"
SAVE_BEGUN_TYPE = "trace.save-begun@1"
RECORD_TYPE_NAMES = frozenset([TRACE_RECORD_TYPE, SAVE_BEGUN_TYPE])
PROJECTIONS: tuple[Projection, ...] = ()
