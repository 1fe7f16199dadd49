"""The provenance package's record types and query table, declared without its payload models:
:mod:`reviewtrail.app` reads them when it builds the catalog, and the models load when a record of
these types is validated or made (docs/architecture.md, "Provenance")."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reviewtrail.ledger import Envelope, Projection, ProjectionTable

__all__ = [
    "ARTIFACT_VERSION",
    "DERIVATION",
    "EXECUTION_RUN",
    "PROJECTIONS",
    "PROVENANCE_PROJECTION",
    "RECORD_TYPE_NAMES",
    "SESSION",
    "SESSION_DELETED",
]

SESSION = "provenance.session@1"
SESSION_DELETED = "provenance.session-deleted@1"
EXECUTION_RUN = "provenance.execution-run@1"
DERIVATION = "provenance.artifact-derivation@1"
ARTIFACT_VERSION = "provenance.artifact-version@1"
RECORD_TYPE_NAMES = frozenset([SESSION, SESSION_DELETED, EXECUTION_RUN, DERIVATION, ARTIFACT_VERSION])


def _rows(env: Envelope) -> Iterable[tuple[str, dict[str, Any]]]:
    if not env.type.startswith("provenance."):
        return
    p = env.payload_value
    if env.type == SESSION:
        yield (
            "prov_sessions",
            {
                "session_id": p["sessionId"],
                "project_id": p["projectId"],
                "record_id": env.id,
                "deleted_record_id": None,
            },
        )
    elif env.type == SESSION_DELETED:
        yield "prov_session_deletions", {"session_id": p["sessionId"], "record_id": env.id}
    elif env.type == EXECUTION_RUN:
        yield (
            "prov_runs",
            {
                "record_id": env.id,
                "run_id": p["runId"],
                "session_id": p["sessionId"],
                "seq": env.seq,
                "status": p["status"],
            },
        )
    elif env.type == DERIVATION:
        yield (
            "prov_derivations",
            {
                "record_id": env.id,
                "session_id": p["sessionId"],
                "path": p["path"],
                "digest": p["content"]["digest"],
                "seq": env.seq,
            },
        )
    elif env.type == ARTIFACT_VERSION:
        yield (
            "prov_artifact_versions",
            {
                "artifact_id": p["artifactId"],
                "version": p["version"],
                "project_id": p["projectId"],
                "name": p["name"],
                "record_id": env.id,
                "seq": env.seq,
            },
        )


PROVENANCE_PROJECTION = Projection(
    name="provenance",
    version=1,
    tables=(
        ProjectionTable(
            "prov_sessions",
            (("session_id", "text"), ("project_id", "text"), ("record_id", "text"), ("deleted_record_id", "text")),
            key=("session_id",),
        ),
        ProjectionTable("prov_session_deletions", (("session_id", "text"), ("record_id", "text")), key=("session_id",)),
        ProjectionTable(
            "prov_runs",
            (("record_id", "text"), ("run_id", "text"), ("session_id", "text"), ("seq", "int"), ("status", "text")),
            key=("record_id",),
            indexes=(("run_id",), ("session_id",)),
        ),
        ProjectionTable(
            "prov_derivations",
            (("record_id", "text"), ("session_id", "text"), ("path", "text"), ("digest", "text"), ("seq", "int")),
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
    rows=_rows,
    types=RECORD_TYPE_NAMES,
)

PROJECTIONS: tuple[Projection, ...] = (PROVENANCE_PROJECTION,)
