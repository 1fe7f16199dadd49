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

from support.campaign import Attack, Facts, Project, Uncaught, checkpoint_wal, remove_ledger, unguarded, write_over
from support.campaign_attacks_files import file_attacks

__all__ = ["attack_cases"]


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
    remove_ledger(p)


def emptied(p: Project, f: Facts, o: Project) -> None:
    with unguarded(p) as conn:
        conn.execute("DELETE FROM rt_records")


def replaced(p: Project, f: Facts, o: Project) -> None:
    remove_ledger(p)
    shutil.copy(o.db, p.db)


def garbage_header(p: Project, f: Facts, o: Project) -> None:
    checkpoint_wal(p)
    with p.db.open("r+b") as fh:
        fh.write(b"\x00garbage garbage garbage!\xff" * 4)


def truncated(p: Project, f: Facts, o: Project) -> None:
    checkpoint_wal(p)
    os.truncate(p.db, p.db.stat().st_size // 2 + 123)


# --- records ---------------------------------------------------------------------------------------
def _record_edit(column: str, where: str) -> Attack:
    def attack(p: Project, f: Facts, o: Project) -> None:
        with unguarded(p) as conn:
            (seq, value) = conn.execute(f"SELECT seq, {column} FROM rt_records WHERE {where}").fetchone()
            conn.execute(f"UPDATE rt_records SET {column} = ? WHERE seq = ?", (_edited(value), seq))

    return attack


def deep_payload(p: Project, f: Facts, o: Project) -> None:
    """A record's payload swapped for a JSON array nested 200000 deep."""
    with unguarded(p) as conn:
        conn.execute("UPDATE rt_records SET payload = ? WHERE seq = 3", (b"[" * 200_000 + b"]" * 200_000,))


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


def _extra_triggers() -> dict[str, Attack]:
    on_records = "CREATE TRIGGER rt_records_audit AFTER INSERT ON rt_records BEGIN DELETE FROM rt_p_cas_refs; END"
    on_runs = "CREATE TRIGGER rt_p_prov_runs_guard BEFORE INSERT ON rt_p_prov_runs BEGIN SELECT RAISE(IGNORE); END"
    return {
        "trigger added on rt_records (deletes query rows at each append)": _sql(on_records),
        "trigger added on a query table (drops every new run row)": _sql(on_runs),
    }


# --- the store's furniture -------------------------------------------------------------------------
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


def _swapped_then(rel: str, *commands: tuple[str, ...]) -> Attack:
    """A folder of the store or the project swapped for a file (or a file for a folder); then each
    command that uses it must fail cleanly (a documented code, never exit 1 or a traceback)."""

    def attack(p: Project, f: Facts, o: Project) -> None:
        path = p.root / rel
        if path.is_dir():
            shutil.rmtree(path)
            path.write_text("not a folder\n")
        else:
            path.unlink(missing_ok=True)
            path.mkdir()
        for args in commands:
            result = p.cli(*(a.format(session=f.session) for a in args))
            if result.code == 1 or "Traceback" in result.err:
                last = result.err.strip().splitlines()[-1] if result.err.strip() else ""
                raise Uncaught(f"{' '.join(args[:2])}: exit {result.code}: {last[:200]}")

    return attack


def _swaps() -> dict[str, Attack]:
    run = ("run", "--session", "{session}", "-c", "print(1)")
    save = ("trace", "save", "--skill", "s", "--purpose", "p", "--response", "r", "--project-dir", ".")
    return {
        "events.jsonl replaced by a folder (then trace save)": _swapped_then(".aris/meta/events.jsonl", save),
        ".aris/meta/pending replaced by a file (then trace save)": _swapped_then(".aris/meta/pending", save),
        ".aris/traces replaced by a file (then trace save)": _swapped_then(".aris/traces", save),
        "workspaces/.locks replaced by a file (then run, session rm)": _swapped_then(
            ".reviewtrail/workspaces/.locks", run, ("session", "rm", "{session}")
        ),
        "runs-pending replaced by a file (then run)": _swapped_then(".reviewtrail/runs-pending", run),
        "data ingest/ replaced by a file (then cas put, artifact upload)": _swapped_then(
            ".reviewtrail/versioning/data/ingest", ("cas", "put", "up.csv"), ("artifact", "upload", "x.csv", "up.csv")
        ),
    }


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
            write_over(path, data)

    return attack


def _marker(change: Callable[[dict[str, Any]], Any]) -> Attack:
    def attack(p: Project, f: Facts, o: Project) -> None:
        path = p.store / "reviewtrail-store.json"
        doc = json.loads(path.read_text())
        new = change(doc)
        write_over(path, new if isinstance(new, bytes) else json.dumps(doc).encode())

    return attack


def _other_id(doc: dict[str, Any]) -> None:
    doc["storeId"] = "00000000-0000-4000-8000-000000000000"


def _other_identity(doc: dict[str, Any]) -> None:
    doc["identity"]["hash"] = "0" * 64


# --- holes of the second hostile campaign -----------------------------------------------------------
def marker_downgraded_ledger_emptied(p: Project, f: Facts, o: Project) -> None:
    """The marker rewritten as an older store's (no identity), the ledger and its query tables emptied."""
    write_over(p.store / "reviewtrail-store.json", b'{"format": 1}')
    with unguarded(p) as conn:
        conn.execute("DELETE FROM rt_records")
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'rt_p_%'"):
            conn.execute(f'DELETE FROM "{name}"')


def _symlinked(rel: str) -> Attack:
    """A store file swapped for a symlink to a same-content copy outside the store."""

    def attack(p: Project, f: Facts, o: Project) -> None:
        checkpoint_wal(p)
        path = p.store / rel
        outside = p.root.with_name(p.root.name + "-outside") / path.name
        outside.parent.mkdir(exist_ok=True)
        if path.exists():
            shutil.copy(path, outside)
            path.unlink()
        else:
            outside.write_bytes(b"")
        path.symlink_to(outside)

    return attack


def _dropped_table_then(table: str, *args: str) -> Attack:
    """A query table dropped; a command that reads it must say so (exit 4), not that the backend is down."""

    def attack(p: Project, f: Facts, o: Project) -> None:
        with p.connect() as conn:
            conn.execute(f'DROP TABLE "{table}"')
        if args:
            result = p.cli(*args)
            if result.code != 4 or table not in result.err:
                raise Uncaught(f"{' '.join(args)} after {table} was dropped: {result.describe()}")

    return attack


def _second_campaign() -> dict[str, Attack]:
    return {
        "store marker: rewritten to {format: 1} (identity dropped)": _marker(lambda doc: b'{"format": 1}'),
        "store marker rewritten to {format: 1}, ledger and query tables emptied": marker_downgraded_ledger_emptied,
        "ledger.sqlite replaced by a symlink to an outside copy": _symlinked("ledger.sqlite"),
        "ledger.sqlite-wal planted as a symlink to an outside file": _symlinked("ledger.sqlite-wal"),
        "store marker replaced by a symlink to an outside copy": _symlinked("reviewtrail-store.json"),
        "query table rt_p_cas_refs dropped": _dropped_table_then("rt_p_cas_refs"),
        "query table rt_p_prov_artifact_versions dropped (then artifact ls)": _dropped_table_then(
            "rt_p_prov_artifact_versions", "artifact", "ls"
        ),
    }


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
        "record seq 3: payload nested 200000 deep": deep_payload,
    }
    for column in ("id", "type", "time", "actor", "payload", "payload_hash", "prev_hash", "hash"):
        cases[f"record seq 3: one byte of {column}"] = _record_edit(column, "seq = 3")
    for column in ("payload", "subject"):
        cases[f"head record: one byte of {column}"] = _record_edit(column, "seq = (SELECT max(seq) FROM rt_records)")
    cases.update(_table_attacks(template))
    cases["query: version row deleted, then the next upload"] = deleted_version_then_upload
    cases["query: version number forged, then read by show/provenance/ls"] = forged_version_then_read
    cases.update(_trigger_attacks(template))
    cases.update(_extra_triggers())
    cases.update(_furniture_attacks(template))
    cases.update(_swaps())
    cases.update(
        {
            "store marker: storeId changed": _marker(_other_id),
            "store marker: identity hash changed": _marker(_other_identity),
            "store marker: not JSON": _marker(lambda doc: b'{"format": 1, "storeId": '),
        }
    )
    cases.update(_second_campaign())
    cases.update(file_attacks())
    return cases
