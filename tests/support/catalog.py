"""What the application's catalog reads of each domain package when a store opens: the package's
lazy face and its ``catalog`` module, which names its record types and declares its query tables (no
payload model). tests/test_command_imports.py and tests/test_record_index.py pin it."""

from __future__ import annotations

DECLARATIONS = {
    "reviewtrail.evidence",
    "reviewtrail.evidence.catalog",
    "reviewtrail.human_review",
    "reviewtrail.human_review.catalog",
    "reviewtrail.human_review.records",
    "reviewtrail.human_review.records._tables",
    "reviewtrail.human_review.records._record_names",
    "reviewtrail.models",
    "reviewtrail.models.catalog",
    "reviewtrail.provenance",
    "reviewtrail.provenance.catalog",
    "reviewtrail.reviewer",
    "reviewtrail.reviewer.catalog",
    "reviewtrail.tracing",
    "reviewtrail.tracing.catalog",
}
