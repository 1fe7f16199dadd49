"""The query tables of human review (docs/human-review.md, "Query tables"). Every row is a pure
function of one record, read as plain JSON: no payload model is loaded here, so a read that holds
rows against their records (the review queue) loads none. The payload models this package adds to
the application's record catalog are in :mod:`._record_types`."""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any

from reviewtrail.human_review.records._record_names import (
    CAMPAIGN,
    DECISION,
    ITEM,
    PROMPT,
    RECEIPT,
    RESPONSE,
    RUN,
    TRAINING_RECEIPT,
    prompt_digest,
)
from reviewtrail.human_review.records._tables import DECLARED
from reviewtrail.ledger import Envelope, Projection

__all__ = ["HUMAN_REVIEW_PROJECTION", "PROJECTIONS", "SKIP", "Rows", "queue_key", "response_text_digest", "table_rows"]

SKIP = "skip"
_QUEUE_CONTEXT = b"reviewtrail review queue v1\x00"


def response_text_digest(text: str) -> str:
    """The SHA-256 (hex) of a response's text as a reader sees it, UTF-8: equal for texts that
    differ only in Unicode form (NFKC), letter case, or where and how much white space (line
    endings, a trailing newline) they hold, whatever run, prompt or privacy recorded them. The
    reveal gate finds the items showing one text by it, so a near copy cannot be matched to a
    revealed producer either."""
    seen = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return hashlib.sha256(seen.encode("utf-8")).hexdigest()


def queue_key(item_id: str) -> str:
    """Where an open item stands in the queue: the SHA-256 (in hex) of ``item_id`` under a fixed
    context. Item ids are UUIDs of the prompt and pair, so this order is a fixed pseudo-random
    shuffle: it interleaves prompts and scenario families, and it never follows the order the
    items were recorded in (per prompt, the agents' declared pair order). A pure function of the
    item id, so the item's record and a skip decision on it give the same key."""
    return hashlib.sha256(_QUEUE_CONTEXT + item_id.encode()).hexdigest()


Rows = Callable[[Envelope], Iterable[dict[str, Any]]]


def _prompt_rows(env: Envelope) -> Iterable[dict[str, Any]]:
    p = env.payload_value
    return ({"prompt_digest": prompt_digest(p, env.privacy), "record_id": env.id, "campaign_id": p["campaign"]["id"],
             "campaign_version": p["campaign"]["version"], "campaign_label": p["campaign"]["label"],
             "scenario_family": p["scenarioFamily"], "privacy": env.privacy, "seq": env.seq},)  # fmt: skip


def _campaign_rows(env: Envelope) -> Iterable[dict[str, Any]]:
    p = env.payload_value
    return ({"campaign_id": p["campaignId"], "version": p["version"],
             "training_enabled": int(bool(p.get("trainingEnabled", False))),
             "record_id": env.id, "seq": env.seq},)  # fmt: skip


def _run_rows(env: Envelope) -> Iterable[dict[str, Any]]:
    p = env.payload_value
    return ({"record_id": env.id, "run_id": p["runId"], "campaign_id": p["campaign"]["id"],
             "campaign_version": p["campaign"]["version"], "trigger_event_id": p["triggerEventId"],
             "agent_id": p["agent"]["id"], "status": p["status"], "seq": env.seq},)  # fmt: skip


def _part_rows(env: Envelope) -> Iterable[dict[str, Any]]:
    if env.subject is None:
        return ()
    t = env.type
    text = env.payload_value.get("response") if t == RESPONSE and isinstance(env.payload_value, dict) else None
    digest = response_text_digest(text) if isinstance(text, str) else ""
    kind = "receipt" if t == RECEIPT else "output"
    return ({"record_id": env.id, "run_id": env.subject, "kind": kind, "text_digest": digest, "seq": env.seq},)


def _item_rows(env: Envelope) -> Iterable[dict[str, Any]]:
    p = env.payload_value
    return ({"item_id": p["itemId"], "record_id": env.id, "campaign_id": p["campaign"]["id"],
             "campaign_version": p["campaign"]["version"], "prompt_event_id": p["promptEventId"],
             "seq": env.seq},)  # fmt: skip


def _item_open_rows(env: Envelope) -> Iterable[dict[str, Any]]:
    p = env.payload_value
    return ({"item_id": p["itemId"], "campaign_id": p["campaign"]["id"], "campaign_version": p["campaign"]["version"],
             "item_seq": env.seq, "queue_key": queue_key(p["itemId"])},)  # fmt: skip


def _item_run_rows(env: Envelope) -> Iterable[dict[str, Any]]:
    p = env.payload_value
    return [{"item_id": p["itemId"], "run_id": candidate["runId"], "seq": env.seq} for candidate in p["candidates"]]


def _decision_rows(env: Envelope) -> Iterable[dict[str, Any]]:
    p = env.payload_value
    return ({"record_id": env.id, "item_id": p["itemId"], "disposition": p["disposition"],
             "supersedes": p.get("supersedes") or "", "actor": env.actor, "seq": env.seq},)  # fmt: skip


def _submission_rows(env: Envelope) -> Iterable[dict[str, Any]]:
    return ({"submission_id": env.payload_value["submissionId"], "record_id": env.id, "seq": env.seq},)


def _decision_link_rows(env: Envelope) -> Iterable[dict[str, Any]]:
    p = env.payload_value
    return ({"item_id": p["itemId"], "follows": p.get("supersedes") or "", "record_id": env.id, "seq": env.seq},)


def _decided_rows(env: Envelope) -> Iterable[dict[str, Any]]:
    p = env.payload_value
    return ({"item_id": p["itemId"], "record_id": env.id, "seq": env.seq, "disposition": p["disposition"],
             "actor": env.actor,
             "skip_key": queue_key(p["itemId"]) if p["disposition"] == SKIP else None},)  # fmt: skip


def _decision_open_rows(env: Envelope) -> Iterable[dict[str, Any]]:
    # The item is no longer among the never-judged: its hr_open row is replaced by one with no
    # campaign and no order, which no page of them returns. A skip leaves it open to others (its
    # hr_decided row has a skip_key); a judgment closes it.
    item_id = env.payload_value["itemId"]
    return ({"item_id": item_id, "campaign_id": None, "campaign_version": None, "item_seq": None, "queue_key": None},)


def _training_receipt_rows(env: Envelope) -> Iterable[dict[str, Any]]:
    p = env.payload_value
    return ({"record_id": env.id, "campaign_id": p["campaign"]["id"], "campaign_version": p["campaign"]["version"],
             "seq": env.seq},)  # fmt: skip


_GIVES: dict[str, tuple[tuple[str, Rows], ...]] = {
    PROMPT: (("hr_prompts", _prompt_rows),),
    CAMPAIGN: (("hr_campaigns", _campaign_rows),),
    RUN: (("hr_runs", _run_rows),),
    RECEIPT: (("hr_run_parts", _part_rows),),
    RESPONSE: (("hr_run_parts", _part_rows),),
    ITEM: (("hr_items", _item_rows), ("hr_open", _item_open_rows), ("hr_item_runs", _item_run_rows)),
    DECISION: (
        ("hr_decisions", _decision_rows),
        ("hr_submissions", _submission_rows),
        ("hr_decision_links", _decision_link_rows),
        ("hr_decided", _decided_rows),
        ("hr_open", _decision_open_rows),
    ),
    TRAINING_RECEIPT: (("hr_training_receipts", _training_receipt_rows),),
}


def _rows(env: Envelope) -> Iterable[tuple[str, dict[str, Any]]]:
    for table, rows in _GIVES.get(env.type, ()):
        for row in rows(env):
            yield table, row


def table_rows(table: str) -> dict[str, Rows]:
    """Record type → the function giving a record's rows of the query table ``table`` (the same
    rows :data:`HUMAN_REVIEW_PROJECTION` gives it), for the types that give any: a reader that
    derives one table from the records it holds derives none of the others."""
    return {type_: rows for type_, gives in _GIVES.items() for name, rows in gives if name == table}


#: The query tables (:data:`._tables.DECLARED`, documented there) and the function that makes
#: their rows; a reclassification or a second judgment makes none.
HUMAN_REVIEW_PROJECTION = Projection(
    DECLARED.name, DECLARED.version, DECLARED.tables, rows=_rows, types=frozenset(_GIVES)
)

PROJECTIONS: tuple[Projection, ...] = (HUMAN_REVIEW_PROJECTION,)
