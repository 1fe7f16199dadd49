"""The checks a read makes of stored bytes, against the general implementations they stand in for.

``is_canonical`` (verify's canonical-form check at C speed) must answer exactly as parsing and
re-encoding with RFC 8785 does; ``envelope_hash`` (the header hash written directly) must give
exactly ``compute_hash(prev_hash, header_of(env))``; ``loads_json`` must read bytes exactly as
``json.loads`` with doubles beyond 2**53.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewtrail.canonical import canonical_json, is_canonical, loads_canonical, loads_json
from reviewtrail.errors import CanonicalJSONError, InvalidInputError
from reviewtrail.ledger import Envelope, compute_hash
from reviewtrail.ledger.records._envelope import envelope_hash, header_of

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


def _general(data: bytes) -> bool:
    try:
        loads_canonical(data)
    except CanonicalJSONError:
        return False
    return True


@settings(max_examples=400)
@given(JSON, st.booleans(), st.booleans(), st.sampled_from([(",", ":"), (", ", ": ")]))
def test_is_canonical_answers_as_rfc8785_does(value: Any, sort: bool, ascii_only: bool, seps: tuple[str, str]) -> None:
    try:
        text = json.dumps(value, sort_keys=sort, ensure_ascii=ascii_only, separators=seps, allow_nan=True)
        data = text.encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return
    assert is_canonical(data) == _general(data)


@settings(max_examples=300)
@given(JSON)
def test_canonical_bytes_are_canonical(value: Any) -> None:
    try:
        data = canonical_json(value)
    except CanonicalJSONError:
        return
    assert is_canonical(data)


@given(st.binary(max_size=40))
def test_is_canonical_of_any_bytes(data: bytes) -> None:
    assert is_canonical(data) == _general(data)


@settings(max_examples=300)
@given(JSON)
def test_loads_json_reads_as_json_loads_with_doubles_beyond_2_53(value: Any) -> None:
    try:
        data = json.dumps(value).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return
    expected = json.loads(data, parse_int=lambda t: int(t) if abs(int(t)) <= 2**53 - 1 else float(int(t)))
    assert json.dumps(loads_json(data)) == json.dumps(expected)


TEXT = st.text(max_size=12)


@settings(max_examples=400)
@given(
    st.integers(min_value=-(2**54), max_value=2**54),
    TEXT,
    TEXT,
    TEXT,
    st.none() | TEXT,
    st.none() | TEXT,
)
def test_envelope_hash_is_compute_hash(seq: int, ident: str, actor: str, time: str, subject: Any, sup: Any) -> None:
    env = Envelope(
        seq=seq,
        id=ident,
        type="note@1",
        time=time,
        actor=actor,
        privacy="private",
        subject=subject,
        supersedes=sup,
        payload=b"{}",
        payload_hash=hashlib.sha256(b"{}").hexdigest(),
        prev_hash="0" * 64,
        hash="",
    )
    try:
        expected: str | None = compute_hash(env.prev_hash, header_of(env))
    except InvalidInputError:
        expected = None
    assert envelope_hash(env) == expected


def test_envelope_hash_of_odd_stored_types_falls_back() -> None:
    env = Envelope(1, "i", "note@1", "t", "a", "private", None, None, b"{}", "p", "0" * 64, "h")
    assert envelope_hash(env) == compute_hash(env.prev_hash, header_of(env))
    odd = env.replace(seq="1")  # a tampered row keeps its stored type
    assert envelope_hash(odd) == compute_hash(odd.prev_hash, header_of(odd))
    no_actor = env.replace(actor=None)
    assert envelope_hash(no_actor) == compute_hash(no_actor.prev_hash, header_of(no_actor))


# --- a record edited after a reader saw it --------------------------------------------------------
def _claims_projection() -> Any:
    from reviewtrail.ledger import Projection, ProjectionTable

    return Projection(
        name="claims",
        version=1,
        tables=(ProjectionTable("claims", (("slot", "text"), ("seq", "int")), key=("slot",)),),
        rows=lambda env: [("claims", {"slot": env.payload_value["slot"], "seq": env.seq})],
    )


_READ_CLAIMS = """
import sys
from reviewtrail.errors import IntegrityError
from reviewtrail.ledger import open_ledger
from test_stored_checks import _claims_projection
ledger = open_ledger("sqlite:///" + sys.argv[1], [_claims_projection()], create=False)
try:
    print(sorted(r["slot"] for r in ledger.rows("claims")))
except IntegrityError:
    sys.exit(4)
"""


def test_a_record_edited_after_a_running_process_read_it_is_refused_there_and_in_a_new_process(
    tmp_path: Any,
) -> None:
    import sqlite3
    import subprocess
    import sys

    from reviewtrail.errors import IntegrityError
    from reviewtrail.ledger import NewRecord, open_ledger

    db = tmp_path / "ledger.sqlite"
    running = open_ledger(f"sqlite:///{db}", [_claims_projection()])
    running.append([NewRecord(type="test.claim@1", actor="a", privacy="private", payload={"slot": "v1"})])
    assert [r["slot"] for r in running.rows("claims")] == ["v1"]  # the running process has seen it
    env = {"PYTHONPATH": str(Path(__file__).parent)}
    fresh = [sys.executable, "-c", _READ_CLAIMS, str(db)]
    assert subprocess.run(fresh, env=env, capture_output=True, text=True).stdout.strip() == "['v1']"
    with sqlite3.connect(db) as conn:  # edited in place, the hash columns left as they were
        conn.execute("DROP TRIGGER rt_records_no_update")
        conn.execute("UPDATE rt_records SET payload = ? WHERE seq = 1", (b'{"slot":"v2"}',))
    with pytest.raises(IntegrityError):
        running.rows("claims")  # read again by the process that read it before
    assert subprocess.run(fresh, env=env, capture_output=True, text=True).returncode == 4  # and by a new one
    running.close()


# --- the envelope's kept properties --------------------------------------------------------------
@pytest.mark.parametrize("name", ["payload_value", "cas_refs"])
def test_a_first_read_of_a_kept_property_does_not_wait_for_another(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``payload_value`` and ``cas_refs`` keep their value without a lock: one envelope's first
    read does not wait while another envelope's first read is under way (a lock held by the
    property, one per class, would hold it until the other ends)."""
    import threading

    from reviewtrail.ledger.records import _envelope

    def env(seq: int) -> Envelope:
        payload = b'{"n":%d,"size":0}' % seq
        return Envelope(seq, f"r{seq}", "note@1", "t", "a", "private", None, None, payload, "", "", "")

    first, second = env(1), env(2)
    started, release, done = threading.Event(), threading.Event(), threading.Event()
    real = _envelope.loads_json

    def held(data: bytes) -> Any:
        if data == first.payload:
            started.set()
            release.wait(60)
        return real(data)

    monkeypatch.setattr(_envelope, "loads_json", held)
    reader = threading.Thread(target=getattr, args=(first, name))
    other = threading.Thread(target=lambda: (getattr(second, name), done.set()))
    reader.start()
    try:
        assert started.wait(60)
        other.start()
        finished = done.wait(10)
    finally:
        release.set()
        reader.join()
        if other.is_alive() or other.ident is not None:
            other.join()
    assert finished, f"the first read of {name} waited for another envelope's"
    assert (first.payload_value, second.payload_value) == ({"n": 1, "size": 0}, {"n": 2, "size": 0})
    assert (first.cas_refs, second.cas_refs) == ([], [])
