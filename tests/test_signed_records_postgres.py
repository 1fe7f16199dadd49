"""Signed records on PostgreSQL (a real server the tests start): the signatures table migrates,
takes every signed append in its transaction and is append-only; ``verify --trusted-keys`` and
``review export --trusted-keys`` tell the writer from anyone else with a database login."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest

from reviewtrail.errors import ConfigError
from reviewtrail.ledger import NewRecord, declare_key, revoke_key
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

pytestmark = pytest.mark.postgres

DECISION = "stream.thought.review.decision@1"


@pytest.fixture
def shop(tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> SignedStore:
    monkeypatch.chdir(tmp_path)
    return signed_store(tmp_path, pg_url)


def _export(shop: SignedStore, out: Path, *extra: str) -> tuple[int, Any, str]:
    return cli("review", "export", "camp", "--version", "1", "--out", str(out), "--json", *extra, env=shop.env())


def test_a_signed_store_passes_and_a_forged_tail_decision_is_reported_and_refused(
    shop: SignedStore, tmp_path: Path
) -> None:
    trusted = trusted_file(tmp_path / "writers.pem", shop.key)
    code, report, err = cli("verify", "--json", "--trusted-keys", str(trusted), env=shop.env())
    assert code == 0, (report, err)
    assert _export(shop, tmp_path / "before", "--trusted-keys", str(trusted))[0] == 0
    forged = forge_tail(shop, decision(shop.items[1]))
    code, report, _ = cli("verify", "--json", env=shop.env())
    assert code == 4
    assert report["problems"] == [
        f"ledger seq {forged.seq} ({DECISION}): it is not signed, but signatures are required from seq "
        f"{shop.required_at}"
    ]
    code, report, _ = cli("verify", "--json", "--trusted-keys", str(trusted), env=shop.env())
    assert code == 4 and len(report["problems"]) == 1 and f"ledger seq {forged.seq} (" in report["problems"][0]
    out = tmp_path / "after"
    code, refused, _ = _export(shop, out, "--trusted-keys", str(trusted))
    assert code == 4 and not out.exists()
    assert f"ledger seq {forged.seq} ({DECISION}): it is not signed" in refused["error"]["message"]
    code, refused, _ = _export(shop, tmp_path / "unguarded")  # the store's own rule keeps it out too
    assert code == 4 and refused["error"]["field"] == "signatures" and not (tmp_path / "unguarded").exists()


def test_a_record_signed_by_a_revoked_key_after_its_revocation_is_reported(shop: SignedStore, tmp_path: Path) -> None:
    stolen = make_keys(tmp_path / "keys", "laptop")
    with shop.open(shop.key) as store:
        declare_key(store.ledger, stolen.public.read_bytes(), name="laptop")
        revoked = revoke_key(store.ledger, stolen.key_id, reason="laptop lost")
    forged = forge_tail(shop, decision(shop.items[1]), key=stolen)
    trusted = trusted_file(tmp_path / "writers.pem", shop.key, stolen)
    code, report, _ = cli("verify", "--json", "--trusted-keys", str(trusted), env=shop.env())
    assert code == 4
    assert report["problems"] == [
        f"ledger seq {forged.seq} ({DECISION}): it is signed by key {stolen.key_id} after the key's revocation "
        f"at seq {revoked.seq}"
    ]
    code, refused, _ = _export(shop, tmp_path / "out", "--trusted-keys", str(trusted))
    assert code == 4 and "after the key's revocation" in refused["error"]["message"]


def test_rotation_keeps_passing_and_an_untrusted_writer_is_reported(shop: SignedStore, tmp_path: Path) -> None:
    new = make_keys(tmp_path / "keys", "writer-2")
    code, _, err = cli(
        "key", "rotate", str(new.public), "--name", "writer", "--old", shop.key.key_id, "--json", env=shop.env(shop.key)
    )
    assert code == 0, err
    with shop.open(new) as store:
        [signed] = store.append([decision(shop.items[1])])
    assert (
        cli("verify", "--json", "--trusted-keys", str(trusted_file(tmp_path / "t.pem", shop.key, new)), env=shop.env())[
            0
        ]
        == 0
    )
    code, report, _ = cli(
        "verify", "--json", "--trusted-keys", str(trusted_file(tmp_path / "old.pem", shop.key)), env=shop.env()
    )
    assert code == 4
    assert report["problems"][-1] == (
        f"ledger seq {signed.seq} ({DECISION}): it is signed by key {new.key_id}, which is not a trusted key"
    )


def test_a_deleted_or_altered_signature_row_is_reported(shop: SignedStore, tmp_path: Path) -> None:
    with shop.open() as store:
        last = store.ledger.head_seq()
        value = store.ledger.signatures_at([last])[last].value
    edit_signature(shop, last, value=bytes([value[0] ^ 0x80]) + value[1:])
    code, report, _ = cli("verify", "--json", env=shop.env())
    assert code == 4 and len(report["problems"]) == 1 and "does not verify" in report["problems"][0]
    edit_signature(shop, last, delete=True)
    trusted = trusted_file(tmp_path / "writers.pem", shop.key)
    code, report, _ = cli("verify", "--json", "--trusted-keys", str(trusted), env=shop.env())
    assert code == 4 and report["problems"] == [
        f"ledger seq {last} ({DECISION}): it is not signed, and the trusted keys must sign it"
    ]


def test_the_signatures_table_is_append_only_and_its_guards_are_checked(shop: SignedStore) -> None:
    with psycopg.connect(shop.url, autocommit=True) as conn:
        for sql in ("DELETE FROM rt_signatures", "UPDATE rt_signatures SET key_id = 'x'", "TRUNCATE rt_signatures"):
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                conn.execute(sql)
        conn.execute("ALTER TABLE rt_signatures DISABLE TRIGGER rt_signatures_no_change")
        conn.execute("DROP TRIGGER rt_signatures_no_truncate ON rt_signatures")
    code, report, _ = cli("verify", "--json", env=shop.env())
    assert code == 4
    assert "ledger: append-only trigger rt_signatures_no_change on rt_signatures is disabled" in report["problems"]
    assert "ledger: append-only trigger rt_signatures_no_truncate on rt_signatures was dropped" in report["problems"]


def test_a_signed_append_that_is_not_stored_as_signed_writes_nothing(shop: SignedStore) -> None:
    with psycopg.connect(shop.url, autocommit=True) as conn:
        conn.execute("CREATE RULE swallow AS ON INSERT TO rt_signatures DO INSTEAD NOTHING")
    with shop.open() as store:
        before = store.ledger.head_seq()
    code, out, _ = cli(
        "ledger",
        "append",
        "--type",
        "t.note@1",
        "--actor",
        "a",
        "--privacy",
        "private",
        "--json",
        env=shop.env(shop.key),
    )
    assert code == 4 and "signatures" in out["error"]["message"] and "nothing was written" in out["error"]["message"]
    with shop.open() as store:
        assert store.ledger.head_seq() == before
        with pytest.raises(ConfigError, match="no signing key"):  # and unsigned is no way around it
            store.append([NewRecord.make(type="t.note@1", actor="a", privacy="private", payload={})])
        assert store.ledger.head_seq() == before
