"""Leases on review cards: reviewers working on one campaign at once are served different cards
(docs/human-review.md, "Several reviewers at once").

A lease is working state, never custody: it is not a ledger record, it is never in the chain, and
``verify`` neither reads nor checks it. It only decides which cards a session serves; ``decide``
never asks for it, so a lost or expired lease never blocks a decision (the decision rules settle
two decisions on one item as they always do).

Where leases are kept
    One row per leased item: ``(item_id, holder, expires)``, ``expires`` in seconds since the
    epoch by the taking machine's clock. With a PostgreSQL ledger, in the table
    ``rt_review_leases`` of the ledger's database (created when first needed; it is no projection
    and no record table), so store folders on other machines that share the database see the same
    leases. Otherwise in a small SQLite database of its own, ``<store>/review-leases.sqlite``
    (the ledger's file is never written by it). A store opened read-only, or with no folder,
    takes no leases (every card is served, as before).

Holders
    A terminal session holds its leases under its own random id. The Review page holds them under
    the reviewer's (:func:`reviewer_holder`): each call names the holder, on one connection shared
    by the inspector's threads, so a reviewer is served the card they hold however many tabs or
    requests draw it.

Rules
    - **Take** (:meth:`Leases.take`): one statement inserts the row, or takes it over when it has
      expired or is already this holder's; two sessions taking one item at once cannot both get
      it. A lease lasts :data:`LEASE_SECONDS`.
    - **Renew** (:meth:`Leases.renew`): while the reviewer works on the card (each key), once half
      the lease has passed it is extended to a full lease again.
    - **Release** (:meth:`Leases.release`): the session's decision on the item, passing over an
      invalid item and the end of the session delete the holder's rows. A decision recorded any
      other way (``review decide``, another session) ends the lease too: a decided item is not
      open, so no session serves it whatever its row says; the row is deleted once expired.
    - **Expiry**: an expired lease frees the card (a session that died holds it at most
      :data:`LEASE_SECONDS`). Expired rows are deleted when a session starts.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from reviewtrail.errors import BackendUnavailableError, ReadOnlyStoreError
from reviewtrail.store import Store

__all__ = ["LEASE_FILE", "LEASE_SECONDS", "LEASE_TABLE", "Leases", "reviewer_holder"]

#: How long a lease lasts (renewed while the reviewer works on the card).
LEASE_SECONDS = 600.0
#: The SQLite database of leases in a store folder (ledgers other than PostgreSQL).
LEASE_FILE = "review-leases.sqlite"
#: The table of leases in a PostgreSQL ledger's database.
LEASE_TABLE = "rt_review_leases"

_CREATE = (
    "CREATE TABLE IF NOT EXISTS {table} (item_id TEXT PRIMARY KEY, holder TEXT NOT NULL, "
    "expires DOUBLE PRECISION NOT NULL)"
)
_TAKE = (
    "INSERT INTO {table} (item_id, holder, expires) VALUES ({p}, {p}, {p}) "
    "ON CONFLICT (item_id) DO UPDATE SET holder = excluded.holder, expires = excluded.expires "
    "WHERE {table}.holder = excluded.holder OR {table}.expires <= {p}"
)
_RENEW = "UPDATE {table} SET expires = {p} WHERE item_id = {p} AND holder = {p}"
_RELEASE = "DELETE FROM {table} WHERE item_id = {p} AND holder = {p}"
_PURGE = "DELETE FROM {table} WHERE expires <= {p}"
_HELD = "SELECT item_id FROM {table} WHERE holder <> {p} AND expires > {p}"
_MINE = "SELECT item_id FROM {table} WHERE holder = {p} AND expires > {p}"
#: PostgreSQL: serializes the creation of the table among sessions starting together.
_CREATE_LOCK = "SELECT pg_advisory_xact_lock(hashtext('{table}'))"
#: What a concurrent creation of the same table fails with on PostgreSQL.
_CREATE_RACES = frozenset({"UniqueViolation", "DuplicateTable", "DuplicateObject"})


def reviewer_holder(reviewer: str) -> str:
    """The holder a reviewer's leases are held under on the Review page."""
    return f"reviewer:{reviewer}"


class Leases:
    """The leases of one review session (``holder``: its random id). Use as a context manager:
    leaving it releases every lease the session still holds."""

    def __init__(
        self,
        store: Store,
        *,
        holder: str | None = None,
        seconds: float = LEASE_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.holder = holder or str(uuid.uuid4())
        self.seconds = seconds
        self._clock = clock
        self._held: dict[str, float] = {}  # item id -> when its lease was taken or renewed
        self._conn: Any = None
        self._sql: dict[str, str] = {}
        self._lock = threading.Lock()  # one statement at a time on the shared connection
        url = getattr(store.ledger, "url", None)
        if store.read_only:
            return
        if isinstance(url, str) and url.startswith(("postgresql://", "postgres://")):
            self._conn = _postgres(url)
            self._prepare(LEASE_TABLE, "%s", create_lock=_CREATE_LOCK)
        elif store.root is not None:
            self._conn = _sqlite(store.root / LEASE_FILE)
            self._prepare("leases", "?")
        if self._conn is not None:
            self._create()
            self._run("purge", self._clock())

    @property
    def active(self) -> bool:
        """Whether leases are kept (False: a read-only store, or one with no folder)."""
        return self._conn is not None

    def __enter__(self) -> Leases:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def take(self, item_id: str, *, holder: str | None = None) -> bool:
        """Lease ``item_id`` to this session (or to ``holder``); False when another holds an
        unexpired lease on it. Always True when leases are not kept."""
        if self._conn is None:
            return True
        now = self._clock()
        who = holder or self.holder
        taken = self._run("take", item_id, who, now + self.seconds, now) == 1
        if taken and who == self.holder:
            self._held[item_id] = now
        return taken

    def renew(self, item_id: str) -> None:
        """Extend this session's lease on ``item_id`` to a full lease, once half of it has
        passed (a lease lost meanwhile is not taken back: the card is still shown, and deciding
        it is never blocked)."""
        since = self._held.get(item_id)
        now = self._clock()
        if self._conn is None or since is None or now - since < self.seconds / 2:
            return
        self._run("renew", now + self.seconds, item_id, self.holder)
        self._held[item_id] = now

    def release(self, item_id: str, *, holder: str | None = None) -> None:
        """End this session's (or ``holder``'s) lease on ``item_id`` (none held: nothing happens)."""
        if self._conn is None:
            return
        if holder is not None and holder != self.holder:
            self._run("release", item_id, holder)
            return
        if self._held.pop(item_id, None) is None:
            return
        self._run("release", item_id, self.holder)

    def held_by_others(self, item_ids: Iterable[str] | None = None, *, holder: str | None = None) -> set[str]:
        """Which of ``item_ids`` (None: any item) another than this session (or ``holder``) holds
        an unexpired lease on."""
        if self._conn is None:
            return set()
        rows = self._query("held", holder or self.holder, self._clock())
        held = {str(row[0]) for row in rows}
        return held if item_ids is None else held & set(item_ids)

    def held_by(self, holder: str | None = None) -> set[str]:
        """The items this session (or ``holder``) holds an unexpired lease on."""
        if self._conn is None:
            return set()
        return {str(row[0]) for row in self._query("mine", holder or self.holder, self._clock())}

    def close(self) -> None:
        """Release every lease this session holds and close the connection."""
        if self._conn is None:
            return
        with contextlib.suppress(Exception):  # a lease left behind expires by itself
            for item_id in list(self._held):
                self.release(item_id)
        with contextlib.suppress(Exception):
            self._conn.close()
        self._conn = None

    # --- statements ------------------------------------------------------------------------------
    def _prepare(self, table: str, p: str, *, create_lock: str = "") -> None:
        statements = {"create": _CREATE, "take": _TAKE, "renew": _RENEW, "release": _RELEASE}
        statements |= {"create_lock": create_lock}
        statements |= {"purge": _PURGE, "held": _HELD, "mine": _MINE}
        self._sql = {name: sql.format(table=table, p=p) for name, sql in statements.items()}

    def _create(self) -> None:
        """Create the table unless it exists. ``CREATE TABLE IF NOT EXISTS`` is not safe against a
        concurrent creation on PostgreSQL (the loser fails on a catalog key: UniqueViolation,
        DuplicateTable or DuplicateObject), so there the creation runs under a transaction-scoped
        advisory lock: sessions starting together create it one after the other. A failure on a
        catalog key (a server or role that refuses advisory locks) is retried: the table is there
        the next time."""
        for attempt in range(3):
            try:
                if self._sql["create_lock"]:
                    with self._conn.transaction():
                        self._conn.execute(self._sql["create_lock"])
                        self._conn.execute(self._sql["create"])
                else:
                    self._conn.execute(self._sql["create"])
                return
            except Exception as exc:
                if attempt == 2 or type(exc).__name__ not in _CREATE_RACES:
                    raise _unavailable(exc) from None

    def _run(self, name: str, *args: Any) -> int:
        try:
            with self._lock:
                cur = self._conn.execute(self._sql[name], args)
                return int(cur.rowcount)
        except Exception as exc:
            raise _unavailable(exc) from None

    def _query(self, name: str, *args: Any) -> list[Any]:
        try:
            with self._lock:
                return list(self._conn.execute(self._sql[name], args).fetchall())
        except Exception as exc:
            raise _unavailable(exc) from None


def _unavailable(exc: Exception) -> Exception:
    return BackendUnavailableError(f"cannot read or write the review leases: {type(exc).__name__}", field="leases")


def _sqlite(path: Any) -> Any:
    import sqlite3

    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=10.0, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout=10000")
        _wal(conn)
        conn.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.Error as exc:
        if "readonly" in str(exc).lower() or "unable to open" in str(exc).lower():
            raise ReadOnlyStoreError(f"cannot open the review leases {path}: {exc}", field="leases") from None
        raise _unavailable(exc) from None
    return conn


def _wal(conn: Any) -> None:
    """Put the leases' file in WAL mode (it stays so). Switching takes the file's exclusive lock and
    SQLite answers "database is locked" at once, without its busy handler, while another
    connection opens it: sessions starting together retry for up to 10 s."""
    import sqlite3
    import time

    deadline = time.monotonic() + 10.0
    while True:
        try:
            if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc).lower() or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _postgres(url: str) -> Any:
    import psycopg

    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        raise _unavailable(exc) from None
