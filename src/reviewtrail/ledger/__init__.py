"""The append-only, hash-chained ledger.

Public API::

    from reviewtrail.ledger import NewRecord, RecordCatalog, open_ledger
    ledger = open_ledger("sqlite:///path/ledger.sqlite", catalog=RecordCatalog([Note], [NOTES]))
    [env] = ledger.append([NewRecord(type="note@1", actor="me", privacy="private", payload={...})])

The catalog names the typed payloads the ledger validates and the query tables it keeps; the
application's catalog is assembled in :mod:`reviewtrail.app`.
"""

import importlib
import typing

from reviewtrail.ledger._catalog import EMPTY_CATALOG, DeclaredProjection, DeferredPart, RecordCatalog
from reviewtrail.ledger._envelope import (
    GENESIS_HASH,
    Envelope,
    Privacy,
    chain_problems,
    compute_hash,
    format_time,
    new_id,
)
from reviewtrail.ledger._head import LedgerHead, ledger_head
from reviewtrail.ledger._open import open_ledger
from reviewtrail.ledger._projections import BUILTIN_PROJECTIONS, ROW_SEQ, Projection, ProjectionTable
from reviewtrail.ledger._protocol import Ledger, projection_rows
from reviewtrail.ledger._reserved import is_reserved_type

if typing.TYPE_CHECKING:
    from reviewtrail.ledger._checkpoint import (
        CHECKPOINT_TYPE,
        check_checkpoint,
        load_checkpoint,
        load_private_key,
        load_public_key,
        make_checkpoint,
        public_key_id,
        save_checkpoint,
    )
    from reviewtrail.ledger._memory import MemoryLedger
    from reviewtrail.ledger._new_record import NewRecord
    from reviewtrail.ledger._recorded import Recorded
    from reviewtrail.ledger._types import RecordPayload, new_record, record_type
    from reviewtrail.ledger._verify_reads import VerifyReads, key_order, verify_reads

# Loaded on first use: reading needs none of these. The record to append and the payload models
# are pydantic models, so reading, tailing and checking records never load pydantic.
_LAZY = {
    "NewRecord": "_new_record",
    "RecordPayload": "_types",
    "new_record": "_types",
    "record_type": "_types",
    "CHECKPOINT_TYPE": "_checkpoint",
    "check_checkpoint": "_checkpoint",
    "load_checkpoint": "_checkpoint",
    "load_private_key": "_checkpoint",
    "load_public_key": "_checkpoint",
    "public_key_id": "_checkpoint",
    "make_checkpoint": "_checkpoint",
    "save_checkpoint": "_checkpoint",
    "MemoryLedger": "_memory",
    "Recorded": "_recorded",
    "VerifyReads": "_verify_reads",
    "key_order": "_verify_reads",
    "verify_reads": "_verify_reads",
}


def __getattr__(name: str) -> typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "BUILTIN_PROJECTIONS",
    "CHECKPOINT_TYPE",
    "EMPTY_CATALOG",
    "GENESIS_HASH",
    "ROW_SEQ",
    "DeclaredProjection",
    "DeferredPart",
    "Envelope",
    "Ledger",
    "LedgerHead",
    "MemoryLedger",
    "NewRecord",
    "Privacy",
    "Projection",
    "ProjectionTable",
    "RecordCatalog",
    "RecordPayload",
    "Recorded",
    "VerifyReads",
    "chain_problems",
    "check_checkpoint",
    "compute_hash",
    "format_time",
    "is_reserved_type",
    "key_order",
    "ledger_head",
    "load_checkpoint",
    "load_private_key",
    "load_public_key",
    "make_checkpoint",
    "new_id",
    "new_record",
    "open_ledger",
    "projection_rows",
    "public_key_id",
    "record_type",
    "save_checkpoint",
    "verify_reads",
]
