"""A :class:`reviewtrail._value.Value` behaves as the frozen dataclass declared alike."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail._value import Value, field


class Point(Value):
    x: int
    label: str | None = None
    tags: tuple[str, ...] = field(default_factory=tuple)
    secret: str | None = field(default=None, repr=False)
    note: str = field(default="", compare=False)
    LIMIT: ClassVar[int] = 3

    def __post_init__(self) -> None:
        if self.x > 10**6:
            raise ValueError("x is too large")


@dataclasses.dataclass(frozen=True)
class PointDataclass:
    x: int
    label: str | None = None
    tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)
    secret: str | None = dataclasses.field(default=None, repr=False)
    note: str = dataclasses.field(default="", compare=False)


class Point3(Point):
    z: int = 0


values = st.fixed_dictionaries(
    {"x": st.integers(-5, 5)},
    optional={
        "label": st.none() | st.sampled_from(["a", "b"]),
        "tags": st.tuples(st.sampled_from(["t", "u"])),
        "secret": st.none() | st.just("k"),
        "note": st.sampled_from(["", "n"]),
    },
)


@given(values, values)
def test_equality_hash_and_repr_are_the_dataclass_ones(a: dict[str, Any], b: dict[str, Any]) -> None:
    ours, theirs = (Point(**a), Point(**b)), (PointDataclass(**a), PointDataclass(**b))
    assert (ours[0] == ours[1]) == (theirs[0] == theirs[1])
    assert (hash(ours[0]) == hash(ours[1])) or ours[0] != ours[1]
    assert repr(ours[0]).removeprefix("Point") == repr(theirs[0]).removeprefix("PointDataclass")
    assert ours[0].replace(**b) == Point(**(a | b))


def test_fields_defaults_and_factories_as_declared() -> None:
    p = Point(1, "a")
    assert (p.x, p.label, p.tags, p.secret, p.note) == (1, "a", (), None, "")
    assert Point._fields == ("x", "label", "tags", "secret", "note") and Point.LIMIT == 3
    assert "secret" not in repr(Point(1, secret="k")) and "k" not in repr(Point(1, secret="k"))
    assert Point(1, note="n") == Point(1) and Point(1, label="a") != Point(1)
    assert Point(1) != PointDataclass(1) and Point(1) != Point3(1)
    assert Point3(1, z=2).z == 2 and Point3._fields[-1] == "z"


def test_refusals_are_the_dataclass_ones() -> None:
    with pytest.raises(TypeError, match="missing required argument 'x'"):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'y'"):
        Point(1, y=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        Point(1, x=2)  # type: ignore[misc]
    with pytest.raises(TypeError, match="takes 5 arguments but 6 were given"):
        Point(1, "a", (), None, "", 6)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="too large"):
        Point(10**7)
    with pytest.raises(ValueError, match="too large"):
        Point(1).replace(x=10**7)


def test_values_are_frozen_and_copy_and_pickle_whole() -> None:
    p = Point(2, "b", ("t",), "k", "n")
    with pytest.raises(AttributeError, match="cannot assign to field 'x'"):
        p.x = 3  # type: ignore[misc]
    with pytest.raises(AttributeError, match="cannot delete field 'x'"):
        del p.x  # type: ignore[misc]
    for other in (copy.copy(p), copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert other == p and other.note == "n" and other.secret == "k"


class Bag(Value):
    items: list[int] = field(default_factory=list)


def test_a_factory_makes_each_instance_its_own_default() -> None:
    a, b = Bag(), Bag()
    a.items.append(1)
    assert b.items == [] and a.items == [1] and Bag([2]).items == [2]
