"""Signed records: every record a writer with a key appends carries an Ed25519 signature over its
hash, stored beside it; ``verify`` and ``review export`` tell that writer from anyone else with
write access to the database (docs/architecture.md, "Signed records").

The attacks write with plain SQL, as someone who can write the database would: a decision sealed
with a correct hash and its query rows, unsigned or signed with a revoked key."""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail import app
from reviewtrail.config import Settings, load_settings
from reviewtrail.errors import ConfigError, ConflictError, IntegrityError, NotFoundError
from reviewtrail.ledger import (
    KEY_DECLARED,
    KEY_REVOKED,
    SIGNATURES_REQUIRED,
    KeyBook,
    MemoryLedger,
    NewRecord,
    RecordSignature,
    RecordSigner,
    TrustedKeys,
    declare_key,
    is_key_id,
    load_private_key,
    public_key_id,
    require_signatures,
    revoke_key,
    rotate_key,
    signature_problems,
    signature_verifies,
    signed_message,
    signed_reads,
)
from support.signed import (
    SignedStore,
    cli,
    decision,
    edit_signature,
    forge_tail,
    make_keys,
    signed_store,
    trusted_file,
)

# --- the signed message, pinned --------------------------------------------------------------------
# A fixed Ed25519 private key (seed 00 01 02 ... 1f) and record hash; the expected values were
# checked with OpenSSL (openssl pkeyutl -sign -rawin over the same message).
KAT_PEM = (
    b"-----BEGIN PRIVATE KEY-----\n"
    b"MC4CAQAwBQYDK2VwBCIEIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f\n"
    b"-----END PRIVATE KEY-----\n"
)
KAT_KEY_ID = "56475aa75463474c0285df5dbf2bcab73da651358839e9b77481b2eab107708c"
KAT_HASH = "ab" * 32
KAT_SIGNATURE = "vSzWIbuJe8pv+TBzeOwC+/LtSUPhvWrobY7qRT5zUyzQvqJOhNEuoqUKMub389/wIseOPFUdshbiRE7qzZPCAQ=="


def test_the_signed_message_and_one_signature_are_pinned() -> None:
    signer = RecordSigner.from_pem(KAT_PEM)
    assert signer.key_id == KAT_KEY_ID == public_key_id(signer.public_key)
    assert signed_message(KAT_KEY_ID, KAT_HASH) == (
        b"reviewtrail-record-v1\x00" + KAT_KEY_ID.encode() + b"\x00" + KAT_HASH.encode()
    )
    signature = signer.sign(KAT_HASH)
    assert signature.key_id == KAT_KEY_ID
    assert signature.base64 == KAT_SIGNATURE
    assert signature.to_json() == {"alg": "ed25519", "keyId": KAT_KEY_ID, "value": KAT_SIGNATURE}
    assert signature_verifies(signer.public_key, RecordSignature(KAT_KEY_ID, base64.b64decode(KAT_SIGNATURE)), KAT_HASH)
    assert not signature_verifies(signer.public_key, signature, "cd" * 32)


# --- one flipped byte ---------------------------------------------------------------------------
def _signed_memory_ledger() -> tuple[MemoryLedger, RecordSigner, TrustedKeys]:
    signer = RecordSigner.from_pem(KAT_PEM)
    ledger = MemoryLedger(app.catalog())
    ledger.signer = signer
    pem = _public_pem(signer)
    declare_key(ledger, pem, name="writer")
    require_signatures(ledger)
    ledger.append([NewRecord.make(type="t.note@1", actor="a", privacy="private", payload={"n": i}) for i in range(3)])
    return ledger, signer, TrustedKeys.of([signer.public_key])


def _public_pem(signer: RecordSigner) -> bytes:
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    return signer.public_key.public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)


LEDGER, SIGNER, TRUSTED = _signed_memory_ledger()
REQUIRED_AT = 2  # seq 1 declares the key (signed by it), seq 2 requires signatures


def test_the_memory_ledger_holds_a_signature_for_every_record_and_verifies() -> None:
    head = LEDGER.head_seq()
    assert sorted(LEDGER.signatures_at(range(1, head + 1))) == list(range(1, head + 1))
    assert signature_problems(LEDGER, end=head, trusted=TRUSTED).problems == []
    assert signature_problems(LEDGER, end=head).problems == []


@given(
    seq=st.integers(min_value=1, max_value=5),
    in_key_id=st.booleans(),
    at=st.integers(min_value=0, max_value=63),
    flip=st.integers(min_value=1, max_value=255),
)
def test_any_flipped_byte_of_a_signature_or_its_key_id_is_detected(
    seq: int, in_key_id: bool, at: int, flip: int
) -> None:
    stored = LEDGER.signatures_at([seq])[seq]
    if in_key_id:
        raw = bytearray(stored.key_id.encode("ascii"))
        raw[at] ^= flip
        changed = RecordSignature(raw.decode("latin-1"), stored.value)
    else:
        value = bytearray(stored.value)
        value[at] ^= flip
        changed = RecordSignature(stored.key_id, bytes(value))
    LEDGER.tamper_signature(seq, changed)
    try:
        end = LEDGER.head_seq()
        for trusted in (TRUSTED, None):
            found = signature_problems(LEDGER, end=end, trusted=trusted).problems
            if in_key_id and seq < REQUIRED_AT and is_key_id(changed.key_id):
                # Before the require point a signature may name a well-formed key nobody declares (a
                # writer signing before its key is added): it cannot be checked, and is no problem.
                assert found == [], found
            else:
                assert len(found) == 1 and found[0].startswith(f"ledger seq {seq} ("), (trusted, found)
            # A gate refuses exactly what verify reports, wherever it is, naming it as verify does.
            with signed_reads(LEDGER, trusted):
                if found:
                    with pytest.raises(IntegrityError) as refused:
                        LEDGER.checked_records(LEDGER.records_at([seq]).values())
                    assert str(refused.value).startswith(f"{refused.value.field}: {found[0]}; "), refused.value
                else:
                    assert LEDGER.checked_records(LEDGER.records_at([seq]).values())
    finally:
        LEDGER.tamper_signature(seq, stored)
    assert signature_problems(LEDGER, end=LEDGER.head_seq(), trusted=TRUSTED).problems == []


# --- the key book's rule ------------------------------------------------------------------------
def _book(*records: tuple[int, str, Any]) -> KeyBook:
    book = KeyBook()
    for seq, type_, payload in records:
        book.add(seq, type_, payload)
    return book


def _declared(signer: RecordSigner, name: str = "w") -> dict[str, Any]:
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    raw = signer.public_key.public_bytes(Encoding.Raw, PublicFormat.Raw)
    return {"alg": "ed25519", "keyId": signer.key_id, "publicKey": base64.b64encode(raw).decode(), "name": name}


def test_a_key_signs_only_after_its_declaration_and_until_its_revocation() -> None:
    signer = RecordSigner.from_pem(KAT_PEM)
    book = _book(
        (2, KEY_DECLARED, _declared(signer)),
        (3, SIGNATURES_REQUIRED, {}),
        (6, KEY_REVOKED, {"keyId": signer.key_id, "reason": "r"}),
    )
    h = "cd" * 32
    assert book.required_from == 3
    assert book.problem(1, h, None) is None  # before the require point: nothing asked for
    assert book.problem(2, h, signer.sign(h)) is None  # before it: a key not yet declared is not checked
    assert "not signed" in str(book.problem(3, h, None))
    assert "no record before it declares" in str(book.problem(2 + 1, h, _other().sign(h)))
    assert book.problem(4, h, signer.sign(h)) is None
    assert book.problem(6, h, signer.sign(h)) is None  # its own revocation, signed before it takes effect
    assert "after the key's revocation at seq 6" in str(book.problem(7, h, signer.sign(h)))
    assert "does not verify" in str(book.problem(4, h, signer.sign("ef" * 32)))


def test_only_the_earliest_requirement_counts_and_a_revocation_takes_effect_whoever_wrote_it() -> None:
    signer = RecordSigner.from_pem(KAT_PEM)
    book = _book(
        (2, KEY_DECLARED, _declared(signer)),
        (4, SIGNATURES_REQUIRED, {}),
        (9, SIGNATURES_REQUIRED, {}),
        (10, KEY_REVOKED, {"keyId": signer.key_id, "reason": "unsigned, still counts"}),
        (12, KEY_DECLARED, _declared(signer)),  # a revoked key is never declared again
    )
    assert book.required_from == 4 and book.requirements == [4, 9]
    assert book.revoked == {signer.key_id: 10}
    assert any("was revoked at seq 10" in p for p in book.problems)
    assert "revocation" in str(book.problem(13, "cd" * 32, signer.sign("cd" * 32)))


def test_a_declaration_whose_key_is_not_its_id_declares_nothing() -> None:
    signer = RecordSigner.from_pem(KAT_PEM)
    wrong = {**_declared(signer), "keyId": "0" * 64}
    book = _book((2, KEY_DECLARED, wrong), (3, SIGNATURES_REQUIRED, {}))
    assert book.declared == {} and "not 0000" in book.problems[0]
    assert "no record before it declares" in str(book.problem(4, "cd" * 32, signer.sign("cd" * 32)))


def _other() -> RecordSigner:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return RecordSigner(Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33))))


# --- a signed store on SQLite: the must-show case -------------------------------------------------
@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SignedStore:
    monkeypatch.chdir(tmp_path)
    return signed_store(tmp_path)


def _export(shop: SignedStore, out: Path, *extra: str) -> tuple[int, Any, str]:
    return cli("review", "export", "camp", "--version", "1", "--out", str(out), "--json", *extra, env=shop.env())


def test_a_signed_store_passes_verify_with_its_trusted_keys_and_exports(shop: SignedStore, tmp_path: Path) -> None:
    trusted = trusted_file(tmp_path / "writers.pem", shop.key)
    code, report, err = cli("verify", "--json", "--trusted-keys", str(trusted), env=shop.env())
    assert code == 0, (report, err)
    assert any(f"required from seq {shop.required_at}" in n for n in report["notes"])
    code, exported, err = _export(shop, tmp_path / "out", "--trusted-keys", str(trusted))
    assert code == 0, err
    assert exported["exported"] == 1


def test_a_forged_tail_decision_is_reported_and_refused(shop: SignedStore, tmp_path: Path) -> None:
    """The must-show case: an unsigned decision at the tail, correct hash and query rows."""
    trusted = trusted_file(tmp_path / "writers.pem", shop.key)
    forged = forge_tail(shop, decision(shop.items[1]))
    # Without trusted keys the store's own rule keeps it out: signatures are required here.
    code, refused, err = _export(shop, tmp_path / "unguarded")
    assert code == 4 and refused["error"]["field"] == "signatures", err
    assert (
        f"ledger seq {forged.seq} (stream.thought.review.decision@1): it is not signed, but signatures are required"
        in refused["error"]["message"]
    )
    assert not (tmp_path / "unguarded").exists()
    # Plain verify: unsigned after the require point.
    code, report, _ = cli("verify", "--json", env=shop.env())
    assert code == 4
    assert report["problems"] == [
        f"ledger seq {forged.seq} (stream.thought.review.decision@1): it is not signed, but signatures are "
        f"required from seq {shop.required_at}"
    ]
    # With trusted keys: reported, exit 4.
    code, report, _ = cli("verify", "--json", "--trusted-keys", str(trusted), env=shop.env())
    assert code == 4
    assert [p for p in report["problems"] if f"ledger seq {forged.seq} (" in p] == report["problems"]
    # The export refuses, naming the record's seq and type, and writes nothing.
    out = tmp_path / "guarded"
    code, refused, err = _export(shop, out, "--trusted-keys", str(trusted))
    assert code == 4
    assert (
        f"ledger seq {forged.seq} (stream.thought.review.decision@1): it is not signed" in refused["error"]["message"]
    )
    assert refused["error"]["field"] == "trusted_keys"
    assert not out.exists()
    existing = tmp_path / "existing"
    existing.mkdir()
    assert _export(shop, existing, "--trusted-keys", str(trusted))[0] == 4
    assert list(existing.iterdir()) == []


def test_a_record_signed_by_a_revoked_key_after_its_revocation_is_reported_and_refused(
    shop: SignedStore, tmp_path: Path
) -> None:
    stolen = make_keys(tmp_path / "keys", "laptop")
    with shop.open(shop.key) as store:
        declare_key(store.ledger, stolen.public.read_bytes(), name="laptop")
        revoked = revoke_key(store.ledger, stolen.key_id, reason="laptop lost")
    # The thief still holds the laptop's key: its signature verifies, but after the revocation.
    forged = forge_tail(shop, decision(shop.items[1]), key=stolen)
    assert forged.seq > revoked.seq
    trusted = trusted_file(tmp_path / "writers.pem", shop.key, stolen)  # even a trusted key is revoked
    for extra in ((), ("--trusted-keys", str(trusted))):
        code, report, _ = cli("verify", "--json", *extra, env=shop.env())
        assert code == 4
        assert report["problems"] == [
            f"ledger seq {forged.seq} (stream.thought.review.decision@1): it is signed by key {stolen.key_id} "
            f"after the key's revocation at seq {revoked.seq}"
        ]
    out = tmp_path / "out"
    code, refused, _ = _export(shop, out, "--trusted-keys", str(trusted))
    assert code == 4 and not out.exists()
    assert f"ledger seq {forged.seq} (stream.thought.review.decision@1): it is signed by key {stolen.key_id} after " \
        f"the key's revocation at seq {revoked.seq}" in refused["error"]["message"]  # fmt: skip


def test_a_record_signed_by_a_key_not_in_the_trusted_file_is_reported(shop: SignedStore, tmp_path: Path) -> None:
    other = make_keys(tmp_path / "keys", "other")
    with shop.open(shop.key) as store:
        declare_key(store.ledger, other.public.read_bytes(), name="other")
    with shop.open(other) as store:  # a declared writer: the store's own rule is kept
        [env] = store.append([decision(shop.items[1])])
    assert cli("verify", "--json", env=shop.env())[0] == 0
    trusted = trusted_file(tmp_path / "writers.pem", shop.key)
    code, report, _ = cli("verify", "--json", "--trusted-keys", str(trusted), env=shop.env())
    assert code == 4
    assert report["problems"] == [
        f"ledger seq {env.seq} (stream.thought.review.decision@1): it is signed by key {other.key_id}, which is "
        "not a trusted key"
    ]
    both = trusted_file(tmp_path / "both.pem", shop.key, other)
    assert cli("verify", "--json", "--trusted-keys", str(both), env=shop.env())[0] == 0


def test_a_deleted_or_altered_signature_row_is_reported(shop: SignedStore, tmp_path: Path) -> None:
    trusted = trusted_file(tmp_path / "writers.pem", shop.key)
    with shop.open() as store:
        last = store.ledger.head_seq()
        value = store.ledger.signatures_at([last])[last].value
    edit_signature(shop, last, value=value[:-1] + bytes([value[-1] ^ 1]))
    code, report, _ = cli("verify", "--json", env=shop.env())
    assert code == 4 and len(report["problems"]) == 1
    assert report["problems"][0].startswith(f"ledger seq {last} (") and "does not verify" in report["problems"][0]
    edit_signature(shop, last, delete=True)
    for extra in ((), ("--trusted-keys", str(trusted))):
        code, report, _ = cli("verify", "--json", *extra, env=shop.env())
        assert code == 4 and len(report["problems"]) == 1 and "is not signed" in report["problems"][0]


def test_key_rotation_keeps_the_store_passing(shop: SignedStore, tmp_path: Path) -> None:
    new = make_keys(tmp_path / "keys", "writer-2027")
    code, rotated, err = cli(
        "key", "rotate", str(new.public), "--name", "writer", "--old", shop.key.key_id, "--json", env=shop.env(shop.key)
    )
    assert code == 0, err
    with shop.open(new) as store:
        store.append([decision(shop.items[1])])
    trusted = trusted_file(tmp_path / "writers.pem", shop.key, new)
    assert cli("verify", "--json", "--trusted-keys", str(trusted), env=shop.env())[0] == 0
    assert _export(shop, tmp_path / "out", "--trusted-keys", str(trusted))[0] == 0
    code, listed, _ = cli("key", "list", "--json", env=shop.env(new))
    assert code == 0 and listed["signingKeyId"] == new.key_id
    assert [(k["keyId"], k["revokedAt"]) for k in listed["keys"]] == [
        (shop.key.key_id, rotated["revoked"]["seq"]),
        (new.key_id, None),
    ]
    # The old key, used after the rotation, no longer signs: refused before anything is written.
    before = _head(shop)
    with shop.open(shop.key) as store, pytest.raises(IntegrityError, match="after the key's revocation") as late:
        store.append([NewRecord.make(type="t.note@1", actor="a", privacy="private", payload={})])
    assert shop.key.key_id in str(late.value) and _head(shop) == before
    assert cli("verify", "--json", env=shop.env())[0] == 0


def test_records_before_a_trusted_requirement_are_not_held_to_the_trusted_keys(tmp_path: Path) -> None:
    """The store's identity record is unsigned (made before any key); a requirement signed by a
    trusted key marks where signing began. Without one, every record is held to the keys."""
    shop = signed_store(tmp_path, items=1)
    trusted = trusted_file(tmp_path / "writers.pem", shop.key)
    with shop.open() as store:
        head = store.ledger.head_seq()
        assert sorted(store.ledger.signatures_at(range(1, head + 1))) == list(range(2, head + 1))
        keys = TrustedKeys.of([shop.key.signer().public_key])
        report = signature_problems(store.ledger, end=head, trusted=keys)
    assert report.problems == [] and report.trusted_from == shop.required_at
    assert cli("verify", "--json", "--trusted-keys", str(trusted), env=shop.env())[0] == 0
    other = make_keys(tmp_path / "keys", "other")
    code, report, _ = cli(
        "verify", "--json", "--trusted-keys", str(trusted_file(tmp_path / "o.pem", other)), env=shop.env()
    )
    assert code == 4
    assert len(report["problems"]) == head
    assert (
        report["problems"][0] == "ledger seq 1 (store.identity@1): it is not signed, and the trusted keys must sign it"
    )
    assert all(f"signed by key {shop.key.key_id}, which is not a trusted key" in p for p in report["problems"][1:])


def test_every_append_of_a_signing_process_is_signed_batches_too(tmp_path: Path) -> None:
    shop = signed_store(tmp_path, items=1)
    with shop.open(shop.key) as store:
        envs = store.append(
            [NewRecord.make(type="t.note@1", actor="a", privacy="private", payload={"i": i}) for i in range(50)]
        )
        found = store.ledger.signatures_at(e.seq for e in envs)
    assert sorted(found) == [e.seq for e in envs]
    public = shop.key.signer().public_key
    assert all(
        found[e.seq].key_id == shop.key.key_id and signature_verifies(public, found[e.seq], e.hash) for e in envs
    )
    with shop.open() as store:  # no signing key: refused once signatures are required, nothing written
        head = store.ledger.head_seq()
        with pytest.raises(ConfigError, match=r"requires every record to be signed from seq \d+ on") as refused:
            store.append([NewRecord.make(type="t.note@1", actor="a", privacy="private", payload={})])
        assert refused.value.field == "signing_key"
        assert store.ledger.head_seq() == head


# --- commands and their refusals --------------------------------------------------------------------
def test_key_new_writes_an_owner_only_key_and_never_replaces_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, made, err = cli("key", "new", "k.pem", "--json", env={})
    assert code == 0, err
    assert stat.S_IMODE(os.stat(tmp_path / "k.pem").st_mode) == 0o600
    signer = RecordSigner(load_private_key((tmp_path / "k.pem").read_bytes()))
    assert made == {"keyId": signer.key_id, "privateKey": "k.pem", "publicKey": "k.pem.pub"}
    assert b"BEGIN PUBLIC KEY" in (tmp_path / "k.pem.pub").read_bytes()
    before = (tmp_path / "k.pem").read_bytes()
    code, out, _ = cli("key", "new", "k.pem", "--json", env={})
    assert code == 6 and out["error"]["field"] == "file"
    assert (tmp_path / "k.pem").read_bytes() == before
    (tmp_path / "lone.pem.pub").write_text("x")
    assert cli("key", "new", "lone.pem", env={})[0] == 6
    assert not (tmp_path / "lone.pem").exists()


def _head(shop: SignedStore) -> int:
    with shop.open() as store:
        return store.ledger.head_seq()


@pytest.mark.parametrize("problem", ["missing", "group-readable", "world-readable", "not a key", "rsa", "folder"])
def test_a_signing_key_that_cannot_be_used_is_exit_5_naming_it_and_nothing_is_appended(
    shop: SignedStore, tmp_path: Path, problem: str
) -> None:
    path = tmp_path / "bad.pem"
    if problem == "missing":
        pass
    elif problem in ("group-readable", "world-readable"):
        path.write_bytes(shop.key.private.read_bytes())
        path.chmod(0o640 if problem == "group-readable" else 0o604)
    elif problem == "not a key":
        path.write_bytes(b"hello\n")
        path.chmod(0o600)
    elif problem == "rsa":
        from cryptography.hazmat.primitives.asymmetric import rsa
        from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

        key = rsa.generate_private_key(public_exponent=65537, key_size=1024)
        path.write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
        path.chmod(0o600)
    else:
        path.mkdir()
    before = _head(shop)
    env = {**shop.env(), "REVIEWTRAIL_SIGNING_KEY": str(path)}
    code, out, err = cli(
        "ledger", "append", "--type", "t.note@1", "--actor", "a", "--privacy", "private", "--json", env=env
    )
    assert code == 5, err
    assert out["error"]["field"] == "signing_key" and str(path) in out["error"]["message"]
    if problem.endswith("readable"):
        assert f"mode {0o640 if problem == 'group-readable' else 0o604:04o}" in out["error"]["message"]
    assert _head(shop) == before


def test_the_signing_key_is_never_read_from_the_projects_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reviewtrail.toml").write_text('signing_key = "k.pem"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings({}, cwd=tmp_path)
    assert caught.value.field == "signing_key" and "shared" in str(caught.value)


def test_the_signing_key_setting_comes_from_the_environment_then_the_users_file(tmp_path: Path) -> None:
    config = tmp_path / "xdg" / "reviewtrail" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('signing_key = "keys/me.pem"\nreviewer_id = "rev-1"\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert load_settings(env, cwd=tmp_path).signing_key == config.parent / "keys" / "me.pem"
    given = load_settings({**env, "REVIEWTRAIL_SIGNING_KEY": "here.pem"}, cwd=tmp_path).signing_key
    assert given == tmp_path / "here.pem"
    assert load_settings({"XDG_CONFIG_HOME": str(tmp_path / "none")}, cwd=tmp_path).signing_key is None


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"", "holds no PEM public key"),
        (b"not a key\n", "holds no PEM public key"),
        (b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", "key 1 is not a PEM"),
        (None, "text after the last key"),
        (b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "PRIVATE KEY block"),
    ],
)
def test_a_malformed_trusted_keys_file_is_exit_2_naming_it_and_nothing_is_written(
    shop: SignedStore, tmp_path: Path, content: bytes | None, says: str
) -> None:
    bad = tmp_path / "writers.pem"
    bad.write_bytes(content if content is not None else shop.key.public.read_bytes() + b"trailing words\n")
    for args in (
        ("verify", "--json"),
        ("review", "export", "camp", "--version", "1", "--out", str(tmp_path / "o"), "--json"),
    ):
        code, out, _ = cli(*args, "--trusted-keys", str(bad), env=shop.env())
        assert code == 2, out
        assert (
            out["error"]["field"] == "trusted_keys"
            and str(bad) in out["error"]["message"]
            and says in out["error"]["message"]
        )
    assert not (tmp_path / "o").exists()
    assert cli("verify", "--json", "--trusted-keys", str(tmp_path / "absent.pem"), env=shop.env())[0] == 2


def test_require_needs_a_declared_signing_key_and_counts_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    key = make_keys(tmp_path / "keys", "w")
    settings = Settings(store=tmp_path / "store", database_url=f"sqlite:///{tmp_path / 'store' / 'ledger.sqlite'}")
    app.init_store(settings).close()
    env = {"REVIEWTRAIL_STORE": str(settings.store), "REVIEWTRAIL_DATABASE_URL": settings.database_url}
    code, out, _ = cli("key", "require", "--json", env=env)
    assert code == 5 and out["error"]["field"] == "signing_key"
    signing = {**env, "REVIEWTRAIL_SIGNING_KEY": str(key.private)}
    assert cli("key", "require", "--json", env=signing)[0] == 5  # not declared yet
    assert cli("key", "add", str(key.public), "--name", "w", "--json", env=env)[0] == 0
    assert cli("key", "add", str(key.public), "--name", "w", "--json", env=signing)[0] == 6  # twice
    code, required, _ = cli("key", "require", "--json", env=signing)
    assert code == 0
    assert cli("key", "require", "--json", env=signing)[0] == 6
    other = make_keys(tmp_path / "keys", "o")
    assert cli("key", "add", str(other.public), "--name", "o", "--json", env=env)[0] == 5  # unsigned, after it
    code, out, _ = cli("key", "revoke", key.key_id, "--reason", "r", "--json", env=signing)
    assert code == 6 and "last declared key" in out["error"]["message"]  # nothing could sign after it
    assert cli("key", "revoke", "a" * 64, "--reason", "r", "--json", env=signing)[0] == 3
    assert cli("key", "revoke", "xyz", "--reason", "r", "--json", env=signing)[0] == 2
    code, listed, _ = cli("key", "list", "--json", env=signing)
    assert listed["requiredFrom"] == required["seq"] and [k["name"] for k in listed["keys"]] == ["w"]
    assert cli("verify", "--json", env=env)[0] == 0


def test_the_library_refuses_what_would_leave_no_key_to_sign_with() -> None:
    ledger = MemoryLedger(app.catalog())
    signer = RecordSigner.from_pem(KAT_PEM)
    with pytest.raises(NotFoundError):
        revoke_key(ledger, signer.key_id, reason="r")
    ledger.signer = signer
    declare_key(ledger, _public_pem(signer), name="w")
    require_signatures(ledger)
    with pytest.raises(ConflictError):
        revoke_key(ledger, signer.key_id, reason="r")
    other = _other()
    declared, revoked = rotate_key(ledger, _public_pem(other), name="w2", old_key_id=signer.key_id, reason="rotated")
    assert revoked.seq == declared.seq + 1
    ledger.signer = other
    ledger.append([NewRecord.make(type="t.note@1", actor="a", privacy="private", payload={})])
    assert signature_problems(ledger, end=ledger.head_seq()).problems == []
    with pytest.raises(ConflictError):
        declare_key(ledger, _public_pem(signer), name="again")  # revoked for good


def test_the_signature_check_streams_every_record(shop: SignedStore) -> None:
    """The signature check streams a long ledger a page at a time (seq, type, hash and signature,
    no payloads), past the pages of a read; only the identity record (made before any key) is
    unsigned."""
    with shop.open(shop.key) as store:
        store.append(
            [NewRecord.make(type="t.note@1", actor="a", privacy="private", payload={"i": i}) for i in range(2500)]
        )
        scanned = store.ledger.signature_scan(start=1)
        first = next(scanned)
        assert first[:2] == (1, "store.identity@1") and first[3] is None
        head = store.ledger.head_seq()
        assert sum(1 for _ in scanned) == head - 1
        assert [row[0] for row in store.ledger.signed_scan(end=head)] == list(range(2, head + 1))
        report = signature_problems(store.ledger, end=head)
    # Before the require point only signed records are held to the rule; from it on, every one.
    assert report.problems == [] and report.checked == report.signed == head - 1


def test_an_unsigned_store_costs_the_signature_check_no_scan(tmp_path: Path) -> None:
    from reviewtrail.ledger import open_ledger

    with open_ledger(f"sqlite:///{tmp_path / 'l.sqlite'}") as ledger:
        ledger.append([NewRecord.make(type="t.note@1", actor="a", privacy="private", payload={}) for _ in range(10)])
        report = signature_problems(ledger, end=10)
    assert report.problems == [] and report.checked == 0 and report.signed == 0


def test_the_verify_report_json_is_unchanged_in_shape(shop: SignedStore) -> None:
    code, report, _ = cli("verify", "--json", env=shop.env())
    assert code == 0
    assert set(report) == {
        "ok", "storeId", "head", "objectsChecked", "recordsChecked", "refsChecked", "rowsChecked",
        "problems", "notes", "repairs", "since",
    }  # fmt: skip
    assert json.dumps(report)


def test_the_signatures_table_is_append_only_and_its_guards_are_checked(shop: SignedStore) -> None:
    import sqlite3

    conn = sqlite3.connect(shop.root / "store" / "ledger.sqlite")
    try:
        for sql in ("DELETE FROM rt_signatures", "UPDATE rt_signatures SET key_id = 'x'"):
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                conn.execute(sql)
        conn.execute("DROP TRIGGER rt_signatures_no_delete")
        conn.commit()
    finally:
        conn.close()
    code, report, _ = cli("verify", "--json", env=shop.env())
    assert code == 4
    assert report["problems"] == ["ledger: append-only trigger rt_signatures_no_delete on rt_signatures was dropped"]


def test_a_read_only_ledger_made_before_signatures_reads_as_holding_none(tmp_path: Path) -> None:
    import sqlite3

    from reviewtrail.ledger import open_ledger

    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    with open_ledger(url) as ledger:
        ledger.append([NewRecord.make(type="t.note@1", actor="a", privacy="private", payload={})])
    conn = sqlite3.connect(tmp_path / "old.sqlite")
    conn.execute("DROP TABLE rt_signatures")  # as a ledger made before migration 4 is
    conn.execute("DELETE FROM rt_migrations WHERE version = 4")
    conn.commit()
    conn.close()
    with open_ledger(url, create=False, read_only=True) as ledger:
        assert ledger.signatures_at([1]) == {} and ledger.stray_signatures() == []
        assert [row[:2] for row in ledger.signature_scan()] == [(1, "t.note@1")]
        assert ledger.guard_problems() == []
        assert signature_problems(ledger, end=1).problems == []
    with open_ledger(url, create=False) as ledger:  # a writable open migrates it
        ledger.signer = RecordSigner.from_pem(KAT_PEM)
        [env] = ledger.append([NewRecord.make(type="t.note@1", actor="a", privacy="private", payload={})])
        assert ledger.signatures_at([env.seq])[env.seq].key_id == KAT_KEY_ID
        assert ledger.guard_problems() == []


def test_ledger_show_gives_a_records_signature(shop: SignedStore) -> None:
    with shop.open(shop.key) as store:
        [signed] = store.append([NewRecord.make(type="t.note@1", actor="a", privacy="private", payload={})])
        [unsigned] = store.ledger.records_at([1]).values()
    code, shown, _ = cli("ledger", "show", signed.id, "--json", env=shop.env())
    assert code == 0 and shown["signature"]["keyId"] == shop.key.key_id and shown["signature"]["alg"] == "ed25519"
    value = base64.b64decode(shown["signature"]["value"])
    assert signature_verifies(shop.key.signer().public_key, RecordSignature(shop.key.key_id, value), signed.hash)
    code, shown, _ = cli("ledger", "show", unsigned.id, "--json", env=shop.env())
    assert code == 0 and shown["signature"] is None


def test_a_key_declared_by_no_declared_writer_after_the_require_point_declares_nothing(
    shop: SignedStore, tmp_path: Path
) -> None:
    """An attacker declares their own key (signing the declaration with it), then signs a decision
    with it: both are reported, and the key is not one the store declares."""
    intruder = make_keys(tmp_path / "keys", "intruder")
    payload = _declared(intruder.signer(), "intruder")
    declared = forge_tail(
        shop, NewRecord.make(type=KEY_DECLARED, actor="x", privacy="private", payload=payload), key=intruder
    )
    forged = forge_tail(shop, decision(shop.items[1]), key=intruder)
    code, report, _ = cli("verify", "--json", env=shop.env())
    assert code == 4
    assert report["problems"] == [
        f"ledger seq {seq} ({type_}): it is signed by key {intruder.key_id}, which no record before it declares "
        f"(signatures are required from seq {shop.required_at})"
        for seq, type_ in ((declared.seq, KEY_DECLARED), (forged.seq, "stream.thought.review.decision@1"))
    ]
    code, listed, _ = cli("key", "list", "--json", env=shop.env())
    assert [k["keyId"] for k in listed["keys"]] == [shop.key.key_id]


def test_key_add_of_a_file_that_is_not_an_ed25519_public_key_is_exit_2_and_appends_nothing(
    shop: SignedStore, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.pub"
    bad.write_bytes(b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
    before = _head(shop)
    for path in (bad, shop.key.private, tmp_path / "absent.pub"):
        code, out, _ = cli("key", "add", str(path), "--name", "x", "--json", env=shop.env(shop.key))
        assert code == 2 and out["error"]["field"] == "public_key", out
    assert _head(shop) == before


# --- verify's signature check at its edges ---------------------------------------------------------
def test_the_signature_note_says_what_was_checked() -> None:
    from reviewtrail.ledger import SignatureReport

    assert SignatureReport(signed=0).note() == "signed records: 0 signed record(s) checked"
    both = SignatureReport(signed=3, required_from=2, trusted_from=4)
    assert both.note() == (
        "signed records: 3 signed record(s) checked; signatures are required from seq 2; held to the trusted keys "
        "from seq 4"
    )


def test_the_signature_check_holds_only_the_records_of_its_range() -> None:
    """``(after, end]``: an empty range checks nothing and reports no requirement; key records
    and records past ``end`` or up to ``after`` are not looked at."""
    from reviewtrail.ledger import SignatureReport

    head = LEDGER.head_seq()
    assert signature_problems(LEDGER, end=head, after=head) == SignatureReport()
    assert signature_problems(LEDGER, end=REQUIRED_AT - 1).required_from is None
    stored = {seq: LEDGER.signatures_at([seq])[seq] for seq in (3, head)}
    for seq, signature in stored.items():  # seq 3 and the head no longer verify
        LEDGER.tamper_signature(seq, RecordSignature(signature.key_id, bytes(64)))
    try:
        assert signature_problems(LEDGER, end=head - 1, after=3).problems == []
        assert len(signature_problems(LEDGER, end=head - 1, after=2).problems) == 1
        assert [p.split(":")[0] for p in signature_problems(LEDGER, end=head, after=head - 1).problems] == [
            f"ledger seq {head} (t.note@1)"
        ]
    finally:
        for seq, signature in stored.items():
            LEDGER.tamper_signature(seq, signature)


def test_a_signature_stored_for_no_record_is_reported() -> None:
    head = LEDGER.head_seq()
    LEDGER.tamper_signature(head + 3, LEDGER.signatures_at([head])[head])
    try:
        assert signature_problems(LEDGER, end=head).problems == [
            f"ledger: a signature is stored for seq {head + 3}, which holds no record (rt_signatures was written "
            "outside reviewtrail)"
        ]
    finally:
        LEDGER.tamper_signature(head + 3, None)


def test_without_a_requirement_only_the_signed_records_up_to_the_end_are_checked() -> None:
    signer = RecordSigner.from_pem(KAT_PEM)
    ledger = MemoryLedger(app.catalog())
    ledger.signer = signer
    declare_key(ledger, _public_pem(signer), name="w")
    ledger.append([NewRecord.make(type="t.note@1", actor="a", privacy="private", payload={"n": n}) for n in range(3)])
    head = ledger.head_seq()
    for seq in (2, head):
        ledger.tamper_signature(seq, RecordSignature(signer.key_id, bytes(64)))
    assert signature_problems(ledger, end=head - 1, after=2).problems == []
    assert [p.split(":")[0] for p in signature_problems(ledger, end=head, after=2).problems] == [
        f"ledger seq {head} (t.note@1)"
    ]


def test_the_key_book_reads_only_the_key_records_and_checks_them_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """verify's book is read by type without the records' hashes checked (its walk checks
    them, and reports a changed record); the key commands' book is checked as it is read."""
    from reviewtrail.ledger import key_book, writer_keys

    ledger, _, _ = _signed_memory_ledger()
    types: list[str | None] = []
    real = ledger.read

    def spied(**kwargs: Any) -> Any:
        types.append(kwargs.get("type"))
        return real(**kwargs)

    monkeypatch.setattr(ledger, "read", spied)
    assert key_book(ledger).required_from == REQUIRED_AT
    assert sorted(types, key=str) == sorted([KEY_DECLARED, KEY_REVOKED, SIGNATURES_REQUIRED])
    monkeypatch.undo()
    declaration = ledger.records_at([1])[1]
    ledger.tamper(1, payload=declaration.payload.replace(b'"writer"', b'"mallory"'))
    assert signature_problems(ledger, end=ledger.head_seq()).required_from == REQUIRED_AT  # reported, not raised
    with pytest.raises(IntegrityError, match="ledger seq 1"):
        writer_keys(ledger)
