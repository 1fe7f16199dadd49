"""Every command that gates holds the records it reads to the rule ``verify`` holds them to: a
record ``verify`` rejects is never served, with or without ``--trusted-keys`` (docs/architecture.md,
"Signed records"). The commands call the library functions the web pages and the MCP tools call,
and the gate is in the ledger's checked reads, so those are held the same way."""

from __future__ import annotations

import contextlib
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import typer

from reviewtrail import app
from reviewtrail.errors import IntegrityError
from reviewtrail.human_review.session import review_queue
from reviewtrail.ledger import (
    KEY_REVOKED,
    MemoryLedger,
    NewRecord,
    TrustedKeys,
    declare_key,
    load_trusted_keys,
    require_signatures,
    signed_reads,
)
from support.signed import (
    Keys,
    SignedStore,
    cli,
    decision,
    edit_signature,
    forge_tail,
    make_keys,
    signed_store,
    trusted_file,
)

DECISION = "stream.thought.review.decision@1"
GATES = ("export", "coverage", "standings", "queue", "history", "decide")


def _args(shop: SignedStore, gate: str, item: str, out: Path) -> tuple[str, ...]:
    return {
        "export": ("review", "export", "camp", "--version", "1", "--out", str(out)),
        "coverage": ("campaign", "coverage", "camp", "--version", "1"),
        "standings": ("campaign", "standings", "camp", "--version", "1"),
        "queue": ("review", "queue", "camp", "--version", "1"),
        "history": ("review", "history", item),
        "decide": ("review", "decide", item, "--reviewer", "rev-9", "--tie"),
    }[gate]


def _head(shop: SignedStore) -> int:
    """The head's seq, read with plain SQL (the store may refuse to open)."""
    if shop.url.startswith("sqlite"):
        with sqlite3.connect(shop.url.removeprefix("sqlite:///")) as conn:
            return int(conn.execute("SELECT MAX(seq) FROM rt_records").fetchone()[0])
    import psycopg

    with psycopg.connect(shop.url) as conn:
        row = conn.execute("SELECT MAX(seq) FROM rt_records").fetchone()
        assert row is not None
        return int(row[0])


def _refused_everywhere(
    shop: SignedStore, tmp_path: Path, item: str, says: str, *extra: str, field: str | None = None
) -> None:
    """Every gate refuses (exit 4, naming ``says``, under ``field``: by default ``trusted_keys``
    with trusted keys, else ``signatures``), writes no file and appends nothing."""
    field = field or ("trusted_keys" if extra else "signatures")
    head = _head(shop)
    for gate in GATES:
        out = tmp_path / f"out-{gate}"
        code, refused, err = cli(*_args(shop, gate, item, out), "--json", *extra, env=shop.env(shop.key))
        assert code == 4, (gate, refused, err)
        assert says in refused["error"]["message"], (gate, refused)
        assert refused["error"]["field"] == field, (gate, refused)
        assert not out.exists()
    assert _head(shop) == head


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def shop(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SignedStore:
    monkeypatch.chdir(tmp_path)
    return signed_store(tmp_path, request.getfixturevalue("pg_url") if request.param == "postgres" else None)


@pytest.mark.parametrize("attack", ["unsigned", "attacker-signed", "re-signed"])
def test_no_command_that_gates_serves_a_decision_verify_rejects(shop: SignedStore, tmp_path: Path, attack: str) -> None:
    attacker = make_keys(tmp_path / "keys", "attacker")  # a key no record declares
    if attack == "re-signed":  # the writer's decision, its signature row replaced by the attacker's
        with shop.open() as store:
            seq = store.ledger.head_seq()
            record = store.ledger.records_at([seq])[seq]
        edit_signature(shop, seq, value=attacker.signer().sign(record.hash).value, key_id=attacker.key_id)
        item = shop.items[0].item_id
    else:
        seq = forge_tail(shop, decision(shop.items[1]), key=attacker if attack == "attacker-signed" else None).seq
        item = shop.items[1].item_id
    code, report, _ = cli("verify", "--json", env=shop.env())
    assert code == 4 and len(report["problems"]) == 1, report
    problem = report["problems"][0]
    assert problem.startswith(f"ledger seq {seq} ({DECISION}): ")
    _refused_everywhere(shop, tmp_path, item, problem)  # named exactly as verify names it
    with shop.open() as store, pytest.raises(IntegrityError, match=re.escape(problem)):
        review_queue(store, "camp", 1, limit=5)  # the library call of the MCP tool and the web pages


def test_export_with_trusted_keys_refuses_what_verify_with_them_rejects(shop: SignedStore, tmp_path: Path) -> None:
    """A key in the trusted file that the store never declared signs a decision after the require
    point: verify --trusted-keys rejects it (no record before it declares the key), so the
    export with the same file must not serve it."""
    outsider = make_keys(tmp_path / "keys", "outsider")
    trusted = trusted_file(tmp_path / "writers.pem", shop.key, outsider)
    assert cli("verify", "--json", "--trusted-keys", str(trusted), env=shop.env())[0] == 0
    forged = forge_tail(shop, decision(shop.items[1]), key=outsider)
    code, report, _ = cli("verify", "--json", "--trusted-keys", str(trusted), env=shop.env())
    assert code == 4 and report["problems"] == [
        f"ledger seq {forged.seq} ({DECISION}): it is signed by key {outsider.key_id}, which no record before it "
        f"declares (signatures are required from seq {shop.required_at})"
    ]
    _refused_everywhere(shop, tmp_path, shop.items[1].item_id, report["problems"][0], "--trusted-keys", str(trusted))


def test_every_command_that_gates_takes_trusted_keys_the_same_way(shop: SignedStore, tmp_path: Path) -> None:
    """A writer the store declares but the reader does not trust: the store's rule passes it,
    the trusted keys do not; with both keys trusted every command serves it."""
    other = make_keys(tmp_path / "keys", "other")
    with shop.open(shop.key) as store:
        declare_key(store.ledger, other.public.read_bytes(), name="other")
    with shop.open(other) as store:
        [env] = store.append([decision(shop.items[1])])
    item = shop.items[1].item_id
    only_writer = trusted_file(tmp_path / "writer.pem", shop.key)
    says = f"ledger seq {env.seq} ({DECISION}): it is signed by key {other.key_id}, which is not a trusted key"
    _refused_everywhere(shop, tmp_path, item, says, "--trusted-keys", str(only_writer))
    both = trusted_file(tmp_path / "both.pem", shop.key, other)
    for gate in GATES:
        args = _args(shop, gate, item, tmp_path / "served")
        if gate == "decide":
            args = (*args, "--supersedes", env.id)
        code, _, err = cli(*args, "--json", "--trusted-keys", str(both), env=shop.env(shop.key))
        assert code == 0, (gate, err)
        bad = tmp_path / "bad.pem"
        bad.write_text("not a key\n")
        code, refused, _ = cli(*args, "--json", "--trusted-keys", str(bad), env=shop.env(shop.key))
        assert code == 2 and refused["error"]["field"] == "trusted_keys", (gate, refused)


def test_the_trusted_keys_option_reads_the_same_on_every_command_that_gates() -> None:
    from reviewtrail.cli._app import app as cli_app

    root: Any = typer.main.get_command(cli_app)
    helps = {}
    for path in (("review", "export"), ("campaign", "coverage"), ("campaign", "standings"), ("review", "queue"),
                 ("review", "decide"), ("review", "history")):  # fmt: skip
        group = root.commands[path[0]]
        [option] = [p for p in group.commands[path[1]].params if p.name == "trusted_keys"]
        helps[path] = option.help
    assert len(set(helps.values())) == 1 and "verify --trusted-keys" in str(next(iter(helps.values())))


def test_a_revocation_that_names_no_key_stops_every_gate(shop: SignedStore, tmp_path: Path) -> None:
    """Fail closed: whose key a revocation without a key id revokes cannot be told, so no gate
    serves anything until it is looked into, with or without trusted keys."""
    revocation: dict[str, Any] = {"keyId": "not a key id", "reason": "written by hand"}
    forged = forge_tail(shop, NewRecord.make(type=KEY_REVOKED, actor="x", privacy="private", payload=revocation))
    says = f"ledger seq {forged.seq} ({KEY_REVOKED}) names no key id"
    _refused_everywhere(shop, tmp_path, shop.items[0].item_id, says)
    trusted = trusted_file(tmp_path / "writers.pem", shop.key)
    _refused_everywhere(shop, tmp_path, shop.items[0].item_id, says, "--trusted-keys", str(trusted))
    with shop.open() as store:
        with pytest.raises(IntegrityError, match=re.escape(says)):  # the library reads the MCP tools and web pages make
            review_queue(store, "camp", 1, limit=5)
        keys = load_trusted_keys(trusted)
        assert isinstance(keys, TrustedKeys)
        with pytest.raises(IntegrityError, match=re.escape(says)), signed_reads(store.ledger, keys):
            pass  # refused as the scope opens


def _drop_signatures(shop: SignedStore) -> None:
    if shop.url.startswith("sqlite"):
        with sqlite3.connect(shop.url.removeprefix("sqlite:///")) as conn:
            conn.execute("DROP TABLE rt_signatures")
        return
    import psycopg

    with psycopg.connect(shop.url, autocommit=True) as conn:
        conn.execute("DROP TABLE rt_signatures")


def test_a_dropped_signatures_table_is_exit_4_naming_it_for_verify_and_every_gate(
    shop: SignedStore, tmp_path: Path
) -> None:
    with shop.open() as running:  # a process that opened the store before the table went
        _drop_signatures(shop)
        with pytest.raises(IntegrityError, match="rt_signatures is missing"):
            review_queue(running, "camp", 1, limit=5)
    code, report, err = cli("verify", "--json", env=shop.env())
    assert code == 4 and "rt_signatures" in report["error"]["message"], (report, err)
    says = "the signatures table rt_signatures is missing"
    _refused_everywhere(shop, tmp_path, shop.items[0].item_id, says, field="ledger")


# --- the read gate, pinned (memory) ------------------------------------------------------------------
def _memory_store(tmp_path: Path) -> tuple[MemoryLedger, Keys]:
    """Seq 1 declares the writer's key, 2 requires signatures, 3..5 are its notes."""
    key = make_keys(tmp_path / "keys", "writer")
    ledger = MemoryLedger(app.catalog())
    ledger.signer = key.signer()
    declare_key(ledger, key.public.read_bytes(), name="writer")
    require_signatures(ledger)
    ledger.append([NewRecord.make(type="t.note@1", actor="a", privacy="private", payload={"n": n}) for n in range(3)])
    return ledger, key


def _read(ledger: MemoryLedger, *seqs: int) -> list[Any]:
    return ledger.checked_records(ledger.records_at(seqs).values())


def test_a_changed_key_record_stops_the_gate_before_it_is_believed(tmp_path: Path) -> None:
    ledger, _ = _memory_store(tmp_path)
    ledger.tamper(1, payload=ledger.records_at([1])[1].payload.replace(b'"writer"', b'"mallory"'))
    with pytest.raises(IntegrityError, match=r"^signatures: ledger seq 1 .*run 'reviewtrail verify'$"):
        _read(ledger, 5)
    unlinked, _ = _memory_store(tmp_path / "2")
    unlinked.tamper(3, prev_hash="0" * 64)  # the record after the requirement no longer links to it
    with pytest.raises(IntegrityError, match=r"^signatures: .*seq 2"):
        _read(unlinked, 5)


def test_the_store_gate_reads_the_signatures_anew_each_time(tmp_path: Path) -> None:
    ledger, _ = _memory_store(tmp_path)
    assert [e.seq for e in _read(ledger, 4)] == [4]
    attacker = make_keys(tmp_path / "keys", "attacker").signer()
    ledger.tamper_signature(4, attacker.sign(ledger.records_at([4])[4].hash))
    with pytest.raises(IntegrityError) as refused:
        _read(ledger, 4)
    assert str(refused.value) == (
        f"signatures: ledger seq 4 (t.note@1): it is signed by key {attacker.key_id}, which no record before it "
        "declares (signatures are required from seq 2); a record verify rejects is never read; run 'reviewtrail verify'"
    )


def test_a_store_without_key_records_costs_the_gate_no_signature_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = MemoryLedger(app.catalog())
    ledger.append([NewRecord.make(type="t.note@1", actor="a", privacy="private", payload={"n": n}) for n in range(3)])
    asked: list[list[int]] = []
    real = ledger.signatures_at

    def spied(seqs: Any) -> Any:
        wanted = sorted(seqs)
        asked.append(wanted)
        return real(wanted)

    monkeypatch.setattr(ledger, "signatures_at", spied)
    assert len(_read(ledger, 1, 2, 3)) == 3
    assert asked == [[]]  # the key records read (none), never the records' signatures


def test_a_trusted_scope_holds_records_before_the_trusted_requirement_to_the_store_rule_only(tmp_path: Path) -> None:
    """As verify --trusted-keys: the unsigned identity record before the requirement a trusted key
    signed is served; with keys that signed no requirement, every record is held to them."""
    shop = signed_store(tmp_path, items=1)
    with shop.open() as store:
        ledger = store.ledger
        with signed_reads(ledger, load_trusted_keys(trusted_file(tmp_path / "w.pem", shop.key))):
            assert [e.seq for e in ledger.checked_records(ledger.records_at([1]).values())] == [1]
        other = make_keys(tmp_path / "keys", "other")
        source = trusted_file(tmp_path / "o.pem", other)
        with signed_reads(ledger, load_trusted_keys(source)), pytest.raises(IntegrityError) as refused:
            ledger.checked_records(ledger.records_at([1]).values())
    assert str(refused.value) == (
        "trusted_keys: ledger seq 1 (store.identity@1): it is not signed, and the trusted keys must sign it; only "
        f"records signed by the trusted keys ({source}) are read here; run 'reviewtrail verify --trusted-keys'"
    )


def test_the_refusal_of_a_revocation_naming_no_key_says_why(tmp_path: Path) -> None:
    ledger, key = _memory_store(tmp_path)
    head = ledger.head()
    assert head is not None
    record = NewRecord.make(type=KEY_REVOKED, actor="x", privacy="private", payload={"keyId": 7, "reason": "?"})
    from datetime import UTC, datetime

    from reviewtrail.ledger.records._envelope import seal

    ledger.append_sealed([seal(record, seq=head.seq + 1, prev_hash=head.hash, now=datetime.now(UTC))])
    for trusted in (None, TrustedKeys.of([key.signer().public_key])):
        scope = signed_reads(ledger, trusted) if trusted is not None else contextlib.nullcontext()
        with pytest.raises(IntegrityError) as refused, scope:
            _read(ledger, 3)
        field = "trusted_keys" if trusted is not None else "signatures"
        assert str(refused.value) == (
            f"{field}: ledger seq {head.seq + 1} ({KEY_REVOKED}) names no key id, so whose key it revokes cannot be "
            "told: no record is served until it is looked into; run 'reviewtrail verify'"
        )


def test_a_key_declared_by_no_declared_writer_after_the_requirement_declares_nothing_to_the_gate(
    tmp_path: Path,
) -> None:
    """The key records are taken in seq order: an unsigned declaration after the require point
    declares nothing, so the records its key signs are refused."""
    from datetime import UTC, datetime

    from reviewtrail.ledger.records._envelope import seal

    ledger, _ = _memory_store(tmp_path)
    attacker = make_keys(tmp_path / "keys", "attacker")
    declaration = NewRecord.make(
        type="store.key.declared@1",
        actor="x",
        privacy="private",
        payload={**_declared_payload(attacker), "name": "attacker"},
    )
    head = ledger.head()
    assert head is not None
    forged = seal(declaration, seq=head.seq + 1, prev_hash=head.hash, now=datetime.now(UTC))
    note = NewRecord.make(type="t.note@1", actor="x", privacy="private", payload={})
    signed = seal(note, seq=forged.seq + 1, prev_hash=forged.hash, now=datetime.now(UTC))
    ledger.append_sealed([forged, signed], signatures={signed.seq: attacker.signer().sign(signed.hash)})
    with pytest.raises(IntegrityError, match=f"ledger seq {signed.seq} .*which no record before it declares"):
        _read(ledger, signed.seq)


def test_a_trusted_scope_without_a_source_names_the_keys_as_given(tmp_path: Path) -> None:
    ledger, _ = _memory_store(tmp_path)
    other = TrustedKeys.of([make_keys(tmp_path / "keys", "other").signer().public_key])
    with signed_reads(ledger, other), pytest.raises(IntegrityError) as refused:
        _read(ledger, 4)
    assert str(refused.value).endswith(
        "which is not a trusted key; only records signed by the trusted keys (given) are read here; run "
        "'reviewtrail verify --trusted-keys'"
    )


def _declared_payload(keys: Keys) -> dict[str, Any]:
    import base64

    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    raw = keys.signer().public_key.public_bytes(Encoding.Raw, PublicFormat.Raw)
    return {"alg": "ed25519", "keyId": keys.key_id, "publicKey": base64.b64encode(raw).decode()}


def test_the_gate_reads_only_the_key_records_past_what_it_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """To the head on its first check, then from the seq after it up to the records checked."""
    ledger, _ = _memory_store(tmp_path)
    reads: list[tuple[int, int | None]] = []
    real = ledger.read

    def spied(**kwargs: Any) -> Any:
        if kwargs.get("type") == KEY_REVOKED:  # one of the three reads of each advance
            reads.append((kwargs.get("start", 1), kwargs.get("end")))
        return real(**kwargs)

    monkeypatch.setattr(ledger, "read", spied)
    _read(ledger, 3)
    _read(ledger, 4)  # already read past
    ledger.append([NewRecord.make(type="t.note@1", actor="a", privacy="private", payload={"n": n}) for n in range(3)])
    _read(ledger, 7)
    assert reads == [(1, 5), (6, 7)]
