"""The store: one CAS and one ledger, opened from settings, with the identity that names them.

Public API::

    from reviewtrail.store import Store

    with Store.open(settings, catalog) as store:
        store.cas.put(b"...")
"""

from reviewtrail.store._store import STORE_FORMAT, Progress, Store, VerifyReport

__all__ = ["STORE_FORMAT", "Progress", "Store", "VerifyReport"]
