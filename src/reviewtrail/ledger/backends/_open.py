"""Opening a ledger by URL: SQLite, PostgreSQL or memory."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from reviewtrail.config import sqlite_path
from reviewtrail.errors import ConfigError, LedgerMissingError
from reviewtrail.ledger.contract._catalog import RecordCatalog
from reviewtrail.ledger.contract._projections import Projection
from reviewtrail.ledger.contract._protocol import Ledger

if TYPE_CHECKING:
    from reviewtrail.ledger.keys._record_signature import RecordSigner
    from reviewtrail.ledger.keys._signing_keys import FileSigner

__all__ = ["open_ledger"]


def open_ledger(
    url: str,
    projections: Iterable[Projection] | None = None,
    *,
    catalog: RecordCatalog | None = None,
    create: bool = True,
    read_only: bool = False,
    signer: FileSigner | RecordSigner | None = None,
) -> Ledger:
    """Open a ledger by URL: ``sqlite:///abs/path``, ``postgresql://...`` or ``memory:``.

    ``catalog``: the record types it validates and the projections it keeps (by default none
    and the built-in ones); ``projections`` replaces the catalog's projections.

    With ``create=False`` a missing ledger (no file, no tables) is :class:`LedgerMissingError`
    instead of a new empty one; ``read_only=True`` opens it for reads only. ``signer``: signs
    every record this ledger object appends (see ``Ledger.signer``).
    """
    if catalog is not None:
        projections = catalog if projections is None else catalog.with_projections(projections)
    ledger = _open(url, projections, create=create, read_only=read_only)
    ledger.signer = signer
    return ledger


def _open(url: str, projections: Iterable[Projection] | None, *, create: bool, read_only: bool) -> Ledger:
    if url == "memory:":
        from reviewtrail.ledger.backends._memory import MemoryLedger

        return MemoryLedger(projections)
    path = sqlite_path(url)
    if path is not None:
        from reviewtrail.ledger.backends._sqlite import SqliteLedger

        if not path.parent.is_dir():
            if not create:
                raise LedgerMissingError(f"the ledger's folder {path.parent} is missing", field="ledger")
            raise ConfigError(f"folder {path.parent} does not exist", field="database_url")
        return SqliteLedger(path, projections, create=create, read_only=read_only)
    if url.startswith(("postgresql://", "postgres://")):
        from reviewtrail.ledger.backends._postgres import PostgresLedger

        return PostgresLedger(url, projections, create=create, read_only=read_only)
    from reviewtrail._redact import redact_url

    raise ConfigError(
        f"{redact_url(url)!r} is not a supported database URL (sqlite:///PATH, postgresql://..., memory:)",
        field="database_url",
    )
