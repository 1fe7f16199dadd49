"""The campaign's attacks: named ways to damage a populated project that ``verify`` must catch (exit 4).

Each attack is a function ``(project, facts, other_store)`` that changes files as someone with
write access to the store and the project folder could. Edits to ``rt_records`` put the
append-only triggers back afterwards, so only the edit itself can give it away.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.campaign import SKILL, Facts, Project, unguarded

__all__ = ["Attack", "Uncaught", "attack_cases"]

Attack = Callable[[Project, Facts, Project], "list[str] | None"]  # returns extra verify arguments


def _remove_ledger(p: Project) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{p.db}{suffix}").unlink(missing_ok=True)


def _sql(*statements: str, guarded: bool = True) -> Attack:
    def attack(p: Project, f: Facts, o: Project) -> None:
        if guarded:
            with p.connect() as conn:
                for s in statements:
                    conn.execute(s)
            return
        with unguarded(p) as conn:
            for s in statements:
                conn.execute(s)

    return attack


def _one_char(value: str) -> str:
    last = value[-1]
    return value[:-1] + ("1" if last != "1" else "2")


def _edited(value: Any) -> Any:
    if isinstance(value, bytes):
        data = bytearray(value)
        i = data.find(b'"', len(data) // 2)  # a byte inside the JSON, between quotes
        i = i - 1 if i > 0 else len(data) // 2
        data[i] = ord("Q") if data[i] != ord("Q") else ord("R")
        return bytes(data)
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str) and value:
        return _one_char(value)
    return "forged"


# --- the ledger file -------------------------------------------------------------------------------
def deleted(p: Project, f: Facts, o: Project) -> None:
    _remove_ledger(p)


def emptied(p: Project, f: Facts, o: Project) -> None:
    with unguarded(p) as conn:
        conn.execute("DELETE FROM rt_records")


def replaced(p: Project, f: Facts, o: Project) -> None:
    _remove_ledger(p)
    shutil.copy(o.db, p.db)


def garbage_header(p: Project, f: Facts, o: Project) -> None:
    _checkpoint_wal(p)
    with p.db.open("r+b") as fh:
        fh.write(b"\x00garbage garbage garbage!\xff" * 4)


def truncated(p: Project, f: Facts, o: Project) -> None:
    _checkpoint_wal(p)
    os.truncate(p.db, p.db.stat().st_size // 2 + 123)


def _checkpoint_wal(p: Project) -> None:
    with p.connect() as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for suffix in ("-wal", "-shm"):
        Path(f"{p.db}{suffix}").unlink(missing_ok=True)


# --- records ---------------------------------------------------------------------------------------
def _record_edit(column: str, where: str) -> Attack:
    def attack(p: Project, f: Facts, o: Project) -> None:
        with unguarded(p) as conn:
            (seq, value) = conn.execute(f"SELECT seq, {column} FROM rt_records WHERE {where}").fetchone()
            conn.execute(f"UPDATE rt_records SET {column} = ? WHERE seq = ?", (_edited(value), seq))

    return attack


def forged_record(p: Project, f: Facts, o: Project) -> None:
    with p.connect() as conn:
        row = list(conn.execute("SELECT * FROM rt_records ORDER BY seq DESC LIMIT 1").fetchone())
        row[0] += 1
        row[1] = _one_char(row[1])
        row[-2] = row[-1]  # links to the head, but its own hash cannot be right
        conn.execute(f"INSERT INTO rt_records VALUES ({', '.join('?' * len(row))})", row)


# --- query tables ----------------------------------------------------------------------------------
def _table_attacks(template: Project) -> dict[str, Attack]:
    cases: dict[str, Attack] = {}
    with template.connect() as conn:
        names = [
            n
            for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            if n.startswith("rt_p_") and conn.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0]
        ]
        for name in sorted(names):
            info = conn.execute(f'PRAGMA table_info("{name}")').fetchall()
            key = [c[1] for c in info if c[5]]
            other = [c[1] for c in info if not c[5] and c[1] != "rt_seq"]
            cases[f"query {name}: edit {other[0]}"] = _edit_row(name, other[0])
            cases[f"query {name}: delete a row"] = _sql(
                f'DELETE FROM "{name}" WHERE rowid = (SELECT min(rowid) FROM "{name}")'
            )
            cases[f"query {name}: forged row"] = _forge_row(name, key)
    return cases


def _edit_row(table: str, column: str) -> Attack:
    def attack(p: Project, f: Facts, o: Project) -> None:
        with p.connect() as conn:
            rowid, value = conn.execute(f'SELECT rowid, "{column}" FROM "{table}" ORDER BY rowid LIMIT 1').fetchone()
            conn.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = ?', (_edited(value), rowid))

    return attack


def _forge_row(table: str, key: list[str]) -> Attack:
    def attack(p: Project, f: Facts, o: Project) -> None:
        with p.connect() as conn:
            cur = conn.execute(f'SELECT * FROM "{table}" ORDER BY rowid LIMIT 1')
            columns = [d[0] for d in cur.description]
            row = dict(zip(columns, cur.fetchone(), strict=True))
            for k in key:
                row[k] = row[k] + 1000 if isinstance(row[k], int) else _edited(row[k])
            marks = ", ".join("?" * len(row))
            conn.execute(f'INSERT INTO "{table}" ({", ".join(columns)}) VALUES ({marks})', list(row.values()))

    return attack


class Uncaught(AssertionError):
    """A command accepted the damage (raised by attacks that also run a command)."""


def deleted_version_then_upload(p: Project, f: Facts, o: Project) -> None:
    """A deleted version row must never let the next upload reuse its number."""
    with p.connect() as conn:
        conn.execute("DELETE FROM rt_p_prov_artifact_versions WHERE name = 'data.csv'")
    uploaded = p.cli("artifact", "upload", "data.csv", "up.csv", "--json")
    if uploaded.code == 0 and uploaded.json()["version"] == 1:
        raise Uncaught(f"the next upload reused version 1: {uploaded.out[:200]}")


def forged_version_then_read(p: Project, f: Facts, o: Project) -> None:
    """Reads never show a row the chain does not support."""
    with p.connect() as conn:
        conn.execute("UPDATE rt_p_prov_artifact_versions SET version = 7 WHERE name = 'out.md'")
    for args in (("artifact", "show", "out.md", "--json"), ("provenance", "out.md@7"), ("artifact", "ls", "--json")):
        shown = p.cli(*args)
        if shown.code != 4 and ("out.md@7" in shown.out or '"version": 7' in shown.out):
            raise Uncaught(f"{' '.join(args)} showed the forged version 7: {shown.describe()}")


# --- triggers --------------------------------------------------------------------------------------
def _trigger_attacks(template: Project) -> dict[str, Attack]:
    with template.connect() as conn:
        triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type='trigger'").fetchall()
    cases: dict[str, Attack] = {}
    for name, sql in triggers:
        noop = sql[: sql.index(" BEGIN ")] + " BEGIN SELECT 1; END"
        cases[f"trigger {name}: dropped"] = _sql(f'DROP TRIGGER "{name}"')
        cases[f"trigger {name}: replaced by a no-op"] = _sql(f'DROP TRIGGER "{name}"', noop)
    return cases


# --- the store's furniture -------------------------------------------------------------------------
def _write(path: Path, data: bytes) -> None:
    if path.exists():
        path.chmod(0o644)
    path.write_bytes(data)


def _furniture_attacks(template: Project) -> dict[str, Attack]:
    cases: dict[str, Attack] = {}
    for pool in sorted(d.name for d in (template.store / "versioning").iterdir()):
        base = Path("versioning") / pool
        cases[f"pool {pool}: oci-layout edited"] = _file(base / "oci-layout", b'{"imageLayoutVersion": "1.0.1"}')
        cases[f"pool {pool}: index.json edited"] = _file(
            base / "index.json",
            b'{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": [{}]}',
        )
        cases[f"pool {pool}: oci-layout deleted"] = _file(base / "oci-layout", None)
    cases["pool agent-state: whole folder deleted"] = _tree(Path("versioning") / "agent-state")
    cases["store marker deleted"] = _file(Path("reviewtrail-store.json"), None)
    return cases


def _tree(rel: Path) -> Attack:
    def attack(p: Project, f: Facts, o: Project) -> None:
        for path in (p.store / rel).rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        shutil.rmtree(p.store / rel)

    return attack


def _file(rel: Path, data: bytes | None) -> Attack:
    def attack(p: Project, f: Facts, o: Project) -> None:
        path = p.store / rel
        if data is None:
            path.unlink()
        else:
            _write(path, data)

    return attack


def _marker(change: Callable[[dict[str, Any]], Any]) -> Attack:
    def attack(p: Project, f: Facts, o: Project) -> None:
        path = p.store / "reviewtrail-store.json"
        doc = json.loads(path.read_text())
        new = change(doc)
        _write(path, new if isinstance(new, bytes) else json.dumps(doc).encode())

    return attack


def _other_id(doc: dict[str, Any]) -> None:
    doc["storeId"] = "00000000-0000-4000-8000-000000000000"


def _other_identity(doc: dict[str, Any]) -> None:
    doc["identity"]["hash"] = "0" * 64


# --- blobs -----------------------------------------------------------------------------------------
def _blob(p: Project, pool: str, content: bytes | None = None) -> Path:
    blobs = sorted((p.store / "versioning" / pool / "blobs" / "sha256").iterdir())
    for blob in blobs:
        if content is None or blob.read_bytes() == content:
            return blob
    raise AssertionError(f"no blob in {pool}")


def _upload(p: Project) -> Path:
    return _blob(p, "data", (p.root / "up.csv").read_bytes())


def flipped_data_byte(p: Project, f: Facts, o: Project) -> None:
    blob = _upload(p)
    data = bytearray(blob.read_bytes())
    data[1] ^= 0x01
    _write(blob, bytes(data))


def flipped_state_byte(p: Project, f: Facts, o: Project) -> None:
    blob = max((b for b in (p.store / "versioning" / "agent-state" / "blobs" / "sha256").iterdir()),
               key=lambda b: b.stat().st_size)  # fmt: skip
    data = bytearray(blob.read_bytes())
    data[len(data) // 2] ^= 0x20
    _write(blob, bytes(data))


def truncated_blob(p: Project, f: Facts, o: Project) -> None:
    blob = _upload(p)
    _write(blob, blob.read_bytes()[:-1])


def deleted_blob(p: Project, f: Facts, o: Project) -> None:
    _upload(p).unlink()


def symlinked_blob(p: Project, f: Facts, o: Project) -> None:
    blob = _upload(p)
    outside = p.root / "same-content.csv"
    shutil.copy(blob, outside)
    blob.unlink()
    blob.symlink_to(outside)


def fifo_blob(p: Project, f: Facts, o: Project) -> None:
    blob = _upload(p)
    blob.unlink()
    os.mkfifo(blob)


def foreign_blob(p: Project, f: Facts, o: Project) -> None:
    name = p.store / "versioning" / "data" / "blobs" / "sha256" / ("ab" * 32)
    name.write_bytes(b"bytes whose hash is not their name\n")


# --- traces ----------------------------------------------------------------------------------------
def _run_dir(p: Project, f: Facts) -> Path:
    return p.root / ".aris" / "traces" / SKILL / Path(f.trace_run).name


def _trace_file(suffix: str, change: Callable[[Path], None]) -> Attack:
    def attack(p: Project, f: Facts, o: Project) -> None:
        [path] = sorted(_run_dir(p, f).glob(f"001-*{suffix}"))[:1] or [_run_dir(p, f) / suffix]
        change(path)

    return attack


def _replace(old: bytes, new: bytes) -> Callable[[Path], None]:
    def change(path: Path) -> None:
        data = path.read_bytes()
        assert old in data, f"{old!r} not in {path}"
        path.write_bytes(data.replace(old, new, 1))

    return change


def added_trace_file(p: Project, f: Facts, o: Project) -> None:
    run = _run_dir(p, f)
    for src in sorted(run.glob("002-*")):
        shutil.copy(src, run / src.name.replace("002-", "003-"))


def added_trace_run(p: Project, f: Facts, o: Project) -> None:
    """A whole run that no record covers, consistent in itself (its run.meta.json names its folder)."""
    run = _run_dir(p, f)
    forged = run.with_name(run.name[:-2] + "99")
    shutil.copytree(run, forged)
    _replace(f'"{run.name}"'.encode(), f'"{forged.name}"'.encode())(forged / "run.meta.json")


def deleted_trace_run(p: Project, f: Facts, o: Project) -> None:
    shutil.rmtree(_run_dir(p, f))


def _events(change: Callable[[list[bytes]], list[bytes]]) -> Attack:
    def attack(p: Project, f: Facts, o: Project) -> None:
        path = p.root / ".aris" / "meta" / "events.jsonl"
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(change(lines)))

    return attack


# --- a rollback to an older copy, caught by a checkpoint kept outside the store ---------------------
def _checkpoint(p: Project, out: Path) -> None:
    result = p.cli("ledger", "checkpoint", "--out", str(out))
    if result.code == 0:
        return
    if "No such command" not in result.err:
        raise AssertionError(f"ledger checkpoint failed: {result.describe()}")
    # `ledger checkpoint` is not there yet: write the documented unsigned statement by hand
    verified, doc = p.verify()
    assert verified.code == 0, verified.describe()
    statement = {
        "type": "reviewtrail.checkpoint@1",
        "storeId": doc["storeId"],
        "seq": doc["head"]["seq"],
        "headHash": doc["head"]["hash"],
        "records": doc["recordsChecked"],
        "time": "2026-11-30T12:00:00Z",
    }
    out.write_text(json.dumps(statement))


def rollback(p: Project, f: Facts, o: Project) -> list[str]:
    _checkpoint(p, p.root / "older.json")
    _checkpoint_wal(p)
    shutil.copy(p.db, p.root / "older.sqlite")
    for _ in range(2):
        appended = p.cli("ledger", "append", "--type", "eval.more@1", "--actor", "a", "--privacy", "private")
        assert appended.code == 0, appended.describe()
    newer = p.root / "newer.json"
    _checkpoint(p, newer)
    _remove_ledger(p)
    shutil.copy(p.root / "older.sqlite", p.db)
    return ["--checkpoint", str(newer)]


def attack_cases(template: Project, facts: Facts) -> dict[str, Attack]:
    cases: dict[str, Attack] = {
        "ledger deleted (+wal/shm)": deleted,
        "ledger emptied (delete trigger dropped first)": emptied,
        "ledger replaced by another store's": replaced,
        "ledger garbage header": garbage_header,
        "ledger truncated": truncated,
        "rt_migrations emptied": _sql("DELETE FROM rt_migrations"),
        "rt_records dropped": _sql("DROP TABLE rt_records"),
        "forged record appended": forged_record,
        "rollback to an older copy (verify --checkpoint newer)": rollback,
    }
    for column in ("id", "type", "time", "actor", "payload", "payload_hash", "prev_hash", "hash"):
        cases[f"record seq 3: one byte of {column}"] = _record_edit(column, "seq = 3")
    for column in ("payload", "subject"):
        cases[f"head record: one byte of {column}"] = _record_edit(column, "seq = (SELECT max(seq) FROM rt_records)")
    cases.update(_table_attacks(template))
    cases["query: version row deleted, then the next upload"] = deleted_version_then_upload
    cases["query: version number forged, then read by show/provenance/ls"] = forged_version_then_read
    cases.update(_trigger_attacks(template))
    cases.update(_furniture_attacks(template))
    cases.update(
        {
            "store marker: storeId changed": _marker(_other_id),
            "store marker: identity hash changed": _marker(_other_identity),
            "store marker: not JSON": _marker(lambda doc: b'{"format": 1, "storeId": '),
            "blob: one byte flipped (data)": flipped_data_byte,
            "blob: one byte flipped (agent-state)": flipped_state_byte,
            "blob: truncated": truncated_blob,
            "blob: deleted": deleted_blob,
            "blob: symlink to a same-content file": symlinked_blob,
            "blob: replaced by a FIFO": fifo_blob,
            "blob: foreign file under a hash name": foreign_blob,
            "trace: response.md edited": _trace_file(".response.md", _replace(b"Score: 6", b"Score: 9")),
            "trace: meta.json edited": _trace_file(".meta.json", _replace(b'"almost"', b'"ready"')),
            "trace: request.json deleted": _trace_file(".request.json", Path.unlink),
            "trace: run.meta.json edited": _trace_file("run.meta.json", _replace(b"codex", b"codey")),
            "trace: call files added": added_trace_file,
            "trace: run folder copied": added_trace_run,
            "trace: run folder deleted": deleted_trace_run,
            "events.jsonl: line edited": _events(lambda ls: [ls[0].replace(b'"ok"', b'"error"', 1), *ls[1:]]),
            "events.jsonl: line deleted": _events(lambda ls: ls[1:]),
            "events.jsonl: line added": _events(
                lambda ls: [*ls, ls[-1].replace(b'"call_number":2', b'"call_number":3')]
            ),
            "events.jsonl: a line that is not JSON added": _events(lambda ls: [*ls, b"{not json\n"]),
            "events.jsonl: non-UTF-8 line added": _events(lambda ls: [*ls, b'{"event": "review_trace\xff"}\n']),
        }
    )
    return cases
