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
from reviewtrail.ledger._writer_keys import (
    KEY_DECLARED,
    KEY_RECORD_TYPES,
    KEY_REVOKED,
    SIGNATURES_REQUIRED,
    DeclaredKey,
    KeyBook,
    is_key_id,
)

if typing.TYPE_CHECKING:
    from reviewtrail.ledger._checkpoint import (
        CHECKPOINT_TYPE,
        check_checkpoint,
        load_checkpoint,
        make_checkpoint,
        save_checkpoint,
    )
    from reviewtrail.ledger._ed25519 import load_private_key, load_public_key, public_key_id
    from reviewtrail.ledger._key_payloads import KEY_PAYLOADS
    from reviewtrail.ledger._key_records import (
        WriterKeys,
        declare_key,
        require_signatures,
        revoke_key,
        rotate_key,
        writer_keys,
    )
    from reviewtrail.ledger._memory import MemoryLedger
    from reviewtrail.ledger._new_record import NewRecord
    from reviewtrail.ledger._record_signature import (
        RECORD_SIGNATURE_DOMAIN,
        RecordSignature,
        RecordSigner,
        signature_verifies,
        signed_message,
    )
    from reviewtrail.ledger._recorded import Recorded
    from reviewtrail.ledger._signature_check import SignatureReport, key_book, signature_problems
    from reviewtrail.ledger._signature_gate import SignatureGate, signed_reads
    from reviewtrail.ledger._signing_keys import FileSigner, TrustedKeys, load_trusted_keys, new_signing_key
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
    "load_private_key": "_ed25519",
    "load_public_key": "_ed25519",
    "public_key_id": "_ed25519",
    "make_checkpoint": "_checkpoint",
    "save_checkpoint": "_checkpoint",
    "MemoryLedger": "_memory",
    "KEY_PAYLOADS": "_key_payloads",
    "WriterKeys": "_key_records",
    "declare_key": "_key_records",
    "require_signatures": "_key_records",
    "revoke_key": "_key_records",
    "rotate_key": "_key_records",
    "writer_keys": "_key_records",
    "RECORD_SIGNATURE_DOMAIN": "_record_signature",
    "RecordSignature": "_record_signature",
    "RecordSigner": "_record_signature",
    "signature_verifies": "_record_signature",
    "signed_message": "_record_signature",
    "SignatureReport": "_signature_check",
    "key_book": "_signature_check",
    "signature_problems": "_signature_check",
    "SignatureGate": "_signature_gate",
    "signed_reads": "_signature_gate",
    "FileSigner": "_signing_keys",
    "TrustedKeys": "_signing_keys",
    "load_trusted_keys": "_signing_keys",
    "new_signing_key": "_signing_keys",
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
    "KEY_DECLARED",
    "KEY_PAYLOADS",
    "KEY_RECORD_TYPES",
    "KEY_REVOKED",
    "RECORD_SIGNATURE_DOMAIN",
    "ROW_SEQ",
    "SIGNATURES_REQUIRED",
    "DeclaredKey",
    "DeclaredProjection",
    "DeferredPart",
    "Envelope",
    "FileSigner",
    "KeyBook",
    "Ledger",
    "LedgerHead",
    "MemoryLedger",
    "NewRecord",
    "Privacy",
    "Projection",
    "ProjectionTable",
    "RecordCatalog",
    "RecordPayload",
    "RecordSignature",
    "RecordSigner",
    "Recorded",
    "SignatureGate",
    "SignatureReport",
    "TrustedKeys",
    "VerifyReads",
    "WriterKeys",
    "chain_problems",
    "check_checkpoint",
    "compute_hash",
    "declare_key",
    "format_time",
    "is_key_id",
    "is_reserved_type",
    "key_book",
    "key_order",
    "ledger_head",
    "load_checkpoint",
    "load_private_key",
    "load_public_key",
    "load_trusted_keys",
    "make_checkpoint",
    "new_id",
    "new_record",
    "new_signing_key",
    "open_ledger",
    "projection_rows",
    "public_key_id",
    "record_type",
    "require_signatures",
    "revoke_key",
    "rotate_key",
    "save_checkpoint",
    "signature_problems",
    "signature_verifies",
    "signed_message",
    "signed_reads",
    "verify_reads",
    "writer_keys",
]
