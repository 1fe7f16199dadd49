"""The ledger contract: what every ledger backend does, whatever holds its records.

Paged reads of query tables (``page``, ``count``) are in :mod:`contracts.ledger_pages`.

A backend joins with one subclass that implements :meth:`LedgerContract.make_ledger` (a
new, empty ledger) and :meth:`LedgerContract.tamper` (what only an attacker with raw write
access could do). A SQL backend subclasses :class:`SqlLedgerContract` instead and
implements ``make_url`` and ``tamper_url``; it then also passes the tests that re-open a
ledger and that try to change records through the database itself.
"""

from __future__ import annotations

import abc
import hashlib
import itertools
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from reviewtrail.canonical import canonical_json
from reviewtrail.errors import CanonicalJSONError, ConflictError, IntegrityError, InvalidInputError, NotFoundError
from reviewtrail.ledger import (
    GENESIS_HASH,
    Envelope,
    Ledger,
    NewRecord,
    Projection,
    ProjectionTable,
    compute_hash,
    open_ledger,
)
from reviewtrail.ledger.records._envelope import header_of

pytest.register_assert_rewrite("contracts.ledger_pages")
from contracts.ledger_pages import LedgerPagesContract, SqlLedgerPagesContract  # noqa: E402

__all__ = ["LedgerContract", "SqlLedgerContract", "rec"]


def rec(n: int = 0, **kw: Any) -> NewRecord:
    fields: dict[str, Any] = {"type": "test.item@1", "actor": "tester", "privacy": "private", "payload": {"n": n}}
    fields.update(kw)
    return NewRecord(**fields)


TAMPERED_FIELDS = [
    ("payload", b'{"n":99}'),
    ("type", "test.item@2"),
    ("actor", "mallory"),
    ("privacy", "public-source"),
    ("time", "2020-01-01T00:00:00.000000Z"),
    ("subject", "forged"),
    ("payload_hash", "0" * 64),
    ("prev_hash", "1" * 64),
    ("hash", "2" * 64),
    ("id", "forged-id"),
]

# Leaves the ledger must refuse are mixed in, so that the rejection paths are reached too:
# lone surrogates (no canonical JSON form) and objects shaped like CAS references.
_CAS_REF_SHAPES = st.fixed_dictionaries(
    {"hash": st.sampled_from(["ab" * 32, "../etc/passwd", "AB" * 32]), "size": st.sampled_from([0, 3, -1])}
) | st.fixed_dictionaries(
    {
        "pool": st.sampled_from(["data", "tmp"]),
        "digest": st.sampled_from(["sha256:" + "cd" * 32, "cd" * 32]),
        "size": st.just(3),
        "mediaType": st.just("text/plain"),
    }
)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | st.sampled_from(["\ud800", "ok\udfff"])
    | _CAS_REF_SHAPES,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=10,
)
_REF_KEYS = ({"hash", "size"}, {"pool", "digest", "size", "mediaType"})


def _has_canonical_form(value: Any) -> bool:
    try:
        canonical_json(value)
    except CanonicalJSONError:
        return False
    return True


def _has_cas_ref_shape(value: Any) -> bool:
    """An object anywhere whose keys are exactly those of a CAS reference: the ledger checks those."""
    if isinstance(value, dict):
        return set(value) in _REF_KEYS or any(_has_cas_ref_shape(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_cas_ref_shape(v) for v in value)
    return False


class LedgerContract(LedgerPagesContract):
    """Every ledger backend passes these tests. Subclass it as ``Test<Backend>Ledger``."""

    #: Hypothesis examples per property test; set it lower for a backend whose ledgers are slow to make.
    property_examples: ClassVar[int | None] = None

    @abc.abstractmethod
    def make_ledger(self, projections: Sequence[Projection] | None = None) -> Ledger:
        """A new, empty ledger of this backend with these projections (the contract closes it).

        ``self.tmp_path`` (a fresh folder per test) and ``self.request`` (for fixtures such as
        ``pg_server``) are set before any test calls it.
        """

    @abc.abstractmethod
    def tamper(self, ledger: Ledger, seq: int, column: str, value: Any) -> None:
        """Overwrite ``column`` of record ``seq`` in ``ledger``'s storage, bypassing every guard."""

    # --- plumbing -------------------------------------------------------------------------
    @pytest.fixture(autouse=True)
    def _contract_resources(self, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[None]:
        self.request = request
        self.tmp_path = tmp_path
        self._opened: list[Ledger] = []
        yield
        for led in self._opened:
            led.close()

    def new_ledger(self, projections: Sequence[Projection] | None = None) -> Ledger:
        led = self.make_ledger(projections)
        self._opened.append(led)
        return led

    @pytest.fixture
    def ledger(self, _contract_resources: None) -> Ledger:
        return self.new_ledger()

    def property_settings(self) -> settings:
        if self.property_examples is None:
            return settings()
        return settings(max_examples=self.property_examples)

    # --- appends and the chain ------------------------------------------------------------
    def test_append_assigns_gap_free_seqs_and_links_the_chain(self, ledger: Ledger) -> None:
        first = ledger.append([rec(1), rec(2)])
        second = ledger.append([rec(3)])
        envs = first + second
        assert [e.seq for e in envs] == [1, 2, 3]
        assert envs[0].prev_hash == GENESIS_HASH
        for a, b in itertools.pairwise(envs):
            assert b.prev_hash == a.hash
        for e in envs:
            assert e.hash == compute_hash(e.prev_hash, header_of(e))
        assert list(ledger.read()) == envs
        assert list(ledger.verify()) == []

    def test_envelope_fields(self, ledger: Ledger) -> None:
        when = datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
        [env] = ledger.append([rec(7, id="rec-1", time=when, actor="alice", privacy="sensitive", subject="artifact:x")])
        doc = env.to_json()
        assert set(doc) == {
            "seq", "id", "type", "time", "actor", "privacy", "subject", "supersedes",
            "payload", "payloadHash", "prevHash", "hash",
        }  # fmt: skip
        assert doc["time"] == "2026-01-02T03:04:05.000006Z"
        assert env.payload == b'{"n":7}'
        assert ledger.get("rec-1") == env

    def test_empty_append_is_a_no_op(self, ledger: Ledger) -> None:
        assert ledger.append([]) == []
        assert ledger.head() is None
        assert list(ledger.read()) == []

    def test_batch_is_atomic_when_one_record_is_invalid(self, ledger: Ledger) -> None:
        ledger.append([rec(0, id="taken")])
        with pytest.raises(ConflictError):
            ledger.append([rec(1), rec(2, id="taken")])
        with pytest.raises(CanonicalJSONError) as err:
            ledger.append([rec(3), rec(4, payload={"x": float("nan")})])
        assert err.value.field == "payload"
        with pytest.raises(InvalidInputError):
            ledger.append([rec(5, id="dup"), rec(6, id="dup")])
        assert [e.seq for e in ledger.read()] == [1]
        assert list(ledger.verify()) == []

    def test_malformed_cas_reference_is_rejected(self, ledger: Ledger) -> None:
        with pytest.raises(InvalidInputError):
            ledger.append([rec(payload={"blob": {"hash": "../etc/passwd", "size": 1}})])
        assert ledger.head() is None

    # --- reads ----------------------------------------------------------------------------
    def test_reads_by_range_type_and_subject(self, ledger: Ledger) -> None:
        ledger.append(
            [
                rec(1, type="alpha@1", subject="s1"),
                rec(2, type="alpha@2", subject="s2"),
                rec(3, type="beta@1", subject="s1"),
                rec(4, type="alpha_x@1", subject="s1"),
            ]
        )
        seqs = lambda **kw: [e.seq for e in ledger.read(**kw)]  # noqa: E731
        assert seqs(start=2, end=3) == [2, 3]
        assert seqs(type="alpha") == [1, 2]  # every version; "alpha_x" is another type
        assert seqs(type="alpha@2") == [2]
        assert seqs(subject="s1") == [1, 3, 4]
        assert seqs(type="alpha", subject="s1") == [1]
        assert seqs(limit=2) == [1, 2]
        assert [e.seq for e in ledger.tail(2)] == [3, 4]
        assert [e.seq for e in ledger.tail(5, subject="s1")] == [1, 3, 4]
        with pytest.raises(InvalidInputError):
            list(ledger.read(start=0))
        with pytest.raises(InvalidInputError):
            list(ledger.read(type="Bad Type"))

    def test_reads_page_through_large_ledgers(self, ledger: Ledger) -> None:
        ledger.append([rec(i) for i in range(2500)])
        assert [e.seq for e in ledger.read(start=990, limit=1100)] == list(range(990, 2090))
        assert sum(1 for _ in ledger.read()) == 2500
        head = ledger.head()
        assert head is not None and head.seq == 2500

    def test_get_unknown_id(self, ledger: Ledger) -> None:
        with pytest.raises(NotFoundError):
            ledger.get("nope")

    def test_corrections_name_what_they_supersede(self, ledger: Ledger) -> None:
        [orig] = ledger.append([rec(1, id="orig")])
        [fix] = ledger.append([rec(2, supersedes="orig")])
        assert ledger.superseded_by("orig") == [fix.id]
        assert ledger.get("orig") == orig  # never changed
        with pytest.raises(InvalidInputError) as err:
            ledger.append([rec(3, supersedes="missing-id")])
        assert err.value.field == "supersedes"
        # a batch may correct a record appended earlier in the same batch
        ledger.append([rec(4, id="b1"), rec(5, supersedes="b1")])

    # --- projections ----------------------------------------------------------------------
    def test_cas_ref_projection_is_written_with_the_append(self, ledger: Ledger) -> None:
        h = "ab" * 32
        ledger.append(
            [
                rec(1, payload={"a": {"hash": h, "size": 3}}),
                rec(
                    2,
                    payload={
                        "b": [{"pool": "agent-state", "digest": f"sha256:{h}", "size": 3, "mediaType": "text/plain"}]
                    },
                ),
            ]
        )
        rows = sorted(ledger.rows("cas_refs", hash=h), key=lambda r: r["seq"])
        assert rows == [
            {"seq": 1, "hash": h, "size": 3, "pool": ""},
            {"seq": 2, "hash": h, "size": 3, "pool": "agent-state"},
        ]
        with pytest.raises(NotFoundError):
            ledger.rows("no_such_table")
        with pytest.raises(InvalidInputError):
            ledger.rows("cas_refs", bogus=1)

    def test_a_failing_projection_rolls_back_the_whole_append(self) -> None:
        def rows(env: Envelope) -> list[tuple[str, dict[str, Any]]]:
            if env.payload_value.get("n") == 13:
                raise RuntimeError("projection failed")
            return [("seen", {"seq": env.seq})]

        seen = Projection(
            name="seen", version=1, tables=(ProjectionTable("seen", (("seq", "int"),), key=("seq",)),), rows=rows
        )
        led = self.new_ledger([seen])
        led.append([rec(1)])
        with pytest.raises(RuntimeError, match="projection failed"):
            led.append([rec(12), rec(13)])
        assert [e.seq for e in led.read()] == [1]
        assert led.rows("seen") == [{"seq": 1}]
        led.append([rec(14)])
        assert [e.seq for e in led.read()] == [1, 2]
        assert sorted(r["seq"] for r in led.rows("seen")) == [1, 2]

    def test_a_unique_projection_key_makes_the_second_claim_fail(self) -> None:
        claims = Projection(
            name="claims",
            version=1,
            tables=(ProjectionTable("claims", (("slot", "text"), ("seq", "int")), key=("slot",), on_conflict="error"),),
            rows=lambda env: [("claims", {"slot": env.payload_value["slot"], "seq": env.seq})],
        )
        led = self.new_ledger([claims])
        led.append([rec(payload={"slot": "v1"})])
        with pytest.raises(ConflictError):
            led.append([rec(payload={"slot": "v2"}), rec(payload={"slot": "v1"})])
        with pytest.raises(ConflictError):
            led.append([rec(payload={"slot": "v3"}), rec(payload={"slot": "v3"})])
        assert [e.seq for e in led.read()] == [1]
        led.append([rec(payload={"slot": "v2"})])
        assert sorted(r["slot"] for r in led.rows("claims")) == ["v1", "v2"]

    # --- tampering ------------------------------------------------------------------------
    @pytest.mark.parametrize(("column", "value"), TAMPERED_FIELDS, ids=[column for column, _ in TAMPERED_FIELDS])
    def test_tampering_with_any_field_is_detected(self, ledger: Ledger, column: str, value: Any) -> None:
        ledger.append([rec(i) for i in range(3)])
        assert list(ledger.verify()) == []
        self.tamper(ledger, 2, column, value)
        problems = list(ledger.verify())
        assert problems, f"tampering with {column} went unnoticed"
        assert any("seq 2" in p or "seq 3" in p for p in problems)

    # --- reads that gate: the records themselves, checked ---------------------------------
    def test_records_about_and_superseding_come_from_the_records(self, ledger: Ledger) -> None:
        [first, other] = ledger.append([rec(1, subject="item-1"), rec(2, subject="item-2")])
        [fix, note] = ledger.append([rec(3, subject="item-1", supersedes=first.id), rec(4)])
        assert [e.id for e in ledger.records_about(["item-1"])] == [first.id, fix.id]
        assert [e.id for e in ledger.records_about(["item-2", "item-1", "none"])] == [first.id, other.id, fix.id]
        assert [e.id for e in ledger.records_superseding([first.id, note.id])] == [fix.id]
        assert ledger.records_about(["item-1"], type="test.other@1") == []
        assert ledger.seqs_of_type("test.item@1", after=1, upto=3) == [2, 3]
        assert ledger.head_seq() == 4
        assert ledger.checked_get_many([fix.id, "missing"]) == {fix.id: fix}

    @pytest.mark.parametrize(("column", "value"), TAMPERED_FIELDS, ids=[column for column, _ in TAMPERED_FIELDS])
    def test_gated_reads_refuse_a_record_edited_in_place(self, ledger: Ledger, column: str, value: Any) -> None:
        envs = ledger.append([rec(i, subject="s") for i in range(3)])
        assert [e.id for e in ledger.records_about(["s"])] == [e.id for e in envs]  # read once: sound
        self.tamper(ledger, 2, column, value)
        with pytest.raises(IntegrityError):
            ledger.records_about(["s", "forged"])  # whatever the edit, a record a gate reads is refused
        if column != "id":  # an edited id is a record no longer found by that id
            with pytest.raises(IntegrityError):
                ledger.checked_get_many([envs[1].id])

    def test_a_record_resealed_with_its_own_hash_is_refused_by_the_next_link(self, ledger: Ledger) -> None:
        envs = ledger.append([rec(i, subject=f"s{i}") for i in range(3)])
        forged_payload = canonical_json({"n": 99})
        forged = envs[1].replace(payload=forged_payload, payload_hash=hashlib.sha256(forged_payload).hexdigest())
        forged_hash = compute_hash(forged.prev_hash, header_of(forged))
        edits = (("payload", forged_payload), ("payload_hash", forged.payload_hash), ("hash", forged_hash))
        for column, value in edits:
            self.tamper(ledger, 2, column, value)
        with pytest.raises(IntegrityError) as err:
            ledger.records_about(["s1"])  # the record alone hashes right; seq 3 does not link to it
        assert "seq 3" in str(err.value)

    def test_a_row_check_reads_its_record_afresh(self) -> None:
        claims = Projection(
            name="claims",
            version=1,
            tables=(ProjectionTable("claims", (("slot", "text"), ("seq", "int")), key=("slot",)),),
            rows=lambda env: [("claims", {"slot": env.payload_value["slot"], "seq": env.seq})],
        )
        led = self.new_ledger([claims])
        [env] = led.append([rec(payload={"slot": "v1"})])
        assert [r["slot"] for r in led.rows("claims")] == ["v1"]  # the record's rows are now known
        self.tamper(led, env.seq, "actor", "forger")  # edited between two reads of one ledger object
        with pytest.raises(IntegrityError):
            led.rows("claims")

    # --- properties -----------------------------------------------------------------------
    def test_any_json_payload_appends_and_verifies(self) -> None:
        @self.property_settings()
        @given(st.lists(JSON_VALUES, min_size=1, max_size=5))
        def check(payloads: list[Any]) -> None:
            with self.make_ledger() as led:  # a fresh ledger per example
                try:
                    envs = led.append([rec(payload=p) for p in payloads])
                except CanonicalJSONError as err:
                    # e.g. a lone surrogate: rejected with a clear error, nothing written
                    assert err.field == "payload"
                    assert not all(_has_canonical_form(p) for p in payloads)
                    assert led.head() is None
                    event("rejected: no canonical JSON form")
                    return
                except InvalidInputError as err:
                    # a dict shaped like a CAS ref with an invalid hash: rejected, nothing written
                    assert err.field is not None
                    assert any(_has_cas_ref_shape(p) for p in payloads), err
                    assert led.head() is None
                    event("rejected: malformed CAS reference")
                    return
                assert len(envs) == len(payloads)
                assert [e.payload for e in envs] == [canonical_json(p) for p in payloads]
                assert list(led.verify()) == []
                event("appended")

        check()


class SqlLedgerContract(LedgerContract, SqlLedgerPagesContract):
    """The ledger contract for a SQL backend: a ledger is a database URL that can be re-opened."""

    @abc.abstractmethod
    def make_url(self) -> str:
        """The URL of a new, empty database for a ledger (a file, a database on a test server)."""

    @abc.abstractmethod
    def tamper_url(self, url: str, seq: int, column: str, value: Any) -> None:
        """Overwrite ``column`` of record ``seq`` in the database at ``url``, with its guards lifted."""

    def make_ledger(self, projections: Sequence[Projection] | None = None) -> Ledger:
        url = self.make_url()
        led = open_ledger(url, projections)
        self.__dict__.setdefault("_urls", {})[id(led)] = url
        return led

    def url_of(self, ledger: Ledger) -> str:
        return self._urls[id(ledger)]

    def tamper(self, ledger: Ledger, seq: int, column: str, value: Any) -> None:
        self.tamper_url(self.url_of(ledger), seq, column, value)

    def reopen(self, ledger: Ledger, projections: Sequence[Projection] | None = None) -> Ledger:
        """The same database opened again, as a later process would."""
        led = open_ledger(self.url_of(ledger), projections)
        self._opened.append(led)
        return led

    def test_a_new_projection_is_built_from_existing_records(self, ledger: Ledger) -> None:
        ledger.append([rec(i, subject=f"s{i % 2}") for i in range(5)])
        counts = Projection(
            name="subject_last",
            version=1,
            tables=(ProjectionTable("subject_last", (("subject", "text"), ("seq", "int")), key=("subject",)),),
            rows=lambda env: [("subject_last", {"subject": env.subject, "seq": env.seq})] if env.subject else [],
        )
        led = self.reopen(ledger, [counts])
        assert sorted((r["subject"], r["seq"]) for r in led.rows("subject_last")) == [("s0", 5), ("s1", 4)]
        led.append([rec(9, subject="s1")])
        assert led.rows("subject_last", subject="s1") == [{"subject": "s1", "seq": 6}]

    def test_records_cannot_be_updated_or_deleted_through_the_database(self, ledger: Ledger) -> None:
        ledger.append([rec(1)])
        led: Any = ledger  # the SQL ledgers' own connection and write transaction
        assert led.recorder._conn is not None
        with pytest.raises(Exception, match="append-only"), led.recorder._write_txn() as cur:
            cur.execute("UPDATE rt_records SET actor = 'x'")
        with pytest.raises(Exception, match="append-only"), led.recorder._write_txn() as cur:
            cur.execute("DELETE FROM rt_records")
        assert [e.actor for e in ledger.read()] == ["tester"]
