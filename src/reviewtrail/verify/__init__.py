"""``verify``: a store checked against its chain, as a function over a store.

:func:`verify_store` reads one snapshot of the ledger, re-hashes the CAS, checks every record
(links, hashes, canonical payloads, CAS references) and recomputes every query table to compare
it with what is stored (:func:`diff_table`, also used by ``migrate``). :func:`spare_core` says
whether a long walk would take a second process.
"""

import typing

from reviewtrail import _face
from reviewtrail.verify._records import spare_core as spare_core
from reviewtrail.verify._row_diff import diff_table as diff_table
from reviewtrail.verify._store import VerifyReport as VerifyReport
from reviewtrail.verify._store import verify_store as verify_store

if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _face.lazy(__name__)
