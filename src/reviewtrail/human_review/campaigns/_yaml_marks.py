"""Reading YAML input files with line numbers: plain data only (no anchors or aliases), every
mapping key's line known by its path, and refusals naming ``line N: <field>``. Shared by the
campaign-file and agents-file parsers. Pure."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import yaml

from reviewtrail.errors import InvalidInputError

__all__ = ["Locate", "key_lines", "nearest", "read_yaml"]

#: The line (1-based) of each mapping key and list item, by its path of keys and indices.
Locate = dict[tuple[str, ...], int]

T = TypeVar("T")


def read_yaml(text: str, build: Callable[[yaml.SafeLoader, yaml.Node], T]) -> T | None:
    """``build(loader, root)`` over the single YAML document of ``text`` (None when it is empty).
    Invalid YAML, too deep a nesting, and anchors and aliases are refused with
    :class:`InvalidInputError` (field ``line N: file``); ``build`` may raise its own."""
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        _refuse_aliases(root, set())
        return build(loader, root)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise InvalidInputError(f"not valid YAML: {exc.problem or exc}", field=f"line {line}: file") from None
    except yaml.YAMLError as exc:
        raise InvalidInputError(f"not valid YAML: {exc}", field="file") from None
    except RecursionError:
        raise InvalidInputError("the YAML is nested too deeply", field="file") from None
    finally:
        loader.dispose()


def _refuse_aliases(node: yaml.Node, seen: set[int]) -> None:
    """Refuse a node reached twice (a YAML alias): input is plain data, and aliases could expand a
    small file into an enormous one."""
    if id(node) in seen:
        raise InvalidInputError(
            (
                "YAML anchors and aliases (&name, *name) are not supported: write each value out in full, "
                "without aliases, or write the file as JSON (a campaign file as JSONL, one object per line)"
            ),
            field=f"line {node.start_mark.line + 1}: file",
        )
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            _refuse_aliases(key, seen)
            _refuse_aliases(value, seen)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _refuse_aliases(item, seen)


def key_lines(node: yaml.Node, prefix: tuple[str, ...] = ()) -> Locate:
    """The line of every mapping key (and list item) under ``node``, by its path."""
    found: Locate = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            path = (*prefix, str(key.value))
            found[path] = key.start_mark.line + 1
            found.update(key_lines(value, path))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            path = (*prefix, str(i))
            found[path] = item.start_mark.line + 1
            found.update(key_lines(item, path))
    return found


def nearest(locate: Locate, loc: tuple[str, ...]) -> int | None:
    """The line of the deepest key of ``loc`` that ``locate`` knows (None when none)."""
    for n in range(len(loc), 0, -1):
        if loc[:n] in locate:
            return locate[loc[:n]]
    return None
