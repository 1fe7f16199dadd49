"""The record catalog: which typed payloads a ledger validates and which query tables it keeps.

Nothing registers itself on import: each package lists its payload models and projections, and
the one place that assembles the application gathers them into a :class:`RecordCatalog` that is
handed to the ledger when it is opened. A ledger opened without one validates no payload and
keeps only the built-in query tables (CAS references, supersessions).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

from reviewtrail.ledger._projections import BUILTIN_PROJECTIONS, Projection
from reviewtrail.ledger._types import RecordPayload, validate_with

__all__ = ["EMPTY_CATALOG", "RecordCatalog"]


class RecordCatalog:
    """Record types by name and projections, checked for clashes once, when built.

    A catalog iterates over its projections, so it can be given wherever a ledger takes the
    projections it keeps; a ledger given a catalog also validates each appended payload of a
    listed type against its model.
    """

    def __init__(
        self,
        record_types: Iterable[type[RecordPayload]] = (),
        projections: Iterable[Projection] = (),
        *,
        builtins: bool = True,
    ) -> None:
        self._types = _by_name(record_types)
        self._projections = _checked((*(BUILTIN_PROJECTIONS if builtins else ()), *projections))

    @property
    def record_types(self) -> Mapping[str, type[RecordPayload]]:
        return MappingProxyType(self._types)

    @property
    def projections(self) -> tuple[Projection, ...]:
        return self._projections

    def __iter__(self) -> Iterator[Projection]:
        return iter(self._projections)

    def __repr__(self) -> str:
        names = ", ".join(p.name for p in self._projections)
        return f"RecordCatalog({len(self._types)} record types; projections {names})"

    def with_projections(self, projections: Iterable[Projection]) -> RecordCatalog:
        """The same record types with exactly ``projections`` (no built-in ones added)."""
        return RecordCatalog(self._types.values(), projections, builtins=False)

    def payload_model(self, type_: str) -> type[RecordPayload] | None:
        return self._types.get(type_)

    def validate(self, type_: str, payload: Any, *, field: str = "payload") -> None:
        """Raise :class:`InvalidInputError` naming the first bad field when ``payload`` breaks the
        model of ``type_``; a type the catalog does not list is not checked."""
        model = self._types.get(type_)
        if model is not None:
            validate_with(model, type_, payload, field=field)

    def schemas(self) -> dict[str, dict[str, Any]]:
        """JSON Schema of every payload model, keyed by record type."""
        return {t: m.model_json_schema(by_alias=True) for t, m in sorted(self._types.items())}


def _by_name(record_types: Iterable[type[RecordPayload]]) -> dict[str, type[RecordPayload]]:
    out: dict[str, type[RecordPayload]] = {}
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
