"""The query tables of human review (docs/human-review.md, "Query tables"). Every row is a pure
function of one record, read as plain JSON: no payload model is loaded here, so a read that holds
rows against their records (the review queue) loads none. The payload models this package adds to
the application's record catalog are in :mod:`._record_types`."""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any, Literal

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
from reviewtrail.ledger import Envelope, Projection, ProjectionTable

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


_SEQ: tuple[str, Literal["int"]] = ("seq", "int")

#: Query tables:
#:
#: - ``hr_prompts``: one row per imported prompt, keyed by its :func:`prompt_digest` (a second
#:   record of the same prompt fails the whole append with a conflict);
#: - ``hr_campaigns``: the latest settings record of each campaign version;
#: - ``hr_runs``: one row per candidate-run record (a correction is another row, same run id);
#: - ``hr_run_parts``: the context receipts and review-response outputs of each run id, an
#:   output with the SHA-256 of its exact text (``text_digest``; ``""`` for a receipt);
#: - ``hr_items``: one row per review item, keyed by item id (a second record of the same item
#:   fails the append with a conflict, so two materializations cannot both record it);
#:   ``hr_item_runs``: the two candidate run ids of each item, so the items showing a run are
#:   found by run id;
#: - ``hr_decisions``: one row per decision record; ``hr_submissions`` keyed by submission id (a
#:   second record of one submission fails with a conflict); ``hr_decision_links`` keyed by
#:   (item, the decision superseded, ``""`` for none): an item has one first decision and each
#:   decision at most one successor, so a decision that does not supersede the item's active one
#:   fails the append with a conflict (a chain recorded before this rule, which may hold two,
#:   rebuilds keeping the first); ``hr_decided``: the latest decision
#:   record of each item (which items have any decision, for the queue), with its disposition
#:   and reviewer, and a ``skip_key`` (:func:`queue_key`) when it is a skip: an item whose latest
#:   decision is a skip is still open to every reviewer who did not skip it, and the queue serves
#:   those after the never-judged items, in ``skip_key`` order; ``hr_open``: the items with no
#:   decision (never judged), ordered by :func:`queue_key` (an item's row is replaced by its first
#:   decision's row, which has no campaign and no order), so the queue's first page never passes
#:   over decided items and never follows the order recorded. ``hr_decisions`` names each
#:   decision's reviewer (``actor``), so a reviewer's own counts are read by index.
#: - ``hr_training_receipts``: checkpoint training receipts per campaign version.
HUMAN_REVIEW_PROJECTION = Projection(
    name="human_review",
    version=8,
    tables=(
        ProjectionTable(
            "hr_prompts",
            (
                ("prompt_digest", "text"),
                ("record_id", "text"),
                ("campaign_id", "text"),
                ("campaign_version", "int"),
                ("campaign_label", "text"),
                ("scenario_family", "text"),
                ("privacy", "text"),
                _SEQ,
            ),
            key=("prompt_digest",),
            indexes=(("campaign_id", "campaign_version"), ("record_id",)),
            on_conflict="error",
        ),
        ProjectionTable(
            "hr_campaigns",
            (("campaign_id", "text"), ("version", "int"), ("training_enabled", "int"), ("record_id", "text"), _SEQ),
            key=("campaign_id", "version"),
        ),
        ProjectionTable(
            "hr_runs",
            (
                ("record_id", "text"),
                ("run_id", "text"),
                ("campaign_id", "text"),
                ("campaign_version", "int"),
                ("trigger_event_id", "text"),
                ("agent_id", "text"),
                ("status", "text"),
                _SEQ,
            ),
            key=("record_id",),
            indexes=(("run_id",), ("trigger_event_id",), ("campaign_id", "campaign_version")),
        ),
        ProjectionTable(
            "hr_run_parts",
            (("record_id", "text"), ("run_id", "text"), ("kind", "text"), ("text_digest", "text"), _SEQ),
            key=("record_id",),
            indexes=(("run_id",), ("text_digest",)),
        ),
        ProjectionTable(
            "hr_items",
            (
                ("item_id", "text"),
                ("record_id", "text"),
                ("campaign_id", "text"),
                ("campaign_version", "int"),
                ("prompt_event_id", "text"),
                _SEQ,
            ),
            key=("item_id",),
            indexes=(("campaign_id", "campaign_version", "seq"), ("prompt_event_id",), ("seq",)),
            on_conflict="error",
        ),
        ProjectionTable(
            "hr_item_runs",
            (("item_id", "text"), ("run_id", "text"), _SEQ),
            key=("item_id", "run_id"),
            indexes=(("run_id",),),
        ),
        ProjectionTable(
            "hr_decisions",
            (
                ("record_id", "text"),
                ("item_id", "text"),
                ("disposition", "text"),
                ("supersedes", "text"),
                ("actor", "text"),
                _SEQ,
            ),
            key=("record_id",),
            indexes=(("item_id",), ("actor",)),
        ),
        ProjectionTable(
            "hr_submissions",
            (("submission_id", "text"), ("record_id", "text"), _SEQ),
            key=("submission_id",),
            on_conflict="error",
        ),
        ProjectionTable(
            "hr_decision_links",
            (("item_id", "text"), ("follows", "text"), ("record_id", "text"), _SEQ),
            key=("item_id", "follows"),
            on_conflict="first",
        ),
        ProjectionTable(
            "hr_decided",
            (
                ("item_id", "text"),
                ("record_id", "text"),
                _SEQ,
                ("disposition", "text"),
                ("actor", "text"),
                ("skip_key", "text"),
            ),
            key=("item_id",),
            indexes=(("skip_key",),),
        ),
        ProjectionTable(
            "hr_open",
            (
                ("item_id", "text"),
                ("campaign_id", "text"),
                ("campaign_version", "int"),
                ("item_seq", "int"),
                ("queue_key", "text"),
            ),
            key=("item_id",),
            indexes=(("campaign_id", "campaign_version", "queue_key"), ("queue_key",)),
        ),
        ProjectionTable(
            "hr_training_receipts",
            (("record_id", "text"), ("campaign_id", "text"), ("campaign_version", "int"), _SEQ),
            key=("record_id",),
            indexes=(("campaign_id", "campaign_version"),),
        ),
    ),
    rows=_rows,
    # A reclassification or a second judgment changes no query-table row.
    types=frozenset(_GIVES),
)

PROJECTIONS: tuple[Projection, ...] = (HUMAN_REVIEW_PROJECTION,)
