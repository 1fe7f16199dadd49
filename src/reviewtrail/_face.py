"""A package's face, written once (PEP 562).

A face re-exports each public name in the form type checkers read as a re-export, the redundant
alias: ``from reviewtrail.pkg._module import Name as Name``. A face that must stay light to import
puts those lines under ``if typing.TYPE_CHECKING:`` and ends with::

    if not typing.TYPE_CHECKING:
        __getattr__, __dir__ = _face.lazy(__name__)

At run time the face reads its own re-exports from its source (on the first name asked for, never
at import) and loads each name from its module on first use: ``__all__`` is the list of them, so
every name is written once. A face that must not name a module in an import (the top-level
package would then sit above it in the layers) passes ``{module: names}`` instead.
"""

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy", "reexports"]


def reexports(package: str, source: str) -> dict[str, str]:
    """Each name ``source`` re-exports (``from <package>.<module> import Name as Name``, on one line
    or in parentheses, comments allowed) → its module. A renamed import of the package's own
    modules is refused: one name per thing."""
    found: dict[str, str] = {}
    lines = iter(source.splitlines())
    for line in lines:
        words = line.partition("#")[0].split(maxsplit=3)
        if len(words) < 4 or words[0] != "from" or words[2] != "import" or not words[1].startswith(f"{package}."):
            continue
        module, names = words[1], words[3]
        if names.startswith("("):
            while ")" not in names:
                names += " " + next(lines).partition("#")[0]
        for item in names.strip("() ").split(","):
            parts = item.split()
            if len(parts) != 3 or parts[1] != "as":
                continue  # imported for the face's own use, not re-exported
            if parts[0] != parts[2]:
                raise ImportError(f"{package} renames {module}.{parts[0]} as {parts[2]}: a face keeps one name")
            if found.setdefault(parts[2], module) != module:
                raise ImportError(f"{package} re-exports {parts[2]} twice")
    return found


def lazy(
    package: str, named: Mapping[str, Iterable[str]] | None = None
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The face's ``__getattr__`` and ``__dir__``: ``__all__`` and every re-exported name, loaded
    from its module on first use and kept in the face. ``named`` maps a module to more names, for a
    face whose re-exports cannot all stand in its source as imports."""
    table: dict[str, str] = {}

    def names() -> dict[str, str]:
        if not table:  # filled in one step: a thread never sees part of it
            found = reexports(package, _source(package))
            table.update(found | {name: module for module, listed in (named or {}).items() for name in listed})
        return table

    def getattr_(name: str) -> Any:
        if name == "__all__":
            value: Any = list(names())
        else:
            module = names().get(name)
            if module is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            value = getattr(importlib.import_module(module), name)
        vars(sys.modules[package])[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names()})

    return getattr_, dir_


def _source(package: str) -> str:
    """The face's source, through its loader (a file, or a zip archive's member)."""
    loader = getattr(sys.modules[package], "__loader__", None)
    try:
        source = loader.get_source(package) if loader is not None else None
    except (ImportError, OSError):
        source = None
    if source is None:
        raise ImportError(f"{package}: its face reads its re-exports from its source, and this install has none")
    return str(source)
