"""The record catalog: which typed payloads a ledger validates and which query tables it keeps.

Nothing registers itself on import: each package lists its payload models and projections, and
the one place that assembles the application gathers them into a :class:`RecordCatalog` that is
handed to the ledger when it is opened. A ledger opened without one validates no payload and
keeps only the built-in query tables (CAS references, supersessions).

A package can also be given as a :class:`DeferredPart`: its record type names and its
projections' names, versions, tables and the record types they make rows of, declared without
importing it. The catalog imports it on first use: when a record of one of its types is
validated, or when one of its projections is given a record of a type it makes rows of (an
append, a read of its tables, a rebuild). Records of other types never load it, and the rows
written are the same as with the package loaded up front.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from reviewtrail._value import Value, field
from reviewtrail.ledger.contract._projections import BUILTIN_PROJECTIONS, Projection, ProjectionTable, Row

if TYPE_CHECKING:
    from reviewtrail.ledger.records._envelope import Envelope
    from reviewtrail.ledger.records._model import PayloadModel

__all__ = ["EMPTY_CATALOG", "DeclaredProjection", "DeferredPart", "RecordCatalog"]

# What a package gives a catalog: its payload models and its projections.
PartContents = tuple[Iterable["type[PayloadModel]"], Iterable[Projection]]


class DeclaredProjection(Value):
    """A projection as a catalog knows it before its package is loaded: everything but the
    function, and the record types (``name@version``) whose records it makes rows of."""

    name: str
    version: int
    tables: tuple[ProjectionTable, ...]
    types: frozenset[str]


class DeferredPart(Value):
    """One package's record types and projections, declared; ``load`` imports the package and
    returns its payload models and projections, which must match the declaration exactly."""

    package: str
    record_types: frozenset[str]
    projections: tuple[DeclaredProjection, ...]
    load: Callable[[], PartContents] = field(compare=False, repr=False)


class RecordCatalog:
    """Record types by name and projections, checked for clashes once, when built.

    A catalog iterates over its projections, so it can be given wherever a ledger takes the
    projections it keeps; a ledger given a catalog also validates each appended payload of a
    listed type against its model.
    """

    def __init__(
        self,
        record_types: Iterable[type[PayloadModel]] = (),
        projections: Iterable[Projection] = (),
        *,
        builtins: bool = True,
        deferred: Iterable[DeferredPart] = (),
    ) -> None:
        self._types = _by_name(record_types)
        self._parts = tuple(deferred)
        self._pending: dict[str, DeferredPart] = {}
        self._loaded: set[str] = set()
        self._lock = threading.RLock()
        self._rows: dict[str, Callable[[Envelope], Iterable[Row]]] = {}
        declared: list[Projection] = []
        for part in self._parts:
            for name in part.record_types:
                if name in self._types or name in self._pending:
                    raise ValueError(f"record type {name!r} is given twice")
                self._pending[name] = part
            declared += [
                Projection(p.name, p.version, p.tables, rows=_DeferredRows(self, part, p.name, p.types), types=p.types)
                for p in part.projections
            ]
        self._projections = _checked((*(BUILTIN_PROJECTIONS if builtins else ()), *projections, *declared))

    @property
    def record_types(self) -> Mapping[str, type[PayloadModel]]:
        """Every payload model by record type (loads every deferred package)."""
        self.load_all()
        return MappingProxyType(self._types)

    @property
    def loaded(self) -> tuple[str, ...]:
        """The deferred packages loaded so far, in the catalog's order."""
        return tuple(p.package for p in self._parts if p.package in self._loaded)

    def load_all(self) -> RecordCatalog:
        """Load every deferred package now (``verify``, ``--repair``, schemas); the catalog itself."""
        for part in self._parts:
            self._load(part)
        return self

    def _load(self, part: DeferredPart) -> None:
        if part.package in self._loaded:
            return
        with self._lock:
            if part.package in self._loaded:
                return
            models, projections = part.load()
            types = _by_name(models)
            real = {p.name: p for p in projections}
            _check_declared(part, types, real)
            # Models before they leave the pending list: a reader without the lock always finds
            # a type in one of the two.
            self._types.update(types)
            self._rows.update({name: p.rows for name, p in real.items()})
            for name in part.record_types:
                self._pending.pop(name, None)
            self._loaded.add(part.package)

    def _model(self, type_: str) -> type[PayloadModel] | None:
        part = self._pending.get(type_)
        if part is not None:
            self._load(part)
        return self._types.get(type_)

    @property
    def projections(self) -> tuple[Projection, ...]:
        return self._projections

    def __iter__(self) -> Iterator[Projection]:
        return iter(self._projections)

    def __repr__(self) -> str:
        names = ", ".join(p.name for p in self._projections)
        count = len(self._types) + len(self._pending)
        return f"RecordCatalog({count} record types; projections {names})"

    def with_projections(self, projections: Iterable[Projection]) -> RecordCatalog:
        """The same record types with exactly ``projections`` (no built-in ones added)."""
        return RecordCatalog(self.record_types.values(), projections, builtins=False)

    def payload_model(self, type_: str) -> type[PayloadModel] | None:
        return self._model(type_)

    def validates(self, type_: str) -> bool:
        """Whether payloads of ``type_`` are validated (answered without loading a package)."""
        return type_ in self._types or type_ in self._pending

    def validate(self, type_: str, payload: Any, *, field: str = "payload") -> None:
        """Raise :class:`InvalidInputError` naming the first bad field when ``payload`` breaks the
        model of ``type_``; a type the catalog does not list is not checked."""
        model = self._model(type_)
        if model is not None:
            model.check_payload(type_, payload, field=field)

    def schemas(self) -> dict[str, dict[str, Any]]:
        """JSON Schema of every payload model, keyed by record type."""
        return {t: m.payload_schema() for t, m in sorted(self.record_types.items())}


class _DeferredRows:
    """The rows function of a deferred projection: records of the types it makes rows of load
    its package and go to the package's own function; every other record gives no rows."""

    def __init__(self, catalog: RecordCatalog, part: DeferredPart, name: str, consumes: frozenset[str]) -> None:
        self._catalog = catalog
        self._part = part
        self._name = name
        self._consumes = consumes

    def __call__(self, env: Envelope) -> Iterable[Row]:
        if env.type not in self._consumes:
            return ()
        rows = self._catalog._rows.get(self._name)
        if rows is None:
            self._catalog._load(self._part)
            rows = self._catalog._rows[self._name]
        return rows(env)


def _check_declared(
    part: DeferredPart, types: Mapping[str, type[PayloadModel]], projections: Mapping[str, Projection]
) -> None:
    """A loaded package must hold exactly what its declaration says (a stale table is a bug)."""
    if set(types) != part.record_types:
        raise RuntimeError(
            f"{part.package} declares record types {sorted(part.record_types)} but has {sorted(types)}; "
            "update the application's record index"
        )
    declared = {p.name: (p.version, p.tables, p.types) for p in part.projections}
    actual = {name: (p.version, p.tables, p.types) for name, p in projections.items()}
    if declared != actual:
        raise RuntimeError(
            f"{part.package}: its projections differ from their declaration "
            f"({sorted(declared)} declared, {sorted(actual)} found); update the application's record index"
        )


def _by_name(record_types: Iterable[type[PayloadModel]]) -> dict[str, type[PayloadModel]]:
    out: dict[str, type[PayloadModel]] = {}
    for cls in record_types:
        name = getattr(cls, "record_type", None)
        if not isinstance(name, str):
            raise ValueError(f"{cls.__qualname__} has no record type; decorate it with @record_type('name@version')")
        existing = out.get(name)
        if existing is not None and existing is not cls:
            raise ValueError(f"record type {name!r} is given to both {existing.__qualname__} and {cls.__qualname__}")
        out[name] = cls
    return out


def _checked(projections: Iterable[Projection]) -> tuple[Projection, ...]:
    """Each projection once; two projections never share a name or a table."""
    out: list[Projection] = []
    for projection in projections:
        if any(p is projection for p in out):
            continue
        if any(p.name == projection.name for p in out):
            raise ValueError(f"projection {projection.name!r} is given twice")
        clash = {t.name for p in out for t in p.tables} & {t.name for t in projection.tables}
        if clash:
            raise ValueError(f"projection tables already taken: {sorted(clash)}")
        out.append(projection)
    return tuple(out)


EMPTY_CATALOG = RecordCatalog()
