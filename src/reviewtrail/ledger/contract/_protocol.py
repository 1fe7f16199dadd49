"""The ledger: one class over a backend's :class:`~reviewtrail.ledger.contract._recorder.Recorder`
that holds what every backend shares: validation and signing of appends, the checked reads (rows
held to their records, records hashed and linked) and the signature gate they consult."""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from reviewtrail.errors import IntegrityError, InvalidInputError, NotFoundError
from reviewtrail.ledger.contract._ahead import read_ahead
from reviewtrail.ledger.contract._catalog import EMPTY_CATALOG, RecordCatalog
from reviewtrail.ledger.contract._gate_scope import ACTIVE_GATE
from reviewtrail.ledger.contract._key_state import KeyRow, KeyState, refuse_unallowed
from reviewtrail.ledger.contract._pages import check_within, page_order
from reviewtrail.ledger.contract._projections import ROW_SEQ, Projection, ProjectionTable, Row
from reviewtrail.ledger.contract._recorder import IN_CHUNK, Recorder, missing, projection_rows
from reviewtrail.ledger.contract._signature_gate import SignatureGate
from reviewtrail.ledger.records._envelope import Envelope, chain_problems, encode_payloads, stored_problem

if TYPE_CHECKING:
    from reviewtrail.ledger.keys._record_signature import RecordSignature, RecordSigner
    from reviewtrail.ledger.keys._signing_keys import FileSigner
    from reviewtrail.ledger.records._new_record import NewRecord

__all__ = ["Ledger", "catalog_of", "link_problems", "row_problem", "sealed_batch_problem"]

_T = TypeVar("_T")

_ID = operator.attrgetter("id")
_TYPE = operator.attrgetter("type")


def sealed_batch_problem(envelopes: Sequence[Envelope], *, after: Envelope | None = None) -> str | None:
    """What makes ``envelopes`` (records sealed elsewhere, to be appended as they are) not one run
    of a chain, or ``None``: each record's stored bytes must hash to its hashes
    (:func:`stored_problem`), each must follow the one before it (the next seq, linked to its
    hash; the first, ``after`` when given), and no id may appear twice."""
    ids: set[str] = set()
    before = after
    for env in envelopes:
        problem = stored_problem(env)
        if problem is not None:
            return problem
        if before is not None and (env.seq != before.seq + 1 or env.prev_hash != before.hash):
            return f"ledger seq {env.seq} ({env.id}) does not follow seq {before.seq} ({before.id}) in the batch"
        if env.id in ids:
            return f"ledger seq {env.seq}: id {env.id} appears twice in the batch"
        ids.add(env.id)
        before = env
    return None


def _checked_runs(
    runs: Iterable[tuple[Sequence[Envelope], Mapping[int, RecordSignature]]],
) -> Iterator[tuple[list[Envelope], dict[int, RecordSignature]]]:
    """The runs of :meth:`Ledger.copy_sealed`, each checked as it is read (:func:`sealed_batch_problem`,
    linked to the run before it), with the signatures of its own records only."""
    before: Envelope | None = None
    for envelopes, signatures in runs:
        batch = list(envelopes)
        if not batch:
            continue
        problem = sealed_batch_problem(batch, after=before)
        if problem is not None:
            raise IntegrityError(f"{problem}; nothing was written", field="records")
        seqs = range(batch[0].seq, batch[-1].seq + 1)
        yield batch, {s: sig for s, sig in signatures.items() if s in seqs}
        before = batch[-1]


def row_problem(
    table: str, row: dict[str, Any] | None, record: Envelope | None, projections: Iterable[Projection]
) -> str | None:
    """Why a stored query-table row is not supported by the record it names, or ``None`` when it
    is (``row=None``: whether the record itself is sound enough to support rows)."""
    seq = row.get(ROW_SEQ) if row is not None else None
    label = f"query table {table}: row {_row_label(row or {})}"
    if record is None:
        return f"{label} names record seq {seq}, which is not in the ledger"
    problem = stored_problem(record)
    if problem is not None:
        return f"{label} rests on a damaged record: {problem}"
    if row is not None and row not in [r for t, r in projection_rows([record], projections) if t == table]:
        return f"{label} does not match what record seq {seq} ({record.id}) gives"
    return None


def link_problems(records: Mapping[int, Envelope], following: Mapping[int, str | None], head: int) -> list[str]:
    """Each of ``records`` (by seq) must be the record its successor links to: ``following``
    holds the ``prevHash`` stored at each seq after one of them (``None``: no record there).
    A record edited with its own hash recomputed is caught here, by the next record; the head
    has no successor (a rewritten tail is caught by a checkpoint)."""
    problems = []
    for seq, env in records.items():
        if seq >= head:
            continue
        nxt = records[seq + 1].prev_hash if seq + 1 in records else following.get(seq + 1)
        if nxt is None:
            problems.append(f"ledger seq {seq + 1} is missing: the chain has a gap after seq {seq} ({env.id})")
        elif nxt != env.hash:
            problems.append(f"ledger seq {seq} ({env.id}): record seq {seq + 1} does not link to it")
    return problems


def _row_label(row: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}={v!r}" for k, v in row.items() if k != ROW_SEQ) + "}"


def catalog_of(projections: Iterable[Projection] | None) -> RecordCatalog:
    """A :class:`RecordCatalog` (its projections, and its record types to validate) as it is,
    the exact projections to keep (nothing validated), or ``None`` (the built-in projections,
    nothing validated) as a catalog."""
    if isinstance(projections, RecordCatalog):
        return projections
    return EMPTY_CATALOG.with_projections(projections) if projections is not None else EMPTY_CATALOG


class _Stamp:
    """What an append asks inside its write transaction (a
    :class:`~reviewtrail.ledger.contract._recorder.Stamp`): each record signed by ``signer``, and
    the batch refused when ``verify`` would reject it under the store's key records
    (:func:`~reviewtrail.ledger.contract._key_state.refuse_unallowed`), read into ``keys`` past
    the last seq this ledger object read them at."""

    def __init__(self, signer: FileSigner | RecordSigner | None, keys: KeyState) -> None:
        self._signer = signer
        self._keys = keys

    @property
    def seen(self) -> int:
        return self._keys.seen

    def __call__(
        self, head: int, key_rows: Callable[[int], Iterable[KeyRow]], envelopes: Sequence[Envelope]
    ) -> list[RecordSignature] | None:
        signatures = None
        if self._signer is not None:
            sign = self._signer.load().sign
            signatures = [sign(env.hash) for env in envelopes]
        state = self._keys
        state.start_over_below(head)
        if head > state.seen:
            state.advance(head, key_rows(state.seen))
        refuse_unallowed(state.book, envelopes, signatures)
        return signatures


_GIVEN_CACHE_MAX = 200_000  # records whose rows a ledger object keeps


class Ledger:
    """An append-only, hash-chained log of typed, versioned records, kept by a backend's
    :class:`~reviewtrail.ledger.contract._recorder.Recorder`.

    There is no update or delete; a correction is a new record whose
    ``supersedes`` names the record it corrects.
    """

    #: What signs every record this ledger object appends (``None``: records are appended
    #: unsigned): a :class:`~reviewtrail.ledger.FileSigner`, loaded on the first append, or a
    #: :class:`~reviewtrail.ledger.RecordSigner`. Set by :func:`~reviewtrail.ledger.open_ledger`.
    signer: FileSigner | RecordSigner | None = None

    def __init__(self, recorder: Recorder, catalog: RecordCatalog | None = None) -> None:
        """``recorder``: where the records are kept; ``catalog``: the record types to validate
        and the projections, which must be the recorder's (by default: the recorder's, nothing
        validated)."""
        if catalog is None:
            catalog = catalog_of(None if recorder.projections == EMPTY_CATALOG.projections else recorder.projections)
        self.recorder = recorder
        self.catalog = catalog
        self.projections: tuple[Projection, ...] = catalog.projections
        self._tables = {t.name: t for p in self.projections for t in p.tables}
        self._given: dict[tuple[int, str], list[Row]] = {}
        self._append_keys = KeyState()  # the key records appends are held to, read under the write lock
        self._store_gate = SignatureGate(self)  # what checked reads hold records to outside signed_reads

    @property
    def read_only(self) -> bool:
        return self.recorder.read_only

    # --- writes ---------------------------------------------------------------------------
    def append(self, records: Iterable[NewRecord]) -> list[Envelope]:
        """Append a batch atomically: all records get consecutive seqs, or none is written."""
        batch = list(records)
        if not batch:
            return []
        self.recorder.refuse_if_read_only()
        from reviewtrail.ledger.records._new_record import NewRecord

        # Checked once per kind of object in the batch (one, as a rule), not once per record.
        if not all(issubclass(kind, NewRecord) for kind in set(map(type, batch))):
            for i, r in enumerate(batch):
                if not isinstance(r, NewRecord):
                    raise InvalidInputError(f"expected NewRecord, got {type(r).__name__}", field=f"records[{i}]")
        if len(set(map(_ID, batch))) != len(batch):
            raise InvalidInputError("the same id appears twice in one batch", field="id")
        # Types the catalog has no model for are not validated: looked up once per type, not per record.
        modelled = {t for t in set(map(_TYPE, batch)) if self.catalog.validates(t)}
        if modelled:
            for i, r in enumerate(batch):
                if r.type in modelled:
                    self.catalog.validate(r.type, r.payload, field=f"records[{i}].payload")
        if self.signer is not None:
            self.signer.load()  # a key that cannot sign is refused before anything is written
        stamp = _Stamp(self.signer, self._append_keys)
        return self.recorder.append(batch, encode_payloads(batch), datetime.now(UTC), stamp)

    def append_sealed(
        self, envelopes: Iterable[Envelope], *, signatures: Mapping[int, RecordSignature] | None = None
    ) -> list[Envelope]:
        """Append records sealed by another ledger exactly as they are: one run of
        :meth:`copy_sealed`, with the signatures of some of them by seq."""
        batch = list(envelopes)
        if batch:
            self.copy_sealed([(batch, signatures or {})])
        return batch

    def copy_sealed(self, runs: Iterable[tuple[Sequence[Envelope], Mapping[int, RecordSignature]]]) -> int:
        """Append runs of records sealed by another ledger exactly as they are (seq, id, header,
        payload bytes and hashes): a chain being copied, all in one transaction, read a run at a
        time (memory holds a run). Returns how many records were appended.

        Each record's bytes must hash to its hashes and link to the one before it (across runs
        too), and the first must extend this ledger's head (the seq after it, linked to its hash),
        or nothing is written: a record that does not hash is :class:`IntegrityError`, a run that
        does not extend the head (or repeats a recorded id) :class:`ConflictError`. Payloads are
        not validated again (their hashes prove they are the bytes their writer validated); the
        query tables get the rows the records give, as a rebuild from the chain gives them.

        Each run comes with the signatures of its records by seq (those that have one, as the
        source stores them: :meth:`signatures_at`), stored beside them. They are copied as they
        are; ``verify`` holds them to the keys. The runs are read and checked by a thread of their
        own (:func:`read_ahead`), while the backend stores the run before."""
        self.recorder.refuse_if_read_only()
        return self.recorder.append_sealed(read_ahead(_checked_runs(runs)))

    # --- reads ----------------------------------------------------------------------------
    def read(
        self,
        *,
        start: int = 1,
        end: int | None = None,
        type: str | None = None,
        subject: str | None = None,
        limit: int | None = None,
    ) -> Iterator[Envelope]:
        """Records with ``start <= seq <= end`` in seq order, optionally filtered."""
        return self.recorder.read(start=start, end=end, type=type, subject=subject, limit=limit)

    def get(self, record_id: str) -> Envelope:
        """The record with this id; :class:`NotFoundError` when there is none."""
        found = self.recorder.get_many([record_id]).get(record_id)
        if found is None:
            raise missing(record_id)
        return found

    def head(self) -> Envelope | None:
        """The last record, or ``None`` for an empty ledger."""
        return self.recorder.head()

    def tail(self, n: int = 20, *, type: str | None = None, subject: str | None = None) -> list[Envelope]:
        """The last ``n`` matching records, oldest first."""
        return self.recorder.tail(n, type=type, subject=subject)

    def _table_where(self, table: str, where: Mapping[str, Any]) -> dict[str, Any]:
        """The filters of a query on ``table``: the table must exist and know every column."""
        spec = self._tables.get(table)
        if spec is None:
            raise NotFoundError(f"no projection table {table!r}", field="table")
        unknown = set(where) - set(spec.column_names)
        if unknown:
            raise InvalidInputError(f"unknown columns {sorted(unknown)} for {table}", field="where")
        return dict(where)

    def _checked(self, table: str, found: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``found`` (fresh rows of this read), checked, without their record seqs."""
        if found:
            self._check_rows(table, found)
        for row in found:
            row.pop(ROW_SEQ, None)
        return found

    def rows(self, table: str, **where: Any) -> list[dict[str, Any]]:
        """Query a projection table: ``ledger.rows("cas_refs", hash=h)``."""
        return self._checked(table, self.recorder.select_rows(table, self._table_where(table, where)))

    def rows_in(self, table: str, column: str, values: Iterable[Any], **where: Any) -> list[dict[str, Any]]:
        """The rows of a projection table whose ``column`` holds one of ``values`` (and that match
        ``where``, column equality): one read for many values, e.g. the runs of a page of items.
        A null value matches nothing, as in :meth:`rows` on SQL. Rows are checked against their
        records exactly as :meth:`rows` checks them."""
        wanted = [v for v in dict.fromkeys(values) if v is not None]
        filters = self._table_where(table, {**where, column: None})
        del filters[column]
        if not wanted:
            return []
        found: list[dict[str, Any]] = []
        for i in range(0, len(wanted), IN_CHUNK):
            found += self.recorder.select_rows_in(table, column, wanted[i : i + IN_CHUNK], filters)
        return self._checked(table, found)

    def get_many(self, record_ids: Iterable[str]) -> dict[str, Envelope]:
        """The records with these ids that exist, by id (one read for many ids; like :meth:`get`)."""
        return self.recorder.get_many(record_ids)

    def page(
        self,
        table: str,
        where: Mapping[str, Any] | None = None,
        *,
        order_by: str,
        after: Any = None,
        limit: int,
        descending: bool = False,
        check: bool = True,
        offset: int = 0,
        within: str | None = None,
    ) -> list[dict[str, Any]]:
        """One page of a projection table, ordered by one column: the rows matching ``where``
        (column equality) whose ``order_by`` value is greater than ``after`` (less, when
        ``descending``; every row when ``after`` is ``None``), at most ``limit`` (1 to 10,000).

        The next page starts after the last row's ``order_by`` value, so page by a column whose
        values are distinct among the matching rows (a key column, a seq); rows with no value
        (null) in ``order_by`` are never paged. Text is ordered by code point on every backend.
        Rows are checked against their records exactly as :meth:`rows` checks them; with
        ``check=False`` they are returned as stored (with their record's seq, ``rt_seq``) to a
        caller that holds each one against the records itself.

        ``offset``: the first that many rows of the order are passed over, along the order's
        index (the row at a position, without reading the rows before it). ``within``: the name
        of a table keyed by one column that ``table`` has too; only rows whose value of that
        column is a key of it are paged (counted, offset)."""
        filters = self._table_where(table, where or {})
        order = page_order(self._tables[table], order_by, after, limit, descending, offset, self._within(within))
        found = self.recorder.select_page(table, filters, order)
        return self._checked(table, found) if check else found

    def count(self, table: str, **where: Any) -> int:
        """How many rows of a projection table match ``where`` (column equality). The rows are
        counted as stored, not checked against their records: a count shows no row's content,
        and a row that a record does not support is refused when it is read."""
        return self.recorder.count_rows(table, self._table_where(table, where))

    def count_within(self, table: str, within: str, **where: Any) -> int:
        """:meth:`count` of the rows whose value of ``within``'s key column is a key of
        ``within`` (a table keyed by one column that ``table`` has, as :meth:`page` takes it)."""
        filters = self._table_where(table, where)
        spec = self._within(within)
        check_within(self._tables[table], spec)
        return self.recorder.count_rows(table, filters, spec)

    def _within(self, within: str | None) -> ProjectionTable | None:
        if within is None:
            return None
        spec = self._tables.get(within)
        if spec is None:
            raise NotFoundError(f"no projection table {within!r}", field="within")
        return spec

    def _check_rows(self, table: str, found: list[dict[str, Any]], read: dict[int, Envelope] | None = None) -> None:
        """Every row must be one its record gives. The records are read afresh and checked
        (:meth:`checked_records`: stored bytes hashed, links to the next records); the rows a
        record gives are computed once per ledger object and kept under the record's seq and
        hash, which a checked record's bytes determine, so an edit made since never matches them.
        ``read``: receives the records this check read, by seq."""
        seqs = {r[ROW_SEQ] for r in found if isinstance(r.get(ROW_SEQ), int)}
        records = self._checked_at(seqs, table) if seqs else {}
        if read is not None:
            read.update(records)
        if len(self._given) > _GIVEN_CACHE_MAX:
            self._given.clear()
        for row in found:
            seq = row.get(ROW_SEQ)
            record = records.get(seq) if isinstance(seq, int) else None
            if record is not None:
                key = (record.seq, record.hash)
                given = self._given.get(key)
                if given is None:
                    given = self._given[key] = projection_rows([record], self.projections)
                if (table, row) in given:
                    continue
            problem = row_problem(table, row, record, self.projections) or f"query table {table}: row not supported"
            raise IntegrityError(f"{problem}; run 'reviewtrail verify'", field=table)

    # --- reads that gate: the records themselves, checked -----------------------------------
    def _checked_at(self, seqs: Iterable[int], field: str) -> dict[int, Envelope]:
        """The records at ``seqs`` that exist, read afresh and checked."""
        records = self.records_at(seqs)
        self._raise_unsound(records, field)
        return records

    def _raise_unsound(
        self, records: Mapping[int, Envelope], field: str, *, links: bool = True, signed: bool = True
    ) -> None:
        """Refuse (exit 4) records whose stored bytes do not hash to what they claim, or (with
        ``links``) that the next record does not link to; with ``signed``, records whose
        signature ``verify`` would reject under the store's key records
        (:class:`~reviewtrail.ledger.contract._signature_gate.SignatureGate`), or inside a
        signed-reads scope (:func:`~reviewtrail.ledger.signed_reads`) under the trusted keys too."""
        for env in records.values():
            problem = stored_problem(env)
            if problem is not None:
                raise IntegrityError(f"{problem}; run 'reviewtrail verify'", field=field)
        if signed and records:
            gate = ACTIVE_GATE.get()
            (gate if gate is not None and gate.ledger is self else self._store_gate).check(records.values())
        if links:
            self.check_links(records.values(), field=field)

    def check_links(self, envs: Iterable[Envelope], *, field: str = "ledger") -> int:
        """Refuse (exit 4) any of ``envs`` that the next record in the ledger does not link to,
        or after which a record is missing: one read for all of them, so a caller that reads in
        several steps (``links=False``) checks the links of everything it read once, at the end.
        Returns the head's seq that read saw (0 when ``envs`` is empty: nothing was read)."""
        records = {env.seq: env for env in envs}
        if not records:
            return 0
        head, following = self.recorder.links_after(sorted(s + 1 for s in records if s + 1 not in records))
        problems = link_problems(records, following, head)
        if problems:
            raise IntegrityError(f"{problems[0]}; run 'reviewtrail verify'", field=field)
        return head

    def checked_records(
        self, envs: Iterable[Envelope], *, field: str = "ledger", links: bool = True, signed: bool = True
    ) -> list[Envelope]:
        """``envs`` (records just read) in seq order, once each, refused (exit 4) when one is not
        sound: its stored bytes do not hash to its hashes, (with ``links``) the next record
        does not link to it (or is missing), or (with ``signed``) its signature breaks the rule
        ``verify`` holds it to (``signed=False``: for the key records, which make that rule)."""
        records = {env.seq: env for env in envs}
        self._raise_unsound(records, field, links=links, signed=signed)
        return [records[s] for s in sorted(records)]

    def records_about(self, subjects: Iterable[str], *, type: str | None = None, links: bool = True) -> list[Envelope]:
        """Every record whose ``subject`` is one of ``subjects`` (of one type, ``name@version``,
        when given), in seq order, each checked (:meth:`checked_records`; ``links=False``: the
        caller checks the links later with :meth:`check_links`). Read from the records
        themselves, never from a query table: a record cannot go missing from this answer without
        breaking a hash link, which is what lets a gate derive "nothing newer" from it."""
        wanted = [s for s in dict.fromkeys(subjects) if s is not None]
        found: list[Envelope] = []
        for i in range(0, len(wanted), IN_CHUNK):
            found += self.recorder.select_records("subject", wanted[i : i + IN_CHUNK], type)
        return self.checked_records(found, links=links)

    def records_superseding(self, record_ids: Iterable[str], *, links: bool = True) -> list[Envelope]:
        """Every record whose ``supersedes`` names one of ``record_ids``, in seq order, each
        checked: the corrections and reclassifications of those records, read from the records
        themselves (like :meth:`records_about`)."""
        wanted = [s for s in dict.fromkeys(record_ids) if s is not None]
        found: list[Envelope] = []
        for i in range(0, len(wanted), IN_CHUNK):
            found += self.recorder.select_records("supersedes", wanted[i : i + IN_CHUNK], None)
        return self.checked_records(found, links=links)

    def checked_get_many(self, record_ids: Iterable[str], *, links: bool = True) -> dict[str, Envelope]:
        """:meth:`get_many`, each record checked (:meth:`checked_records`)."""
        found = self.get_many(record_ids)
        self.checked_records(found.values(), links=links)
        return found

    def seqs_of_type(self, type: str, *, after: int = 0, upto: int | None = None) -> list[int]:
        """The seqs of the records of ``type`` (``name@version``) in ``(after, upto]`` (to the
        head when ``upto`` is None), in order: read from the records themselves, so a gate can
        tell whether a query table lists every record of a type in a range."""
        return self.recorder.seqs_of_type(type, after=after, upto=upto)

    def head_seq(self) -> int:
        """The seq of the last record (0 for an empty ledger)."""
        return self.recorder.head_seq()

    def stored_rows(self, table: str, **where: Any) -> list[dict[str, Any]]:
        """The rows of a query table matching ``where`` (every row without it) as stored, with
        the seq of their record (``rt_seq``), unchecked: for ``verify``, and for a caller that
        holds each row against the records itself."""
        return self.recorder.select_rows(table, self._table_where(table, where))

    @property
    def tables(self) -> dict[str, Any]:
        """The query tables of this ledger's projections, by name."""
        return dict(self._tables)

    def records_at(self, seqs: Iterable[int]) -> dict[int, Envelope]:
        """The records with these seqs (those that exist), by seq."""
        return self.recorder.records_at(seqs)

    def rebuild_projections(self) -> None:
        """Recompute every query table from the chain (``verify --repair``)."""
        self.recorder.refuse_if_read_only()
        self.recorder.rebuild_projections()

    def snapshot(self) -> contextlib.AbstractContextManager[None]:
        """Reads inside see one consistent state of the ledger (for ``verify`` while others write)."""
        return self.recorder.snapshot()

    def describe(self) -> str:
        """Where this ledger lives, for messages (no passwords)."""
        return self.recorder.describe()

    def hidden_row_problems(self) -> list[str]:
        """Why a read of the ledger's tables may be shown fewer rows than they hold (row-level
        security on PostgreSQL), each naming the table and its policies; empty when every read
        sees every row. ``verify`` refuses to vouch for a ledger it may not see whole."""
        return self.recorder.hidden_row_problems()

    def guard_problems(self) -> list[str]:
        """What is wrong with the backend's append-only guards (dropped or disabled triggers)."""
        return self.recorder.guard_problems()

    def missing_tables(self) -> list[str]:
        """The query tables of this ledger's projections that are not in its database (dropped)."""
        return self.recorder.missing_tables()

    def superseded_by(self, record_id: str) -> list[str]:
        """Ids of records that name ``record_id`` as superseded, in append order."""
        return [r["by_id"] for r in sorted(self.rows("supersessions", superseded_id=record_id), key=lambda r: r["seq"])]

    def memo(self, make: Callable[[Ledger, str], _T], key: str) -> _T:
        """``make(self, key)``, made afresh each time: the ledger may change between two reads, so
        it keeps no answer (a set of records read at once may keep them)."""
        return make(self, key)

    def stats(self) -> tuple[int, int | None, int | None]:
        """(number of stored records, lowest seq, highest seq), counted without trusting the chain."""
        return self.recorder.stats()

    def projected_seq_max(self) -> dict[str, int]:
        """The highest seq each projection table (with a ``seq`` column) refers to."""
        return self.recorder.projected_seq_max()

    def verify(self) -> Iterator[str]:
        """Every problem in the chain: gaps, broken links, altered records."""
        return chain_problems(self.read())

    def records_digest(self, start: int, end: int) -> tuple[int, str]:
        """How many records ``start..end`` holds, and a SHA-256 of every field and payload byte of
        each in seq order, as stored (nothing is checked): two ledgers of any backends give the
        same pair exactly when they hold the same records there."""
        return self.recorder.records_digest(start, end)

    # --- signatures -----------------------------------------------------------------------
    def signatures_at(self, seqs: Iterable[int]) -> dict[int, RecordSignature]:
        """The signatures stored beside the records at ``seqs`` (those that have one), by seq,
        as stored (nothing is verified here)."""
        return self.recorder.signatures_at(seqs)

    def signature_scan(self, *, start: int = 1, end: int | None = None) -> Iterator[tuple[int, str, str, Any]]:
        """``(seq, type, hash, signature or None)`` of every record with ``start <= seq <= end``,
        in seq order, without payloads: what ``verify`` holds each record's signature to. Streamed
        (a page at a time); inside :meth:`snapshot`, of that state."""
        return self.recorder.signature_scan(start=start, end=end)

    def signed_scan(self, *, start: int = 1, end: int | None = None) -> Iterator[tuple[int, str, str, Any]]:
        """:meth:`signature_scan` of only the records that have a signature (a store that signs
        nothing answers at once)."""
        return self.recorder.signed_scan(start=start, end=end)

    def stray_signatures(self, *, limit: int = 20) -> list[int]:
        """Seqs (at most ``limit``) at which a signature is stored but no record is."""
        return self.recorder.stray_signatures(limit=limit)

    def close(self) -> None:
        """Release connections."""
        self.recorder.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
