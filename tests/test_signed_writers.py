"""Writers inside the trust boundary: once a store requires signatures, an append signed by a key
its key records do not allow at that seq (never declared, revoked, revoked by an unsigned
revocation) is refused before anything is written (exit 4, naming the key), on memory, SQLite
and PostgreSQL; the key records are read under the append's own write lock, so a revocation
committed by another writer between two appends counts for the second."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reviewtrail import app
from reviewtrail.errors import ConfigError, IntegrityError
from reviewtrail.ledger import (
    KEY_REVOKED,
    SIGNATURES_REQUIRED,
    Envelope,
    Ledger,
    MemoryLedger,
    NewRecord,
    RecordSignature,
    declare_key,
    require_signatures,
    revoke_key,
    signature_problems,
    writer_keys,
)
from reviewtrail.ledger.contract._key_state import KeyState
from reviewtrail.ledger.records._envelope import seal
from support.signed import Keys, cli, forge_tail, make_keys, row_counts, signed_store


def _note(n: int = 0) -> NewRecord:
    return NewRecord.make(type="t.note@1", actor="a", privacy="private", payload={"n": n})


class Writers:
    """A store whose writer ``key`` declared itself and required signatures, on one backend."""

    def __init__(self, backend: str, root: Path, url: str | None) -> None:
        self.backend = backend
        self.root = root
        if backend == "memory":
            self.key = make_keys(root / "keys", "writer")
            self.memory = MemoryLedger(app.catalog())
            self.memory.signer = self.key.signer()
            declare_key(self.memory, self.key.public.read_bytes(), name="writer")
            require_signatures(self.memory)
            self.memory.append([_note()])
        else:
            self.shop = signed_store(root, url)
            self.key = self.shop.key

    @contextlib.contextmanager
    def open(self, key: Keys | None) -> Iterator[Ledger]:
        """A ledger object appending signed by ``key`` (unsigned without one)."""
        if self.backend == "memory":
            self.memory.signer = key.signer() if key is not None else None
            yield self.memory
            return
        with self.shop.open(key) as store:
            yield store.ledger

    def forge(self, record: NewRecord, key: Keys | None = None) -> Envelope:
        """``record`` put at the tail past reviewtrail's append, as database access allows."""
        if self.backend != "memory":
            return forge_tail(self.shop, record, key=key)
        head = self.memory.head()
        assert head is not None
        env = seal(record, seq=head.seq + 1, prev_hash=head.hash, now=datetime.now(UTC))
        signatures = {env.seq: key.signer().sign(env.hash)} if key is not None else {}
        self.memory.append_sealed([env], signatures=signatures)
        return env

    def counts(self) -> tuple[int, int, int]:
        """(the head's seq, records stored, signatures stored)."""
        if self.backend == "memory":
            head = self.memory.head_seq()
            return head, self.memory.stats()[0], len(self.memory.signatures_at(range(1, head + 1)))
        with self.shop.open() as store:
            head = store.ledger.head_seq()
        return (head, *row_counts(self.shop.url))

    def problems(self) -> list[str]:
        with self.open(None) as ledger:
            return signature_problems(ledger, end=ledger.head_seq()).problems


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def writers(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Writers:
    monkeypatch.chdir(tmp_path)
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else None
    return Writers(request.param, tmp_path, url)


def _refused(writers: Writers, key: Keys, says: str) -> None:
    """An append signed by ``key`` is exit 4 naming the key and ``says``; nothing is written."""
    before = writers.counts()
    with writers.open(key) as ledger, pytest.raises(IntegrityError) as refused:
        ledger.append([_note(1), _note(2)])
    assert refused.value.exit_code == 4 and refused.value.field == "signing_key"
    message = str(refused.value)
    assert key.key_id in message and says in message and "nothing was written" in message, message
    assert writers.counts() == before


def test_an_append_signed_by_a_key_never_declared_is_refused_before_it_is_written(writers: Writers) -> None:
    stranger = make_keys(writers.root / "keys", "stranger")
    _refused(writers, stranger, "which no record before it declares")
    assert writers.problems() == []  # the store is not poisoned
    with writers.open(writers.key) as ledger:  # the declared writer still writes
        ledger.append([_note(3)])
    assert writers.problems() == []


def test_an_append_signed_by_a_revoked_key_is_refused_before_it_is_written(writers: Writers) -> None:
    laptop = make_keys(writers.root / "keys", "laptop")
    with writers.open(writers.key) as ledger:
        declare_key(ledger, laptop.public.read_bytes(), name="laptop")
    with writers.open(laptop) as ledger:
        ledger.append([_note(1)])  # declared, not revoked: allowed
    with writers.open(writers.key) as ledger:
        revoked = revoke_key(ledger, laptop.key_id, reason="laptop lost")
    _refused(writers, laptop, f"after the key's revocation at seq {revoked.seq}")
    assert writers.problems() == []


def test_an_append_signed_by_a_key_after_an_unsigned_revocation_is_refused(writers: Writers) -> None:
    """A revocation takes effect whoever wrote it (fail closed): one put in by database access,
    unsigned, stops the key's appends as it stops verify."""
    revocation = NewRecord.make(
        type=KEY_REVOKED,
        actor="intruder",
        privacy="private",
        payload={"keyId": writers.key.key_id, "reason": "forged"},
        subject=f"key:{writers.key.key_id}",
    )
    forged = writers.forge(revocation)
    _refused(writers, writers.key, f"after the key's revocation at seq {forged.seq}")
    # verify reports the unsigned revocation itself, and nothing after it.
    assert [p for p in writers.problems() if "not signed" not in p] == []


def test_an_append_unsigned_after_the_requirement_is_still_exit_5(writers: Writers) -> None:
    before = writers.counts()
    with writers.open(None) as ledger, pytest.raises(ConfigError) as refused:
        ledger.append([_note(1)])
    assert refused.value.field == "signing_key" and writers.counts() == before


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_revocation_committed_between_two_appends_counts_for_the_second(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer's ledger object has read the key records for its first append; the key is then
    revoked through another connection. The second append reads the key records past what it
    read before, under its own write lock, and is refused."""
    monkeypatch.chdir(tmp_path)
    writers = Writers(backend, tmp_path, request.getfixturevalue("pg_url") if backend == "postgres" else None)
    laptop = make_keys(tmp_path / "keys", "laptop")
    with writers.open(writers.key) as ledger:
        declare_key(ledger, laptop.public.read_bytes(), name="laptop")
    with writers.shop.open(laptop) as store:
        store.append([_note(1)])
        with writers.shop.open(writers.key) as other:
            revoked = revoke_key(other.ledger, laptop.key_id, reason="laptop lost")
        before = writers.counts()
        with pytest.raises(IntegrityError, match=f"key {laptop.key_id}.*revocation at seq {revoked.seq}"):
            store.append([_note(2)])
        assert writers.counts() == before


def test_the_command_line_refuses_an_undeclared_key_with_exit_4_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    writers = Writers("sqlite", tmp_path, None)
    stranger = make_keys(tmp_path / "keys", "stranger")
    before = writers.counts()
    code, out, err = cli(
        "ledger", "append", "--type", "t.note@1", "--actor", "a", "--privacy", "private", "--json",
        env=writers.shop.env(stranger),
    )  # fmt: skip
    assert code == 4, (out, err)
    assert out["error"]["field"] == "signing_key" and stranger.key_id in out["error"]["message"]
    assert writers.counts() == before
    assert cli("verify", "--json", env=writers.shop.env())[0] == 0


# --- the append's key state and rule, pinned -------------------------------------------------------
def test_the_key_state_reads_on_from_its_seq_and_starts_over_below_it() -> None:
    state = KeyState()
    sig = RecordSignature("ab" * 32, b"\0" * 64)
    state.advance(
        4, [(2, SIGNATURES_REQUIRED, "cd" * 32, {}, sig), (3, KEY_REVOKED, "ef" * 32, {"keyId": "ab" * 32}, None)]
    )
    assert state.seen == 4 and state.book.required_from == 2 and state.book.revoked == {"ab" * 32: 3}
    assert state.hashes == {2: "cd" * 32} and state.signatures == {2: sig}  # of the requirements only
    state.advance(3, [])
    assert state.seen == 4  # never back
    state.start_over_below(4)
    assert state.seen == 4 and state.book.required_from == 2
    state.start_over_below(3)  # the chain now ends before what was read: read it all again
    assert state.seen == 0 and state.book.required_from is None and state.hashes == {} and state.signatures == {}
    state.advance(5, [(5, SIGNATURES_REQUIRED, "01" * 32, {}, None)])
    assert state.hashes == {5: "01" * 32} and state.signatures == {}


def test_a_refused_batch_leaves_nothing_in_the_key_state(writers: Writers) -> None:
    """A batch that revokes its own signer, then goes on signing with it, is refused whole; the
    revocation it held was never written, so the signer still signs the next append."""
    key_id = writers.key.key_id
    revocation = NewRecord.make(
        type=KEY_REVOKED,
        actor="a",
        privacy="private",
        payload={"keyId": key_id, "reason": "r"},
        subject=f"key:{key_id}",
    )
    before = writers.counts()
    with writers.open(writers.key) as ledger:
        with pytest.raises(IntegrityError) as refused:
            ledger.append([revocation, _note(1)])
        assert writers.counts() == before
        head = before[0]
        assert str(refused.value) == (
            f"signing_key: the signing key {key_id} may not sign here: ledger seq {head + 2} (t.note@1) would fail "
            f"verify, it is signed by key {key_id} after the key's revocation at seq {head + 1}; nothing was "
            "written (see 'reviewtrail key list')"
        )
        envs = ledger.append([_note(2), _note(3)])
    assert [env.seq for env in envs] == [head + 1, head + 2] and writers.problems() == []


def test_an_unsigned_requirement_is_refused_as_unsigned(tmp_path: Path) -> None:
    """The requirement counts from its own seq, so an unsigned one is refused (exit 5), and the
    message says where signatures are required from."""
    ledger = MemoryLedger(app.catalog())
    with pytest.raises(ConfigError) as refused:
        ledger.append([_note(1), NewRecord.make(type=SIGNATURES_REQUIRED, actor="a", privacy="private", payload={})])
    assert str(refused.value) == (
        "signing_key: this store requires every record to be signed from seq 2 on, and this process has no signing "
        "key: set REVIEWTRAIL_SIGNING_KEY (or signing_key in your user configuration) to a writer key declared in "
        "the store ('reviewtrail key list'); nothing was written"
    )
    assert ledger.head_seq() == 0
    ledger.append([_note(1)])  # unsigned, no requirement: nothing asked for


def test_key_list_reads_a_revocation_no_writer_signed(writers: Writers) -> None:
    """The key records make the rule, so reading them is not held to it: a forged revocation is
    listed (and takes effect), not refused."""
    revocation = NewRecord.make(
        type=KEY_REVOKED, actor="x", privacy="private", payload={"keyId": writers.key.key_id, "reason": "forged"}
    )
    forged = writers.forge(revocation)
    with writers.open(None) as ledger:
        assert [k["revokedAt"] for k in writer_keys(ledger).keys] == [forged.seq]
