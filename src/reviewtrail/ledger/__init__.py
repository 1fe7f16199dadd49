"""The append-only, hash-chained ledger.

Public API::

    from reviewtrail.ledger import NewRecord, RecordCatalog, open_ledger
    ledger = open_ledger("sqlite:///path/ledger.sqlite", catalog=RecordCatalog([Note], [NOTES]))
    [env] = ledger.append([NewRecord(type="note@1", actor="me", privacy="private", payload={...})])

The catalog names the typed payloads the ledger validates and the query tables it keeps; the
application's catalog is assembled in :mod:`reviewtrail.app`.
"""

from __future__ import annotations

from collections.abc import Iterable

from reviewtrail.config import sqlite_path
from reviewtrail.errors import ConfigError, LedgerMissingError
from reviewtrail.ledger._catalog import EMPTY_CATALOG, RecordCatalog
from reviewtrail.ledger._checkpoint import (
    CHECKPOINT_TYPE,
    check_checkpoint,
    load_checkpoint,
    make_checkpoint,
    parse_checkpoint,
    public_key_id,
    save_checkpoint,
)
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
from reviewtrail.ledger._projections import BUILTIN_PROJECTIONS, ROW_SEQ, Projection, ProjectionTable
from reviewtrail.ledger._protocol import Ledger, projection_rows, row_problem
from reviewtrail.ledger._reserved import RESERVED_TYPE_NAMESPACES, is_reserved_type
from reviewtrail.ledger._sql import MIGRATIONS, SCHEMA_VERSION
from reviewtrail.ledger._types import RecordPayload, new_record, record_type

__all__ = [
    "BUILTIN_PROJECTIONS",
    "CHECKPOINT_TYPE",
    "EMPTY_CATALOG",
    "GENESIS_HASH",
    "MIGRATIONS",
    "PRIVACY_LEVELS",
    "RESERVED_TYPE_NAMESPACES",
    "ROW_SEQ",
    "SCHEMA_VERSION",
    "Envelope",
    "Ledger",
    "MemoryLedger",
    "NewRecord",
    "Privacy",
    "Projection",
    "ProjectionTable",
    "RecordCatalog",
    "RecordPayload",
    "chain_problems",
    "check_checkpoint",
    "compute_hash",
    "header_of",
    "is_reserved_type",
    "load_checkpoint",
    "make_checkpoint",
    "new_record",
    "open_ledger",
    "parse_checkpoint",
    "projection_rows",
    "public_key_id",
    "record_problems",
    "record_type",
    "row_problem",
    "save_checkpoint",
]


def open_ledger(
    url: str,
    projections: Iterable[Projection] | None = None,
    *,
    catalog: RecordCatalog | None = None,
    create: bool = True,
    read_only: bool = False,
) -> Ledger:
    """Open a ledger by URL: ``sqlite:///abs/path``, ``postgresql://...`` or ``memory:``.

    ``catalog``: the record types it validates and the projections it keeps (by default none
    and the built-in ones); ``projections`` replaces the catalog's projections.

    With ``create=False`` a missing ledger (no file, no tables) is :class:`LedgerMissingError`
    instead of a new empty one; ``read_only=True`` opens it for reads only.
    """
    if catalog is not None:
        projections = catalog if projections is None else catalog.with_projections(projections)
    if url == "memory:":
        return MemoryLedger(projections)
    path = sqlite_path(url)
    if path is not None:
        from reviewtrail.ledger._sqlite import SqliteLedger

        if not path.parent.is_dir():
            if not create:
                raise LedgerMissingError(f"the ledger's folder {path.parent} is missing", field="ledger")
            raise ConfigError(f"folder {path.parent} does not exist", field="database_url")
        return SqliteLedger(path, projections, create=create, read_only=read_only)
    if url.startswith(("postgresql://", "postgres://")):
        from reviewtrail.ledger._postgres import PostgresLedger

        return PostgresLedger(url, projections, create=create, read_only=read_only)
    from reviewtrail._redact import redact_url

    raise ConfigError(
        f"{redact_url(url)!r} is not a supported database URL (sqlite:///PATH, postgresql://..., memory:)",
        field="database_url",
    )
