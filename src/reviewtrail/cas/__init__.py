"""Content-addressed storage: SHA-256 addresses, verified reads, no delete.

Public API::

    from reviewtrail.cas import FilesystemCas, MemoryCas, S3Cas, CasRef, CasObjectRef, open_cas

    cas = open_cas(settings.cas_url, store=settings.store, s3=settings.s3)  # the store's CAS
"""

import typing

from reviewtrail import _face
from reviewtrail.cas._address import DIGEST_PATTERN as DIGEST_PATTERN
from reviewtrail.cas._address import HEX_PATTERN as HEX_PATTERN
from reviewtrail.cas._address import Digest as Digest
from reviewtrail.cas._address import Pool as Pool
from reviewtrail.cas._address import check_hex as check_hex
from reviewtrail.cas._address import is_digest as is_digest
from reviewtrail.cas._address import is_hex as is_hex
from reviewtrail.cas._address import parse_address as parse_address
from reviewtrail.cas._address import parse_digest as parse_digest
from reviewtrail.cas._filesystem import FilesystemCas as FilesystemCas
from reviewtrail.cas._open import open_cas as open_cas
from reviewtrail.cas._open import parse_cas_url as parse_cas_url
from reviewtrail.cas._protocol import BARE_SEARCH as BARE_SEARCH
from reviewtrail.cas._protocol import ByteCallback as ByteCallback
from reviewtrail.cas._protocol import CasStore as CasStore
from reviewtrail.cas._protocol import Location as Location
from reviewtrail.cas._protocol import ObjectCheck as ObjectCheck
from reviewtrail.cas._protocol import VerifyingReader as VerifyingReader
from reviewtrail.cas._verified import ObjectState as ObjectState
from reviewtrail.cas._verified import StoredObject as StoredObject
from reviewtrail.cas._verified import locate_object as locate_object
from reviewtrail.cas._verified import object_state as object_state
from reviewtrail.cas._verified import save_many as save_many
from reviewtrail.cas._verified import save_verified as save_verified
from reviewtrail.cas._verified import verified_chunks as verified_chunks
from reviewtrail.cas._verified import write_verified as write_verified

# The reference models are pydantic models, loaded on first use: reading an object by its address,
# and reading records, never load pydantic. The S3 backend is loaded where it is named or opened.
if typing.TYPE_CHECKING:
    from reviewtrail.cas._memory import MemoryCas as MemoryCas
    from reviewtrail.cas._protocol import AnyRef as AnyRef
    from reviewtrail.cas._refs import CasObjectRef as CasObjectRef
    from reviewtrail.cas._refs import CasRef as CasRef
    from reviewtrail.cas._refs import refs_in as refs_in
    from reviewtrail.cas._s3 import S3Cas as S3Cas
else:
    __getattr__, __dir__ = _face.lazy(__name__)
