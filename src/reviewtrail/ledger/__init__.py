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

from reviewtrail.ledger.backends._open import open_ledger
from reviewtrail.ledger.contract._catalog import EMPTY_CATALOG, DeclaredProjection, DeferredPart, RecordCatalog
from reviewtrail.ledger.contract._head import LedgerHead, ledger_head
from reviewtrail.ledger.contract._projections import BUILTIN_PROJECTIONS, ROW_SEQ, Projection, ProjectionTable
from reviewtrail.ledger.contract._protocol import Ledger
from reviewtrail.ledger.contract._recorder import Recorder, projection_rows, record_text, row_makers
from reviewtrail.ledger.keys._writer_keys import (
    KEY_DECLARED,
    KEY_RECORD_TYPES,
    KEY_REVOKED,
    SIGNATURES_REQUIRED,
    DeclaredKey,
    KeyBook,
    is_key_id,
)
from reviewtrail.ledger.records._envelope import (
    GENESIS_HASH,
    Envelope,
    Privacy,
    chain_problems,
    compute_hash,
    format_time,
    may_hold_refs,
    new_id,
)
from reviewtrail.ledger.records._reserved import is_reserved_type

if typing.TYPE_CHECKING:
    from reviewtrail.ledger.backends._memory import MemoryLedger
    from reviewtrail.ledger.contract._verify_reads import VerifyReads, key_order, verify_reads
    from reviewtrail.ledger.keys._ed25519 import load_private_key, load_public_key, public_key_id
    from reviewtrail.ledger.keys._record_signature import (
        RECORD_SIGNATURE_DOMAIN,
        RecordSignature,
        RecordSigner,
        signature_verifies,
        signed_message,
    )
    from reviewtrail.ledger.keys._signing_keys import FileSigner, TrustedKeys, load_trusted_keys, new_signing_key
    from reviewtrail.ledger.records._model import PayloadModel, new_record, record_type
    from reviewtrail.ledger.records._new_record import NewRecord
    from reviewtrail.ledger.records._recorded import Recorded
    from reviewtrail.ledger.records._types import RecordPayload
    from reviewtrail.ledger.signing._check import SignatureReport, key_book, signature_problems
    from reviewtrail.ledger.signing._checkpoint import (
        CHECKPOINT_TYPE,
        check_checkpoint,
        load_checkpoint,
        make_checkpoint,
        save_checkpoint,
    )
    from reviewtrail.ledger.signing._gate import SignatureGate, signed_reads
    from reviewtrail.ledger.signing._key_payloads import KEY_PAYLOADS
    from reviewtrail.ledger.signing._key_records import (
        WriterKeys,
        declare_key,
        require_signatures,
        revoke_key,
        rotate_key,
        writer_keys,
    )

# Loaded on first use: reading needs none of these. The record to append and the payload models
# are msgspec or pydantic models, so reading, tailing and checking records load neither.
_LAZY = {
    "NewRecord": "records._new_record",
    "RecordPayload": "records._types",
    "PayloadModel": "records._model",
    "new_record": "records._model",
    "record_type": "records._model",
    "CHECKPOINT_TYPE": "signing._checkpoint",
    "check_checkpoint": "signing._checkpoint",
    "load_checkpoint": "signing._checkpoint",
    "load_private_key": "keys._ed25519",
    "load_public_key": "keys._ed25519",
    "public_key_id": "keys._ed25519",
    "make_checkpoint": "signing._checkpoint",
    "save_checkpoint": "signing._checkpoint",
    "MemoryLedger": "backends._memory",
    "KEY_PAYLOADS": "signing._key_payloads",
    "WriterKeys": "signing._key_records",
    "declare_key": "signing._key_records",
    "require_signatures": "signing._key_records",
    "revoke_key": "signing._key_records",
    "rotate_key": "signing._key_records",
    "writer_keys": "signing._key_records",
    "RECORD_SIGNATURE_DOMAIN": "keys._record_signature",
    "RecordSignature": "keys._record_signature",
    "RecordSigner": "keys._record_signature",
    "signature_verifies": "keys._record_signature",
    "signed_message": "keys._record_signature",
    "SignatureReport": "signing._check",
    "key_book": "signing._check",
    "signature_problems": "signing._check",
    "SignatureGate": "signing._gate",
    "signed_reads": "signing._gate",
    "FileSigner": "keys._signing_keys",
    "TrustedKeys": "keys._signing_keys",
    "load_trusted_keys": "keys._signing_keys",
    "new_signing_key": "keys._signing_keys",
    "Recorded": "records._recorded",
    "VerifyReads": "contract._verify_reads",
    "key_order": "contract._verify_reads",
    "verify_reads": "contract._verify_reads",
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
    "PayloadModel",
    "Privacy",
    "Projection",
    "ProjectionTable",
    "RecordCatalog",
    "RecordPayload",
    "RecordSignature",
    "RecordSigner",
    "Recorded",
    "Recorder",
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
    "may_hold_refs",
    "new_id",
    "new_record",
    "new_signing_key",
    "open_ledger",
    "projection_rows",
    "public_key_id",
    "record_text",
    "record_type",
    "require_signatures",
    "revoke_key",
    "rotate_key",
    "row_makers",
    "save_checkpoint",
    "signature_problems",
    "signature_verifies",
    "signed_message",
    "signed_reads",
    "verify_reads",
    "writer_keys",
]
