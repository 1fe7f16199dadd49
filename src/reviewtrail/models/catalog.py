"""The models package's record types, declared without its payload models (it keeps no query
table): :mod:`reviewtrail.app` reads them when it builds the catalog, and the models load when a
record of these types is validated or made."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reviewtrail.ledger import Projection

__all__ = ["MANIFEST_TYPE", "PROJECTIONS", "RECORD_TYPE_NAMES", "USAGE_TYPE"]

MANIFEST_TYPE = "provenance.prompt-manifest@1"
USAGE_TYPE = "provenance.model-usage@1"
RECORD_TYPE_NAMES = frozenset([MANIFEST_TYPE, USAGE_TYPE])
PROJECTIONS: tuple[Projection, ...] = ()
