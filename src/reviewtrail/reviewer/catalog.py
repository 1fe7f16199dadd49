"""The reviewer package's record type and query table, declared without its payload model:
:mod:`reviewtrail.app` reads them when it builds the catalog, and the model loads when a record of
this type is validated or made."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reviewtrail.ledger import Envelope, Projection, ProjectionTable

__all__ = ["PROJECTIONS", "RECORD_TYPE_NAMES", "REVIEW_PROJECTION", "REVIEW_RUN"]

REVIEW_RUN = "reviewer.artifact-review-run@1"
RECORD_TYPE_NAMES = frozenset([REVIEW_RUN])


def _rows(env: Envelope) -> Iterable[tuple[str, dict[str, Any]]]:
    if env.type == REVIEW_RUN:
        p = env.payload_value
        yield (
            "rv_runs",
            {
                "review_run_id": p["reviewRunId"],
                "artifact_id": p["artifactId"],
                "name": p["name"],
                "version": p["version"],
                "record_id": env.id,
                "seq": env.seq,
            },
        )


REVIEW_PROJECTION = Projection(
    name="reviewer",
    version=1,
    tables=(
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
    rows=_rows,
    types=RECORD_TYPE_NAMES,
)

PROJECTIONS: tuple[Projection, ...] = (REVIEW_PROJECTION,)
