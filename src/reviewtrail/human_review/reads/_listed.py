"""Whether a page of a query table lists every record of a type it should: a row deleted from
``hr_items`` (or ``hr_runs``) is refused (exit 4), never silently left out. Reads records only,
through no payload model."""

from __future__ import annotations

from reviewtrail.errors import IntegrityError
from reviewtrail.ledger import Ledger

__all__ = ["ITEM_PAGE", "check_listed"]

#: Items read per page of ``hr_items``.
ITEM_PAGE = 1_000


def check_listed(
    ledger: Ledger,
    type_: str,
    table: str,
    listed: set[int],
    campaign: tuple[str, int] | None,
    *,
    after: int = 0,
    upto: int | None = None,
) -> None:
    """Every record of ``type_`` (an item or a candidate run: its payload names its
    ``campaign``) in ``(after, upto]`` that is not at one of the ``listed`` seqs must belong to
    another campaign version by its own (checked) record; one of ``campaign`` (of any campaign,
    when it is None) means ``table`` lost its row: refused (exit 4)."""
    others = [seq for seq in ledger.seqs_of_type(type_, after=after, upto=upto) if seq not in listed]
    for i in range(0, len(others), ITEM_PAGE):
        records = ledger.records_at(others[i : i + ITEM_PAGE])
        for env in ledger.checked_records(records.values()):
            payload = env.payload_value
            named = payload.get("campaign") if isinstance(payload, dict) else None
            if not isinstance(named, dict) or campaign is None or (named.get("id"), named.get("version")) == campaign:
                raise IntegrityError(
                    f"query table {table} has no row for the record at seq {env.seq} ({env.id}); "
                    "run 'reviewtrail verify'",
                    field=table,
                )
