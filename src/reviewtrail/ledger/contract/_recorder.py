"""The backend contract: what a ledger's storage must give, and the logic the backends share.

A :class:`Recorder` stores sealed records, their signatures and the query-table rows they give,
and answers plain reads of them: nothing it returns is checked. The one
:class:`~reviewtrail.ledger.Ledger` holds a recorder and composes above it what every backend
shares: validation, the checked reads, the signature gate and signing (as eventsourcing's
recorders and restic's backend wrappers sit below the application's store).
"""

from __future__ import annotations

import abc
import contextlib
import hashlib
import re
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from reviewtrail.errors import ConflictError, InvalidInputError, NotFoundError, ReadOnlyStoreError
from reviewtrail.ledger.contract._projections import QUIET_ROWS, ROW_SEQ, Projection, ProjectionTable, Row
from reviewtrail.ledger.records._envelope import GENESIS_HASH, Envelope, may_hold_refs, seal_chain
from reviewtrail.ledger.records._fields import TYPE_PATTERN

if TYPE_CHECKING:
    from reviewtrail.ledger.contract._key_state import KeyRow
    from reviewtrail.ledger.contract._pages import PageOrder
    from reviewtrail.ledger.keys._record_signature import RecordSignature
    from reviewtrail.ledger.records._new_record import NewRecord

__all__ = [
    "IN_CHUNK",
    "Recorder",
    "RunDigest",
    "SealedRun",
    "Stamp",
    "TypeFilter",
    "check_range",
    "missing",
    "parse_type_filter",
    "projection_rows",
    "record_text",
    "refuse_known_ids",
    "refuse_unless_extends",
    "row_makers",
    "seal_batch",
]

_TYPE_NAME = re.compile(r"[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*")
#: Values per query of a multi-value read (rows in, records by id, subject or seq).
IN_CHUNK = 500


class TypeFilter:
    """``name@version`` matches one version exactly; a bare ``name`` matches every version."""

    def __init__(self, exact: str | None, prefix: str | None) -> None:
        self.exact = exact
        self.prefix = prefix

    def matches(self, type_: str) -> bool:
        if self.exact is not None:
            return type_ == self.exact
        assert self.prefix is not None
        return type_.startswith(self.prefix)


def parse_type_filter(value: str) -> TypeFilter:
    if "@" in value:
        if TYPE_PATTERN.fullmatch(value) is None:
            raise InvalidInputError(f"{value!r} is not 'name@version'", field="type")
        return TypeFilter(value, None)
    if _TYPE_NAME.fullmatch(value) is None:
        raise InvalidInputError(f"{value!r} is not a record type name", field="type")
    return TypeFilter(None, value + "@")


def seal_batch(
    records: Sequence[NewRecord],
    payloads: Sequence[bytes],
    *,
    head: tuple[int, str] | None,
    now: datetime,
    known_ids: Callable[[list[str]], set[str]],
    columns: list[Any] | None = None,
    ids_refused_on_insert: bool = False,
) -> list[Envelope]:
    """Seal a batch after ``head`` (seq, hash); reject reused ids and dangling supersedes.
    ``columns``: extended with the envelopes' ``rt_records`` values (see :func:`seal_chain`).

    ``ids_refused_on_insert``: the store's unique key on ``id`` refuses a recorded id when the
    batch is inserted (the caller turns that into :func:`refuse_known_ids`' conflict), so only the
    ids the batch supersedes are looked up here (none when it supersedes nothing). A batch that
    cannot be sealed is first checked for recorded ids, so a conflict is reported before any other
    refusal, as when every id is looked up."""
    seq, prev = head if head is not None else (0, GENESIS_HASH)
    if not ids_refused_on_insert:
        ids = [r.id for r in records]
        wanted = set(ids) | {r.supersedes for r in records if r.supersedes is not None}
        existing = known_ids(sorted(wanted))
        refuse_known_ids(records, existing)
        return seal_chain(records, payloads, seq=seq, prev_hash=prev, now=now, existing=existing, columns=columns)
    targets = sorted({r.supersedes for r in records if r.supersedes is not None})
    found = known_ids(targets) if targets else set()
    try:
        return seal_chain(records, payloads, seq=seq, prev_hash=prev, now=now, existing=found, columns=columns)
    except Exception:
        refuse_known_ids(records, known_ids(sorted({r.id for r in records})))
        raise


def refuse_unless_extends(where: str, head: tuple[int, str] | None, first: Envelope) -> None:
    """:class:`ConflictError` unless ``first`` (the first of a batch of sealed records) is the
    record that comes next in the ledger ``where`` whose last record is ``head`` (seq, hash;
    ``None``: empty): the seq after it, linked to its hash (the genesis hash at seq 1)."""
    seq, prev = head if head is not None else (0, GENESIS_HASH)
    if first.seq != seq + 1 or first.prev_hash != prev:
        ends = f"ends at seq {seq} (hash {prev})" if head is not None else "is empty"
        raise ConflictError(
            f"{where} {ends}; the records to append start at seq {first.seq} after hash {first.prev_hash}: "
            "they do not extend it, nothing was written",
            field="ledger",
        )


def refuse_known_ids(records: Iterable[NewRecord], known: Container[str]) -> None:
    """:class:`ConflictError` for the first of ``records`` whose id is in ``known`` (recorded)."""
    for r in records:
        if r.id in known:
            raise ConflictError(f"a record with id {r.id!r} already exists", field="id")


RowMaker = Callable[[Envelope], Iterable[Row]]


def row_makers(projections: Iterable[Projection]) -> Callable[[Envelope], Sequence[RowMaker]]:
    """For a record, the row functions of ``projections`` that can give it rows: those of its
    type (a projection's ``types``), and not the built-in ones for a record that supersedes
    nothing and holds no CAS reference (most records), which give none. Chosen once per type."""
    listed = tuple(projections)
    chosen: dict[tuple[Any, bool], list[RowMaker]] = {}

    def pick(env: Envelope) -> Sequence[RowMaker]:
        quiet = env.supersedes is None and not may_hold_refs(env.payload)
        key = (env.type, quiet)
        makers = chosen.get(key)
        if makers is None:
            makers = [
                p.rows
                for p in listed
                if (p.types is None or env.type in p.types) and not (quiet and p.rows in QUIET_ROWS)
            ]
            if len(chosen) < _TYPES_CHOSEN_MAX:
                chosen[key] = makers
        return makers

    return pick


_TYPES_CHOSEN_MAX = 4096  # record types (as stored, odd ones too) whose row functions are kept


def projection_rows(envelopes: Iterable[Envelope], projections: Iterable[Projection]) -> list[Row]:
    """The rows ``projections`` derive from ``envelopes``, each tagged with its record's seq."""
    makers = row_makers(projections)
    out: list[Row] = []
    add = out.append
    for env in envelopes:
        for rows in makers(env):
            for table, row in rows(env):
                add((table, {**row, ROW_SEQ: env.seq}))
    return out


def record_text(env: Envelope, signature: RecordSignature | None = None, *, payload_sha: str | None = None) -> str:
    """Every field of one record and of the signature stored beside it as text: the seq and
    ``;``, each string as ``LENGTH:VALUE`` (``:`` for null), the payload as its SHA-256 in hex,
    the signature's key id and its bytes (``LENGTH:HEX``). What :meth:`Recorder.records_digest`
    hashes; the SQL recorders write the same text in SQL (``_sql_schema.digest_sql``).
    ``payload_sha``: the payload's SHA-256 when it is known already (a record checked against
    its ``payloadHash``), so it is not hashed again."""
    subject, supersedes = env.subject, env.supersedes
    sha = payload_sha or hashlib.sha256(env.payload).hexdigest()
    try:
        fields = (
            f"{env.seq};{len(env.id)}:{env.id}{len(env.type)}:{env.type}{len(env.time)}:{env.time}"
            f"{len(env.actor)}:{env.actor}{len(env.privacy)}:{env.privacy}"
            f"{':' if subject is None else f'{len(subject)}:{subject}'}"
            f"{':' if supersedes is None else f'{len(supersedes)}:{supersedes}'}"
            f"{sha}{len(env.payload_hash)}:{env.payload_hash}"
            f"{len(env.prev_hash)}:{env.prev_hash}{len(env.hash)}:{env.hash}"
        )
    except TypeError:  # a field of a type no sealed record has (as read from a tampered row): as SQL writes it
        texts = (env.id, env.type, env.time, env.actor, env.privacy, subject, supersedes)
        parts = [f"{env.seq};", *(":" if v is None else f"{len(str(v))}:{v}" for v in texts)]
        parts.append(sha)
        parts += [f"{len(str(v))}:{v}" for v in (env.payload_hash, env.prev_hash, env.hash)]
        fields = "".join(parts)
    if signature is None:
        return f"{fields}::"
    return f"{fields}{len(signature.key_id)}:{signature.key_id}{len(signature.value)}:{signature.value.hex()}"


class RunDigest:
    """The digest of a run of records given in seq order: how many, and the SHA-256 of their
    :func:`record_text` joined (what :meth:`Recorder.records_digest` gives of ``start..end``)."""

    def __init__(self) -> None:
        self._sha = hashlib.sha256()
        self.count = 0

    def add(self, env: Envelope, signature: RecordSignature | None, *, payload_sha: str | None = None) -> None:
        """The next record, with the signature stored beside it (``payload_sha``: as :func:`record_text`)."""
        self._sha.update(record_text(env, signature, payload_sha=payload_sha).encode("utf-8", "surrogatepass"))
        self.count += 1

    def value(self) -> tuple[int, str]:
        return self.count, self._sha.hexdigest()


def check_range(start: int, end: int | None, limit: int | None) -> None:
    if start < 1:
        raise InvalidInputError("must be >= 1", field="start")
    if end is not None and end < start:
        raise InvalidInputError("must be >= start", field="end")
    if limit is not None and limit < 0:
        raise InvalidInputError("must be >= 0", field="limit")


def missing(record_id: str) -> NotFoundError:
    return NotFoundError(f"no record with id {record_id!r}", field="id")


#: A run of sealed records that follow each other, with the signatures of some of them (by seq).
SealedRun = tuple[list[Envelope], dict[int, "RecordSignature"]]


class Stamp(Protocol):
    """What a recorder asks, inside an append's write transaction, of the ledger it records
    for: the signature of each sealed record (``None``: the ledger signs nothing), after refusing
    a batch ``verify`` would reject under the store's key records. ``head`` is the head's seq
    read in that transaction and ``key_rows(after)`` the key records past seq ``after`` (seq
    order) read in it too; only those past :attr:`seen` are asked for."""

    @property
    def seen(self) -> int: ...

    def __call__(
        self, head: int, key_rows: Callable[[int], Iterable[KeyRow]], envelopes: Sequence[Envelope]
    ) -> list[RecordSignature] | None: ...


class Recorder(abc.ABC):
    """Where a ledger's records, signatures and query-table rows are stored: the primitives a
    backend must give (the abstract methods), a few reads a backend may answer faster than their
    defaults, and what it can tell of its own health. Reads return what is stored, unchecked."""

    read_only: bool = False

    def __init__(self, projections: Iterable[Projection]) -> None:
        self.projections: tuple[Projection, ...] = tuple(projections)
        self.tables: dict[str, ProjectionTable] = {t.name: t for p in self.projections for t in p.tables}

    # --- writes ---------------------------------------------------------------------------
    @abc.abstractmethod
    def append(self, records: list[NewRecord], payloads: list[bytes], now: datetime, stamp: Stamp) -> list[Envelope]:
        """Seal the batch after the head (:func:`seal_batch`) and store it, its projection rows
        and its signatures (``stamp``) in one transaction."""

    @abc.abstractmethod
    def append_sealed(self, runs: Iterable[SealedRun]) -> int:
        """Store runs of sealed records that follow each other, all in one transaction, after
        checking in it that the first record extends the head (:func:`refuse_unless_extends`);
        their projection rows as a replay writes them; the signatures of some of them (by seq)
        beside them. ``runs`` is read inside the transaction: whatever it raises leaves the
        ledger as it was. Returns how many records were stored."""

    @abc.abstractmethod
    def rebuild_projections(self) -> None:
        """Recompute every query table from the chain (``verify --repair``)."""

    # --- records --------------------------------------------------------------------------
    @abc.abstractmethod
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

    @abc.abstractmethod
    def get_many(self, record_ids: Iterable[str]) -> dict[str, Envelope]:
        """The records with these ids that exist, by id."""

    @abc.abstractmethod
    def records_at(self, seqs: Iterable[int]) -> dict[int, Envelope]:
        """The records with these seqs (those that exist), by seq."""

    @abc.abstractmethod
    def tail(self, n: int = 20, *, type: str | None = None, subject: str | None = None) -> list[Envelope]:
        """The last ``n`` matching records, oldest first."""

    # --- query-table rows (each with its record's seq, ``rt_seq``) ----------------------------
    @abc.abstractmethod
    def select_rows(self, table: str, where: dict[str, Any]) -> list[dict[str, Any]]:
        """Projection rows with column equality filters."""

    @abc.abstractmethod
    def select_page(self, table: str, where: dict[str, Any], order: PageOrder) -> list[dict[str, Any]]:
        """Projection rows with column equality filters whose ``order.column`` is not null (and
        beyond ``order.after`` when given), ordered by it, at most ``order.limit``."""

    @abc.abstractmethod
    def count_rows(self, table: str, where: dict[str, Any], within: ProjectionTable | None = None) -> int:
        """How many projection rows match the column equality filters (and, with ``within``,
        have their value of its key column among its keys)."""

    # --- signatures and state -------------------------------------------------------------
    @abc.abstractmethod
    def signatures_at(self, seqs: Iterable[int]) -> dict[int, RecordSignature]:
        """The signatures stored beside the records at ``seqs`` (those that have one), by seq."""

    @abc.abstractmethod
    def stray_signatures(self, *, limit: int = 20) -> list[int]:
        """Seqs (at most ``limit``) at which a signature is stored but no record is."""

    @abc.abstractmethod
    def stats(self) -> tuple[int, int | None, int | None]:
        """(number of stored records, lowest seq, highest seq), counted without trusting the chain."""

    @abc.abstractmethod
    def projected_seq_max(self) -> dict[str, int]:
        """The highest seq each projection table (with a ``seq`` column) refers to."""

    def snapshot(self) -> contextlib.AbstractContextManager[None]:
        """Reads inside see one consistent state of the store."""
        return contextlib.nullcontext()

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""

    def describe(self) -> str:
        """Where the records live, for messages (no passwords)."""
        return "the in-memory ledger"

    # --- reads a backend may answer faster than these defaults ---------------------------------
    def head(self) -> Envelope | None:
        """The last record, or ``None`` for an empty ledger."""
        last = self.tail(1)
        return last[0] if last else None

    def select_records(self, column: str, values: list[str], type: str | None) -> list[Envelope]:
        """Records whose ``column`` (``subject`` or ``supersedes``) is one of ``values`` (at most
        :data:`IN_CHUNK`), of ``type`` when given."""
        wanted = set(values)
        return [
            env for env in self.read(type=type) if (env.subject if column == "subject" else env.supersedes) in wanted
        ]

    def select_rows_in(self, table: str, column: str, values: list[Any], where: dict[str, Any]) -> list[dict[str, Any]]:
        """Projection rows whose ``column`` is one of ``values`` (at most :data:`IN_CHUNK`),
        with column equality filters."""
        return [row for value in values for row in self.select_rows(table, {**where, column: value})]

    def head_seq(self) -> int:
        """The seq of the last record (0 for an empty ledger)."""
        head = self.head()
        return head.seq if head is not None else 0

    def links_after(self, seqs: list[int]) -> tuple[int, dict[int, str | None]]:
        """The head's seq and the ``prevHash`` stored at each of ``seqs`` (those that exist)."""
        found = self.records_at(seqs) if seqs else {}
        return self.head_seq(), {seq: env.prev_hash for seq, env in found.items()}

    def seqs_of_type(self, type: str, *, after: int = 0, upto: int | None = None) -> list[int]:
        """The seqs of the records of ``type`` in ``(after, upto]``, in order."""
        return [env.seq for env in self.read(start=after + 1, end=upto, type=type)]

    def records_digest(self, start: int, end: int) -> tuple[int, str]:
        """How many records ``start..end`` holds, and the SHA-256 of their :func:`record_text`
        (each with its signature) joined in seq order: ledgers holding the same records and
        signatures there give the same pair, whatever their backends, and any field, payload byte
        or signature byte that differs changes it."""
        run = RunDigest()
        signatures = self.signatures_at(range(start, end + 1))
        for env in self.read(start=start, end=end):
            run.add(env, signatures.get(env.seq))
        return run.value()

    def signature_scan(self, *, start: int = 1, end: int | None = None) -> Iterator[tuple[int, str, str, Any]]:
        """``(seq, type, hash, signature or None)`` of every record with ``start <= seq <= end``,
        in seq order, a page at a time."""
        batch: list[Envelope] = []
        for env in self.read(start=start, end=end):
            batch.append(env)
            if len(batch) >= IN_CHUNK:
                yield from self._with_signatures(batch)
                batch = []
        yield from self._with_signatures(batch)

    def _with_signatures(self, batch: list[Envelope]) -> Iterator[tuple[int, str, str, Any]]:
        if not batch:
            return
        found = self.signatures_at(env.seq for env in batch)
        for env in batch:
            yield env.seq, env.type, env.hash, found.get(env.seq)

    def signed_scan(self, *, start: int = 1, end: int | None = None) -> Iterator[tuple[int, str, str, Any]]:
        """:meth:`signature_scan` of only the records that have a signature."""
        return (row for row in self.signature_scan(start=start, end=end) if row[3] is not None)

    # --- what a backend can tell of its own health ----------------------------------------------
    def hidden_row_problems(self) -> list[str]:
        """Why a read may be shown fewer rows than the tables hold (row-level security)."""
        return []

    def guard_problems(self) -> list[str]:
        """What is wrong with the backend's append-only guards (dropped or disabled triggers)."""
        return []

    def missing_tables(self) -> list[str]:
        """The query tables of the projections that are not in the database (dropped)."""
        return []

    # --- shared by the backends -----------------------------------------------------------------
    def refuse_if_read_only(self) -> None:
        if self.read_only:
            raise ReadOnlyStoreError(
                "the store was opened read-only (no write access to its ledger); this command writes",
                field="store",
            )

    def projection_rows(self, envelopes: Iterable[Envelope]) -> list[Row]:
        return projection_rows(envelopes, self.projections)
