"""Plain value classes for the modules every command loads.

A frozen dataclass costs about half a millisecond to build at import (and ``dataclasses`` pulls in
``inspect``), and the everyday commands load a dozen. A :class:`Value` is declared as one is
(annotated fields, defaults, :func:`field` for a factory or a field left out of ``repr`` or of
equality, ``__post_init__`` for checks) and costs nothing to build: its fields are read from the
class's annotations once, and one ``__init__`` serves every class. Its instances compare equal
when of the same class with equal fields, hash alike, print as ``Name(field=value, ...)``, and
refuse assignment, as a frozen dataclass's do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Self, dataclass_transform

__all__ = ["Value", "field"]


class _Field:
    __slots__ = ("compare", "default", "factory", "repr")

    def __init__(self, default: Any, factory: Callable[[], Any] | None, repr: bool, compare: bool) -> None:
        self.default, self.factory, self.repr, self.compare = default, factory, repr, compare


_MISSING: Any = object()


def field(
    *,
    default: Any = _MISSING,
    default_factory: Callable[[], Any] | None = None,
    repr: bool = True,
    compare: bool = True,
) -> Any:
    """A field's default (a value, or a function called for each instance), and whether it is
    shown by ``repr`` and compared, as :func:`dataclasses.field` says them."""
    return _Field(default, default_factory, repr, compare)


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class Value:
    """Base of a plain, immutable value class declared by its annotated fields."""

    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}
    _factories: ClassVar[dict[str, Callable[[], Any]]] = {}
    _shown: ClassVar[tuple[str, ...]] = ()
    _compared: ClassVar[tuple[str, ...]] = ()
    _post: ClassVar[Callable[[Any], None] | None] = None  # the class's __post_init__, found once

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names, defaults, factories = list(cls._fields), dict(cls._defaults), dict(cls._factories)
        hidden = set(cls._fields) - set(cls._shown)
        uncompared = set(cls._fields) - set(cls._compared)
        for name, kind in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063 (inspect is what it avoids)
            if str(kind).startswith(("ClassVar", "typing.ClassVar")):
                continue
            if name not in names:
                names.append(name)
            given = cls.__dict__.get(name, _MISSING)
            if isinstance(given, _Field):
                hidden.update([name] if not given.repr else [])
                uncompared.update([name] if not given.compare else [])
                if given.factory is not None:
                    factories[name] = given.factory
                given = given.default
                if given is _MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, given)
            if given is not _MISSING:
                defaults[name] = given
        cls._fields, cls._defaults, cls._factories = tuple(names), defaults, factories
        cls._shown = tuple(n for n in names if n not in hidden)
        cls._compared = tuple(n for n in names if n not in uncompared)
        cls._post = getattr(cls, "__post_init__", None)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self._fields
        if len(args) == len(fields) and not kwargs:  # every field given in order: the common case
            self.__dict__.update(zip(fields, args, strict=True))
            self._check()
            return
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__}() takes {len(fields)} arguments but {len(args)} were given")
        values = dict(zip(fields, args, strict=False))
        for name, value in kwargs.items():
            if name not in fields or name in values:
                why = "got multiple values for argument" if name in values else "got an unexpected keyword argument"
                raise TypeError(f"{type(self).__name__}() {why} {name!r}")
            values[name] = value
        if len(values) < len(fields):
            for name in fields:
                if name in values:
                    continue
                if name in self._factories:
                    values[name] = self._factories[name]()
                elif name in self._defaults:
                    values[name] = self._defaults[name]
                else:
                    raise TypeError(f"{type(self).__name__}() missing required argument {name!r}")
        self.__dict__.update(values)
        self._check()

    def _check(self) -> None:
        post = type(self)._post
        if post is not None:
            post(self)

    def _values(self) -> tuple[Any, ...]:
        return tuple(self.__dict__[n] for n in self._compared)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Value)
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={self.__dict__[n]!r}" for n in self._shown)
        return f"{type(self).__name__}({shown})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` (fields by name), checked by ``__post_init__`` as a new value is."""
        return type(self)(**{n: self.__dict__[n] for n in self._fields} | changes)
