"""The payload model of the store's identity record (``store.identity@1``).

A msgspec model (:mod:`reviewtrail._struct`), kept out of :mod:`reviewtrail.store.identity`: opening
and reading a store loads no model; validating the identity record (``init``, ``verify``, schemas) does.
"""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from reviewtrail._struct import PayloadStruct
from reviewtrail.ledger import KEY_PAYLOADS, PayloadModel, record_type

__all__ = ["RECORD_TYPES", "StoreIdentity"]


# reviewtrail.store.identity.IDENTITY_TYPE (not imported: that module loads this one); the catalog
# refuses a model whose type differs from the one it was declared with.
@record_type("store.identity@1")
class StoreIdentity(PayloadStruct, frozen=True, rename="camel"):
    """The first record of a store: its id and the kind of ledger it was created on."""

    store_id: Annotated[str, Meta(min_length=1, max_length=200)]
    ledger_kind: Annotated[str, Meta(pattern=r"^(sqlite|postgresql|memory)$")]


# What the store itself adds to the application's record catalog (see reviewtrail.app): its identity,
# and the ledger's writer-key records (store.key.declared@1, store.key.revoked@1,
# store.signatures.required@1; see docs/architecture.md, "Signed records").
RECORD_TYPES: tuple[type[PayloadModel], ...] = (StoreIdentity, *KEY_PAYLOADS)
