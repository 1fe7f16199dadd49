"""Printing for the CLI: human output by default, ``--json`` for machines, errors with exit codes."""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

if TYPE_CHECKING:
    from reviewtrail.inputs import InputKind

P = ParamSpec("P")
R = TypeVar("R")

__all__ = [
    "EXIT_PIPE_CLOSED",
    "JSON_HELP",
    "PIPE_WIDTH",
    "fail",
    "handle_errors",
    "lost_database",
    "os_error_outcome",
    "plain_table",
    "print_json",
    "print_json_stream",
    "print_report",
    "read_text_file",
    "silence_stdout",
    "stdout_is_closed",
    "table",
]

JSON_HELP = "Print machine-readable JSON instead of a table."

# 128 + SIGPIPE: what a shell reports for a program stopped by a closed pipe (`... | head`).
EXIT_PIPE_CLOSED = 141


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def print_json_stream(data: Any) -> None:
    """:func:`print_json`, byte for byte, written as it is encoded: lists in ``data`` may make their
    items while they are written (the encoder with an indent is the pure-Python one, which iterates)."""
    chunks: list[str] = []
    for chunk in json.JSONEncoder(ensure_ascii=False, indent=2).iterencode(data):
        chunks.append(chunk)
        if len(chunks) >= 4096:
            sys.stdout.write("".join(chunks))
            chunks.clear()
    sys.stdout.write("".join(chunks) + "\n")


def print_report(report: Any, as_json: bool, print_text: Callable[[Any], None], *, failure: str = "") -> None:
    """``report`` as JSON or as ``print_text`` words it; one that is not ``ok`` then exits 4
    (integrity), with ``failure`` on stderr when given."""
    if as_json:
        print_json(report.to_json())
    else:
        print_text(report)
    if not report.ok:
        from reviewtrail.errors import EXIT_INTEGRITY

        sys.stdout.flush()
        if failure:
            sys.stderr.write(f"error: {failure}\n")
        raise SystemExit(EXIT_INTEGRITY)


def fail(message: str, code: int, *, as_json: bool = False, field: str | None = None, kind: str = "Error") -> None:
    """Report an error on stderr (and as JSON on stdout with --json) and exit with ``code``."""
    if as_json:
        # When nobody reads stdout any more, the message still goes to stderr with its exit code.
        with contextlib.suppress(BrokenPipeError):
            print_json({"error": {"type": kind, "field": field, "message": message, "exitCode": code}})
    sys.stderr.write(f"error: {message}\n")
    # SystemExit, not the framework's Exit: the same exit code under typer and on the fast path
    # (reviewtrail.cli._fast), which never imports typer.
    raise SystemExit(code)


def handle_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn reviewtrail errors into a message and the error's documented exit code."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        from reviewtrail.errors import EXIT_BACKEND, EXIT_INTERNAL, ReviewtrailError

        as_json = bool(kwargs.get("as_json", False))
        try:
            return fn(*args, **kwargs)
        except ReviewtrailError as exc:
            fail(str(exc), exc.exit_code, as_json=as_json, field=exc.field, kind=type(exc).__name__)
        except OSError as exc:
            if isinstance(exc, BrokenPipeError) and stdout_is_closed():
                # The reader of our output left (`reviewtrail ... | head`): stop, without a word.
                silence_stdout()
                raise SystemExit(EXIT_PIPE_CLOSED) from None
            # Any other broken pipe (to a sandbox, a socket) is an error like the rest.
            message, code = os_error_outcome(exc, EXIT_INTERNAL)
            fail(message, code, as_json=as_json, kind="OSError")
        except Exception as exc:
            lost = lost_database(exc)
            if lost is None:
                raise
            fail(lost, EXIT_BACKEND, as_json=as_json, field="database", kind="BackendUnavailableError")
        raise AssertionError("unreachable")  # pragma: no cover

    return wrapper


def lost_database(exc: BaseException) -> str | None:
    """The message for a PostgreSQL connection lost (or refused) where no library call mapped it,
    naming the database with its password redacted, or None for any other error. Every write is
    one transaction, so what was not committed was rolled back by the server: nothing is
    half-written. psycopg is asked only when it was loaded (a PostgreSQL store is open)."""
    psycopg = sys.modules.get("psycopg")
    if psycopg is None or not isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
        return None
    try:
        from reviewtrail.config import load_settings

        settings = load_settings()
    except Exception:  # a broken configuration would have failed before any connection
        settings = None
    where = f"the PostgreSQL database {settings.database_url_redacted}" if settings else "the PostgreSQL database"
    detail = settings.redact(str(exc)) if settings else str(exc)
    detail = " ".join(detail.split()) or type(exc).__name__
    return (
        f"lost the connection to {where}: {detail}; the command stopped and nothing was half-written "
        "(a transaction left open was rolled back)"
    )


_DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
# A file where a folder belongs or the reverse, or a symlink loop: the layout was changed under us.
_LAYOUT = (errno.ENOTDIR, errno.EISDIR, errno.EEXIST, errno.ELOOP)


def os_error_outcome(exc: OSError, internal: int) -> tuple[str, int]:
    """The message and documented exit code of an operating-system error no library call mapped:
    a full disk or a read-only filesystem is 5; a file or folder of the store or of ``.aris``
    replaced by something else is 4 (``verify`` names it); anything else stays 1."""
    from reviewtrail.errors import EXIT_BACKEND, EXIT_INTEGRITY

    text = f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": ")
    if exc.errno in _DISK_FULL:
        return f"no space left on the device: {text}; nothing was half-written", EXIT_BACKEND
    if exc.errno == errno.EROFS:
        return f"read-only filesystem: {text}", EXIT_BACKEND
    if exc.errno in _LAYOUT and exc.filename is not None and _in_custody(os.fsdecode(exc.filename)):
        return (
            f"{text}: a file or folder of the store or of .aris was replaced by something else; "
            "run 'reviewtrail verify'",
            EXIT_INTEGRITY,
        )
    return text, internal


def _in_custody(filename: str) -> bool:
    from pathlib import Path

    path = Path(filename).absolute()
    if ".aris" in path.parts:
        return True
    try:
        from reviewtrail.config import load_settings

        store = load_settings().store
    except Exception:  # a broken configuration is reported elsewhere
        return False
    return path == store or store in path.parents


def stdout_is_closed() -> bool:
    """True when standard output is a pipe (or socket) whose reader has gone away."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.__stdout__.fileno() if sys.__stdout__ is not None else 1, select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def silence_stdout() -> None:
    """Point standard output at /dev/null, as Python's documentation recommends after a
    broken pipe, so the interpreter's last flush of what is still buffered cannot fail noisily."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.__stdout__.fileno() if sys.__stdout__ is not None else 1)
        finally:
            os.close(devnull)
    except (OSError, ValueError):
        pass


def table(title: str, columns: list[str], rows: list[list[str]], *, no_wrap: tuple[str, ...] = ()) -> None:
    # A terminal gets its own width; a pipe or a file gets long lines rather than folded cells.
    if not sys.stdout.isatty():
        plain = plain_table(title, columns, rows)
        if plain is not None:
            sys.stdout.write(plain)
            return
    from rich.console import Console as RichConsole
    from rich.table import Table
    from rich.text import Text

    class Console(RichConsole):
        def on_broken_pipe(self) -> None:
            # rich would exit 1 on its own; the closed pipe is handled like any other output's.
            self.quiet = True
            raise BrokenPipeError(32, "Broken pipe")

    t = Table(title=title)
    for c in columns:
        t.add_column(c, overflow="fold", no_wrap=c in no_wrap)
    for r in rows:  # a cell is plain text (a prompt's words may look like markup or an emoji code)
        t.add_row(*(Text(c) for c in r))
    Console(width=None if sys.stdout.isatty() else PIPE_WIDTH).print(t)


# The width of a table written to a pipe or a file.
PIPE_WIDTH = 200


def _plain_cell(text: str) -> bool:
    """Does rich print ``text`` as it is (no markup, no emoji code, one ASCII line, no edge space)?"""
    if not text.isascii() or not text.isprintable() or "[" in text or text != text.strip():
        return False
    # ``:name:`` may be an emoji code; a time's ``:MM:`` (two digits) is not one.
    return all(len(part) == 2 and part.isdigit() for part in text.split(":")[1:-1])


def plain_table(title: str, columns: list[str], rows: list[list[str]]) -> str | None:
    """The table exactly as rich draws it for a pipe (heavy-head box, no colour, width
    :data:`PIPE_WIDTH`), without importing rich; ``None`` when rich could draw it differently
    (a cell rich would read as markup or an emoji code, non-ASCII text, a table or title too
    wide, colour forced by the environment, an output that is not UTF-8)."""
    if os.environ.get("FORCE_COLOR") is not None or os.environ.get("TTY_COMPATIBLE") == "1":
        return None
    if not (getattr(sys.stdout, "encoding", None) or "").lower().startswith("utf"):
        return None
    cells = [columns, *rows]
    if any(len(r) != len(columns) for r in rows) or not all(_plain_cell(c) for r in cells for c in r if c):
        return None
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    total = sum(widths) + 3 * len(widths) + 1
    if total > PIPE_WIDTH or len(title) > total or (title and not _plain_cell(title)):
        return None

    def line(left: str, fill: str, mid: str, right: str) -> str:
        return left + mid.join(fill * (w + 2) for w in widths) + right + "\n"

    def row(edge: str, values: list[str]) -> str:
        return edge + edge.join(f" {v.ljust(w)} " for v, w in zip(values, widths, strict=True)) + edge + "\n"

    out = []
    if title:
        left = (total - len(title)) // 2
        out.append(" " * left + title + " " * (total - len(title) - left) + "\n")
    out += [line("┏", "━", "┳", "┓"), row("┃", columns), line("┡", "━", "╇", "┩")]
    out += [row("│", r) for r in rows]
    out.append(line("└", "─", "┴", "┘"))
    return "".join(out)


def read_text_file(path: Path, field: str, kind: InputKind, *, stdin: bool = False) -> str:
    """A UTF-8 text file a command was given (``-`` reads standard input when ``stdin``): a
    regular file of at most its ``kind``'s size (:mod:`reviewtrail.inputs`); a file that is
    missing, unreadable, not a regular file or too large is invalid input naming ``field`` (exit 2)."""
    from reviewtrail.inputs import read_input_text

    return read_input_text(path, kind, field=field, stdin=stdin)
