"""Signed in-toto exports (DSSE, Ed25519) and the ledger head every export names.

Known answers come from the DSSE specification itself: the example of its protocol.md and
the Ed25519 vectors of its ``testvectors/vectors.json`` (keys from RFC 8032, section 7.1, so
the signatures are deterministic). Envelopes are verified with securesystemslib's own DSSE
code, not with the project's, and the statements they carry are read with in-toto-attestation.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import hashlib
import json
import os
import stat
from collections.abc import Iterator
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
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import SSlibKey

from conftest import init_cli_store, open_cli_store
from conftest import run_wide as run
from reviewtrail.errors import IntegrityError, InvalidInputError
from reviewtrail.ledger import LedgerHead, public_key_id
from reviewtrail.provenance.artifacts import upload_artifact
from reviewtrail.provenance.export._dsse import IN_TOTO_PAYLOAD_TYPE, envelope_json, pae, parse_envelope
from reviewtrail.provenance.export._signed import sign_statement, statement_bytes, verify_statement_envelope
from test_export_consumers import load_in_toto
from test_provenance_export import build

# RFC 8032, section 7.1, TEST 1 and TEST 2: the keys "A" and "B" of DSSE's test vectors
SEED_A = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
SEED_B = "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb"
PUBLIC_A = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
KEYID_A = hashlib.sha256(bytes.fromhex(PUBLIC_A)).hexdigest()
MINIMAL = {"_type": "https://in-toto.io/Statement/v1"}
MINIMAL_B64 = "eyJfdHlwZSI6Imh0dHBzOi8vaW4tdG90by5pby9TdGF0ZW1lbnQvdjEifQ=="
# vectors.json, "single-signature": key A over PAE(application/vnd.in-toto+json, MINIMAL)
MINIMAL_SIG = "2WAfaHm5jluo0w+0rk8uVkluELJYWjSmU9x7EUzx+AyteDGJ4/nqyJXfmAUVFIAoQafWm7AxBZNw5M9ixNHiCA=="
MINIMAL_PAE = (
    "445353457631203238206170706c69636174696f6e2f766e642e696e2d746f746f2b6a736f6e203433207b225f74797065223a2268"
    "747470733a2f2f696e2d746f746f2e696f2f53746174656d656e742f7631227d"
)


def key(seed: str) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(bytes.fromhex(seed))


def private_pem(k: Any) -> bytes:
    return bytes(k.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))


def sslib_key(k: Ed25519PrivateKey) -> SSlibKey:
    """The public half as securesystemslib's own key, under the key id the envelope names."""
    public = k.public_key()
    return SSlibKey.from_crypto(public, keyid=public_key_id(public))


def sslib_verify(envelope: dict[str, Any], *keys: Ed25519PrivateKey) -> dict[str, Any]:
    """Verify with securesystemslib (threshold 1); returns the keys it accepted."""
    return Envelope.from_dict(copy.deepcopy(envelope)).verify([sslib_key(k) for k in keys], 1)


def payload_of(envelope: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads(base64.b64decode(envelope["payload"])))


# --- PAE and the envelope: the specification's known answers ----------------------------------


def test_pae_of_the_protocol_example() -> None:
    """protocol.md, "Test Vectors"."""
    expected = b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    assert pae("http://example.com/HelloWorld", b"hello world") == expected


@pytest.mark.parametrize(
    ("payload_type", "payload", "expected"),
    [
        (IN_TOTO_PAYLOAD_TYPE, b'{"_type":"https://in-toto.io/Statement/v1"}', MINIMAL_PAE),
        # "url-safe-base64": payload bytes fb ff bf 3e 3f
        (
            IN_TOTO_PAYLOAD_TYPE,
            bytes.fromhex("fbffbf3e3f"),
            "445353457631203238206170706c69636174696f6e2f766e642e696e2d746f746f2b6a736f6e203520fbffbf3e3f",
        ),
        # "empty-payload": "... 0 " with a trailing space
        (
            IN_TOTO_PAYLOAD_TYPE,
            b"",
            "445353457631203238206170706c69636174696f6e2f766e642e696e2d746f746f2b6a736f6e203020",
        ),
        # "non-ascii-payload-type": LEN is the UTF-8 byte length, 29, not the 28 characters
        ("application/vnd.exämple+json", b'{"_type":"https://in-toto.io/Statement/v1"}', "44535345763120323920"),
    ],
)
def test_pae_of_the_dsse_test_vectors(payload_type: str, payload: bytes, expected: str) -> None:
    assert pae(payload_type, payload).hex().startswith(expected)
    if len(expected) > 20:
        assert pae(payload_type, payload).hex() == expected


def test_signing_the_minimal_statement_gives_the_vectors_signature() -> None:
    """vectors.json, "single-signature": Ed25519 is deterministic, so our envelope is exactly theirs
    (plus our key id, the SHA-256 of the raw public key)."""
    assert key(SEED_A).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex() == PUBLIC_A
    assert statement_bytes(MINIMAL) == base64.b64decode(MINIMAL_B64)
    assert sign_statement(MINIMAL, key(SEED_A)) == {
        "payloadType": "application/vnd.in-toto+json",
        "payload": MINIMAL_B64,
        "signatures": [{"keyid": KEYID_A, "sig": MINIMAL_SIG}],
    }
    assert KEYID_A == "21fe31dfa154a261626bf854046fd2271b7bed4b6abe45aa58877ef47f9721b9"


def test_the_envelope_of_the_fixture_statement_is_pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    """One signed export pinned end to end: the fixture lineage, a ledger head, the test key A."""
    import reviewtrail.provenance.export._intoto as exporter

    monkeypatch.setattr(exporter, "reviewtrail_version", lambda: "0.0.0+pin")
    envelope = sign_statement(exporter.to_in_toto(build(), LedgerHead("a1" * 32, 42)), key(SEED_A))
    payload = base64.b64decode(envelope["payload"])
    assert hashlib.sha256(payload).hexdigest() == "6026d5807f2da6a9301ccb03a67d3ae2a78cde57fb0f3bb92d2eb0e923da0bdb"
    assert envelope["signatures"] == [
        {
            "keyid": KEYID_A,
            "sig": "ixXts9vBd3vUbsuACmp0ApXzL/dxtDA6LaNrt77ceOuwPz+kxUZui1Id1NF2Gxt4H7lvqywfl/qwq/LBe+AJDA==",
        }
    ]
    assert list(sslib_verify(envelope, key(SEED_A))) == [KEYID_A]


def test_envelope_json_and_parse_round_trip_in_either_base64_alphabet() -> None:
    from reviewtrail.provenance.export._dsse import DsseSignature

    doc = envelope_json("t", b"\xfb\xff\xbf>?", [DsseSignature("k", b"\xff" * 64)])
    assert doc["payload"] == "+/+/Pj8="
    parsed = parse_envelope(doc)
    url_safe = parse_envelope({**doc, "payload": "-_-_Pj8", "signatures": [{"sig": doc["signatures"][0]["sig"]}]})
    assert parsed.payload == url_safe.payload == b"\xfb\xff\xbf>?"
    assert parsed.signatures[0].sig == url_safe.signatures[0].sig == b"\xff" * 64
    assert (parsed.signatures[0].keyid, url_safe.signatures[0].keyid) == ("k", "")


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ([], "envelope"),
        ({"payload": "", "signatures": []}, "envelope.payloadType"),
        ({"payloadType": "t", "signatures": []}, "envelope.payload"),
        ({"payloadType": "t", "payload": ""}, "envelope.signatures"),
        ({"payloadType": 1, "payload": "", "signatures": [{"sig": ""}]}, "envelope.payloadType"),
        ({"payloadType": "t", "payload": "not base64!", "signatures": [{"sig": ""}]}, "envelope.payload"),
        ({"payloadType": "t", "payload": "abcde", "signatures": [{"sig": ""}]}, "envelope.payload"),
        ({"payloadType": "t", "payload": "", "signatures": []}, "envelope.signatures"),
        ({"payloadType": "t", "payload": "", "signatures": [{"keyid": "k"}]}, "envelope.signatures[0]"),
        ({"payloadType": "t", "payload": "", "signatures": [{"sig": "", "keyid": 3}]}, "envelope.signatures[0].keyid"),
        ({"payloadType": "t", "payload": "", "signatures": [{"sig": "%%"}]}, "envelope.signatures[0].sig"),
    ],
)
def test_a_malformed_envelope_is_refused_naming_the_field(doc: object, field: str) -> None:
    with pytest.raises(InvalidInputError) as err:
        parse_envelope(doc)
    assert err.value.field == field


# --- securesystemslib verifies what we sign; tampering fails there ------------------------------


@pytest.fixture
def envelope() -> dict[str, Any]:
    return sign_statement(build_statement(), key(SEED_A))


def build_statement() -> dict[str, Any]:
    from reviewtrail.provenance.export._intoto import to_in_toto

    return to_in_toto(build(), LedgerHead("a1" * 32, 42))


def test_securesystemslib_verifies_the_envelope_and_in_toto_reads_its_statement(envelope: dict[str, Any]) -> None:
    accepted = sslib_verify(envelope, key(SEED_A))
    assert list(accepted) == [KEYID_A]
    statement = payload_of(envelope)
    assert statement == build_statement()
    load_in_toto(statement)  # in-toto-attestation's Statement and SLSA v1 Provenance, unknown fields refused


def test_securesystemslib_refuses_another_key(envelope: dict[str, Any]) -> None:
    other = key(SEED_B)
    impostor = SSlibKey.from_crypto(other.public_key(), keyid=KEYID_A)  # right key id, wrong key
    with pytest.raises(VerificationError):
        Envelope.from_dict(copy.deepcopy(envelope)).verify([impostor], 1)
    with pytest.raises(VerificationError):
        sslib_verify(envelope, other)


def test_securesystemslib_refuses_a_tampered_payload(envelope: dict[str, Any]) -> None:
    statement = payload_of(envelope)
    statement["subject"][0]["digest"]["sha256"] = "0" * 64
    tampered = {**envelope, "payload": base64.b64encode(statement_bytes(statement)).decode()}
    with pytest.raises(VerificationError):
        sslib_verify(tampered, key(SEED_A))
    one_byte = bytearray(base64.b64decode(envelope["payload"]))
    one_byte[-2] ^= 1
    with pytest.raises(VerificationError):
        sslib_verify({**envelope, "payload": base64.b64encode(bytes(one_byte)).decode()}, key(SEED_A))


def test_securesystemslib_refuses_a_tampered_signature_or_payload_type(envelope: dict[str, Any]) -> None:
    sig = bytearray(base64.b64decode(envelope["signatures"][0]["sig"]))
    sig[0] ^= 0x80
    flipped = {**envelope, "signatures": [{"keyid": KEYID_A, "sig": base64.b64encode(bytes(sig)).decode()}]}
    with pytest.raises(VerificationError):
        sslib_verify(flipped, key(SEED_A))
    with pytest.raises(VerificationError):  # the type is signed too (PAE)
        sslib_verify({**envelope, "payloadType": "application/json"}, key(SEED_A))


# --- our own verifier agrees -------------------------------------------------------------------


def test_our_verifier_accepts_the_envelope_and_the_dsse_vector(envelope: dict[str, Any]) -> None:
    verified = verify_statement_envelope(envelope, [key(SEED_B).public_key(), key(SEED_A).public_key()])
    assert verified.statement == build_statement() and verified.keyids == [KEYID_A]
    vector = {"payload": MINIMAL_B64, "payloadType": IN_TOTO_PAYLOAD_TYPE, "signatures": [{"sig": MINIMAL_SIG}]}
    assert verify_statement_envelope(vector, [key(SEED_A).public_key()]).statement == MINIMAL
    url_safe = {**vector, "signatures": [{"sig": MINIMAL_SIG.replace("+", "-").replace("/", "_").rstrip("=")}]}
    assert verify_statement_envelope(url_safe, [key(SEED_A).public_key()]).keyids == [KEYID_A]


def test_our_verifier_refuses_what_securesystemslib_refuses(envelope: dict[str, Any]) -> None:
    public = [key(SEED_A).public_key()]
    with pytest.raises(IntegrityError) as err:
        verify_statement_envelope(envelope, [key(SEED_B).public_key()])
    assert err.value.field == "envelope.signatures"
    payload = bytearray(base64.b64decode(envelope["payload"]))
    payload[-2] ^= 1
    with pytest.raises(IntegrityError):
        verify_statement_envelope({**envelope, "payload": base64.b64encode(bytes(payload)).decode()}, public)
    # vectors.json, "payload-type-swapped": the signature covers in-toto's type, the envelope claims another
    swapped = {"payload": MINIMAL_B64, "payloadType": "application/vnd.example.other+json"}
    with pytest.raises(IntegrityError) as err:
        verify_statement_envelope({**swapped, "signatures": [{"sig": MINIMAL_SIG, "keyid": "A"}]}, public)
    assert err.value.field == "envelope.signatures"
    # a good signature over another payload type is still not an in-toto statement
    other = envelope_json("application/json", b"{}", [])
    other["signatures"] = [{"sig": base64.b64encode(key(SEED_A).sign(pae("application/json", b"{}"))).decode()}]
    with pytest.raises(IntegrityError) as err:
        verify_statement_envelope(other, public)
    assert err.value.field == "envelope.payloadType"
    with pytest.raises(InvalidInputError) as invalid:
        verify_statement_envelope(envelope, [])
    assert invalid.value.field == "public_key"


# --- on a real store: the ledger head in each export, --sign-key -------------------------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    init_cli_store(tmp_path, monkeypatch, "REVIEWTRAIL_PROJECT")
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    store = open_cli_store(tmp_path)
    try:
        upload_artifact(store, name="data.csv", file=tmp_path / "data.csv")
    finally:
        store.close()
    return tmp_path


def export(*args: str) -> dict[str, Any]:
    code, out, err = run("provenance", "data.csv", *args)
    assert code == 0, err
    return dict(json.loads(out))


def head_of(project: Path) -> LedgerHead:
    store = open_cli_store(project)
    try:
        head = store.ledger.head()
    finally:
        store.close()
    assert head is not None
    return LedgerHead(head.hash, head.seq)


def test_prov_and_in_toto_name_the_ledger_head_they_were_read_at(project: Path) -> None:
    head = head_of(project)
    statement = export("--format", "in-toto")
    assert statement["predicate"]["buildDefinition"]["internalParameters"]["ledgerHead"] == head.to_json()
    load_in_toto(statement)
    prov = export("--format", "prov")
    [root] = [e for e in prov["entity"].values() if e.get("rt:lineageRoot") is True]
    assert (root["rt:ledgerHead"], root["rt:ledgerHeadSeq"]) == (head.hash, head.seq)
    # a record appended later moves the head of the next export, not what the version says
    code, _, err = run("ledger", "append", "--type", "eval.note@1", "--actor", "a", "--privacy", "private")
    assert code == 0, err
    later = export("--format", "in-toto")
    assert later["predicate"]["buildDefinition"]["internalParameters"]["ledgerHead"] == {
        "hash": head_of(project).hash,
        "seq": head.seq + 1,
    }
    assert later["subject"] == statement["subject"]


def test_sign_key_prints_an_envelope_securesystemslib_verifies(project: Path) -> None:
    (project / "rt.pem").write_bytes(private_pem(key(SEED_A)))
    envelope = export("--format", "in-toto", "--sign-key", "rt.pem")
    assert set(envelope) == {"payloadType", "payload", "signatures"}
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    assert list(sslib_verify(envelope, key(SEED_A))) == [KEYID_A]
    statement = payload_of(envelope)
    assert statement == export("--format", "in-toto")  # the unsigned export, as printed without a key
    assert base64.b64decode(envelope["payload"]) == statement_bytes(statement)  # RFC 8785 bytes
    load_in_toto(statement)
    assert "BEGIN PRIVATE KEY" not in json.dumps(envelope)


def _bad_key(project: Path, kind: str) -> str:
    path = project / "bad.pem"
    if kind == "rsa":
        path.write_bytes(private_pem(rsa.generate_private_key(65537, 2048)))
    elif kind == "ec":
        path.write_bytes(private_pem(ec.generate_private_key(ec.SECP256R1())))
    elif kind == "garbage":
        path.write_bytes(b"-----BEGIN PRIVATE KEY-----\nxx\n-----END PRIVATE KEY-----\n")
    elif kind == "encrypted":
        k = key(SEED_A)
        path.write_bytes(k.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, BestAvailableEncryption(b"pw")))
    elif kind == "public":
        path.write_bytes(key(SEED_A).public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo))
    elif kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    return str(path)


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("missing", "does not exist"),
        ("rsa", "is a RSA key; reviewtrail signs with Ed25519 keys only"),
        ("ec", "Ed25519 keys only"),
        ("garbage", "is not a PEM private key"),
        ("encrypted", "is encrypted"),
        ("public", "is not a PEM private key"),
        ("folder", "not a regular file"),
        ("fifo", "not a regular file"),
    ],
)
def test_a_bad_sign_key_is_exit_2_naming_the_option_with_no_output(project: Path, kind: str, message: str) -> None:
    before = sorted(p.name for p in project.iterdir())
    path = _bad_key(project, kind)
    if kind != "missing":
        before.append("bad.pem")
    code, out, err = run("provenance", "data.csv", "--format", "in-toto", "--sign-key", path)
    assert code == 2
    assert err.startswith("error: sign-key: ") and message in " ".join(err.split())
    assert out == ""
    assert sorted(p.name for p in project.iterdir()) == sorted(before)
    if kind == "fifo":
        assert stat.S_ISFIFO(os.stat(path).st_mode)


@pytest.mark.parametrize("fmt", ["prov", "json", "tree"])
def test_sign_key_with_another_format_is_refused(project: Path, fmt: str) -> None:
    (project / "rt.pem").write_bytes(private_pem(key(SEED_A)))
    code, out, err = run("provenance", "data.csv", "--format", fmt, "--sign-key", "rt.pem")
    assert code == 2 and out == ""
    assert err.startswith("error: sign-key: ") and "in-toto" in err


def test_the_json_error_of_a_bad_key_names_the_field(project: Path) -> None:
    code, out, _ = run("provenance", "data.csv", "--format", "in-toto", "--sign-key", "nope.pem", "--json")
    assert code == 2
    assert json.loads(out)["error"]["field"] == "sign-key"


# --- reviewtrail artifact verify-envelope: our own verifier on the command line -----------------


def public_pem(k: Ed25519PrivateKey) -> bytes:
    return k.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)


@pytest.fixture
def signed(project: Path) -> Path:
    (project / "rt.pem").write_bytes(private_pem(key(SEED_A)))
    (project / "rt.pub").write_bytes(public_pem(key(SEED_A)))
    (project / "other.pub").write_bytes(public_pem(key(SEED_B)))
    code, out, err = run("provenance", "data.csv", "--format", "in-toto", "--sign-key", "rt.pem")
    assert code == 0, err
    (project / "env.json").write_text(out)
    return project / "env.json"


def test_verify_envelope_accepts_a_signed_export(project: Path, signed: Path) -> None:
    head = head_of(project)
    code, out, err = run(
        "artifact", "verify-envelope", str(signed), "--public-key", "other.pub", "--public-key", "rt.pub"
    )
    assert code == 0, err
    digest = hashlib.sha256(b"a,b\n1,2\n").hexdigest()
    assert out.splitlines() == [
        f"verified: data.csv sha256:{digest}; signed by keyid {KEYID_A}",
        f"ledger head: seq {head.seq} {head.hash}",
    ]
    code, out, err = run("artifact", "verify-envelope", str(signed), "--public-key", "rt.pub", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["verified"] is True and doc["keyids"] == [KEYID_A]
    assert doc["statement"] == payload_of(json.loads(signed.read_text()))


def test_verify_envelope_refuses_another_key_or_a_tampered_envelope_with_exit_4(project: Path, signed: Path) -> None:
    code, out, err = run("artifact", "verify-envelope", str(signed), "--public-key", "other.pub")
    assert code == 4 and out == ""
    assert "error: envelope.signatures: no signature verifies" in " ".join(err.split())
    envelope = json.loads(signed.read_text())
    statement = payload_of(envelope)
    statement["predicate"]["buildDefinition"]["internalParameters"]["ledgerHead"]["seq"] += 1
    envelope["payload"] = base64.b64encode(statement_bytes(statement)).decode()
    (project / "tampered.json").write_text(json.dumps(envelope))
    code, _, err = run("artifact", "verify-envelope", "tampered.json", "--public-key", "rt.pub")
    assert code == 4 and "envelope.signatures" in err


@pytest.mark.parametrize(
    ("content", "key_file", "field"),
    [
        (b"not json", "rt.pub", "envelope"),
        (b'{"payloadType": "x"}', "rt.pub", "envelope.payload"),
        (None, "rt.pem", "public_key"),  # a private key where a public one belongs
        (None, "missing.pub", "public_key"),
    ],
)
def test_verify_envelope_names_what_it_cannot_read_with_exit_2(
    signed: Path, content: bytes | None, key_file: str, field: str
) -> None:
    if content is not None:
        signed.write_bytes(content)
    code, out, err = run("artifact", "verify-envelope", str(signed), "--public-key", key_file, "--json")
    assert code == 2
    assert json.loads(out)["error"]["field"] == field and err.startswith(f"error: {field}: ")


# --- the head is read once, inside the snapshot the export reads in ----------------------------


class Recorder:
    """Wraps a ledger's ``snapshot`` and ``head`` to log when each is used."""

    def __init__(self, ledger: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.events: list[str] = []
        snapshot, head = ledger.snapshot, ledger.head

        @contextlib.contextmanager
        def logged_snapshot() -> Iterator[None]:
            self.events.append("enter")
            with snapshot():
                yield
            self.events.append("exit")

        def logged_head() -> Any:
            self.events.append("head")
            return head()

        monkeypatch.setattr(ledger, "snapshot", logged_snapshot)
        monkeypatch.setattr(ledger, "head", logged_head)


def test_the_provenance_export_reads_the_head_once_at_the_start_of_its_snapshot(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewtrail.provenance.export import provenance_query, provenance_view

    store = open_cli_store(project)
    try:
        recorder = Recorder(store.ledger, monkeypatch)
        doc = provenance_view(store, provenance_query("data.csv", "default", "in-toto")).document
    finally:
        store.close()
    assert doc is not None
    assert recorder.events[:2] == ["enter", "head"] and recorder.events[-1] == "exit"
    assert recorder.events.count("head") == 1 and recorder.events.count("enter") == 1


def test_the_otel_export_reads_the_head_in_the_snapshot_of_its_call_facts(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewtrail.tracing.otel import export_trace_runs, otel_export_request
    from test_trace_otel import CallSpec, RunSpec, meta_doc, request_doc, write_run

    write_run(
        project, RunSpec(skill="reviewer-specialist", calls=[CallSpec(1, "x", request_doc(1, "x"), meta_doc(1, "x"))])
    )
    store = open_cli_store(project)
    recorder = Recorder(store.ledger, monkeypatch)
    out = project / "otel.json"
    request = otel_export_request({}, output=out, project_dir=project)
    try:
        export_trace_runs(request, open_store=lambda: store)
    finally:
        store.close()
    assert recorder.events == ["enter", "head", "exit"]
    expected = head_of(project)
    resource = json.loads(out.read_text())["resourceSpans"][0]["resource"]["attributes"]
    assert resource[2:] == [
        {"key": "reviewtrail.ledger.head", "value": {"stringValue": expected.hash}},
        {"key": "reviewtrail.ledger.head_seq", "value": {"intValue": str(expected.seq)}},
    ]
