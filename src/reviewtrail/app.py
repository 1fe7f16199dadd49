"""The composition root: the one module that knows every package.

Each domain package lists what it adds to the ledger (``RECORD_TYPES``, ``PROJECTIONS``, and the
names of its record types, ``RECORD_TYPE_NAMES``) and nothing registers itself on import. This
module gathers those lists into the application's :class:`~reviewtrail.ledger.RecordCatalog` and
opens stores with it, so every writer validates the same payloads and keeps the same query tables.
Callers (the command line, later the web apps) open stores here; domain packages receive an open
store and never import this module.

Public API::

    from reviewtrail import app
    with app.open_store() as store:          # settings from the environment and reviewtrail.toml
        ...
    app.init_store(settings)                 # create the store, or re-open it
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from reviewtrail.config import Settings, load_settings

if TYPE_CHECKING:
    from reviewtrail.ledger import RecordCatalog
    from reviewtrail.store import Store

__all__ = [
    "ProjectStores",
    "build_catalog",
    "catalog",
    "init_store",
    "open_store",
    "packages",
    "payload_schemas",
]


def packages() -> tuple[ModuleType, ...]:
    """Every package that adds record types or query tables, in the order their query tables are
    kept (imports them all)."""
    from reviewtrail import evidence, human_review, models, provenance, reviewer, tracing
    from reviewtrail.store import identity

    return (identity, evidence, provenance, models, reviewer, tracing, human_review)


def _evidence() -> ModuleType:
    from reviewtrail import evidence

    return evidence


def _provenance() -> ModuleType:
    from reviewtrail import provenance

    return provenance


def _models() -> ModuleType:
    from reviewtrail import models

    return models


def _reviewer() -> ModuleType:
    from reviewtrail import reviewer

    return reviewer


def _tracing() -> ModuleType:
    from reviewtrail import tracing

    return tracing


def _human_review() -> ModuleType:
    from reviewtrail import human_review

    return human_review


_IMPORTS: dict[str, Callable[[], ModuleType]] = {
    "evidence": _evidence,
    "provenance": _provenance,
    "models": _models,
    "reviewer": _reviewer,
    "tracing": _tracing,
    "human_review": _human_review,
}


def _contents(package: str) -> Callable[[], tuple[Any, Any]]:
    def load() -> tuple[Any, Any]:
        module = _IMPORTS[package]()
        return module.RECORD_TYPES, module.PROJECTIONS

    return load


def build_catalog() -> RecordCatalog:
    """The record types and projections of every package, plus the ledger's built-in projections.

    The store's own record type (its identity, which keeps no query table) and every domain
    package are deferred parts: each package's record type names and query tables are read from
    its ``catalog`` module, which loads no payload model (and its face is lazy). A package's models
    are imported when a record of one of its types is validated, or one of its projections is given
    a record of a type it makes rows of. So ``ledger tail`` loads no payload model (nor pydantic),
    ``review queue`` loads human review's (and what it imports), and the rows written are those of
    the packages loaded up front."""
    import reviewtrail.evidence.catalog
    import reviewtrail.human_review.catalog
    import reviewtrail.models.catalog
    import reviewtrail.provenance.catalog
    import reviewtrail.reviewer.catalog
    import reviewtrail.tracing.catalog
    from reviewtrail.ledger import KEY_RECORD_TYPES, DeclaredProjection, DeferredPart, RecordCatalog
    from reviewtrail.store import identity

    # Each package's declaration, in the order the catalog keeps their query tables.
    declarations = {
        "evidence": reviewtrail.evidence.catalog,
        "provenance": reviewtrail.provenance.catalog,
        "models": reviewtrail.models.catalog,
        "reviewer": reviewtrail.reviewer.catalog,
        "tracing": reviewtrail.tracing.catalog,
        "human_review": reviewtrail.human_review.catalog,
    }
    # The store's own records: its identity, and the writer keys of its ledger.
    own = frozenset([identity.IDENTITY_TYPE, *KEY_RECORD_TYPES])
    store = DeferredPart(IDENTITY_PART, own, (), load=_identity_contents)
    parts = [
        DeferredPart(
            package,
            module.RECORD_TYPE_NAMES,
            tuple(DeclaredProjection(p.name, p.version, p.tables, p.types or frozenset()) for p in module.PROJECTIONS),
            load=_contents(package),
        )
        for package, module in declarations.items()
    ]
    return RecordCatalog(deferred=[store, *parts])


# The catalog's name for the store's own part (listed in ``RecordCatalog.loaded`` once its
# payload model is loaded).
IDENTITY_PART = "identity"


def _identity_contents() -> tuple[Any, Any]:
    from reviewtrail.store import identity

    return identity.RECORD_TYPES, identity.PROJECTIONS


@cache
def catalog() -> RecordCatalog:
    """The application's catalog, built once; its packages load on first use."""
    return build_catalog()


def open_store(
    settings: Settings | None = None, *, read_only: bool | None = None, check_identity: bool = True
) -> Store:
    """Open the existing store of ``settings`` (default: loaded from the environment and
    ``reviewtrail.toml``) with the application's catalog; see :meth:`Store.open`."""
    from reviewtrail.store import Store

    return Store.open(
        settings if settings is not None else load_settings(),
        catalog(),
        read_only=read_only,
        check_identity=check_identity,
    )


def init_store(settings: Settings | None = None) -> Store:
    """Create the store of ``settings``, or re-open it; see :meth:`Store.init`."""
    from reviewtrail.store import Store

    return Store.init(settings if settings is not None else load_settings(), catalog())


def payload_schemas() -> dict[str, dict[str, Any]]:
    """JSON Schema of every typed payload the application's ledger validates, keyed by record type
    (loads every package)."""
    return catalog().schemas()


class ProjectStores:
    """The store configured for a project folder, its settings read there (``env``, default the
    process environment, over the folder's ``reviewtrail.toml``). Given to trace recording
    (:func:`reviewtrail.tracing.custody.record_call`), which looks for the store before a call's files
    are written and opens it once they are safe."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env = env

    def exists(self, project: Path) -> bool:
        return load_settings(self._env, cwd=project).store_exists

    def open(self, project: Path) -> Store:
        return open_store(load_settings(self._env, cwd=project))
