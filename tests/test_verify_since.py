"""``verify --since CHECKPOINT``: the checkpoint is checked as ``--checkpoint`` checks it, then only
what follows its seq; a full ``verify`` (the default) still checks everything."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

from conftest import run_cli as run
from conftest import use_store
from reviewtrail.app import open_store
from reviewtrail.ledger import NewRecord


@pytest.fixture(scope="module")
def key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def append(i: int, **extra: Any) -> str:
    with open_store() as store:
        [env] = store.append([NewRecord(type="eval.result@1", actor="a", privacy="private", payload={"i": i}, **extra)])
    return env.id


@pytest.fixture
def anchored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: Ed25519PrivateKey) -> Path:
    """A store with seq 1..4 (identity, then three records), a checkpoint at seq 4 signed by
    ``key`` (cp.json, public key rt.pub), then seq 5 and 6 (6 supersedes 2)."""
    use_store(tmp_path, monkeypatch)
    assert run("init")[0] == 0
    first = append(0)
    append(1, supersedes=first)
    append(2)
    (tmp_path / "rt.pem").write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    (tmp_path / "rt.pub").write_bytes(key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo))
    assert run("ledger", "checkpoint", "--key", "rt.pem", "--out", "cp.json")[0] == 0
    third = append(3)
    append(4, supersedes=third)
    return tmp_path


def verify(*args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = run("verify", "--json", *args)
    assert out.strip(), err
    doc: dict[str, Any] = json.loads(out)
    return code, doc


def tamper(root: Path, sql: str, *params: object) -> None:
    conn = sqlite3.connect(root / "store" / "ledger.sqlite")
    conn.execute("DROP TRIGGER IF EXISTS rt_records_no_update")
    conn.execute(sql, params)
    conn.execute(
        "CREATE TRIGGER rt_records_no_update BEFORE UPDATE ON rt_records "
        "BEGIN SELECT RAISE(ABORT, 'ledger records are append-only'); END"
    )
    conn.commit()
    conn.close()


def test_since_checks_only_what_follows_the_checkpoint_and_says_so(anchored: Path) -> None:
    code, doc = verify("--since", "cp.json", "--public-key", "rt.pub")
    assert code == 0, doc["problems"]
    assert doc["since"]["seq"] == 4 and doc["since"]["checkpoint"] == "cp.json"
    assert doc["since"]["checked"].startswith("only what follows seq 4 of a verified checkpoint")
    assert doc["recordsChecked"] == 2 and doc["head"]["seq"] == 6
    assert any("checked only what follows seq 4" in n for n in doc["notes"])
    code, out, _ = run("verify", "--since", "cp.json", "--public-key", "rt.pub")
    assert code == 0 and "checked: only what follows seq 4 of a verified checkpoint" in out
    code, doc = verify()  # the default is the whole store
    assert code == 0 and doc["since"] is None and doc["recordsChecked"] == 6


def test_a_rewritten_checkpoint_head_fails_since(anchored: Path) -> None:
    tamper(anchored, "UPDATE rt_records SET hash = ? WHERE seq = 4", "ab" * 32)
    code, doc = verify("--since", "cp.json", "--public-key", "rt.pub")
    assert code == 4
    assert any("cp.json" in p and "rewritten" in p for p in doc["problems"]), doc["problems"]
    assert doc["since"]["checked"].startswith("nothing")


def test_a_damaged_record_after_the_checkpoint_fails_since(anchored: Path) -> None:
    tamper(anchored, "UPDATE rt_records SET payload = ? WHERE seq = 5", b'{"i":33}')
    code, doc = verify("--since", "cp.json", "--public-key", "rt.pub")
    assert code == 4
    assert any("seq 5" in p and "payloadHash" in p for p in doc["problems"]), doc["problems"]


def test_a_damaged_record_before_the_checkpoint_is_seen_only_by_a_full_verify(anchored: Path) -> None:
    tamper(anchored, "UPDATE rt_records SET payload = ? WHERE seq = 3", b'{"i":11}')
    code, doc = verify("--since", "cp.json", "--public-key", "rt.pub")
    assert code == 0, doc["problems"]  # documented: records up to the checkpoint are not read
    code, doc = verify()
    assert code == 4 and any("seq 3" in p and "payloadHash" in p for p in doc["problems"])


def test_query_rows_of_records_after_the_checkpoint_are_checked(anchored: Path) -> None:
    conn = sqlite3.connect(anchored / "store" / "ledger.sqlite")
    conn.execute("DELETE FROM rt_p_supersessions WHERE rt_seq = 6")  # given by seq 6, after the checkpoint
    conn.execute("UPDATE rt_p_supersessions SET by_id = 'forged' WHERE rt_seq = 3")  # given by seq 3, before it
    conn.commit()
    conn.close()
    code, doc = verify("--since", "cp.json", "--public-key", "rt.pub")
    assert code == 4
    found = [p for p in doc["problems"] if p.startswith("query table supersessions")]
    assert len(found) == 1 and "is missing (record seq 6 gives it)" in found[0], found
    code, doc = verify()
    found = [p for p in doc["problems"] if p.startswith("query table supersessions")]
    assert len(found) == 3, found  # seq 6's row missing, seq 3's row missing and a forged one added


def test_a_stored_row_naming_a_later_record_that_does_not_give_it_is_reported(anchored: Path) -> None:
    conn = sqlite3.connect(anchored / "store" / "ledger.sqlite")
    conn.execute("INSERT INTO rt_p_supersessions (superseded_id, by_id, seq, rt_seq) VALUES ('x', 'y', 5, 5)")
    conn.commit()
    conn.close()
    code, doc = verify("--since", "cp.json", "--public-key", "rt.pub")
    assert code == 4
    assert any("was added (no record after seq 4 gives it)" in p for p in doc["problems"]), doc["problems"]


def test_an_unsigned_checkpoint_is_refused_when_keys_are_given(anchored: Path) -> None:
    assert run("ledger", "checkpoint", "--out", "plain.json")[0] == 0
    code, doc = verify("--since", "plain.json", "--public-key", "rt.pub")
    assert code == 4 and any("not signed" in p for p in doc["problems"])
    assert doc["since"]["checked"].startswith("nothing")
    code, doc = verify("--since", "plain.json")  # without keys, the statement is still compared
    assert code == 0 and doc["recordsChecked"] == 0


def test_since_does_not_repair(anchored: Path) -> None:
    code, _, err = run("verify", "--since", "cp.json", "--repair")
    assert code == 2 and "--repair" in err
