"""What an attacker with raw access to the PostgreSQL database or the S3 bucket does to a copy of the
scale campaign's store. Each :class:`TamperCase` damages one copy; ``verify`` must exit 4 and its
problems must name the damage (one of ``names``, regular expressions, must match them).

Positions come from a seeded ``random.Random`` and what the template holds, so a run is repeatable.
Edits of ``rt_records`` and ``rt_signatures`` switch the append-only triggers off only for the
attacker's own transaction (``SET LOCAL session_replication_role = replica``, or ``ALTER TABLE …
DISABLE TRIGGER USER`` and enabled again before the commit), so the edit itself is all that is left.
"""

from __future__ import annotations

import base64
import hashlib
import random
import re
import string
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import psycopg

from reviewtrail.ledger.backends._sql_schema import SCHEMA_VERSION
from support.campaign_scale import PLAIN_TAIL, POOLS, ScaleProject, Template

__all__ = ["TamperCase", "tamper_cases"]

Damage = Callable[[ScaleProject, Template], None]


@dataclass(frozen=True)
class TamperCase:
    name: str
    kind: str
    damage: Damage
    names: tuple[str, ...]  # regular expressions: verify's problems must match one
    trusted_keys: bool = True  # verify with --trusted-keys (else the chain's own keys and require point)


def _seq(n: int) -> str:
    return rf"\bseq {n}\b"


# --- raw access ----------------------------------------------------------------------------------
@contextmanager
def _unguarded(p: ScaleProject, style: str) -> Iterator[psycopg.Cursor[Any]]:
    """One transaction of the owner role with the append-only triggers off while it runs."""
    with psycopg.connect(p.database_url) as conn:  # committed when the block ends
        cur = conn.cursor()
        if style == "replica":
            cur.execute("SET LOCAL session_replication_role = replica")
        else:
            cur.execute("ALTER TABLE rt_records DISABLE TRIGGER USER")
            cur.execute("ALTER TABLE rt_signatures DISABLE TRIGGER USER")
        yield cur
        if style != "replica":
            cur.execute("ALTER TABLE rt_records ENABLE TRIGGER USER")
            cur.execute("ALTER TABLE rt_signatures ENABLE TRIGGER USER")


def _object_key(p: ScaleProject, pool: str, digest: str) -> str:
    return f"{p.prefix}/versioning/{pool}/blobs/sha256/{digest}"


def _get(p: ScaleProject, t: Template, key: str) -> bytes:
    return bytes(t.client.get_object(Bucket=p.bucket, Key=key)["Body"].read())


def _put(p: ScaleProject, t: Template, key: str, data: bytes) -> None:
    t.client.put_object(Bucket=p.bucket, Key=key, Body=data)  # a plain PUT: it overwrites


def _other_char(value: str, rng: random.Random) -> str:
    """``value`` with one letter or digit changed to another of its kind (hex stays hex)."""
    positions = [i for i, ch in enumerate(value) if ch.isalnum()]
    i = rng.choice(positions)
    ch = value[i]
    hexdigits = set("0123456789abcdef")
    if set(value) <= hexdigits | {":"}:
        pool = "0123456789abcdef"
    elif ch.isdigit():
        pool = string.digits
    elif ch.isupper():
        pool = string.ascii_uppercase
    else:
        pool = string.ascii_lowercase
    return value[:i] + rng.choice([c for c in pool if c != ch]) + value[i + 1 :]


# --- objects -------------------------------------------------------------------------------------
def _flip_object(pool: str, digest: str, position: int, xor: int) -> Damage:
    def damage(p: ScaleProject, t: Template) -> None:
        key = _object_key(p, pool, digest)
        data = bytearray(_get(p, t, key))
        data[position % len(data)] ^= xor
        _put(p, t, key, bytes(data))

    return damage


def _replace_object(pool: str, digest: str, source: str) -> Damage:
    def damage(p: ScaleProject, t: Template) -> None:
        _put(p, t, _object_key(p, pool, digest), _get(p, t, _object_key(p, pool, source)))

    return damage


def _truncate_object(pool: str, digest: str) -> Damage:
    def damage(p: ScaleProject, t: Template) -> None:
        key = _object_key(p, pool, digest)
        _put(p, t, key, _get(p, t, key)[:-1])

    return damage


def _delete_object(pool: str, digest: str) -> Damage:
    def damage(p: ScaleProject, t: Template) -> None:
        t.client.delete_object(Bucket=p.bucket, Key=_object_key(p, pool, digest))

    return damage


def _move_object(pool: str, digest: str, to: str) -> Damage:
    """The object moved to the other pool: intact, at its address, where a typed reference does not look."""

    def damage(p: ScaleProject, t: Template) -> None:
        key = _object_key(p, pool, digest)
        _put(p, t, _object_key(p, to, digest), _get(p, t, key))
        t.client.delete_object(Bucket=p.bucket, Key=key)

    return damage


def _plant_object(key: str, data: bytes) -> Damage:
    """Bytes under an address they do not hash to, which no record names."""

    def damage(p: ScaleProject, t: Template) -> None:
        _put(p, t, f"{p.prefix}/{key}", data)

    return damage


def _edit_layout(pool: str, name: str, data: bytes) -> Damage:
    def damage(p: ScaleProject, t: Template) -> None:
        _put(p, t, f"{p.prefix}/versioning/{pool}/{name}", data)

    return damage


# --- records -------------------------------------------------------------------------------------
def _flip_payload(seq: int, position: int, xor: int, style: str) -> Damage:
    def damage(p: ScaleProject, t: Template) -> None:
        with _unguarded(p, style) as cur:
            [payload] = cur.execute("SELECT payload FROM rt_records WHERE seq = %s", (seq,)).fetchone() or [None]
            data = bytearray(payload)
            data[position % len(data)] ^= xor
            cur.execute("UPDATE rt_records SET payload = %s WHERE seq = %s", (bytes(data), seq))

    return damage


def _unreadable_payload(seq: int, first: bytes, style: str) -> Damage:
    """The payload's first byte replaced: ``\\xff`` leaves no UTF-8, ``x`` no JSON."""

    def damage(p: ScaleProject, t: Template) -> None:
        with _unguarded(p, style) as cur:
            cur.execute("UPDATE rt_records SET payload = %s || substring(payload from 2) WHERE seq = %s", (first, seq))

    return damage


def _edit_column(seq: int, column: str, value: str, style: str) -> Damage:
    def damage(p: ScaleProject, t: Template) -> None:
        with _unguarded(p, style) as cur:
            cur.execute(f"UPDATE rt_records SET {column} = %s WHERE seq = %s", (value, seq))  # type: ignore[arg-type]

    return damage


def _query_tables(cur: psycopg.Cursor[Any]) -> list[str]:
    rows = cur.execute(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = current_schema() AND table_name LIKE 'rt\\_p\\_%' ORDER BY table_name"
    ).fetchall()
    return [str(name) for (name,) in rows]


def _delete_record(seq: int, style: str) -> Damage:
    """The record, its signature and its query rows: nothing names the seq any more."""

    def damage(p: ScaleProject, t: Template) -> None:
        with _unguarded(p, style) as cur:
            cur.execute("DELETE FROM rt_records WHERE seq = %s", (seq,))
            cur.execute("DELETE FROM rt_signatures WHERE seq = %s", (seq,))
            for table in _query_tables(cur):
                cur.execute(f'DELETE FROM "{table}" WHERE rt_seq = %s', (seq,))  # type: ignore[arg-type]

    return damage


def _swap_records(a: int, b: int, style: str) -> Damage:
    """Records ``a`` and ``b`` trade places, with their signatures and query rows."""

    def damage(p: ScaleProject, t: Template) -> None:
        with _unguarded(p, style) as cur:
            tables = ["rt_records", "rt_signatures"]
            for table in tables:
                for src, dst in ((a, -1), (b, a), (-1, b)):
                    cur.execute(f"UPDATE {table} SET seq = %s WHERE seq = %s", (dst, src))  # type: ignore[arg-type]
            for table in _query_tables(cur):
                for src, dst in ((a, -1), (b, a), (-1, b)):
                    cur.execute(f'UPDATE "{table}" SET rt_seq = %s WHERE rt_seq = %s', (dst, src))  # type: ignore[arg-type]

    return damage


def _rewrite_chain(seq: int, style: str) -> Damage:
    """Record ``seq``'s actor changed, then every hash from it to the head sealed again, so every
    link holds: only an anchor kept outside (and the signatures of the signed records) can tell."""

    def damage(p: ScaleProject, t: Template) -> None:
        from reviewtrail.ledger.backends._sql_schema import COLUMNS, row_to_env
        from reviewtrail.ledger.records._envelope import envelope_hash

        with _unguarded(p, style) as cur:
            rows = cur.execute(f"SELECT {COLUMNS} FROM rt_records WHERE seq >= %s ORDER BY seq", (seq,)).fetchall()  # type: ignore[arg-type]
            prev_hash: str | None = None
            for row in rows:
                values = list(row)  # seq, id, type, time, actor, …, payload, payload_hash, prev_hash, hash
                if values[0] == seq:
                    values[4] = f"{values[4]}-rewritten"
                if prev_hash is not None:
                    values[10] = prev_hash
                values[11] = envelope_hash(row_to_env(values))
                cur.execute(
                    "UPDATE rt_records SET actor = %s, prev_hash = %s, hash = %s WHERE seq = %s",
                    (values[4], values[10], values[11], values[0]),
                )
                prev_hash = values[11]

    return damage


def _plant_record(copy_of: int, at: int, style: str) -> Damage:
    """A copy of record ``copy_of`` (a fresh id) stored at seq ``at``, outside the chain's 1..head."""

    def damage(p: ScaleProject, t: Template) -> None:
        from reviewtrail.ledger.backends._sql_schema import COLUMNS

        with _unguarded(p, style) as cur:
            row = cur.execute(f"SELECT {COLUMNS} FROM rt_records WHERE seq = %s", (copy_of,)).fetchone()  # type: ignore[arg-type]
            assert row is not None
            values = [at, f"{row[1][:-4]}beef", *row[2:]]
            cur.execute(f"INSERT INTO rt_records ({COLUMNS}) VALUES ({', '.join(['%s'] * 12)})", values)  # type: ignore[arg-type]

    return damage


def _delete_migration(version: int) -> Damage:
    """A row of the migration history deleted (it has no trigger): the open must not run it again."""

    def damage(p: ScaleProject, t: Template) -> None:
        with psycopg.connect(p.database_url) as conn:
            conn.execute("DELETE FROM rt_migrations WHERE version = %s", (version,))

    return damage


def _cut_tail(keep: int, style: str) -> Damage:
    def damage(p: ScaleProject, t: Template) -> None:
        with _unguarded(p, style) as cur:
            cur.execute("DELETE FROM rt_records WHERE seq > %s", (keep,))
            cur.execute("DELETE FROM rt_signatures WHERE seq > %s", (keep,))
            for table in _query_tables(cur):
                cur.execute(f'DELETE FROM "{table}" WHERE rt_seq > %s', (keep,))  # type: ignore[arg-type]

    return damage


# --- query tables --------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Table:
    name: str
    rows: int
    columns: tuple[tuple[str, str], ...]  # (name, data type), in order
    key: tuple[str, ...]

    @property
    def short(self) -> str:
        return self.name.removeprefix("rt_p_")


def _row(cur: psycopg.Cursor[Any], table: _Table, index: int) -> tuple[Any, dict[str, Any]]:
    cols = ", ".join(c for c, _ in table.columns)
    found = cur.execute(
        f'SELECT ctid, {cols} FROM "{table.name}" ORDER BY ctid OFFSET %s LIMIT 1',  # type: ignore[arg-type]
        (index,),
    ).fetchone()
    assert found is not None, f"{table.name} has no row {index}"
    return found[0], dict(zip((c for c, _ in table.columns), found[1:], strict=True))


def _changed(value: Any, kind: str, rng: random.Random, *, far: bool = False) -> Any:
    if kind in {"bigint", "integer"}:
        return (value or 0) + (1_000_003 if far else 1)
    if not value:
        return "forged"
    return value + "-forged" if far else _other_char(value, rng) if any(c.isalnum() for c in value) else value + "x"


def _edit_row(table: _Table, index: int, column: str, seed: int) -> Damage:
    def damage(p: ScaleProject, t: Template) -> None:
        with psycopg.connect(p.database_url) as conn, conn.cursor() as cur:
            ctid, row = _row(cur, table, index)
            kind = dict(table.columns)[column]
            new = _changed(row[column], kind, random.Random(seed), far=column in table.key)  # no key taken twice
            cur.execute(f'UPDATE "{table.name}" SET {column} = %s WHERE ctid = %s', (new, ctid))  # type: ignore[arg-type]

    return damage


def _add_row(table: _Table, index: int, column: str) -> Damage:
    """A copy of an existing row under another key."""

    def damage(p: ScaleProject, t: Template) -> None:
        with psycopg.connect(p.database_url) as conn, conn.cursor() as cur:
            _, row = _row(cur, table, index)
            row[column] = _changed(row[column], dict(table.columns)[column], random.Random(0), far=True)
            cols = list(row)
            marks = ", ".join(["%s"] * len(cols))
            cur.execute(f'INSERT INTO "{table.name}" ({", ".join(cols)}) VALUES ({marks})', [row[c] for c in cols])  # type: ignore[arg-type]

    return damage


def _delete_row(table: _Table, index: int) -> Damage:
    def damage(p: ScaleProject, t: Template) -> None:
        with psycopg.connect(p.database_url) as conn, conn.cursor() as cur:
            ctid, _ = _row(cur, table, index)
            cur.execute(f'DELETE FROM "{table.name}" WHERE ctid = %s', (ctid,))  # type: ignore[arg-type]

    return damage


# --- signatures ----------------------------------------------------------------------------------
def _delete_signature(seq: int, style: str) -> Damage:
    def damage(p: ScaleProject, t: Template) -> None:
        with _unguarded(p, style) as cur:
            cur.execute("DELETE FROM rt_signatures WHERE seq = %s", (seq,))

    return damage


def _flip_signature(seq: int, position: int, xor: int, style: str) -> Damage:
    def damage(p: ScaleProject, t: Template) -> None:
        with _unguarded(p, style) as cur:
            [sig] = cur.execute("SELECT sig FROM rt_signatures WHERE seq = %s", (seq,)).fetchone() or [None]
            data = bytearray(sig)
            data[position % len(data)] ^= xor
            cur.execute("UPDATE rt_signatures SET sig = %s WHERE seq = %s", (bytes(data), seq))

    return damage


def _resign(seq: int, style: str) -> Damage:
    """The signature replaced by the attacker's own over the same record (a key no record declares)."""

    def damage(p: ScaleProject, t: Template) -> None:
        from reviewtrail.ledger import RecordSigner

        signer = RecordSigner.from_pem(t.attacker_key.read_bytes())
        with _unguarded(p, style) as cur:
            [record_hash] = cur.execute("SELECT hash FROM rt_records WHERE seq = %s", (seq,)).fetchone() or [None]
            sig = signer.sign(str(record_hash))
            cur.execute("UPDATE rt_signatures SET key_id = %s, sig = %s WHERE seq = %s", (sig.key_id, sig.value, seq))

    return damage


def _forge_tail(kind: str) -> Damage:
    """Records sealed after the head with correct hashes and their query rows, as plain SQL
    (appends need no trigger off): ``unsigned``; ``undeclared``, signed by the attacker's key;
    ``self-declared``, the attacker's key declared by a record it signs, then a record it signs."""

    def damage(p: ScaleProject, t: Template) -> None:
        from reviewtrail import app
        from reviewtrail.ledger import KEY_DECLARED, NewRecord, RecordSigner, projection_rows, public_key_id
        from reviewtrail.ledger.backends._sql_schema import COLUMNS, upsert_sql
        from reviewtrail.ledger.records._envelope import seal

        signer = RecordSigner.from_pem(t.attacker_key.read_bytes())
        records = [
            NewRecord(type="eval.result@1", actor="alice", privacy="private", payload={"score": 0.99},
                      supersedes=t.facts.first_generic)
        ]  # fmt: skip
        if kind == "self-declared":
            from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

            raw = signer.public_key.public_bytes(Encoding.Raw, PublicFormat.Raw)
            key_id = public_key_id(signer.public_key)
            declared = {"alg": "ed25519", "keyId": key_id, "publicKey": base64.b64encode(raw).decode(), "name": "ops"}
            records.insert(0, NewRecord(type=KEY_DECLARED, actor="reviewtrail", privacy="private", payload=declared,
                                        subject=f"key:{key_id}"))  # fmt: skip
        tables = {table.name: table for projection in app.catalog().projections for table in projection.tables}
        with psycopg.connect(p.database_url) as conn, conn.cursor() as cur:
            seq, head = cur.execute("SELECT seq, hash FROM rt_records ORDER BY seq DESC LIMIT 1").fetchone() or (0, "")
            for record in records:
                env = seal(record, seq=int(seq) + 1, prev_hash=str(head), now=datetime.now(UTC))
                values = [getattr(env, c.strip()) for c in COLUMNS.split(",")]
                cur.execute(f"INSERT INTO rt_records ({COLUMNS}) VALUES ({', '.join(['%s'] * 12)})", values)  # type: ignore[arg-type]
                for table, row in projection_rows([env], app.catalog().projections):
                    sql, cols = upsert_sql(tables[table])
                    cur.execute(sql.replace("?", "%s"), [row[c] for c in cols])  # type: ignore[arg-type]
                if kind != "unsigned":
                    sig = signer.sign(env.hash)
                    cur.execute("INSERT INTO rt_signatures (seq, key_id, sig) VALUES (%s, %s, %s)",
                                (env.seq, sig.key_id, sig.value))  # fmt: skip
                seq, head = env.seq, env.hash

    return damage


# --- the cases -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Contents:
    """What the template holds, read once to draw the cases."""

    objects: dict[str, list[str]]  # pool -> digests of its blobs
    referenced: list[tuple[str, str]]  # (pool, digest) of objects records reference
    records: list[dict[str, Any]]  # every record's columns but the payload, by seq
    signed: list[int]  # seqs with a signature row, from the require point on
    tables: list[_Table]


def _contents(t: Template) -> _Contents:
    client = t.client
    p = t.project
    objects: dict[str, list[str]] = {pool: [] for pool in POOLS}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=p.bucket, Prefix=p.prefix + "/versioning/"):
        for item in page.get("Contents", []):
            found = re.fullmatch(r".*/versioning/([^/]+)/blobs/sha256/([0-9a-f]{64})", str(item["Key"]))
            if found:
                objects[found[1]].append(found[2])
    with psycopg.connect(p.database_url) as conn, conn.cursor() as cur:
        refs = cur.execute("SELECT DISTINCT pool, hash FROM rt_p_cas_refs ORDER BY pool, hash").fetchall()
        referenced = [(str(pool), str(digest)) for pool, digest in refs if str(digest) in objects.get(str(pool), [])]
        cols = "seq, id, type, time, actor, privacy, subject, supersedes, payload_hash, prev_hash, hash"
        records = [
            dict(zip(cols.split(", "), row, strict=True))
            for row in cur.execute(f"SELECT {cols} FROM rt_records ORDER BY seq").fetchall()  # type: ignore[arg-type]
        ]
        signed = [int(s) for (s,) in cur.execute("SELECT seq FROM rt_signatures WHERE seq >= %s ORDER BY seq",
                                                   (t.required_at,)).fetchall()]  # fmt: skip
        tables = []
        for name in _query_tables(cur):
            columns = cur.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position",
                (name,),
            ).fetchall()
            key = cur.execute(
                "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
                "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = %s::regclass AND i.indisprimary ORDER BY a.attnum",
                (name,),
            ).fetchall()
            [count] = cur.execute(f'SELECT count(*) FROM "{name}"').fetchone() or [0]  # type: ignore[arg-type]
            tables.append(_Table(name, int(count), tuple((str(c), str(k)) for c, k in columns),
                                 tuple(str(k) for (k,) in key)))  # fmt: skip
    return _Contents(objects, referenced, records, signed, tables)


EMPTY = hashlib.sha256(b"").hexdigest()
HEADER_FIELDS = ("id", "type", "time", "actor", "privacy", "subject", "supersedes", "payload_hash")


def tamper_cases(t: Template, rng: random.Random, per_kind: int = 3) -> list[TamperCase]:
    """Every case, ``per_kind`` instances of most kinds, positions drawn from ``rng``."""
    c = _contents(t)
    whole = {
        pool: [d for d in digests if d != EMPTY] for pool, digests in c.objects.items()
    }  # an empty one cannot flip
    head = t.head
    cases: list[TamperCase] = []

    def add(kind: str, damage: Damage, *names: str, what: str) -> None:
        cases.append(TamperCase(f"{kind}#{sum(1 for x in cases if x.kind == kind) + 1} ({what})", kind, damage, names))

    def style() -> str:
        return rng.choice(("replica", "disable-trigger"))

    # objects, in the bucket
    for pool in POOLS:
        for digest in rng.sample(whole[pool], per_kind):
            add(f"object flip ({pool})", _flip_object(pool, digest, rng.randrange(1 << 20), rng.randrange(1, 256)),
                digest, what=f"{digest[:12]}")  # fmt: skip
        digest, source = rng.sample(whole[pool], 2)  # another object's bytes: valid, at the wrong address
        add(f"object replaced ({pool})", _replace_object(pool, digest, source), digest, what=digest[:12])
        digest = rng.choice(whole[pool])
        add(f"object truncated ({pool})", _truncate_object(pool, digest), digest, what=digest[:12])
    for pool, digest in rng.sample(c.referenced, per_kind):
        add("object deleted", _delete_object(pool, digest), digest, what=f"{pool} {digest[:12]}")
    typed = [(pool, digest) for pool, digest in c.referenced if pool]
    pool, digest = rng.choice(typed)
    other = POOLS[1 - POOLS.index(pool)]
    add("object moved to the other pool", _move_object(pool, digest, other), digest, what=f"{pool} {digest[:12]}")
    digest = f"{rng.getrandbits(256):064x}"
    add("object planted", _plant_object(f"versioning/{rng.choice(POOLS)}/blobs/sha256/{digest}", b"planted\n"), digest,
        what="in a pool")  # fmt: skip
    digest = f"{rng.getrandbits(256):064x}"
    add("object planted", _plant_object(f"cas/sha256/{digest[:2]}/{digest}", b"planted\n"), digest,
        what="legacy layout")  # fmt: skip
    pool, digest = rng.choice(typed)
    stray = f"versioning/{pool}/blobs/sha256/{digest.upper()}"
    add("object planted", _plant_object(stray, b"planted\n"), f"stray file '{digest.upper()}'", what="not an address")
    add("layout file edited", _edit_layout("data", "index.json", b'{"schemaVersion":2,"manifests":[{}]}'),
        "index.json", what="data index.json")  # fmt: skip
    add("layout file edited", _edit_layout("agent-state", "oci-layout", b'{"imageLayoutVersion":"9.9.9"}'),
        "oci-layout", what="agent-state oci-layout")  # fmt: skip

    # records, in the database
    for _ in range(per_kind):
        seq = rng.randint(1, head)
        add("record payload byte", _flip_payload(seq, rng.randrange(1 << 16), rng.randrange(1, 256), style()),
            _seq(seq), what=f"seq {seq}")  # fmt: skip
    for record_type, how in (("provenance.session@1", b"\xff"), ("trace.review-call@1", b"x")):
        seq = next(r["seq"] for r in c.records if r["type"] == record_type)  # the checks beside the walk read it
        add(
            "record payload unreadable",
            _unreadable_payload(seq, how, style()),
            _seq(seq),
            what=f"seq {seq} {record_type}",
        )
    for _ in range(per_kind):
        seq = rng.randint(1, head)
        record = c.records[seq - 1]
        column = rng.choice([f for f in HEADER_FIELDS if record[f]])
        add("record header field", _edit_column(seq, column, _other_char(str(record[column]), rng), style()),
            _seq(seq), what=f"seq {seq} {column}")  # fmt: skip
    seq = rng.choice([r["seq"] for r in c.records if r["supersedes"] is None and r["seq"] > 2])
    earlier = c.records[rng.randrange(1, seq - 1)]["id"]  # a correction forged: it now supersedes an earlier record
    add("record header field", _edit_column(seq, "supersedes", str(earlier), style()), _seq(seq),
        what=f"seq {seq} supersedes set")  # fmt: skip
    for column in ("hash", "prev_hash"):
        for _ in range(per_kind):
            seq = rng.randint(1, head)
            value = _other_char(str(c.records[seq - 1][column]), rng)
            add(f"record {column}", _edit_column(seq, column, value, style()), _seq(seq), what=f"seq {seq}")
    for seq in rng.sample(range(2, head), per_kind):
        add("record deleted", _delete_record(seq, style()), _seq(seq), what=f"seq {seq}")
    a = rng.randint(2, head - 1)
    add("records reordered", _swap_records(a, a + 1, style()), _seq(a), _seq(a + 1), what=f"seqs {a} and {a + 1}")
    for _ in range(per_kind - 1):
        a, b = sorted(rng.sample(range(2, head + 1), 2))
        add("records reordered", _swap_records(a, b, style()), _seq(a), _seq(b), what=f"seqs {a} and {b}")
    for cut in sorted(rng.sample(range(1, PLAIN_TAIL + 1), per_kind)):
        cut_off = rf"checkpoint is at seq {head}\b.*ends at seq {head - cut}\b: records were cut"
        add("tail cut", _cut_tail(head - cut, style()), cut_off, what=f"last {cut}")
    rewritten = rf"record at seq {head} has hash .*the history up to the checkpoint was rewritten"
    for seq in sorted(rng.sample(range(2, t.required_at), per_kind - 1)):  # before the signed records
        add("chain rewritten", _rewrite_chain(seq, style()), rewritten, what=f"from seq {seq}")
    add("record planted", _plant_record(rng.randint(2, head), 0, style()), r"rows outside 1\.\.head", what="seq 0")
    at = head + rng.randint(2, 5)
    add("record planted", _plant_record(rng.randint(2, head), at, style()), _seq(at), what=f"seq {at}, a gap")

    for version in sorted(rng.sample(range(1, SCHEMA_VERSION + 1), 2)):
        add("migration row deleted", _delete_migration(version), rf"rt_migrations\) lacks version\(s\) {version}\b",
            what=f"version {version}")  # fmt: skip

    # query tables
    tables = [table for table in c.tables if table.rows]
    for _ in range(per_kind):
        table = rng.choice(tables)
        column = rng.choice([name for name, _ in table.columns])
        add("query row edited", _edit_row(table, rng.randrange(table.rows), column, rng.randrange(1 << 30)),
            rf"\b{table.short}\b", what=f"{table.short}.{column}")  # fmt: skip
    for _ in range(per_kind):
        table = rng.choice(tables)
        add("query row added", _add_row(table, rng.randrange(table.rows), rng.choice(table.key)),
            rf"\b{table.short}\b", what=table.short)  # fmt: skip
    for _ in range(per_kind):
        table = rng.choice(tables)
        add("query row deleted", _delete_row(table, rng.randrange(table.rows)), rf"\b{table.short}\b",
            what=table.short)  # fmt: skip

    # signatures
    for seq in rng.sample(c.signed, per_kind):
        add("signature deleted", _delete_signature(seq, style()), _seq(seq), what=f"seq {seq}")
    for seq in rng.sample(c.signed, per_kind - 1):
        add("signature altered", _flip_signature(seq, rng.randrange(64), rng.randrange(1, 256), style()), _seq(seq),
            what=f"seq {seq} sig byte")  # fmt: skip
    seq = rng.choice(c.signed)
    add("signature altered", _resign(seq, style()), _seq(seq), what=f"seq {seq} re-signed by an undeclared key")
    add("forged tail", _forge_tail("unsigned"), _seq(head + 1), what="unsigned")
    add("forged tail", _forge_tail("undeclared"), _seq(head + 1), what="signed by an undeclared key")
    add("forged tail", _forge_tail("self-declared"), _seq(head + 1), _seq(head + 2), what="key declared by itself")
    # the signature cases again, held only to the keys the chain declares and its require point
    chain_only = [
        replace(case, name=f"{case.name} without --trusted-keys", trusted_keys=False)
        for case in cases
        if case.kind == "forged tail"
        or case.name.startswith(("signature deleted#1 ", "signature altered#1 "))
        or "re-signed" in case.name
    ]
    return cases + chain_only
