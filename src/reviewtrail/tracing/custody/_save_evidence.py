"""Whether the ledger vouches for an interrupted save: a pending marker is honoured only then.

A pending marker lives in ``.aris``, which anyone who can write trace files can write too: with
call files beside it, a forged marker would look exactly like a save that was killed. So
``verify --repair`` records the call of a marker only when the ledger holds the save's
``trace.save-begun@1`` record (appended before the first file was written) for the marker's
token, skill and purpose, and no trace record of that save exists yet (a token is used once).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from reviewtrail.tracing.catalog import SAVE_BEGUN_TYPE
from reviewtrail.tracing.custody._ledger_link import save_subject
from reviewtrail.tracing.custody._ledger_records import RecordedCall
from reviewtrail.tracing.files._pending import Pending

if TYPE_CHECKING:
    from reviewtrail.store import Store

__all__ = ["save_began"]


def save_began(store: Store, marker: Pending, calls: Iterable[RecordedCall]) -> bool:
    """True when the ledger shows that the marker's save began and has not been recorded yet."""
    if marker.save is None or any(c.save == marker.save for c in calls):
        return False
    for env in store.ledger.read(type=SAVE_BEGUN_TYPE, subject=save_subject(marker.save), limit=1):
        payload = env.payload_value
        return (
            isinstance(payload, dict)
            and payload.get("save") == marker.save
            and (payload.get("skill"), payload.get("purpose")) == (marker.skill, marker.purpose)
        )
    return False
