"""Keeping ``.aris/traces/`` out of git: trace files are project-local and not committed (the
seed's "Trace Directory"), so installing the helper also adds the folder to the project's
``.gitignore``, without touching any other line.

:func:`with_traces_ignored` is the rule, on text alone; :func:`ignore_traces` applies it to a
project's file (written atomically, its mode kept).
"""

from __future__ import annotations

import stat
from pathlib import Path

from reviewtrail._durable import replace_file
from reviewtrail.tracing.files._layout import ARIS_DIR, TRACES_DIR

__all__ = ["TRACES_IGNORE_LINE", "ignore_traces", "with_traces_ignored"]

TRACES_IGNORE_LINE = f"{ARIS_DIR}/{TRACES_DIR}/"
# Lines that ignore the traces folder: itself, or the whole .aris folder; anchored or not, with or
# without the trailing slash, or everything inside it.
_COVERING = frozenset(
    f"{anchor}{folder}{tail}"
    for anchor in ("", "/")
    for folder in (ARIS_DIR, f"{ARIS_DIR}/{TRACES_DIR}")
    for tail in ("", "/", "/*", "/**")
)


def _pattern(line: str) -> str:
    """A .gitignore line as git reads it: trailing spaces dropped unless escaped."""
    text = line.rstrip("\r\n")
    while text.endswith(" ") and not text.endswith("\\ "):
        text = text[:-1]
    return text


def with_traces_ignored(text: str | None) -> str | None:
    """``text`` (a .gitignore's content, None for no file) with a line ignoring ``.aris/traces/``
    added at its end, or None when it already ignores the folder: a line of :data:`_COVERING`
    not negated by a later ``!`` line. The new line follows the file's own line ending."""
    current = text or ""
    ignored = False
    for line in current.splitlines():
        pattern = _pattern(line)
        if pattern in _COVERING:
            ignored = True
        elif pattern.startswith("!") and pattern[1:] in _COVERING:
            ignored = False
    if ignored:
        return None
    newline = "\r\n" if "\r\n" in current else "\n"
    if current and not current.endswith(("\n", "\r")):
        current += newline
    return f"{current}{TRACES_IGNORE_LINE}{newline}"


def ignore_traces(project: Path) -> bool:
    """Make ``project``'s ``.gitignore`` ignore ``.aris/traces/`` (created if missing); whether it
    changed."""
    path = project / ".gitignore"
    try:
        old = path.read_bytes().decode("utf-8", errors="surrogateescape")
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        old, mode = None, 0o644
    new = with_traces_ignored(old)
    if new is None:
        return False
    replace_file(path, new.encode("utf-8", errors="surrogateescape"), mode=mode)
    return True
