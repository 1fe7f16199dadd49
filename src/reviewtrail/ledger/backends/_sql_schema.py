"""The SQL text both SQL ledgers share, as pure functions: migrations, table DDL, row mapping,
read filters and projection upserts.

SQL is written once with ``?`` placeholders and ``{BLOB}``/``{BIGINT}`` type names; each
backend supplies its dialect (see :mod:`._sql`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from reviewtrail.ledger.contract._projections import ROW_SEQ, ProjectionTable
from reviewtrail.ledger.contract._recorder import parse_type_filter
from reviewtrail.ledger.records._envelope import Envelope

if TYPE_CHECKING:
    from reviewtrail.ledger.keys._record_signature import RecordSignature

__all__ = [
    "COLUMNS",
    "EMPTY_DIGEST",
    "INDEX_ONLY_MIGRATIONS",
    "MIGRATIONS",
    "READ_ONLY_OPTIONAL",
    "SCHEMA_VERSION",
    "SIGNATURES_MIGRATION",
    "SIGNATURE_COLUMNS",
    "Cursor",
    "digest_sql",
    "env_row",
    "filter_sql",
    "row_to_env",
    "row_to_signature",
    "table_ddl",
    "upsert_sql",
]

#: What ``records_digest`` gives for no record: the SHA-256 of nothing.
EMPTY_DIGEST = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
COLUMNS = "seq, id, type, time, actor, privacy, subject, supersedes, payload, payload_hash, prev_hash, hash"


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...
    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Any: ...
    def executemany(self, sql: str, params: Iterable[Sequence[Any]], /) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def fetchmany(self, size: int = ..., /) -> list[Any]: ...
    def fetchone(self) -> Any: ...


# Versioned migrations: (version, description, statements). Never edit a shipped one; add a new one.
MIGRATIONS: list[tuple[int, str, list[str]]] = [
    (
        1,
        "records table, indexes, projection state",
        [
            """CREATE TABLE rt_records (
                seq {BIGINT} PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                type TEXT NOT NULL,
                time TEXT NOT NULL,
                actor TEXT NOT NULL,
                privacy TEXT NOT NULL,
                subject TEXT,
                supersedes TEXT,
                payload {BLOB} NOT NULL,
                payload_hash TEXT NOT NULL,
                prev_hash TEXT NOT NULL,
                hash TEXT NOT NULL
            )""",
            "CREATE INDEX rt_records_type ON rt_records (type, seq)",
            "CREATE INDEX rt_records_subject ON rt_records (subject, seq)",
            "CREATE TABLE rt_projection_state (name TEXT PRIMARY KEY, version INTEGER NOT NULL)",
            "{APPEND_ONLY}",
        ],
    ),
    (
        2,
        "projection rows carry the seq of the record behind them (rt_seq); rebuild every query table",
        ["DELETE FROM rt_projection_state"],
    ),
    (
        3,
        "records are found by what they supersede and by subject and type, for the reads that gate",
        [
            "CREATE INDEX IF NOT EXISTS rt_records_supersedes ON rt_records (supersedes)",
            "CREATE INDEX IF NOT EXISTS rt_records_subject_type ON rt_records (subject, type, seq)",
        ],
    ),
    (
        4,
        "record signatures, stored beside the records they sign (rt_signatures), append-only",
        [
            "CREATE TABLE rt_signatures (seq {BIGINT} PRIMARY KEY, key_id TEXT NOT NULL, sig {BLOB} NOT NULL)",
            "{SIGNATURES_APPEND_ONLY}",
        ],
    ),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]
#: Migrations that only add indexes: a read-only store opens without them.
INDEX_ONLY_MIGRATIONS = frozenset({3})
#: The migration that adds the signatures table.
SIGNATURES_MIGRATION = 4
#: Migrations a read-only store opens without: the indexes, and the signatures table (a store
#: that never had it holds no signature, and reads as such).
READ_ONLY_OPTIONAL = INDEX_ONLY_MIGRATIONS | {SIGNATURES_MIGRATION}
SIGNATURE_COLUMNS = "seq, key_id, sig"


_FIELDS = (
    "seq", "id", "type", "time", "actor", "privacy", "subject", "supersedes",
    "payload", "payload_hash", "prev_hash", "hash",
)  # fmt: skip


def row_to_env(row: Sequence[Any]) -> Envelope:
    """An envelope from a ``rt_records`` row (columns in :data:`COLUMNS` order)."""
    # Values are taken as stored: a tampered row keeps its odd types, and verification reports it.
    values = dict(zip(_FIELDS, row, strict=True))
    payload = values["payload"]
    if type(payload) is not bytes:
        values["payload"] = bytes(payload) if isinstance(payload, (bytearray, memoryview)) else str(payload).encode()
    # The frozen dataclass, given its fields without its per-field __setattr__ (reads make many).
    env = _new(Envelope)
    _set(env, "__dict__", values)
    return env


_new = object.__new__
_set = object.__setattr__


def row_to_signature(key_id: Any, sig: Any) -> RecordSignature:
    """A record's signature from its ``rt_signatures`` columns, taken as stored (a tampered
    value keeps its odd type; the check refuses it)."""
    from reviewtrail.ledger.keys._record_signature import RecordSignature

    value = bytes(sig) if isinstance(sig, (bytes, bytearray, memoryview)) else str(sig).encode()
    return RecordSignature(key_id if isinstance(key_id, str) else str(key_id), value)


def env_row(env: Envelope) -> tuple[Any, ...]:
    """The ``rt_records`` row of an envelope (columns in :data:`COLUMNS` order)."""
    return (
        env.seq,
        env.id,
        env.type,
        env.time,
        env.actor,
        env.privacy,
        env.subject,
        env.supersedes,
        env.payload,
        env.payload_hash,
        env.prev_hash,
        env.hash,
    )


def digest_sql(dialect: str, *, signatures: bool = True) -> str:
    """The query of ``Recorder.records_digest`` (parameters: the first and the last seq): how many
    records, and the SHA-256 in hex of their ``record_text`` (each with the signature beside it;
    none without a ``signatures`` table) joined in seq order, written in SQL. PostgreSQL hashes
    with ``sha256`` and ``concat`` (which reads a null as nothing); SQLite with ``rt_sha256``, a
    function its connections are given, joining the rows of an ordered subquery (3.40 has no
    ORDER BY in an aggregate)."""
    texts = ("id", "type", "time", "actor", "privacy", "subject", "supersedes")
    hashes = ("payload_hash", "prev_hash", "hash")
    joined = "rt_records r LEFT JOIN rt_signatures s ON s.seq = r.seq" if signatures else "rt_records r"
    where = "WHERE r.seq >= ? AND r.seq <= ?"
    if dialect == "postgresql":
        parts = ["r.seq", "';'"]
        for column in texts:
            parts += [f"length(r.{column})", "':'", f"r.{column}"]
        parts.append("encode(sha256(r.payload), 'hex')")
        for column in hashes:
            parts += [f"length(r.{column})", "':'", f"r.{column}"]
        if signatures:
            parts += ["length(s.key_id)", "':'", "s.key_id", "length(s.sig)", "':'", "encode(s.sig, 'hex')"]
        else:
            parts.append("'::'")
        row = f"concat({', '.join(parts)})"
        digest = f"encode(sha256(convert_to(string_agg({row}, '' ORDER BY r.seq), 'UTF8')), 'hex')"
        return f"SELECT COUNT(*), {digest} FROM {joined} {where}"
    field = "coalesce(length({0}) || ':' || {0}, ':')".format
    signed = (
        "coalesce(length(s.key_id) || ':' || s.key_id, ':') || coalesce(length(s.sig) || ':' || lower(hex(s.sig)), ':')"
    )
    row = " || ".join(
        [
            "r.seq || ';'",
            *(field(f"r.{c}") for c in texts),
            "rt_sha256(r.payload)",
            *(field(f"r.{c}") for c in hashes),
            signed if signatures else "'::'",
        ]
    )
    return (
        f"SELECT COUNT(*), rt_sha256(group_concat(t, '')) FROM (SELECT {row} AS t FROM {joined} {where} ORDER BY r.seq)"
    )


def table_ddl(table: ProjectionTable, bigint: str) -> list[str]:
    """Statements that (re)create a projection's query table ``rt_p_<name>`` and its indexes."""
    kinds = {"text": "TEXT", "int": bigint}
    cols = ", ".join(f"{c} {kinds[k]}" for c, k in (*table.columns, (ROW_SEQ, "int")))
    stmts = [
        f"DROP TABLE IF EXISTS rt_p_{table.name}",
        f"CREATE TABLE rt_p_{table.name} ({cols}, PRIMARY KEY ({', '.join(table.key)}))",
    ]
    for idx in table.indexes:
        stmts.append(
            f"CREATE INDEX IF NOT EXISTS rt_p_{table.name}_{'_'.join(idx)} ON rt_p_{table.name} ({', '.join(idx)})"
        )
    return stmts


def upsert_sql(spec: ProjectionTable, *, replay: bool = False) -> tuple[str, tuple[str, ...]]:
    """The insert for a query table's rows (an upsert on its key unless the table claims keys
    once) and the columns each row's values are given in. In a ``replay`` (a rebuild from the
    chain), a table with ``on_conflict="first"`` keeps the row it holds."""
    cols = (*spec.column_names, ROW_SEQ)
    others = [c for c in cols if c not in spec.key]
    sql = f"INSERT INTO rt_p_{spec.name} ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})"
    if spec.on_conflict == "update":
        conflict = "DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in others) if others else "DO NOTHING"
        sql += f" ON CONFLICT ({', '.join(spec.key)}) {conflict}"
    elif spec.on_conflict == "first" and replay:
        sql += f" ON CONFLICT ({', '.join(spec.key)}) DO NOTHING"
    return sql, cols


def filter_sql(type: str | None, subject: str | None) -> tuple[str, list[Any]]:
    """``AND ...`` conditions (and their parameters) for reads by type and subject.

    ``type`` is ``name@version`` (exact) or ``name`` (every version: a ``LIKE`` prefix, with
    ``!`` escaping ``%``, ``_`` and ``!`` in the name)."""
    sql, params = "", []
    if type is not None:
        tf = parse_type_filter(type)
        if tf.exact is not None:
            sql += " AND type = ?"
            params.append(tf.exact)
        else:
            assert tf.prefix is not None
            sql += " AND type LIKE ? ESCAPE '!'"
            escaped = tf.prefix.replace("!", "!!").replace("%", "!%").replace("_", "!_")
            params.append(escaped + "%")
    if subject is not None:
        sql += " AND subject = ?"
        params.append(subject)
    return sql, params
