"""Signed stores for tests: writer key files, a human-review campaign written by a signing writer
with signatures required, and what an attacker with database access (and maybe a stolen key) can
write: a record sealed with a correct hash, its query rows and, with a key, its signature, put at
the tail with plain SQL on SQLite or PostgreSQL."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from reviewtrail import app
from reviewtrail._struct import parse
from reviewtrail.config import Settings, sqlite_path
from reviewtrail.human_review.campaigns import campaign_settings
from reviewtrail.human_review.records import ReviewDecision, ReviewItem, new_decision_record
from reviewtrail.ledger import (
    Envelope,
    NewRecord,
    RecordSigner,
    declare_key,
    load_private_key,
    new_signing_key,
    projection_rows,
    require_signatures,
)
from reviewtrail.ledger.backends._sql_schema import COLUMNS, upsert_sql
from reviewtrail.ledger.records._envelope import seal
from reviewtrail.store import Store
from support.human_review import campaign_with_items

__all__ = [
    "Keys",
    "SignedStore",
    "cli",
    "decision",
    "forge_tail",
    "make_keys",
    "row_counts",
    "signed_store",
    "trusted_file",
]


@dataclass(frozen=True)
class Keys:
    """A writer key pair on disk: the private key file (0600), its public key file, its id."""

    private: Path
    public: Path
    key_id: str

    def signer(self) -> RecordSigner:
        return RecordSigner(load_private_key(self.private.read_bytes()))


def make_keys(folder: Path, name: str) -> Keys:
    folder.mkdir(parents=True, exist_ok=True)
    key_id, public = new_signing_key(folder / f"{name}.pem")
    return Keys(folder / f"{name}.pem", public, key_id)


def trusted_file(path: Path, *keys: Keys) -> Path:
    """A trusted-keys file: the keys' PEM public keys, concatenated."""
    path.write_bytes(b"".join(k.public.read_bytes() for k in keys))
    return path


def settings_for(root: Path, url: str | None, key: Keys | None) -> Settings:
    store = root / "store"
    return Settings(
        store=store,
        database_url=url or f"sqlite:///{store / 'ledger.sqlite'}",
        signing_key=key.private if key is not None else None,
    )


@dataclass
class SignedStore:
    """A store whose campaign ``camp`` v1 (training on) was written by the writer ``key`` after
    ``key require``: ``items`` are its items, the first one decided (prefer)."""

    root: Path
    url: str
    key: Keys
    items: list[ReviewItem]
    required_at: int

    def settings(self, key: Keys | None = None) -> Settings:
        return settings_for(self.root, self.url, key)

    @contextlib.contextmanager
    def open(self, key: Keys | None = None) -> Iterator[Store]:
        with app.open_store(self.settings(key)) as store:
            yield store

    def env(self, key: Keys | None = None) -> dict[str, str]:
        """The environment of a command on this store (signing with ``key``, if given)."""
        env = {"REVIEWTRAIL_STORE": str(self.root / "store"), "REVIEWTRAIL_DATABASE_URL": self.url}
        env["REVIEWTRAIL_SIGNING_KEY"] = str(key.private) if key is not None else ""
        return env


def decision(item: ReviewItem, *, supersedes: str | None = None) -> NewRecord:
    """A prefer decision on ``item`` (the first candidate), as a reviewer records it."""
    wire: dict[str, Any] = {
        "itemId": item.item_id,
        "disposition": "prefer",
        "submissionId": f"s-{uuid.uuid4().hex}",
        "useForTraining": True,
        "preferred": item.run_ids()[0],
        "strength": "strong",
    }
    if supersedes is not None:
        wire["supersedes"] = supersedes
    return new_decision_record(parse(ReviewDecision, wire, field="payload"), "public-source", actor="rev-test")


def signed_store(root: Path, url: str | None = None, *, items: int = 2) -> SignedStore:
    """A new store: made unsigned (``init``), then the writer's key declared, signatures
    required, and a campaign written and one item decided, all signed by the writer."""
    key = make_keys(root / "keys", "writer")
    app.init_store(settings_for(root, url, None)).close()
    with app.open_store(settings_for(root, url, key)) as store:
        declare_key(store.ledger, key.public.read_bytes(), name="writer")
        required = require_signatures(store.ledger).seq
        campaign_settings(store, "camp", 1, training=True)
        made = campaign_with_items(store, items)
        store.append([decision(made[0])])
    return SignedStore(root, url or settings_for(root, None, None).database_url, key, made, required)


# --- what an attacker with database access writes ----------------------------------------------
def forge_tail(shop: SignedStore, record: NewRecord, *, key: Keys | None = None) -> Envelope:
    """Append ``record`` at the tail with plain SQL, as someone who can write the database (and,
    with ``key``, holds that private key) could: sealed after the head with a correct hash, its
    query-table rows, and with ``key`` its signature; no reviewtrail code runs on the database."""
    with _connect(shop.url) as (conn, mark):
        cur = conn.cursor()
        cur.execute("SELECT seq, hash FROM rt_records ORDER BY seq DESC LIMIT 1")
        seq, head = cur.fetchone()
        env = seal(record, seq=int(seq) + 1, prev_hash=str(head), now=datetime.now(UTC))
        values = [getattr(env, c.strip()) for c in COLUMNS.split(",")]
        cur.execute(f"INSERT INTO rt_records ({COLUMNS}) VALUES ({', '.join([mark] * 12)})", values)
        tables = {t.name: t for p in app.catalog().projections for t in p.tables}
        for table, row in projection_rows([env], app.catalog().projections):
            sql, cols = upsert_sql(tables[table])
            cur.execute(sql.replace("?", mark), [row[c] for c in cols])
        if key is not None:
            sig = key.signer().sign(env.hash)
            cur.execute(f"INSERT INTO rt_signatures (seq, key_id, sig) VALUES ({mark}, {mark}, {mark})",
                        (env.seq, sig.key_id, sig.value))  # fmt: skip
        conn.commit()
    return env


def edit_signature(
    shop: SignedStore, seq: int, *, delete: bool = False, value: bytes | None = None, key_id: str | None = None
) -> None:
    """Delete or overwrite the signature row of ``seq`` (its value, and with ``key_id`` the key it
    names), its append-only triggers bypassed as a database owner can (put back afterwards on
    SQLite; session_replication_role on PostgreSQL)."""
    with _connect(shop.url) as (conn, mark):
        cur = conn.cursor()
        if mark == "?":
            cur.execute("DROP TRIGGER rt_signatures_no_update")
            cur.execute("DROP TRIGGER rt_signatures_no_delete")
        else:
            cur.execute("SET session_replication_role = replica")
        if delete:
            cur.execute(f"DELETE FROM rt_signatures WHERE seq = {mark}", (seq,))
        elif key_id is not None:
            cur.execute(
                f"UPDATE rt_signatures SET sig = {mark}, key_id = {mark} WHERE seq = {mark}", (value, key_id, seq)
            )
        else:
            cur.execute(f"UPDATE rt_signatures SET sig = {mark} WHERE seq = {mark}", (value, seq))
        if mark == "?":
            from reviewtrail.ledger.backends._sqlite import SqliteRecorder

            for ddl in SqliteRecorder.signatures_append_only_ddl:
                cur.execute(ddl)
        else:
            cur.execute("SET session_replication_role = origin")
        conn.commit()


@contextlib.contextmanager
def _connect(url: str) -> Iterator[tuple[Any, str]]:
    path = sqlite_path(url)
    if path is not None:
        conn = sqlite3.connect(path)
        try:
            yield conn, "?"
        finally:
            conn.close()
        return
    import psycopg

    with psycopg.connect(url) as pg:
        yield pg, "%s"


# --- the command line --------------------------------------------------------------------------
def cli(*args: str, env: dict[str, str]) -> tuple[int, Any, str]:
    """``reviewtrail ARGS`` in this process with ``env``: (exit code, stdout parsed as JSON when it
    is JSON, else the text, stderr)."""
    from reviewtrail.cli._app import app as cli_app

    result = CliRunner().invoke(cli_app, list(args), env={**env, "COLUMNS": "200"})
    out: Any = result.stdout
    with contextlib.suppress(ValueError):
        out = json.loads(result.stdout)
    return result.exit_code, out, result.stderr


def row_counts(url: str) -> tuple[int, int]:
    """How many rows ``rt_records`` and ``rt_signatures`` hold, read with plain SQL."""
    with _connect(url) as (conn, _):
        cur = conn.cursor()
        cur.execute("SELECT COUNT(*) FROM rt_records")
        records = int(cur.fetchone()[0])
        cur.execute("SELECT COUNT(*) FROM rt_signatures")
        return records, int(cur.fetchone()[0])
