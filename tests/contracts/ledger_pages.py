"""The ledger contract for paged, ordered reads of query tables (``page``) and counts (``count``).

Mixed into :class:`contracts.ledger.LedgerContract` (every backend) and
:class:`contracts.ledger.SqlLedgerContract` (a query row edited in the database itself).
"""

from __future__ import annotations

import abc
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.errors import IntegrityError, InvalidInputError, NotFoundError
from reviewtrail.ledger import Envelope, Ledger, NewRecord, Projection, ProjectionTable

__all__ = ["ITEMS", "MARKS", "LedgerPagesContract", "SqlLedgerPagesContract", "item", "mark"]


def _item_rows(env: Envelope) -> Iterator[tuple[str, dict[str, Any]]]:
    doc = env.payload_value
    if isinstance(doc, dict) and "rank" in doc:
        yield "items", {"rank": doc["rank"], "name": doc.get("name"), "lane": doc["lane"], "seq": env.seq}


ITEMS = Projection(
    name="items",
    version=1,
    tables=(
        ProjectionTable(
            "items",
            (("rank", "int"), ("name", "text"), ("lane", "text"), ("seq", "int")),
            key=("rank",),
            indexes=(("name",), ("lane", "rank"), ("lane", "name")),
        ),
    ),
    rows=_item_rows,
)


def _mark_rows(env: Envelope) -> Iterator[tuple[str, dict[str, Any]]]:
    doc = env.payload_value
    if isinstance(doc, dict) and "marked" in doc:
        yield "marks", {"rank": doc["marked"], "seq": env.seq}


# A table keyed by the items' rank: ``page(..., within="marks")`` keeps the marked items.
MARKS = Projection(
    name="marks",
    version=1,
    tables=(
        ProjectionTable("marks", (("rank", "int"), ("seq", "int")), key=("rank",)),
        ProjectionTable("notes", (("note", "text"), ("seq", "int")), key=("note",)),  # no key items have
    ),
    rows=_mark_rows,
)


def mark(rank: int) -> NewRecord:
    return NewRecord(type="test.mark@1", actor="tester", privacy="private", payload={"marked": rank})


def item(rank: int, lane: str = "a", name: str | None = None) -> NewRecord:
    payload: dict[str, Any] = {"rank": rank, "lane": lane}
    if name is not None:
        payload["name"] = name
    return NewRecord(type="test.item@1", actor="tester", privacy="private", payload=payload)


def _ranks(rows: list[dict[str, Any]]) -> list[int]:
    return [r["rank"] for r in rows]


# Distinct names of any Unicode text PostgreSQL can hold (no NUL, no lone surrogates): the
# order is by code point on every backend.
_NAMES = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), min_size=1, max_size=4)


@st.composite
def _item_specs(draw: st.DrawFn) -> list[tuple[int, str, str | None]]:
    """(rank, lane, name) of up to 12 items: distinct ranks, distinct names, some names missing."""
    size = draw(st.integers(0, 12))
    ranks = draw(st.lists(st.integers(-50, 50), min_size=size, max_size=size, unique=True))
    names = draw(st.lists(_NAMES, min_size=size, max_size=size, unique=True))
    lanes = draw(st.lists(st.sampled_from(["a", "b"]), min_size=size, max_size=size))
    missing = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    return [(r, ln, None if m else n) for r, ln, n, m in zip(ranks, lanes, names, missing, strict=True)]


class LedgerPagesContract(abc.ABC):
    """``page`` and ``count`` on every backend (needs the hooks of ``LedgerContract``)."""

    @abc.abstractmethod
    def new_ledger(self, projections: Sequence[Projection] | None = None) -> Ledger: ...

    @abc.abstractmethod
    def make_ledger(self, projections: Sequence[Projection] | None = None) -> Ledger: ...

    @abc.abstractmethod
    def tamper(self, ledger: Ledger, seq: int, column: str, value: Any) -> None: ...

    @abc.abstractmethod
    def property_settings(self) -> Any: ...

    @pytest.fixture
    def items(self, _contract_resources: None) -> Ledger:
        led = self.new_ledger([ITEMS])
        led.append([item(5, "a", "e"), item(2, "b", "b"), item(9, "a", "Z"), item(1, "a"), item(7, "b", "ä")])
        return led

    def test_page_orders_by_one_column_both_ways(self, items: Ledger) -> None:
        assert _ranks(items.page("items", order_by="rank", limit=10)) == [1, 2, 5, 7, 9]
        assert _ranks(items.page("items", order_by="rank", limit=10, descending=True)) == [9, 7, 5, 2, 1]
        # text by code point; a row without a value in the order column is never paged
        assert [r["name"] for r in items.page("items", order_by="name", limit=10)] == ["Z", "b", "e", "ä"]
        assert [r["name"] for r in items.page("items", order_by="name", limit=10, descending=True)] == [
            "ä", "e", "b", "Z",
        ]  # fmt: skip
        assert items.page("items", order_by="rank", limit=1) == [{"rank": 1, "name": None, "lane": "a", "seq": 4}]

    def test_page_starts_strictly_after_a_value_and_stops_at_the_limit(self, items: Ledger) -> None:
        assert _ranks(items.page("items", order_by="rank", after=2, limit=2)) == [5, 7]
        assert _ranks(items.page("items", order_by="rank", after=3, limit=10)) == [5, 7, 9]
        assert _ranks(items.page("items", order_by="rank", after=7, limit=10, descending=True)) == [5, 2, 1]
        assert items.page("items", order_by="rank", after=9, limit=10) == []
        assert [r["name"] for r in items.page("items", order_by="name", after="b", limit=10)] == ["e", "ä"]

    def test_page_filters_by_column_equality(self, items: Ledger) -> None:
        assert _ranks(items.page("items", {"lane": "a"}, order_by="rank", limit=10)) == [1, 5, 9]
        assert _ranks(items.page("items", {"lane": "b"}, order_by="rank", after=2, limit=10)) == [7]
        assert _ranks(items.page("items", {"lane": "a", "name": "e"}, order_by="rank", limit=10)) == [5]
        assert items.page("items", {"lane": "c"}, order_by="rank", limit=10) == []

    def test_count_counts_matching_rows(self, items: Ledger) -> None:
        assert items.count("items") == 5
        assert items.count("items", lane="a") == 3
        assert items.count("items", lane="b", name="ä") == 1
        assert items.count("items", lane="c") == 0
        with pytest.raises(NotFoundError):
            items.count("no_such_table")
        with pytest.raises(InvalidInputError) as err:
            items.count("items", bogus=1)
        assert err.value.field == "where"

    @pytest.mark.parametrize(
        ("kwargs", "field"),
        [
            ({"order_by": "bogus", "limit": 5}, "order_by"),
            ({"order_by": "rt_seq", "limit": 5}, "order_by"),
            ({"order_by": "rank; DROP TABLE rt_records", "limit": 5}, "order_by"),
            ({"order_by": "rank", "limit": 0}, "limit"),
            ({"order_by": "rank", "limit": 10_001}, "limit"),
            ({"order_by": "rank", "limit": True}, "limit"),
            ({"order_by": "rank", "limit": 5, "after": "3"}, "after"),
            ({"order_by": "rank", "limit": 5, "after": False}, "after"),
            ({"order_by": "name", "limit": 5, "after": 3}, "after"),
            ({"where": {"bogus": 1}, "order_by": "rank", "limit": 5}, "where"),
        ],
    )
    def test_page_rejects_bad_arguments_naming_the_field(
        self, items: Ledger, kwargs: dict[str, Any], field: str
    ) -> None:
        with pytest.raises(InvalidInputError) as err:
            items.page("items", **kwargs)
        assert err.value.field == field

    def test_page_of_an_unknown_table(self, items: Ledger) -> None:
        with pytest.raises(NotFoundError) as err:
            items.page("no_such_table", order_by="rank", limit=5)
        assert err.value.field == "table"

    def test_page_refuses_rows_of_a_damaged_record(self, items: Ledger) -> None:
        self.tamper(items, 3, "payload", b'{"rank":9,"lane":"a","name":"Z","x":1}')
        assert _ranks(items.page("items", order_by="rank", limit=2)) == [1, 2]  # rows of sound records
        with pytest.raises(IntegrityError) as err:
            items.page("items", order_by="rank", after=5, limit=10)
        assert err.value.field == "items"

    def test_rows_in_reads_the_rows_of_many_values_at_once(self, items: Ledger) -> None:
        assert sorted(_ranks(items.rows_in("items", "rank", [9, 1, 42, 1]))) == [1, 9]
        assert sorted(_ranks(items.rows_in("items", "lane", ["b"]))) == [2, 7]
        assert sorted(_ranks(items.rows_in("items", "rank", [1, 2, 5], lane="a"))) == [1, 5]
        assert items.rows_in("items", "name", ["e"]) == [{"rank": 5, "name": "e", "lane": "a", "seq": 1}]
        assert items.rows_in("items", "rank", []) == []
        assert items.rows_in("items", "name", [None]) == []
        with pytest.raises(InvalidInputError) as err:
            items.rows_in("items", "bogus", [1])
        assert err.value.field == "where"
        with pytest.raises(InvalidInputError) as err:
            items.rows_in("items", "rank", [1], bogus=2)
        assert err.value.field == "where"
        with pytest.raises(NotFoundError) as err:
            items.rows_in("no_such_table", "rank", [1])
        assert err.value.field == "table"

    def test_rows_in_reads_more_values_than_one_query_holds(self) -> None:
        led = self.new_ledger([ITEMS])
        led.append([item(rank, "a" if rank % 3 else "b") for rank in range(1, 1_201)])
        wanted = list(range(0, 1_300, 2))
        got = led.rows_in("items", "rank", wanted)
        assert sorted(_ranks(got)) == [r for r in wanted if 1 <= r <= 1_200]
        assert sorted(_ranks(led.rows_in("items", "rank", wanted, lane="b"))) == [
            r for r in wanted if 1 <= r <= 1_200 and r % 3 == 0
        ]

    def test_rows_in_refuses_rows_of_a_damaged_record(self, items: Ledger) -> None:
        self.tamper(items, 3, "payload", b'{"rank":9,"lane":"a","name":"Z","x":1}')
        assert sorted(_ranks(items.rows_in("items", "rank", [1, 2]))) == [1, 2]
        with pytest.raises(IntegrityError) as err:
            items.rows_in("items", "rank", [1, 9])
        assert err.value.field == "items"

    def test_get_many_gives_the_records_that_exist_by_id(self, items: Ledger) -> None:
        every = list(items.read())
        ids = [every[4].id, "no-such-record", every[0].id, every[4].id]
        got = items.get_many(ids)
        assert got == {every[4].id: every[4], every[0].id: every[0]}
        assert items.get_many([]) == {}

    def test_get_many_reads_more_ids_than_one_query_holds(self) -> None:
        led = self.new_ledger([ITEMS])
        envs = led.append([item(rank) for rank in range(1, 1_101)])
        got = led.get_many([e.id for e in envs[::-1]])
        assert got == {e.id: e for e in envs}

    def test_rows_in_gives_the_rows_each_value_gives(self) -> None:
        @self.property_settings()
        @given(_item_specs(), st.lists(st.integers(-55, 55), max_size=8), st.none() | st.sampled_from(["a", "b"]))
        def check(specs: list[tuple[int, str, str | None]], ranks: list[int], lane: str | None) -> None:
            where = {} if lane is None else {"lane": lane}
            with self.make_ledger([ITEMS]) as led:
                led.append([item(rank, ln, name) for rank, ln, name in specs])
                one_by_one = [row for rank in dict.fromkeys(ranks) for row in led.rows("items", rank=rank, **where)]
                got = led.rows_in("items", "rank", ranks, **where)
                assert sorted(got, key=lambda r: r["rank"]) == sorted(one_by_one, key=lambda r: r["rank"])

        check()

    def test_paging_with_after_visits_every_matching_row_once_in_order(self) -> None:
        @self.property_settings()
        @given(
            _item_specs(),
            st.sampled_from(["rank", "name"]),
            st.none() | st.sampled_from(["a", "b"]),
            st.integers(1, 5),
            st.booleans(),
        )
        def check(
            specs: list[tuple[int, str, str | None]], order_by: str, lane: str | None, limit: int, descending: bool
        ) -> None:
            matching = [s for s in specs if lane in (None, s[1])]
            keyed = [(s[0] if order_by == "rank" else s[2], s[0]) for s in matching]
            wanted = [rank for key, rank in sorted((k, r) for k, r in keyed if k is not None)]
            if descending:
                wanted.reverse()
            where = {} if lane is None else {"lane": lane}
            with self.make_ledger([ITEMS]) as led:  # a fresh ledger per example
                led.append([item(rank, ln, name) for rank, ln, name in specs])
                seen: list[int] = []
                after: Any = None
                for _ in range(len(specs) + 1):  # bounded: a page that repeats would loop forever
                    got = led.page("items", where, order_by=order_by, after=after, limit=limit, descending=descending)
                    assert len(got) <= limit
                    if not got:
                        break
                    seen += _ranks(got)
                    after = got[-1][order_by]
                assert seen == wanted
                assert led.count("items", **where) == len(matching)

        check()

    def test_page_offset_and_within_give_the_rows_at_a_position_of_the_order(self) -> None:
        """The row at a position of an order (``offset``), among the rows whose key another
        table holds (``within``), is the one at that position of every matching row, and the
        count counts them."""

        @self.property_settings()
        @given(
            _item_specs(),
            st.lists(st.integers(-50, 50), max_size=12, unique=True),
            st.sampled_from(["rank", "name"]),
            st.none() | st.sampled_from(["a", "b"]),
            st.integers(0, 13),
            st.integers(1, 4),
            st.booleans(),
            st.booleans(),
        )
        def check(
            specs: list[tuple[int, str, str | None]],
            marked: list[int],
            order_by: str,
            lane: str | None,
            offset: int,
            limit: int,
            descending: bool,
            within: bool,
        ) -> None:
            matching = [s for s in specs if lane in (None, s[1]) and (not within or s[0] in marked)]
            keyed = [(s[0] if order_by == "rank" else s[2], s[0]) for s in matching]
            wanted = [rank for key, rank in sorted((k, r) for k, r in keyed if k is not None)]
            if descending:
                wanted.reverse()
            where = {} if lane is None else {"lane": lane}
            table = "marks" if within else None
            with self.make_ledger([ITEMS, MARKS]) as led:
                led.append([item(rank, ln, name) for rank, ln, name in specs] + [mark(rank) for rank in marked])
                got = led.page(
                    "items", where, order_by=order_by, limit=limit, descending=descending, offset=offset, within=table
                )
                assert _ranks(got) == wanted[offset : offset + limit]
                counted = led.count_within("items", "marks", **where) if within else led.count("items", **where)
                assert counted == len(matching)

        check()

    def test_offset_and_within_are_checked_naming_the_field(self) -> None:
        led = self.new_ledger([ITEMS, MARKS])
        for offset in (-1, True, "1", 2**31):
            with pytest.raises(InvalidInputError) as err:
                led.page("items", order_by="rank", limit=1, offset=offset)
            assert err.value.field == "offset"
        with pytest.raises(NotFoundError) as missing:
            led.page("items", order_by="rank", limit=1, within="no_such_table")
        assert missing.value.field == "within"
        for page in (
            lambda: led.count_within("items", "notes"),
            lambda: led.page("items", order_by="rank", limit=1, within="notes"),
        ):
            with pytest.raises(InvalidInputError) as unkeyed:  # notes is keyed by a column items does not have
                page()
            assert unkeyed.value.field == "within"


class SqlLedgerPagesContract(abc.ABC):
    """``page`` checks rows edited in the database itself (needs the hooks of ``SqlLedgerContract``)."""

    @abc.abstractmethod
    def new_ledger(self, projections: Sequence[Projection] | None = None) -> Ledger: ...

    @abc.abstractmethod
    def url_of(self, ledger: Ledger) -> str: ...

    @abc.abstractmethod
    def run_sql_url(self, url: str, statement: str) -> None:
        """Run ``statement`` (no parameters) on the database at ``url``, bypassing the ledger."""

    @pytest.mark.parametrize(
        ("statement", "after"),
        [
            ("UPDATE rt_p_items SET name = 'forged' WHERE rank = 9", 5),
            ("UPDATE rt_p_items SET rank = 8 WHERE rank = 9", 5),
            ("INSERT INTO rt_p_items (rank, name, lane, seq, rt_seq) VALUES (6, 'x', 'a', 1, 1)", 5),
            ("UPDATE rt_p_items SET rt_seq = 99 WHERE rank = 9", 5),
        ],
    )
    def test_page_refuses_a_query_row_edited_in_the_database(self, statement: str, after: int) -> None:
        led = self.new_ledger([ITEMS])
        led.append([item(1), item(5), item(9)])
        self.run_sql_url(self.url_of(led), statement)
        assert _ranks(led.page("items", order_by="rank", limit=2)) == [1, 5]  # untouched rows still read
        with pytest.raises(IntegrityError, match="query table items") as err:
            led.page("items", order_by="rank", after=after, limit=10)
        assert err.value.field == "items"

    def test_rows_in_refuses_a_query_row_edited_in_the_database(self) -> None:
        led = self.new_ledger([ITEMS])
        led.append([item(1), item(5), item(9)])
        self.run_sql_url(self.url_of(led), "UPDATE rt_p_items SET name = 'forged' WHERE rank = 9")
        assert sorted(_ranks(led.rows_in("items", "rank", [1, 5]))) == [1, 5]
        with pytest.raises(IntegrityError, match="query table items") as err:
            led.rows_in("items", "rank", [5, 9])
        assert err.value.field == "items"
