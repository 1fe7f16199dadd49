"""The store: one CAS and one ledger, opened from settings, with the identity that names them
(verified by :func:`reviewtrail.verify.verify_store`).

Public API::

    from reviewtrail.store import Store

    with Store.open(settings, catalog) as store:
        store.cas.put(b"...")
"""

import typing

from reviewtrail import _face
from reviewtrail.store._store import STORE_FORMAT as STORE_FORMAT
from reviewtrail.store._store import Progress as Progress
from reviewtrail.store._store import Store as Store

if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _face.lazy(__name__)
