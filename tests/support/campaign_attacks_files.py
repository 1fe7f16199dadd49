"""The campaign's attacks on files outside the ledger: blobs, trace files and events, workspaces, anchors.

Each attack is a function ``(project, facts, other_store)``, like those of ``campaign_attacks``;
those that need ``verify`` arguments (a checkpoint kept outside the store) return them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from support.campaign import (
    SKILL,
    Attack,
    Facts,
    Project,
    Uncaught,
    checkpoint_wal,
    remove_ledger,
    unguarded,
    write_over,
)

__all__ = ["file_attacks"]


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
    write_over(blob, bytes(data))


def flipped_state_byte(p: Project, f: Facts, o: Project) -> None:
    blob = max((b for b in (p.store / "versioning" / "agent-state" / "blobs" / "sha256").iterdir()),
               key=lambda b: b.stat().st_size)  # fmt: skip
    data = bytearray(blob.read_bytes())
    data[len(data) // 2] ^= 0x20
    write_over(blob, bytes(data))


def truncated_blob(p: Project, f: Facts, o: Project) -> None:
    blob = _upload(p)
    write_over(blob, blob.read_bytes()[:-1])


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


def _trace_file(suffix: str, change: Callable[[Path], object]) -> Attack:
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


def forged_pending_marker(p: Project, f: Facts, o: Project) -> None:
    """Call files added with a marker that makes them look like an interrupted save."""
    added_trace_file(p, f, o)
    pending = p.root / ".aris" / "meta" / "pending"
    pending.mkdir(parents=True, exist_ok=True)
    marker = {"skill": SKILL, "run_id": Path(f.trace_run).name, "call_number": 3, "purpose": "round-2-review"}
    (pending / "0123456789abcdef.json").write_text(json.dumps({**marker, "run_created": False, "pid": 1}))


def forged_pending_marker_then_repair(p: Project, f: Facts, o: Project) -> None:
    """A forged marker with call files that pass every check of their own (call 2 copied as call 3,
    its number changed inside), then ``verify --repair``: repair must not record them."""
    run = _run_dir(p, f)
    for src in sorted(run.glob("002-*")):
        data = re.sub(rb'"call_number": ?2\b', b'"call_number": 3', src.read_bytes())
        (run / src.name.replace("002-", "003-")).write_bytes(data)
    pending = p.root / ".aris" / "meta" / "pending"
    pending.mkdir(parents=True, exist_ok=True)
    purpose = sorted(run.glob("003-*.meta.json"))[0].name[len("003-") : -len(".meta.json")]
    marker = {"skill": SKILL, "run_id": run.name, "call_number": 3, "purpose": purpose, "run_created": False}
    (pending / "0123456789abcdef.json").write_text(json.dumps({**marker, "pid": 1}))
    p.cli("verify", "--repair", "--project-dir", str(p.root))


def symlinked_workspace(p: Project, f: Facts, o: Project) -> None:
    """A session's workspace swapped for a symlink to a folder outside the store."""
    outside = p.root / "outside"
    outside.mkdir()
    workspace = p.store / "workspaces" / f.session
    shutil.rmtree(workspace)
    workspace.symlink_to(outside)
    ran = p.cli("run", "--session", f.session, "-c", "open('escaped.txt', 'w').write('x')")
    if (outside / "escaped.txt").exists():
        raise Uncaught(f"run wrote through the symlinked workspace into {outside} ({ran.describe()})")


def _events(change: Callable[[list[bytes]], list[bytes]]) -> Attack:
    def attack(p: Project, f: Facts, o: Project) -> None:
        path = p.root / ".aris" / "meta" / "events.jsonl"
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(change(lines)))

    return attack


# --- a rollback to an older copy, caught by a checkpoint kept outside the store ---------------------
def _checkpoint(p: Project, out: Path, *key: str) -> None:
    result = p.cli("ledger", "checkpoint", "--out", str(out), *key)
    assert result.code == 0, f"ledger checkpoint failed: {result.describe()}"


def _keys(p: Project, name: str) -> tuple[Path, Path]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private, public = p.root / f"{name}.pem", p.root / f"{name}.pub"
    private.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return private, public


def signed_then_altered(p: Project, f: Facts, o: Project) -> list[str]:
    """A signed checkpoint whose seq and head were changed to match an older head."""
    private, public = _keys(p, "anchor")
    checkpoint = p.root / "signed.json"
    _checkpoint(p, checkpoint, "--key", str(private))
    doc = json.loads(checkpoint.read_text())
    with p.connect() as conn:
        doc["seq"], doc["headHash"] = conn.execute("SELECT seq, hash FROM rt_records WHERE seq = 5").fetchone()
    doc["records"] = 5
    checkpoint.write_text(json.dumps(doc))
    return ["--checkpoint", str(checkpoint), "--public-key", str(public)]


def signed_by_another_key(p: Project, f: Facts, o: Project) -> list[str]:
    """A checkpoint signed with a key other than the one verify is given."""
    private, _ = _keys(p, "intruder")
    _, public = _keys(p, "anchor")
    checkpoint = p.root / "signed.json"
    _checkpoint(p, checkpoint, "--key", str(private))
    return ["--checkpoint", str(checkpoint), "--public-key", str(public)]


def rollback(p: Project, f: Facts, o: Project) -> list[str]:
    _checkpoint(p, p.root / "older.json")
    checkpoint_wal(p)
    shutil.copy(p.db, p.root / "older.sqlite")
    for _ in range(2):
        appended = p.cli("ledger", "append", "--type", "eval.more@1", "--actor", "a", "--privacy", "private")
        assert appended.code == 0, appended.describe()
    newer = p.root / "newer.json"
    _checkpoint(p, newer)
    remove_ledger(p)
    shutil.copy(p.root / "older.sqlite", p.db)
    return ["--checkpoint", str(newer)]


def tail_cut(p: Project, f: Facts, o: Project) -> list[str]:
    """Two records appended after a checkpoint and then deleted: the chain alone still looks whole."""
    for _ in range(2):
        appended = p.cli("ledger", "append", "--type", "eval.more@1", "--actor", "a", "--privacy", "private")
        assert appended.code == 0, appended.describe()
    checkpoint = p.root / "checkpoint.json"
    _checkpoint(p, checkpoint)
    with unguarded(p) as conn:
        conn.execute("DELETE FROM rt_records WHERE seq > (SELECT max(seq) - 2 FROM rt_records)")
    return ["--checkpoint", str(checkpoint)]


def history_rewritten(p: Project, f: Facts, o: Project) -> list[str]:
    """One actor changed and every later hash recomputed: only a checkpoint kept outside can tell."""
    from reviewtrail.ledger.records._envelope import compute_hash

    checkpoint = p.root / "checkpoint.json"
    _checkpoint(p, checkpoint)
    with unguarded(p) as conn:
        cur = conn.execute("SELECT * FROM rt_records ORDER BY seq")
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
        first = next(r["seq"] for r in rows if r["actor"] == "alice")
        prev = next(r["hash"] for r in rows if r["seq"] == first - 1)
        for row in (r for r in rows if r["seq"] >= first):
            if row["seq"] == first:
                row["actor"] = "mallory"
            header = {
                "seq": row["seq"], "id": row["id"], "type": row["type"], "time": row["time"], "actor": row["actor"],
                "privacy": row["privacy"], "subject": row["subject"], "supersedes": row["supersedes"],
                "payloadHash": row["payload_hash"], "prevHash": prev,
            }  # fmt: skip
            prev = compute_hash(prev, header)
            conn.execute(
                "UPDATE rt_records SET actor = ?, prev_hash = ?, hash = ? WHERE seq = ?",
                (row["actor"], header["prevHash"], prev, row["seq"]),
            )
    verified, doc = p.verify()
    if verified.code != 0:  # the rewrite must be consistent, or this is just another edited record
        raise AssertionError(f"the rewritten chain does not verify on its own: {doc.get('problems')}")
    return ["--checkpoint", str(checkpoint)]


def _moved_out(rel: str) -> Attack:
    """A folder moved outside the project and a symlink left in its place (same content)."""

    def attack(p: Project, f: Facts, o: Project) -> None:
        inside = p.root / rel
        outside = p.root.with_name(p.root.name + "-outside") / inside.name
        outside.parent.mkdir()
        shutil.move(inside, outside)
        inside.symlink_to(outside)

    return attack


def symlinked_trace_file(p: Project, f: Facts, o: Project) -> None:
    [response] = sorted(_run_dir(p, f).glob("001-*.response.md"))
    outside = p.root / "same-response.md"
    shutil.copy(response, outside)
    response.unlink()
    response.symlink_to(outside)


DEEP = b"[" * 200_000 + b"]" * 200_000


def _then_read(damage: Attack) -> Attack:
    """The damage, then the trace read commands: each must give a clean answer (no traceback, no exit 1)."""

    def attack(p: Project, f: Facts, o: Project) -> list[str] | None:
        extra = damage(p, f, o)
        run = f"{SKILL}/{Path(f.trace_run).name}"
        for args in (("trace", "ls"), ("trace", "show", run), ("trace", "divergence", run), ("trace", "verify", ".")):
            result = p.cli(*args)
            if result.code == 1 or "Traceback" in result.err:
                last = result.err.strip().splitlines()[-1] if result.err.strip() else ""
                raise Uncaught(f"{' '.join(args)}: exit {result.code}: {last[:200]}")
        return extra

    return attack


def file_attacks() -> dict[str, Attack]:
    return {
        "rollback to an older copy (verify --checkpoint newer)": rollback,
        "tail cut after a checkpoint (verify --checkpoint)": tail_cut,
        "history rewritten with every later hash recomputed (verify --checkpoint)": history_rewritten,
        "signed checkpoint altered to an older head (verify --public-key)": signed_then_altered,
        "checkpoint signed by another key (verify --public-key)": signed_by_another_key,
        "blob: one byte flipped (data)": flipped_data_byte,
        "blob: one byte flipped (agent-state)": flipped_state_byte,
        "blob: truncated": truncated_blob,
        "blob: deleted": deleted_blob,
        "blob: symlink to a same-content file": symlinked_blob,
        "blob: replaced by a FIFO": fifo_blob,
        "blob: foreign file under a hash name": foreign_blob,
        "pool agent-state: folder moved out, symlink left": _moved_out(".reviewtrail/versioning/agent-state"),
        "trace: response.md a symlink to a same-content file": symlinked_trace_file,
        "trace: skill folder moved out, symlink left": _moved_out(f".aris/traces/{SKILL}"),
        "trace: response.md edited": _trace_file(".response.md", _replace(b"Score: 6", b"Score: 9")),
        "trace: meta.json edited": _trace_file(".meta.json", _replace(b'"almost"', b'"ready"')),
        "trace: request.json deleted": _trace_file(".request.json", Path.unlink),
        "trace: run.meta.json edited": _trace_file("run.meta.json", _replace(b"codex", b"codey")),
        "trace: call files added": added_trace_file,
        "trace: run folder copied": added_trace_run,
        "trace: run folder deleted": deleted_trace_run,
        "trace: meta.json nested 200000 deep (then trace ls/show/divergence/verify)": _then_read(
            _trace_file(".meta.json", lambda path: path.write_bytes(DEEP))
        ),
        "trace: run.meta.json nested 200000 deep (then trace ls/show/divergence/verify)": _then_read(
            _trace_file("run.meta.json", lambda path: path.write_bytes(DEEP))
        ),
        "events.jsonl: a line nested 200000 deep added": _events(lambda ls: [*ls, DEEP + b"\n"]),
        "trace: call files added with a forged pending marker": forged_pending_marker,
        "trace: call files added with a forged pending marker, then verify --repair": forged_pending_marker_then_repair,
        "workspace: replaced by a symlink to a folder outside the store (then run)": symlinked_workspace,
        "events.jsonl: line edited": _events(lambda ls: [ls[0].replace(b'"ok"', b'"error"', 1), *ls[1:]]),
        "events.jsonl: line deleted": _events(lambda ls: ls[1:]),
        "events.jsonl: line added": _events(lambda ls: [*ls, ls[-1].replace(b'"call_number":2', b'"call_number":3')]),
        "events.jsonl: a line that is not JSON added": _events(lambda ls: [*ls, b"{not json\n"]),
        "events.jsonl: non-UTF-8 line added": _events(lambda ls: [*ls, b'{"event": "review_trace\xff"}\n']),
    }
