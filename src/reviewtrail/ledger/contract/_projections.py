"""Projections: query tables derived from records, written in the append's transaction.

A projection is pure: given an envelope it returns the rows to upsert. Backends
create its tables, apply its rows inside the same transaction as the append, and
rebuild it from the whole ledger when its version changes. A ledger keeps the built-in
projections plus those its :class:`~reviewtrail.ledger.RecordCatalog` lists.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, Literal

from reviewtrail._value import Value, field
from reviewtrail.ledger.records._envelope import Envelope, may_hold_refs

__all__ = [
    "BUILTIN_PROJECTIONS",
    "QUIET_ROWS",
    "ROW_SEQ",
    "Projection",
    "ProjectionTable",
    "Row",
]

ColumnKind = Literal["text", "int"]
Row = tuple[str, dict[str, Any]]
_NAME = re.compile(r"[a-z][a-z0-9_]{0,40}")
# Every stored row also holds the seq of the record it was computed from, so a reader can check
# the row against that record and ``verify`` can recompute every table from the chain.
ROW_SEQ = "rt_seq"


class ProjectionTable(Value):
    """A query table: columns with kinds, and the key rows are upserted on."""

    name: str
    columns: tuple[tuple[str, ColumnKind], ...]
    key: tuple[str, ...]
    indexes: tuple[tuple[str, ...], ...] = ()
    # What a second row with the same key does: replace the first ("update"), or make the
    # whole append fail with ConflictError ("error"), e.g. to claim a version number once.
    # "first": an append giving a key already held fails as with "error", but a rebuild or a
    # recomputation of the table keeps the first row given (so a chain recorded before the key
    # was claimed, which may give it twice, still rebuilds, and rebuilds as appends would have).
    on_conflict: Literal["update", "error", "first"] = "update"

    @property
    def claims_once(self) -> bool:
        """Whether an append giving a key this table already holds fails with a conflict."""
        return self.on_conflict != "update"

    def __post_init__(self) -> None:
        names = [c for c, _ in self.columns]
        for n in (self.name, *names):
            if _NAME.fullmatch(n) is None:
                raise ValueError(f"bad projection identifier {n!r}")
        if ROW_SEQ in names:
            raise ValueError(f"{ROW_SEQ} is reserved for the seq of the record behind a row")
        if not set(self.key) <= set(names) or not self.key:
            raise ValueError(f"key of {self.name} must be a non-empty subset of its columns")
        for idx in self.indexes:
            if not set(idx) <= set(names):
                raise ValueError(f"index on {self.name} names unknown columns {idx}")

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.columns)


class Projection(Value):
    """A named, versioned set of tables and the pure function that fills them."""

    name: str
    version: int
    tables: tuple[ProjectionTable, ...]
    rows: Callable[[Envelope], Iterable[Row]] = field(compare=False)
    # The record types ``rows`` can give rows for (``None``: any): others are not offered to it.
    types: frozenset[str] | None = field(default=None, compare=False)

    def table(self, name: str) -> ProjectionTable:
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(name)


def _cas_ref_rows(env: Envelope) -> Iterable[Row]:
    if not may_hold_refs(env.payload):  # no reference: nothing parsed
        return ()
    refs = env.cas_refs
    if not refs:
        return ()
    seq = env.seq
    if len(refs) > 1:
        # Equal references give equal rows: each once, where it was last named (a later row with
        # the same key replaces an earlier one, so the last of each decides, as before).
        refs = list(dict.fromkeys(reversed(refs)))[::-1]
    # A typed reference has a pool; a bare one (``{hash, size}``) has none: "".
    return [("cas_refs", {"seq": seq, "hash": ref.hash, "size": ref.size, "pool": _pool(ref)}) for ref in refs]


def _pool(ref: Any) -> str:
    return getattr(ref, "pool", None) or ""


def _supersession_rows(env: Envelope) -> Iterable[Row]:
    if env.supersedes is None:
        return ()
    return [("supersessions", {"superseded_id": env.supersedes, "by_id": env.id, "seq": env.seq})]


CAS_REFS = Projection(
    name="cas_refs",
    version=1,
    tables=(
        ProjectionTable(
            "cas_refs",
            (("seq", "int"), ("hash", "text"), ("size", "int"), ("pool", "text")),
            key=("seq", "hash", "pool"),
            indexes=(("hash",),),
        ),
    ),
    rows=_cas_ref_rows,
)

SUPERSESSIONS = Projection(
    name="supersessions",
    version=1,
    tables=(
        ProjectionTable(
            "supersessions",
            (("superseded_id", "text"), ("by_id", "text"), ("seq", "int")),
            key=("superseded_id", "by_id"),
        ),
    ),
    rows=_supersession_rows,
)

BUILTIN_PROJECTIONS: tuple[Projection, ...] = (CAS_REFS, SUPERSESSIONS)
#: Row functions that give no row for a record whose ``supersedes`` is null and whose payload
#: cannot hold a CAS reference (:func:`~reviewtrail.ledger.records._envelope.may_hold_refs`).
QUIET_ROWS: frozenset[Callable[[Envelope], Iterable[Row]]] = frozenset({_cas_ref_rows, _supersession_rows})
