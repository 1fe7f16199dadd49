"""Plain value classes for the modules every command loads.

A frozen dataclass costs about half a millisecond to build at import, and the everyday commands
load a dozen: a :class:`Value` costs nothing. A value class lists its fields in ``__slots__`` and
sets them once, in its ``__init__``, through :meth:`Value._take`. Its instances then compare equal
when of the same class with equal fields (those in ``_uncompared`` aside), hash alike, print as
``Name(field=value, ...)`` (those in ``_unshown`` aside), and refuse assignment, as a frozen
dataclass does.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

__all__ = ["Value"]


class Value:
    """Base of a plain, immutable value class whose fields are its ``__slots__``."""

    __slots__: tuple[str, ...] = ()
    _unshown: ClassVar[frozenset[str]] = frozenset()  # left out of repr (secrets, functions)
    _uncompared: ClassVar[frozenset[str]] = frozenset()  # left out of equality and the hash

    def _take(self, given: dict[str, Any]) -> None:
        """Set every field from ``given``, by name: ``self._take(locals())`` in an ``__init__`` whose
        parameters are the fields (after checking or defaulting them)."""
        for name in self.__slots__:
            object.__setattr__(self, name, given[name])

    def _compared(self) -> tuple[Any, ...]:
        return tuple(getattr(self, n) for n in self.__slots__ if n not in self._uncompared)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Value)
        return self._compared() == other._compared()

    def __hash__(self) -> int:
        return hash(self._compared())

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__ if n not in self._unshown)
        return f"{type(self).__name__}({shown})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __getstate__(self) -> dict[str, Any]:  # a copy or a pickle is built through _take too
        return {n: getattr(self, n) for n in self.__slots__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._take(state)

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` (fields by name), checked by ``__init__`` as a new value is."""
        return type(self)(**{n: getattr(self, n) for n in self.__slots__} | changes)
