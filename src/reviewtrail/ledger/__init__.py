"""The append-only, hash-chained ledger.

Public API::

    from reviewtrail.ledger import NewRecord, RecordCatalog, open_ledger
    ledger = open_ledger("sqlite:///path/ledger.sqlite", catalog=RecordCatalog([Note], [NOTES]))
    [env] = ledger.append([NewRecord(type="note@1", actor="me", privacy="private", payload={...})])

The catalog names the typed payloads the ledger validates and the query tables it keeps; the
application's catalog is assembled in :mod:`reviewtrail.app`.
"""

import typing

from reviewtrail import _face
from reviewtrail.ledger.backends._open import open_ledger as open_ledger
from reviewtrail.ledger.contract._catalog import EMPTY_CATALOG as EMPTY_CATALOG
from reviewtrail.ledger.contract._catalog import DeclaredProjection as DeclaredProjection
from reviewtrail.ledger.contract._catalog import DeferredPart as DeferredPart
from reviewtrail.ledger.contract._catalog import RecordCatalog as RecordCatalog
from reviewtrail.ledger.contract._head import LedgerHead as LedgerHead
from reviewtrail.ledger.contract._head import ledger_head as ledger_head
from reviewtrail.ledger.contract._projections import BUILTIN_PROJECTIONS as BUILTIN_PROJECTIONS
from reviewtrail.ledger.contract._projections import ROW_SEQ as ROW_SEQ
from reviewtrail.ledger.contract._projections import Projection as Projection
from reviewtrail.ledger.contract._projections import ProjectionTable as ProjectionTable
from reviewtrail.ledger.contract._protocol import Ledger as Ledger
from reviewtrail.ledger.contract._recorder import Recorder as Recorder
from reviewtrail.ledger.contract._recorder import RunDigest as RunDigest
from reviewtrail.ledger.contract._recorder import projection_rows as projection_rows
from reviewtrail.ledger.contract._recorder import record_text as record_text
from reviewtrail.ledger.contract._recorder import row_makers as row_makers
from reviewtrail.ledger.keys._writer_keys import KEY_DECLARED as KEY_DECLARED
from reviewtrail.ledger.keys._writer_keys import KEY_RECORD_TYPES as KEY_RECORD_TYPES
from reviewtrail.ledger.keys._writer_keys import KEY_REVOKED as KEY_REVOKED
from reviewtrail.ledger.keys._writer_keys import SIGNATURES_REQUIRED as SIGNATURES_REQUIRED
from reviewtrail.ledger.keys._writer_keys import DeclaredKey as DeclaredKey
from reviewtrail.ledger.keys._writer_keys import KeyBook as KeyBook
from reviewtrail.ledger.keys._writer_keys import is_key_id as is_key_id
from reviewtrail.ledger.records._envelope import GENESIS_HASH as GENESIS_HASH
from reviewtrail.ledger.records._envelope import Envelope as Envelope
from reviewtrail.ledger.records._envelope import chain_problems as chain_problems
from reviewtrail.ledger.records._envelope import compute_hash as compute_hash
from reviewtrail.ledger.records._envelope import format_time as format_time
from reviewtrail.ledger.records._envelope import may_hold_refs as may_hold_refs
from reviewtrail.ledger.records._fields import Privacy as Privacy
from reviewtrail.ledger.records._fields import new_id as new_id
from reviewtrail.ledger.records._reserved import is_reserved_type as is_reserved_type

# Loaded on first use: reading needs none of these. The record to append and the payload models
# are msgspec or pydantic models, so reading, tailing and checking records load neither.
if typing.TYPE_CHECKING:
    from reviewtrail.ledger.backends._memory import MemoryLedger as MemoryLedger
    from reviewtrail.ledger.contract._signature_gate import SignatureGate as SignatureGate
    from reviewtrail.ledger.contract._verify_reads import VerifyReads as VerifyReads
    from reviewtrail.ledger.contract._verify_reads import key_order as key_order
    from reviewtrail.ledger.contract._verify_reads import verify_reads as verify_reads
    from reviewtrail.ledger.keys._ed25519 import load_private_key as load_private_key
    from reviewtrail.ledger.keys._ed25519 import load_public_key as load_public_key
    from reviewtrail.ledger.keys._ed25519 import public_key_id as public_key_id
    from reviewtrail.ledger.keys._record_signature import RECORD_SIGNATURE_DOMAIN as RECORD_SIGNATURE_DOMAIN
    from reviewtrail.ledger.keys._record_signature import RecordSignature as RecordSignature
    from reviewtrail.ledger.keys._record_signature import RecordSigner as RecordSigner
    from reviewtrail.ledger.keys._record_signature import signature_verifies as signature_verifies
    from reviewtrail.ledger.keys._record_signature import signed_message as signed_message
    from reviewtrail.ledger.keys._signing_keys import FileSigner as FileSigner
    from reviewtrail.ledger.keys._signing_keys import TrustedKeys as TrustedKeys
    from reviewtrail.ledger.keys._signing_keys import load_trusted_keys as load_trusted_keys
    from reviewtrail.ledger.keys._signing_keys import new_signing_key as new_signing_key
    from reviewtrail.ledger.records._model import PayloadModel as PayloadModel
    from reviewtrail.ledger.records._model import new_record as new_record
    from reviewtrail.ledger.records._model import record_type as record_type
    from reviewtrail.ledger.records._new_record import NewRecord as NewRecord
    from reviewtrail.ledger.records._recorded import Recorded as Recorded
    from reviewtrail.ledger.records._types import RecordPayload as RecordPayload
    from reviewtrail.ledger.signing._check import SignatureReport as SignatureReport
    from reviewtrail.ledger.signing._check import key_book as key_book
    from reviewtrail.ledger.signing._check import signature_problems as signature_problems
    from reviewtrail.ledger.signing._checkpoint import CHECKPOINT_TYPE as CHECKPOINT_TYPE
    from reviewtrail.ledger.signing._checkpoint import check_checkpoint as check_checkpoint
    from reviewtrail.ledger.signing._checkpoint import load_checkpoint as load_checkpoint
    from reviewtrail.ledger.signing._checkpoint import make_checkpoint as make_checkpoint
    from reviewtrail.ledger.signing._checkpoint import save_checkpoint as save_checkpoint
    from reviewtrail.ledger.signing._gate import signed_reads as signed_reads
    from reviewtrail.ledger.signing._key_payloads import KEY_PAYLOADS as KEY_PAYLOADS
    from reviewtrail.ledger.signing._key_records import WriterKeys as WriterKeys
    from reviewtrail.ledger.signing._key_records import declare_key as declare_key
    from reviewtrail.ledger.signing._key_records import require_signatures as require_signatures
    from reviewtrail.ledger.signing._key_records import revoke_key as revoke_key
    from reviewtrail.ledger.signing._key_records import rotate_key as rotate_key
    from reviewtrail.ledger.signing._key_records import writer_keys as writer_keys
else:
    __getattr__, __dir__ = _face.lazy(__name__)
