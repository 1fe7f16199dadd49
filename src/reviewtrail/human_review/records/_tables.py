"""Human review's query tables, declared (docs/human-review.md, "Query tables"): their names,
columns, keys and indexes, and the record types whose records make rows of them. The application's
catalog reads this declaration when a store opens, without the functions that make the rows
(:mod:`._projection`), which load when a record of these types is appended or read."""

from __future__ import annotations

from typing import Literal

from reviewtrail.human_review.records._record_names import (
    CAMPAIGN,
    DECISION,
    ITEM,
    PROMPT,
    RECEIPT,
    RESPONSE,
    RUN,
    TRAINING_RECEIPT,
)
from reviewtrail.ledger import DeclaredProjection, ProjectionTable

__all__ = ["DECLARED"]

_SEQ: tuple[str, Literal["int"]] = ("seq", "int")

#: Query tables:
#:
#: - ``hr_prompts``: one row per imported prompt, keyed by its :func:`._record_names.prompt_digest` (a second
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
#:   and reviewer, and a ``skip_key`` (:func:`._projection.queue_key`) when it is a skip: an item whose latest
#:   decision is a skip is still open to every reviewer who did not skip it, and the queue serves
#:   those after the never-judged items, in ``skip_key`` order; ``hr_open``: the items with no
#:   decision (never judged), ordered by :func:`._projection.queue_key` (an item's row is replaced by its first
#:   decision's row, which has no campaign and no order), so the queue's first page never passes
#:   over decided items and never follows the order recorded. ``hr_decisions`` names each
#:   decision's reviewer (``actor``), so a reviewer's own counts are read by index.
#: - ``hr_training_receipts``: checkpoint training receipts per campaign version.
DECLARED = DeclaredProjection(
    "human_review",
    8,
    (
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
    # The record types that make rows (a reclassification or a second judgment makes none): the
    # projection's own, checked against its row functions when the package loads.
    frozenset([PROMPT, CAMPAIGN, RUN, RECEIPT, RESPONSE, ITEM, DECISION, TRAINING_RECEIPT]),
)
