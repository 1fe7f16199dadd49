"""The append-only, hash-chained ledger.

Public API::

    from reviewtrail.ledger import NewRecord, open_ledger
    ledger = open_ledger("sqlite:///path/ledger.sqlite")
    [env] = ledger.append([NewRecord(type="note@1", actor="me", privacy="private", payload={...})])
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from reviewtrail.errors import ConfigError
from reviewtrail.ledger._envelope import (
    GENESIS_HASH,
    PRIVACY_LEVELS,
    Envelope,
    NewRecord,
    Privacy,
    chain_problems,
    compute_hash,
    header_of,
    record_problems,
)
from reviewtrail.ledger._memory import MemoryLedger
from reviewtrail.ledger._projections import (
    Projection,
    ProjectionTable,
    register_projection,
    registered_projections,
)
from reviewtrail.ledger._protocol import Ledger
from reviewtrail.ledger._sql import MIGRATIONS, SCHEMA_VERSION
from reviewtrail.ledger._types import (
    RecordPayload,
    new_record,
    payload_model,
    payload_schemas,
    record_type,
    validate_payload,
)

__all__ = [
    "GENESIS_HASH",
    "MIGRATIONS",
    "PRIVACY_LEVELS",
    "SCHEMA_VERSION",
    "Envelope",
    "Ledger",
    "MemoryLedger",
    "NewRecord",
    "Privacy",
    "Projection",
    "ProjectionTable",
    "RecordPayload",
    "chain_problems",
    "compute_hash",
    "header_of",
    "new_record",
    "open_ledger",
    "payload_model",
    "payload_schemas",
    "record_problems",
    "record_type",
    "register_projection",
    "registered_projections",
    "validate_payload",
]


def open_ledger(url: str, projections: Iterable[Projection] | None = None) -> Ledger:
    """Open a ledger by URL: ``sqlite:///abs/path``, ``postgresql://...`` or ``memory:``."""
    if url == "memory:":
        return MemoryLedger(projections)
    if url.startswith("sqlite:///"):
        from reviewtrail.ledger._sqlite import SqliteLedger

        # SQLAlchemy's convention: sqlite:///relative.db, sqlite:////absolute/path.db
        path = Path(url[len("sqlite:///") :])
        if not path.parent.is_dir():
            raise ConfigError(f"folder {path.parent} does not exist", field="database_url")
        return SqliteLedger(path, projections)
    if url.startswith(("postgresql://", "postgres://")):
        from reviewtrail.ledger._postgres import PostgresLedger

        return PostgresLedger(url, projections)
    from reviewtrail._redact import redact_url

    raise ConfigError(
        f"{redact_url(url)!r} is not a supported database URL (sqlite:///PATH, postgresql://..., memory:)",
        field="database_url",
    )
