"""verify's short ways still catch every tampering: a sound record found sound without building
its problems, a header hashed without checking each field's type first, references not searched
in canonical bytes without ``"size":``, one ``cas_refs`` row per distinct reference of a record,
and stored rows equal to their recomputation passed without comparing keys.

Each is held to what the long way reports: a reference written here from the documented rules
(record checks), or the state a replay of every row gives (query rows)."""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from reviewtrail import canonical, cas
from reviewtrail.app import init_store
from reviewtrail.canonical import canonical_json, loads_json
from reviewtrail.cas import CasObjectRef, CasRef, FilesystemCas
from reviewtrail.config import Settings
from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger import GENESIS_HASH, Envelope, MemoryLedger, NewRecord, chain_problems, compute_hash
from reviewtrail.ledger.records._fields import PRIVACY_LEVELS, TYPE_PATTERN
from reviewtrail.store import Store
from reviewtrail.verify import verify_store

_HEADER = ("seq", "id", "type", "time", "actor", "privacy", "subject", "supersedes")


def reference_record_problems(env: Envelope) -> list[str]:
    """The record checks as documented, each done the long way."""
    found: list[str] = []
    if hashlib.sha256(env.payload).hexdigest() != env.payload_hash:
        found.append("payload does not hash to payloadHash")
    try:
        canonical = canonical_json(loads_json(env.payload)) == env.payload
    except (ValueError, InvalidInputError):
        found.append("payload is not valid JSON")
    else:
        if not canonical:
            found.append("payload bytes are not canonical JSON")
    if type(env.type) is not str or TYPE_PATTERN.fullmatch(env.type) is None:
        found.append(f"type {env.type!r} is not 'name@version'")
    if env.privacy not in PRIVACY_LEVELS:
        found.append(f"privacy {env.privacy!r} is not one of {', '.join(PRIVACY_LEVELS)}")
    header = {name: getattr(env, name) for name in _HEADER}
    header.update(payloadHash=env.payload_hash, prevHash=env.prev_hash)
    try:
        sealed: str | None = compute_hash(env.prev_hash, header)
    except (ValueError, TypeError, AttributeError):  # InvalidInputError is a ValueError
        sealed = None
    if sealed != env.hash:
        found.append("hash does not match the envelope")
    return [f"ledger seq {env.seq} ({env.id}): {problem}" for problem in found]


def reference_chain_problems(envs: list[Envelope]) -> list[str]:
    found: list[str] = []
    prev, expected, seen = GENESIS_HASH, 1, set()
    for env in envs:
        if env.seq != expected:
            found.append(f"ledger: expected seq {expected}, found {env.seq} (gap or reorder)")
        if env.prev_hash != prev:
            found.append(f"ledger seq {env.seq} ({env.id}): prevHash does not match the hash of seq {env.seq - 1}")
        if env.id in seen:
            found.append(f"ledger seq {env.seq}: id {env.id} used twice")
        seen.add(env.id)
        found.extend(reference_record_problems(env))
        prev, expected = env.hash, env.seq + 1
    return found


def _ledger() -> MemoryLedger:
    ledger = MemoryLedger()
    ledger.append(
        [
            NewRecord(type="t.a@1", actor="x", privacy="private", payload={"i": i, "text": 'é"\\'}, subject=None)
            for i in range(3)
        ]
    )
    return ledger


_ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.text(max_size=6),
    st.sampled_from(["\ud800", 'q"uote', "back\\slash", "\x01", "t.b@2", "public-source", "é"]),
    st.binary(max_size=4),
    st.lists(st.integers(), max_size=2),
)
_PAYLOADS = st.sampled_from(
    [
        b'{"i":1}',
        b'{"i": 1}',
        b'{"text":"a","i":1}',
        b'{"i":1,"i":2}',
        b'{"i":1.0}',
        b'{"i":12345678901234567}',
        b'{"i":"\\u0041"}',
        b'{"i":"\xff"}',
        b'{"i":NaN}',
        b'["\\ud800"]',
        b"not json",
        b"[]",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seq=st.integers(min_value=1, max_value=3),
    field=st.sampled_from([*_HEADER, "payload_hash", "prev_hash", "hash", "payload"]),
    value=_ODD,
    payload=_PAYLOADS,
    rehash=st.booleans(),
)
@example(seq=2, field="seq", value=True, payload=b"", rehash=True)  # "true" in the header, not "True"
@example(seq=2, field="seq", value=2.0, payload=b"", rehash=True)  # "2", not "2.0"
@example(seq=2, field="seq", value=2**53 + 1, payload=b"", rehash=False)  # no header a writer could seal
@example(seq=2, field="subject", value=b"s", payload=b"", rehash=False)
def test_every_record_check_reports_what_the_long_way_does(
    seq: int, field: str, value: Any, payload: bytes, rehash: bool
) -> None:
    """A field given a value of any type (or the payload odd bytes), with the hashes sealed again
    over it or not: the walk reports exactly what each check done the long way reports. (A seq is
    a number in every backend: it is given other numbers.)"""
    ledger = _ledger()
    if field == "seq" and type(value) not in (int, bool, float):
        value = int.from_bytes(hashlib.sha256(repr(value).encode()).digest()[:8]) - 2**63
    if field == "id" and type(value) is list:  # ids are looked up in a set
        value = tuple(value)
    changes: dict[str, Any] = {field: payload if field == "payload" else value}
    if field == "payload" and rehash:
        changes["payload_hash"] = hashlib.sha256(payload).hexdigest()
    records = ledger.recorder._records  # what an attacker with write access to memory changes
    env = records[seq - 1] = records[seq - 1].replace(**changes)
    if rehash:  # sealed again: only the field's own check can catch it
        header = {name: getattr(env, name) for name in _HEADER}
        header.update(payloadHash=env.payload_hash, prevHash=env.prev_hash)
        with contextlib.suppress(ValueError, TypeError, AttributeError):  # else no hash a writer could give
            records[seq - 1] = env.replace(hash=compute_hash(env.prev_hash, header))
    envs = [e.replace() for e in ledger.read()]
    assert list(chain_problems(ledger.read())) == reference_chain_problems(envs)


def test_a_sound_chain_has_no_problem_and_keeps_each_parsed_payload() -> None:
    ledger = _ledger()
    envs = list(ledger.read())
    assert list(chain_problems(envs)) == []
    assert [e.__dict__["payload_value"] for e in envs] == [loads_json(e.payload) for e in envs]


def _sqlite_store(tmp_path: Path) -> tuple[Settings, Path]:
    root = tmp_path / "store"
    return Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}"), root / "ledger.sqlite"


def _fill_repeated_refs(store: Store) -> tuple[CasRef, CasRef]:
    """Records that name one object several times, as a bare and a typed reference."""
    a = store.cas.put(b"alpha")
    b = store.cas.put(b"beta", pool="agent-state")
    records = [
        NewRecord(
            type="t.run@1",
            actor="x",
            privacy="private",
            payload={"code": a.to_json(), "stdout": a.to_json(), "log": [b.object_ref().to_json(), a.to_json()]},
        )
        for _ in range(4)
    ]
    records.append(NewRecord(type="t.note@1", actor="x", privacy="private", payload={"text": "no reference"}))
    store.append(records)
    return a, b


def _cas_rows(db: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT seq, hash, size, pool, rt_seq FROM rt_p_cas_refs").fetchall()
    finally:
        conn.close()


def test_a_reference_named_twice_gives_one_row_and_the_last_named_decides() -> None:
    """Rows of equal references are given once; references of one address and pool that differ
    (a size) keep the last one named, as a replay of every row keeps it."""
    ledger = MemoryLedger()
    small = CasObjectRef(hash="a" * 64, size=1).to_json()
    large = CasObjectRef(hash="a" * 64, size=2).to_json()
    [env] = ledger.append([NewRecord(type="t.a@1", actor="x", privacy="private", payload={"x": [small, large, small]})])
    assert ledger.stored_rows("cas_refs") == [{"seq": env.seq, "hash": "a" * 64, "size": 1, "pool": "", "rt_seq": 1}]
    named = {"x": [large, small, large]}
    [later] = ledger.append([NewRecord(type="t.a@1", actor="x", privacy="private", payload=named)])
    assert [r["size"] for r in ledger.stored_rows("cas_refs") if r["seq"] == later.seq] == [2]


def test_rows_of_repeated_references_changed_added_or_deleted_are_reported(tmp_path: Path) -> None:
    settings, db = _sqlite_store(tmp_path)
    with init_store(settings) as store:
        a, b = _fill_repeated_refs(store)
        report = verify_store(store)
        assert report.ok, report.problems
        assert report.refs_checked == 16 and report.rows_checked == 8
    rows = _cas_rows(db)
    assert sorted((seq, pool, size) for seq, _, size, pool, _ in rows) == [
        (s, pool, size) for s in (2, 3, 4, 5) for pool, size in (("", 4), ("data", 5))
    ]
    conn = sqlite3.connect(db)
    conn.execute("UPDATE rt_p_cas_refs SET size = 99 WHERE seq = 2 AND pool = 'data'")
    conn.execute("DELETE FROM rt_p_cas_refs WHERE seq = 3 AND pool = ''")
    conn.execute("INSERT INTO rt_p_cas_refs (seq, hash, size, pool, rt_seq) VALUES (6, ?, 5, 'data', 6)", (a.hash,))
    conn.commit()
    conn.close()
    with init_store(settings) as store:
        problems = verify_store(store).problems
    assert problems == [
        f"query table cas_refs: row {{seq=6, hash={a.hash!r}, pool='data'}} was added (no record gives it)",
        f"query table cas_refs: row {{seq=3, hash={b.hash!r}, pool=''}} is missing (record seq 3 gives it)",
        f"query table cas_refs: row {{seq=2, hash={a.hash!r}, pool='data'}} was edited: size=99 (chain: 5)",
    ]


def test_a_changed_record_byte_a_broken_link_and_a_missing_object_are_reported(tmp_path: Path) -> None:
    settings, db = _sqlite_store(tmp_path)
    with init_store(settings) as store:
        a, _ = _fill_repeated_refs(store)
        cas = store.cas
        assert isinstance(cas, FilesystemCas)
        cas.object_path(a.pool, a.hash).unlink()
    conn = sqlite3.connect(db)
    conn.execute("DROP TRIGGER rt_records_no_update")
    renamed = "CAST(replace(CAST(payload AS TEXT), 'code', 'coda') AS BLOB)"
    conn.execute(f"UPDATE rt_records SET payload = {renamed} WHERE seq = 2")
    conn.execute("UPDATE rt_records SET prev_hash = ? WHERE seq = 4", ("0" * 64,))
    conn.commit()
    conn.close()
    with init_store(settings) as store:
        problems = verify_store(store).problems
    assert any(p.endswith("payload does not hash to payloadHash") and "seq 2 " in p for p in problems)
    assert any("seq 4 " in p and "prevHash does not match the hash of seq 3" in p for p in problems)
    missing = [p for p in problems if p.endswith("object missing from data")]
    assert len(missing) == 4 * 3  # each time a record names it, in every record


def test_a_seq_beyond_the_safe_integers_has_no_hash_even_one_written_with_its_digits() -> None:
    """No writer can seal a seq past 2**53 - 1 (RFC 8785 has no form for it): a hash over its
    digits, as the header would read if it had one, is still reported."""
    ledger = _ledger()
    records = ledger.recorder._records
    env = records[1]
    seq = 2**53 + 1
    header = {name: getattr(env, name) for name in _HEADER if name != "seq"}
    header.update(payloadHash=env.payload_hash, prevHash=env.prev_hash, seq=2**53 - 1)
    text = canonical_json(header).replace(b'"seq":9007199254740991', f'"seq":{seq}'.encode())
    records[1] = env.replace(seq=seq, hash=hashlib.sha256(env.prev_hash.encode() + text).hexdigest())
    assert f"ledger seq {seq} ({env.id}): hash does not match the envelope" in list(chain_problems(ledger.read()))


def test_each_record_is_parsed_once_encoded_once_and_its_references_found_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """verify parses each canonical payload once and encodes it once (the canonical check), never
    through the general encoder, and finds its references once for both the reference check and
    the cas_refs rows."""
    settings, _ = _sqlite_store(tmp_path)
    with init_store(settings) as store:
        _fill_repeated_refs(store)
        records = store.ledger.head_seq()
        decode, encode = canonical._C.exact, canonical._C.write
        calls = {"decode": 0, "encode": 0, "refs": 0}

        def counted(name: str, function: Any) -> Any:
            def call(*args: Any) -> Any:
                calls[name] += 1
                return function(*args)

            return call

        monkeypatch.setattr(canonical._C, "exact", counted("decode", decode))
        monkeypatch.setattr(canonical._C, "write", counted("encode", encode))
        monkeypatch.setattr(canonical, "canonical_json", lambda *a, **k: pytest.fail("the general encoder ran"))
        monkeypatch.setattr(cas, "refs_in", counted("refs", cas.refs_in))
        report = verify_store(store)
    assert report.ok and report.records_checked == records == 6
    assert calls == {"decode": records, "encode": records, "refs": 4}  # 4 records hold references


def reference_stored_problem(env: Envelope) -> str | None:
    """The check of every read as documented, done the long way: the first of the payload hash,
    the type, the privacy and the header hash that fails."""
    where = f"ledger seq {env.seq} ({env.id})"
    if not isinstance(env.payload, bytes) or hashlib.sha256(env.payload).hexdigest() != env.payload_hash:
        return f"{where}: payload does not hash to payloadHash"
    if type(env.type) is not str or TYPE_PATTERN.fullmatch(env.type) is None:
        return f"{where}: type {env.type!r} is not 'name@version'"
    if env.privacy not in PRIVACY_LEVELS:
        return f"{where}: privacy {env.privacy!r} is not one of {', '.join(PRIVACY_LEVELS)}"
    header = {name: getattr(env, name) for name in _HEADER}
    header.update(payloadHash=env.payload_hash, prevHash=env.prev_hash)
    try:
        sealed: str | None = compute_hash(env.prev_hash, header)
    except (ValueError, TypeError, AttributeError):
        sealed = None
    return None if sealed == env.hash else f"{where}: hash does not match the envelope"


@settings(max_examples=300, deadline=None)
@given(
    field=st.sampled_from([*_HEADER, "payload_hash", "prev_hash", "hash", "payload"]),
    value=_ODD,
    payload=_PAYLOADS,
    rehash=st.booleans(),
)
@example(field="seq", value=True, payload=b"", rehash=True)
@example(field="seq", value=2**53, payload=b"", rehash=False)
@example(field="privacy", value="public-source", payload=b"", rehash=True)
@example(field="type", value="t.b@2", payload=b"", rehash=True)
@example(field="actor", value="\ud800", payload=b"", rehash=False)
def test_the_check_of_every_read_reports_what_the_long_way_does(
    field: str, value: Any, payload: bytes, rehash: bool
) -> None:
    """A stored record with a field given a value of any type (or odd payload bytes), its hashes
    sealed again over it or not: the read's check finds it sound, or names its first problem,
    exactly as each check done the long way does."""
    from reviewtrail.ledger.records._envelope import stored_problem

    env = next(iter(_ledger().read()))
    if field == "seq" and type(value) not in (int, bool, float):
        value = int.from_bytes(hashlib.sha256(repr(value).encode()).digest()[:8]) - 2**63
    changes: dict[str, Any] = {field: payload if field == "payload" else value}
    if field == "payload" and rehash:
        changes["payload_hash"] = hashlib.sha256(payload).hexdigest()
    env = env.replace(**changes)
    if rehash:
        header = {name: getattr(env, name) for name in _HEADER}
        header.update(payloadHash=env.payload_hash, prevHash=env.prev_hash)
        with contextlib.suppress(ValueError, TypeError, AttributeError):
            env = env.replace(hash=compute_hash(env.prev_hash, header))
    assert stored_problem(env) == reference_stored_problem(env)


def test_verify_takes_a_record_s_references_from_the_envelope_s_own_property(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One definition of a record's references: verify asks ``Envelope.cas_refs``, as the
    cas_refs rows and migrate do, so a reference the property refuses is reported by verify."""
    settings, _ = _sqlite_store(tmp_path)
    with init_store(settings) as store:
        _fill_repeated_refs(store)
        bad = 2
        real = Envelope.__dict__["cas_refs"].func

        def refs(env: Envelope) -> Any:
            if env.seq == bad:
                raise InvalidInputError("not a reference", field="ref")
            return real(env)

        monkeypatch.setattr(Envelope, "cas_refs", property(refs))
        report = verify_store(store)
    unreadable = [p for p in report.problems if "unreadable CAS reference" in p]
    assert len(unreadable) == 1 and unreadable[0].startswith(f"ledger seq {bad} ("), report.problems
    assert unreadable[0].endswith("unreadable CAS reference: ref: not a reference")
