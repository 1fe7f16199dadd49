"""The store: one CAS and one ledger, opened from settings, with the identity that names them
(verified by :func:`reviewtrail.verify.verify_store`).

Public API::

    from reviewtrail.store import Store

    with Store.open(settings, catalog) as store:
        store.cas.put(b"...")
"""

from reviewtrail.store._store import STORE_FORMAT, Progress, Store

__all__ = ["STORE_FORMAT", "Progress", "Store"]
