"""Which trace mode applies: ``full`` (default), ``meta`` or ``off``.

Sources: the ``--trace-mode`` flag (or ``mode=`` argument), the ``ARIS_TRACE_MODE``
environment variable, and an inline ``--- trace: off|meta|full`` line in the skill's
arguments. When several are given the most private one wins (off < meta < full):
a user's ``--- trace: off`` or a project's ``ARIS_TRACE_MODE=meta`` can never be
overridden upwards by a caller's default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from reviewtrail.errors import InvalidInputError
from reviewtrail.tracing.files._documents import TraceMode

__all__ = ["MODES", "inline_mode", "resolve_mode"]

MODES: tuple[TraceMode, ...] = ("off", "meta", "full")  # most private first
_INLINE = re.compile(r"(?:^|(?<=\s))---[ \t]*trace[ \t]*:[ \t]*(?P<mode>[A-Za-z]+)\b", re.MULTILINE)


def _check(value: str, field: str) -> TraceMode:
    v = value.strip().lower()
    for mode in MODES:
        if v == mode:
            return mode
    raise InvalidInputError(f"{value!r} is not a trace mode; use full, meta or off", field=field)


def inline_mode(skill_args: str | None) -> TraceMode | None:
    """The mode named by inline ``--- trace: <mode>`` directives (on a line of their own or after
    other arguments); when several are given the most private wins."""
    if not skill_args:
        return None
    found = [_check(m["mode"], "skill_args") for m in _INLINE.finditer(skill_args)]
    return min(found, key=MODES.index) if found else None


def resolve_mode(
    explicit: str | None = None, *, skill_args: str | None = None, env: Mapping[str, str] | None = None
) -> TraceMode:
    candidates: list[TraceMode] = []
    if explicit:
        candidates.append(_check(explicit, "trace_mode"))
    if env is not None and env.get("ARIS_TRACE_MODE"):
        candidates.append(_check(env["ARIS_TRACE_MODE"], "ARIS_TRACE_MODE"))
    inline = inline_mode(skill_args)
    if inline is not None:
        candidates.append(inline)
    if not candidates:
        return "full"
    return min(candidates, key=MODES.index)
