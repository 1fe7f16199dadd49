"""Checkpoints anchor the chain outside the store: a cut tail, an older copy, a rewritten history,
a wrong key or an altered statement are all caught; the signing key never enters the store."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    BestAvailableEncryption,
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)

from conftest import run_cli as run
from conftest import use_store
from reviewtrail.canonical import canonical_json
from reviewtrail.errors import ConflictError, IntegrityError, InvalidInputError
from reviewtrail.ledger import (
    CHECKPOINT_TYPE,
    GENESIS_HASH,
    Envelope,
    Ledger,
    MemoryLedger,
    NewRecord,
    check_checkpoint,
    load_checkpoint,
    make_checkpoint,
    open_ledger,
    save_checkpoint,
)

STORE_ID = "7d0c2b9e-5b1f-4b8e-9d1a-3c2f6a9e1b40"


def private_pem(key: Any) -> bytes:
    return bytes(key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))


def public_pem(key: Any) -> bytes:
    return bytes(key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo))


@pytest.fixture(scope="module")
def key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


@pytest.fixture(scope="module")
def other_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def note(i: int, **extra: Any) -> NewRecord:
    return NewRecord.make(type="eval.result@1", actor="alice", privacy="private", payload={"i": i, **extra})


def fill(ledger: Ledger, start: int, stop: int) -> list[Envelope]:
    return ledger.append([note(i) for i in range(start, stop)])


# --- the statement ------------------------------------------------------------------------
def test_unsigned_checkpoint_states_the_head(key: Ed25519PrivateKey) -> None:
    ledger = MemoryLedger()
    envs = fill(ledger, 0, 3)
    cp = make_checkpoint(ledger, store_id=STORE_ID, private_key_pem=None, now=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    assert cp == {
        "type": CHECKPOINT_TYPE,
        "storeId": STORE_ID,
        "seq": 3,
        "headHash": envs[-1].hash,
        "records": 3,
        "time": "2026-01-02T03:04:05.000000Z",
    }
    assert check_checkpoint(ledger, cp, public_keys=[], store_id=STORE_ID) == []


def test_signature_is_ed25519_over_the_rfc8785_bytes_without_it(key: Ed25519PrivateKey) -> None:
    ledger = MemoryLedger()
    fill(ledger, 0, 2)
    cp = make_checkpoint(ledger, store_id=None, private_key_pem=private_pem(key))
    sig = cp["signature"]
    raw_public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    assert sig["alg"] == "ed25519" and sig["keyId"] == hashlib.sha256(raw_public).hexdigest()
    body = canonical_json({k: v for k, v in cp.items() if k != "signature"})
    key.public_key().verify(base64.b64decode(sig["value"]), body)  # raises if not
    assert check_checkpoint(ledger, cp, public_keys=[public_pem(key)], store_id=None) == []


def test_a_ledger_that_grew_still_extends_its_checkpoint(key: Ed25519PrivateKey) -> None:
    ledger = MemoryLedger()
    fill(ledger, 0, 3)
    cp = make_checkpoint(ledger, store_id=STORE_ID, private_key_pem=private_pem(key))
    fill(ledger, 3, 10)
    assert check_checkpoint(ledger, cp, public_keys=[public_pem(key)], store_id=STORE_ID) == []


def test_empty_ledger_checkpoint() -> None:
    ledger = MemoryLedger()
    cp = make_checkpoint(ledger, store_id=None, private_key_pem=None)
    assert (cp["seq"], cp["records"], cp["headHash"]) == (0, 0, GENESIS_HASH)
    fill(ledger, 0, 2)
    assert check_checkpoint(ledger, cp, public_keys=[], store_id=None) == []


def test_a_ledger_whose_count_disagrees_with_its_head_is_not_anchored() -> None:
    ledger = MemoryLedger()
    fill(ledger, 0, 3)
    del ledger.recorder._records[1]  # a record removed from the middle
    with pytest.raises(IntegrityError, match="holds 2 records but its head is seq 3"):
        make_checkpoint(ledger, store_id=None, private_key_pem=None)


# --- attacks ------------------------------------------------------------------------------
def test_cut_tail_by_restoring_an_older_copy_of_the_sqlite_file(tmp_path: Path, key: Ed25519PrivateKey) -> None:
    db = tmp_path / "ledger.sqlite"
    ledger = open_ledger(f"sqlite:///{db}")
    fill(ledger, 0, 3)
    ledger.close()
    shutil.copy(db, tmp_path / "older.sqlite")  # a backup, or what an attacker kept
    ledger = open_ledger(f"sqlite:///{db}")
    fill(ledger, 3, 6)
    cp = make_checkpoint(ledger, store_id=STORE_ID, private_key_pem=private_pem(key))
    ledger.close()
    for leftover in tmp_path.glob("ledger.sqlite-*"):
        leftover.unlink()
    shutil.copy(tmp_path / "older.sqlite", db)
    ledger = open_ledger(f"sqlite:///{db}")
    try:
        assert list(ledger.verify()) == []  # the older copy is a sound chain on its own
        problems = check_checkpoint(ledger, cp, public_keys=[public_pem(key)], store_id=STORE_ID)
        assert len(problems) == 1 and "at seq 6" in problems[0] and "ends at seq 3" in problems[0]
        assert "older copy" in problems[0]
        # Appending up to the old length does not help: the chain is not the one anchored.
        fill(ledger, 100, 103)
        problems = check_checkpoint(ledger, cp, public_keys=[public_pem(key)], store_id=STORE_ID)
        assert len(problems) == 1 and "rewritten" in problems[0]
    finally:
        ledger.close()


def replay(source: Ledger, target: Ledger, *, change_seq: int) -> None:
    """Recompute the whole chain in ``target``: same ids, times and types, one payload changed."""
    for env in source.read():
        payload = env.payload_value
        if env.seq == change_seq:
            payload = {**payload, "i": -1}
        target.append(
            [
                NewRecord.make(
                    id=env.id,
                    type=env.type,
                    actor=env.actor,
                    privacy=env.privacy,
                    subject=env.subject,
                    supersedes=env.supersedes,
                    time=datetime.fromisoformat(env.time.replace("Z", "+00:00")),
                    payload=payload,
                )
            ]
        )


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_rewritten_history_with_every_hash_recomputed(tmp_path: Path, key: Ed25519PrivateKey, backend: str) -> None:
    original = MemoryLedger()
    fill(original, 0, 5)
    cp = make_checkpoint(original, store_id=STORE_ID, private_key_pem=private_pem(key))
    forged = MemoryLedger() if backend == "memory" else open_ledger(f"sqlite:///{tmp_path / 'forged.sqlite'}")
    try:
        replay(original, forged, change_seq=2)
        fill(forged, 5, 8)
        assert list(forged.verify()) == []  # the chain alone cannot tell
        problems = check_checkpoint(forged, cp, public_keys=[public_pem(key)], store_id=STORE_ID)
        assert len(problems) == 1 and "seq 5" in problems[0] and "rewritten" in problems[0]
        # Control: an honest replay (nothing changed) matches the checkpoint.
        honest = MemoryLedger()
        replay(original, honest, change_seq=0)
        assert check_checkpoint(honest, cp, public_keys=[public_pem(key)], store_id=STORE_ID) == []
    finally:
        forged.close()


@pytest.mark.postgres
def test_rewritten_history_on_postgresql(pg_url: str, key: Ed25519PrivateKey) -> None:
    original = open_ledger(pg_url)
    try:
        fill(original, 0, 4)
        cp = make_checkpoint(original, store_id=STORE_ID, private_key_pem=private_pem(key))
        forged = MemoryLedger()
        replay(original, forged, change_seq=4)
        assert check_checkpoint(original, cp, public_keys=[public_pem(key)], store_id=STORE_ID) == []
        problems = check_checkpoint(forged, cp, public_keys=[public_pem(key)], store_id=STORE_ID)
        assert len(problems) == 1 and "rewritten" in problems[0]
    finally:
        original.close()


def test_wrong_key_is_refused(key: Ed25519PrivateKey, other_key: Ed25519PrivateKey) -> None:
    ledger = MemoryLedger()
    fill(ledger, 0, 2)
    cp = make_checkpoint(ledger, store_id=None, private_key_pem=private_pem(other_key))
    problems = check_checkpoint(ledger, cp, public_keys=[public_pem(key)], store_id=None)
    assert len(problems) == 1 and "does not verify against any given public key" in problems[0]
    # Any one of the given keys may have signed it.
    assert check_checkpoint(ledger, cp, public_keys=[public_pem(key), public_pem(other_key)], store_id=None) == []


def test_a_statement_signed_by_a_stranger_is_refused(key: Ed25519PrivateKey, other_key: Ed25519PrivateKey) -> None:
    """Someone who rewrote the store signs a fresh statement of it with their own key."""
    ledger = MemoryLedger()
    fill(ledger, 0, 2)
    forged = make_checkpoint(ledger, store_id=None, private_key_pem=private_pem(other_key))
    forged["signature"]["keyId"] = make_checkpoint(ledger, store_id=None, private_key_pem=private_pem(key))[
        "signature"
    ]["keyId"]
    problems = check_checkpoint(ledger, forged, public_keys=[public_pem(key)], store_id=None)
    assert len(problems) == 1 and "does not verify" in problems[0]


@pytest.mark.parametrize(
    ("field", "value"),
    [("seq", 2), ("headHash", None), ("records", 2), ("time", "2030-01-01T00:00:00.000000Z"), ("storeId", "other")],
)
def test_an_altered_signed_statement_is_refused(key: Ed25519PrivateKey, field: str, value: Any) -> None:
    ledger = MemoryLedger()
    envs = fill(ledger, 0, 3)
    cp = make_checkpoint(ledger, store_id="other" if field != "storeId" else STORE_ID, private_key_pem=private_pem(key))
    tampered = copy.deepcopy(cp)
    # seq 2 with the real hash of seq 2: a statement that matches the ledger, but not the one signed.
    tampered[field] = envs[1].hash if field == "headHash" else value
    if field == "seq":
        tampered["headHash"] = envs[1].hash
    store_id = tampered["storeId"]
    problems = check_checkpoint(ledger, tampered, public_keys=[public_pem(key)], store_id=store_id)
    assert any("does not verify" in p for p in problems), problems
    assert check_checkpoint(ledger, cp, public_keys=[public_pem(key)], store_id=cp["storeId"]) == []


def test_a_changed_key_id_is_noticed(key: Ed25519PrivateKey) -> None:
    ledger = MemoryLedger()
    fill(ledger, 0, 1)
    cp = make_checkpoint(ledger, store_id=None, private_key_pem=private_pem(key))
    cp["signature"]["keyId"] = "0" * 64
    problems = check_checkpoint(ledger, cp, public_keys=[public_pem(key)], store_id=None)
    assert len(problems) == 1 and "not the keyId it names" in problems[0]


def test_unsigned_checkpoint_is_refused_when_keys_are_given(key: Ed25519PrivateKey) -> None:
    ledger = MemoryLedger()
    fill(ledger, 0, 2)
    cp = make_checkpoint(ledger, store_id=None, private_key_pem=None)
    problems = check_checkpoint(ledger, cp, public_keys=[public_pem(key)], store_id=None)
    assert problems == ["the checkpoint is not signed, but public keys were given: refused"]
    signed = make_checkpoint(ledger, store_id=None, private_key_pem=private_pem(key))
    stripped = {k: v for k, v in signed.items() if k != "signature"}
    assert check_checkpoint(ledger, stripped, public_keys=[public_pem(key)], store_id=None) != []
    # Without keys nothing can be checked about a signature; the statement is still compared.
    assert check_checkpoint(ledger, signed, public_keys=[], store_id=None) == []


def test_another_store_is_noticed() -> None:
    ledger = MemoryLedger()
    fill(ledger, 0, 2)
    cp = make_checkpoint(ledger, store_id=STORE_ID, private_key_pem=None)
    assert "this store is other" in check_checkpoint(ledger, cp, public_keys=[], store_id="other")[0]
    assert "no identity" in check_checkpoint(ledger, cp, public_keys=[], store_id=None)[0]
    anonymous = make_checkpoint(ledger, store_id=None, private_key_pem=None)
    assert check_checkpoint(ledger, anonymous, public_keys=[], store_id=STORE_ID) == []


def test_an_unsigned_statement_must_agree_with_itself() -> None:
    ledger = MemoryLedger()
    fill(ledger, 0, 2)
    cp = make_checkpoint(ledger, store_id=None, private_key_pem=None)
    problems = check_checkpoint(ledger, {**cp, "records": 1}, public_keys=[], store_id=None)
    assert len(problems) == 1 and "counts 1 records at seq 2" in problems[0]
    zero = {**cp, "seq": 0, "records": 0}
    assert "genesis" in check_checkpoint(ledger, zero, public_keys=[], store_id=None)[0]


# --- keys ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["rsa", "ec"])
def test_a_key_that_is_not_ed25519_is_refused(kind: str) -> None:
    other = rsa.generate_private_key(65537, 2048) if kind == "rsa" else ec.generate_private_key(ec.SECP256R1())
    ledger = MemoryLedger()
    with pytest.raises(InvalidInputError, match="Ed25519") as err:
        make_checkpoint(ledger, store_id=None, private_key_pem=private_pem(other))
    assert err.value.field == "key"
    cp = make_checkpoint(ledger, store_id=None, private_key_pem=None)
    with pytest.raises(InvalidInputError, match="Ed25519") as err:
        check_checkpoint(ledger, cp, public_keys=[public_pem(other)], store_id=None)
    assert err.value.field == "public_key"


def test_unreadable_keys_name_the_field(key: Ed25519PrivateKey) -> None:
    ledger = MemoryLedger()
    encrypted = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, BestAvailableEncryption(b"pw"))
    for pem, message in [(b"not a key", "not a PEM private key"), (encrypted, "encrypted")]:
        with pytest.raises(InvalidInputError, match=message) as err:
            make_checkpoint(ledger, store_id=None, private_key_pem=pem)
        assert err.value.field == "key"
    cp = make_checkpoint(ledger, store_id=None, private_key_pem=None)
    with pytest.raises(InvalidInputError) as err:
        check_checkpoint(ledger, cp, public_keys=[private_pem(key)], store_id=None)
    assert err.value.field == "public_key"


def test_openssh_public_keys_are_accepted(key: Ed25519PrivateKey) -> None:
    ledger = MemoryLedger()
    fill(ledger, 0, 1)
    cp = make_checkpoint(ledger, store_id=None, private_key_pem=private_pem(key))
    ssh = key.public_key().public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH)
    assert check_checkpoint(ledger, cp, public_keys=[ssh], store_id=None) == []


# --- files --------------------------------------------------------------------------------
def test_save_and_load_round_trip_and_never_replace(tmp_path: Path, key: Ed25519PrivateKey) -> None:
    ledger = MemoryLedger()
    fill(ledger, 0, 2)
    cp = make_checkpoint(ledger, store_id=STORE_ID, private_key_pem=private_pem(key))
    path = save_checkpoint(tmp_path / "cp.json", cp)
    assert load_checkpoint(path) == cp
    with pytest.raises(ConflictError):
        save_checkpoint(path, make_checkpoint(ledger, store_id=STORE_ID, private_key_pem=None))
    assert load_checkpoint(path) == cp
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cp.json"]
    with pytest.raises(InvalidInputError) as err:
        save_checkpoint(tmp_path / "no-such-folder" / "cp.json", cp)
    assert err.value.field == "out"


def _good() -> dict[str, Any]:
    ledger = MemoryLedger()
    fill(ledger, 0, 1)
    return make_checkpoint(ledger, store_id=STORE_ID, private_key_pem=private_pem(Ed25519PrivateKey.generate()))


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: [1, 2], "checkpoint"),
        (lambda d: {**d, "extra": 1}, "checkpoint.extra"),
        (lambda d: {k: v for k, v in d.items() if k != "seq"}, "checkpoint.seq"),
        (lambda d: {**d, "type": "reviewtrail.checkpoint@2"}, "checkpoint.type"),
        (lambda d: {**d, "seq": -1}, "checkpoint.seq"),
        (lambda d: {**d, "seq": True}, "checkpoint.seq"),
        (lambda d: {**d, "seq": 1.0}, "checkpoint.seq"),
        (lambda d: {**d, "records": "1"}, "checkpoint.records"),
        (lambda d: {**d, "headHash": "A" * 64}, "checkpoint.headHash"),
        (lambda d: {**d, "headHash": "sha256:" + "a" * 64}, "checkpoint.headHash"),
        (lambda d: {**d, "time": "2026-01-02 03:04:05"}, "checkpoint.time"),
        (lambda d: {**d, "time": "2026-02-30T00:00:00Z"}, "checkpoint.time"),
        (lambda d: {**d, "storeId": ""}, "checkpoint.storeId"),
        (lambda d: {**d, "storeId": 7}, "checkpoint.storeId"),
        (lambda d: {**d, "signature": "abc"}, "checkpoint.signature"),
        (lambda d: {**d, "signature": {**d["signature"], "alg": "rsa"}}, "checkpoint.signature.alg"),
        (lambda d: {**d, "signature": {**d["signature"], "keyId": "x"}}, "checkpoint.signature.keyId"),
        (lambda d: {**d, "signature": {**d["signature"], "value": "not base64!"}}, "checkpoint.signature.value"),
        (lambda d: {**d, "signature": {**d["signature"], "value": "AAAA"}}, "checkpoint.signature.value"),
        (lambda d: {**d, "signature": {"alg": "ed25519", "keyId": "0" * 64}}, "checkpoint.signature.value"),
        (lambda d: {**d, "signature": {**d["signature"], "note": 1}}, "checkpoint.signature.note"),
    ],
)
def test_malformed_checkpoint_files_name_the_field(tmp_path: Path, mutate: Any, field: str) -> None:
    path = tmp_path / "cp.json"
    path.write_text(json.dumps(mutate(_good())))
    with pytest.raises(InvalidInputError) as err:
        load_checkpoint(path)
    assert err.value.field == field
    with pytest.raises(InvalidInputError) as err:
        check_checkpoint(MemoryLedger(), mutate(_good()), public_keys=[], store_id=None)
    assert err.value.field == field


@pytest.mark.parametrize("data", [b"", b"{nope", b"\xff\xfe{}", b"[" * 100_000, b" " * 70_000 + b"{}"])
def test_unreadable_checkpoint_files_are_invalid_input(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "cp.json"
    path.write_bytes(data)
    with pytest.raises(InvalidInputError) as err:
        load_checkpoint(path)
    assert err.value.field == "checkpoint"
    with pytest.raises(InvalidInputError) as err:
        load_checkpoint(tmp_path / "missing.json")
    assert err.value.field == "checkpoint"


# --- the command --------------------------------------------------------------------------
@pytest.fixture
def store_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    use_store(tmp_path, monkeypatch)
    assert run("init")[0] == 0
    for i in range(3):
        code, _, err = run("ledger", "append", "--type", "eval.result@1", "--actor", "a", "--privacy", "private",
                           "--payload", json.dumps({"i": i}))  # fmt: skip
        assert code == 0, err
    return tmp_path


def head() -> dict[str, Any]:
    code, out, _ = run("ledger", "tail", "-n", "1", "--json")
    assert code == 0
    value: dict[str, Any] = json.loads(out)[0]
    return value


def store_id() -> str | None:
    from reviewtrail.app import open_store

    with open_store() as store:
        return getattr(store, "store_id", None)


def test_ledger_checkpoint_without_a_key(store_env: Path) -> None:
    code, out, err = run("ledger", "checkpoint", "--json")
    assert code == 0, err
    cp = json.loads(out)
    last = head()
    assert (cp["seq"], cp["headHash"], cp["records"]) == (last["seq"], last["hash"], last["seq"])
    assert cp["storeId"] == store_id() and "signature" not in cp
    code, out, _ = run("ledger", "checkpoint")  # without --out the statement itself is printed
    assert code == 0 and json.loads(out)["headHash"] == last["hash"]
    code, out, _ = run("ledger", "checkpoint", "--out", "cp.json")
    assert code == 0 and "cp.json" in out and "unsigned" in out
    assert load_checkpoint(store_env / "cp.json")["headHash"] == last["hash"]
    code, _, err = run("ledger", "checkpoint", "--out", "cp.json")
    assert code == 6 and "out" in err


def test_ledger_checkpoint_with_a_key_signs_and_keeps_the_key_out_of_the_store(
    store_env: Path, key: Ed25519PrivateKey
) -> None:
    keys = store_env / "keys"
    keys.mkdir()
    (keys / "rt.pem").write_bytes(private_pem(key))
    (keys / "rt.pub").write_bytes(public_pem(key))
    code, out, err = run("ledger", "checkpoint", "--key", str(keys / "rt.pem"), "--out", "cp.json", "--json")
    assert code == 0, err
    cp = json.loads(out)
    assert cp["signature"]["alg"] == "ed25519" and load_checkpoint(store_env / "cp.json") == cp
    from reviewtrail.app import open_store

    with open_store() as store:
        assert check_checkpoint(store.ledger, cp, public_keys=[public_pem(key)], store_id=store_id()) == []
    secret = key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    pem_body = private_pem(key).splitlines()[1]
    for path in (store_env / "store").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert secret not in data and pem_body not in data, path
    code, out, _ = run("ledger", "checkpoint", "--key", str(keys / "rt.pem"), "--out", "cp2.json")
    assert code == 0 and "signed" in out and cp["signature"]["keyId"][:16] in out


@pytest.mark.parametrize("kind", ["rsa", "garbage", "missing"])
def test_ledger_checkpoint_refuses_a_key_that_is_not_ed25519(store_env: Path, kind: str) -> None:
    path = store_env / "k.pem"
    if kind == "rsa":
        path.write_bytes(private_pem(rsa.generate_private_key(65537, 2048)))
    elif kind == "garbage":
        path.write_bytes(b"-----BEGIN PRIVATE KEY-----\nxx\n-----END PRIVATE KEY-----\n")
    code, _, err = run("ledger", "checkpoint", "--key", str(path), "--out", "cp.json")
    assert code == 2 and err.startswith("error: key: ")
    assert not (store_env / "cp.json").exists()


def test_verify_with_checkpoints_catches_a_restored_older_copy(store_env: Path, key: Ed25519PrivateKey) -> None:
    (store_env / "rt.pem").write_bytes(private_pem(key))
    (store_env / "rt.pub").write_bytes(public_pem(key))
    db = store_env / "store" / "ledger.sqlite"
    shutil.copy(db, store_env / "older.sqlite")
    for i in range(3, 5):
        run("ledger", "append", "--type", "eval.result@1", "--actor", "a", "--privacy", "private",
            "--payload", json.dumps({"i": i}))  # fmt: skip
    assert run("ledger", "checkpoint", "--key", "rt.pem", "--out", "cp.json")[0] == 0
    code, out, err = run("verify", "--checkpoint", "cp.json", "--public-key", "rt.pub")
    assert code == 0, out + err
    for leftover in db.parent.glob("ledger.sqlite-*"):
        leftover.unlink()
    shutil.copy(store_env / "older.sqlite", db)
    code, out, _ = run("verify", "--checkpoint", "cp.json", "--public-key", "rt.pub", "--json")
    assert code == 4
    assert any("cp.json" in p and "older copy" in p for p in json.loads(out)["problems"])


def test_verify_notes_a_signed_checkpoint_checked_without_a_key(store_env: Path, key: Ed25519PrivateKey) -> None:
    (store_env / "rt.pem").write_bytes(private_pem(key))
    assert run("ledger", "checkpoint", "--key", "rt.pem", "--out", "cp.json")[0] == 0
    code, out, _ = run("verify", "--checkpoint", "cp.json", "--json")
    assert code == 0
    assert any("signature was not checked" in n for n in json.loads(out)["notes"])
    (store_env / "rt.pub").write_bytes(public_pem(key))
    code, out, _ = run("verify", "--checkpoint", "cp.json", "--public-key", "rt.pub", "--json")
    assert code == 0 and not any("signature" in n for n in json.loads(out)["notes"])
