"""What each domain package adds to the application's record catalog, declared without importing
the package: its record types and its projections (name, version, tables, and the record types
each one makes rows of). :mod:`reviewtrail.app` gives these to the catalog as deferred parts, so a
command loads a package only when it validates a record of one of its types or reads one of its
query tables.

Ledgers compare projection names and versions on open and create their tables from this table, so
it must equal what the packages declare: ``tests/test_record_index.py`` checks that it does (and
that no projection makes rows of a type it does not list), and the catalog refuses to load a
package that differs from it.
"""

from __future__ import annotations

from reviewtrail.ledger import DeclaredProjection, ProjectionTable

__all__ = ["RECORD_INDEX"]

# (package under reviewtrail, its record types, its projections), in the order the application's
# catalog keeps their query tables.
RECORD_INDEX: tuple[tuple[str, frozenset[str], tuple[DeclaredProjection, ...]], ...] = (
    (
        "evidence",
        frozenset(
            [
                "evidence.alias-map@1",
                "evidence.claim@1",
                "evidence.item@1",
                "evidence.link@1",
                "evidence.pdf-extraction@1",
            ]
        ),
        (
            DeclaredProjection(
                "evidence",
                3,
                (
                    ProjectionTable(
                        "ev_claims",
                        (
                            ("claim_id", "text"),
                            ("record_id", "text"),
                            ("review_run_id", "text"),
                            ("turn_id", "text"),
                            ("seq", "int"),
                        ),
                        key=("claim_id",),
                        indexes=(("review_run_id",), ("turn_id",)),
                    ),
                    ProjectionTable(
                        "ev_items",
                        (
                            ("evidence_id", "text"),
                            ("record_id", "text"),
                            ("kind", "text"),
                            ("key", "text"),
                            ("paper_id", "text"),
                        ),
                        key=("evidence_id",),
                        indexes=(("kind", "key"), ("paper_id",)),
                    ),
                    ProjectionTable(
                        "ev_links",
                        (
                            ("claim_id", "text"),
                            ("evidence_id", "text"),
                            ("relation", "text"),
                            ("record_id", "text"),
                            ("seq", "int"),
                        ),
                        key=("claim_id", "evidence_id", "relation"),
                        indexes=(("evidence_id",),),
                    ),
                    ProjectionTable(
                        "ev_pdf_extractions", (("paper_id", "text"), ("record_id", "text")), key=("paper_id",)
                    ),
                    ProjectionTable(
                        "ev_alias_maps",
                        (
                            ("record_id", "text"),
                            ("turn_id", "text"),
                            ("source_digest", "text"),
                            ("artifact_id", "text"),
                            ("artifact_version", "int"),
                            ("seq", "int"),
                        ),
                        key=("record_id",),
                        indexes=(("turn_id",), ("source_digest",), ("artifact_id", "artifact_version")),
                    ),
                ),
                consumes=frozenset(
                    [
                        "evidence.alias-map@1",
                        "evidence.claim@1",
                        "evidence.item@1",
                        "evidence.link@1",
                        "evidence.pdf-extraction@1",
                    ]
                ),
            ),
        ),
    ),
    (
        "provenance",
        frozenset(
            [
                "provenance.artifact-derivation@1",
                "provenance.artifact-version@1",
                "provenance.execution-run@1",
                "provenance.session-deleted@1",
                "provenance.session@1",
            ]
        ),
        (
            DeclaredProjection(
                "provenance",
                1,
                (
                    ProjectionTable(
                        "prov_sessions",
                        (
                            ("session_id", "text"),
                            ("project_id", "text"),
                            ("record_id", "text"),
                            ("deleted_record_id", "text"),
                        ),
                        key=("session_id",),
                    ),
                    ProjectionTable(
                        "prov_session_deletions", (("session_id", "text"), ("record_id", "text")), key=("session_id",)
                    ),
                    ProjectionTable(
                        "prov_runs",
                        (
                            ("record_id", "text"),
                            ("run_id", "text"),
                            ("session_id", "text"),
                            ("seq", "int"),
                            ("status", "text"),
                        ),
                        key=("record_id",),
                        indexes=(("run_id",), ("session_id",)),
                    ),
                    ProjectionTable(
                        "prov_derivations",
                        (
                            ("record_id", "text"),
                            ("session_id", "text"),
                            ("path", "text"),
                            ("digest", "text"),
                            ("seq", "int"),
                        ),
                        key=("record_id",),
                        indexes=(("session_id", "path"), ("digest",)),
                    ),
                    ProjectionTable(
                        "prov_artifact_versions",
                        (
                            ("artifact_id", "text"),
                            ("version", "int"),
                            ("project_id", "text"),
                            ("name", "text"),
                            ("record_id", "text"),
                            ("seq", "int"),
                        ),
                        key=("artifact_id", "version"),
                        indexes=(("project_id", "name"),),
                        on_conflict="error",
                    ),
                ),
                consumes=frozenset(
                    [
                        "provenance.artifact-derivation@1",
                        "provenance.artifact-version@1",
                        "provenance.execution-run@1",
                        "provenance.session-deleted@1",
                        "provenance.session@1",
                    ]
                ),
            ),
        ),
    ),
    (
        "models",
        frozenset(["provenance.model-usage@1", "provenance.prompt-manifest@1"]),
        (),
    ),
    (
        "reviewer",
        frozenset(["reviewer.artifact-review-run@1"]),
        (
            DeclaredProjection(
                "reviewer",
                1,
                (
                    ProjectionTable(
                        "rv_runs",
                        (
                            ("review_run_id", "text"),
                            ("artifact_id", "text"),
                            ("name", "text"),
                            ("version", "int"),
                            ("record_id", "text"),
                            ("seq", "int"),
                        ),
                        key=("review_run_id",),
                        indexes=(("artifact_id",), ("name",)),
                    ),
                ),
                consumes=frozenset(["reviewer.artifact-review-run@1"]),
            ),
        ),
    ),
    (
        "tracing",
        frozenset(["trace.review-call@1", "trace.save-begun@1"]),
        (),
    ),
    (
        "human_review",
        frozenset(
            [
                "human-review.campaign@1",
                "human-review.candidate-run@1",
                "human-review.context-receipt@1",
                "human-review.privacy-reclassification@1",
                "human-review.second-judgment@1",
                "human-review.training-receipt@1",
                "stream.thought.output.review-response@1",
                "stream.thought.review.decision@1",
                "stream.thought.review.item.created@1",
                "stream.thought.source.review.prompt@1",
            ]
        ),
        (
            DeclaredProjection(
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
                            ("seq", "int"),
                        ),
                        key=("prompt_digest",),
                        indexes=(("campaign_id", "campaign_version"), ("record_id",)),
                        on_conflict="error",
                    ),
                    ProjectionTable(
                        "hr_campaigns",
                        (
                            ("campaign_id", "text"),
                            ("version", "int"),
                            ("training_enabled", "int"),
                            ("record_id", "text"),
                            ("seq", "int"),
                        ),
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
                            ("seq", "int"),
                        ),
                        key=("record_id",),
                        indexes=(("run_id",), ("trigger_event_id",), ("campaign_id", "campaign_version")),
                    ),
                    ProjectionTable(
                        "hr_run_parts",
                        (
                            ("record_id", "text"),
                            ("run_id", "text"),
                            ("kind", "text"),
                            ("text_digest", "text"),
                            ("seq", "int"),
                        ),
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
                            ("seq", "int"),
                        ),
                        key=("item_id",),
                        indexes=(("campaign_id", "campaign_version", "seq"), ("prompt_event_id",), ("seq",)),
                        on_conflict="error",
                    ),
                    ProjectionTable(
                        "hr_item_runs",
                        (("item_id", "text"), ("run_id", "text"), ("seq", "int")),
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
                            ("seq", "int"),
                        ),
                        key=("record_id",),
                        indexes=(("item_id",), ("actor",)),
                    ),
                    ProjectionTable(
                        "hr_submissions",
                        (("submission_id", "text"), ("record_id", "text"), ("seq", "int")),
                        key=("submission_id",),
                        on_conflict="error",
                    ),
                    ProjectionTable(
                        "hr_decision_links",
                        (("item_id", "text"), ("follows", "text"), ("record_id", "text"), ("seq", "int")),
                        key=("item_id", "follows"),
                        on_conflict="first",
                    ),
                    ProjectionTable(
                        "hr_decided",
                        (
                            ("item_id", "text"),
                            ("record_id", "text"),
                            ("seq", "int"),
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
                        (("record_id", "text"), ("campaign_id", "text"), ("campaign_version", "int"), ("seq", "int")),
                        key=("record_id",),
                        indexes=(("campaign_id", "campaign_version"),),
                    ),
                ),
                consumes=frozenset(
                    [
                        "human-review.campaign@1",
                        "human-review.candidate-run@1",
                        "human-review.context-receipt@1",
                        "human-review.training-receipt@1",
                        "stream.thought.output.review-response@1",
                        "stream.thought.review.decision@1",
                        "stream.thought.review.item.created@1",
                        "stream.thought.source.review.prompt@1",
                    ]
                ),
            ),
        ),
    ),
)
