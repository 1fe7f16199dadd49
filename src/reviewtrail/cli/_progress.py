"""Progress bars on standard error: bytes for long reads and writes, counts for verify's phases.

``show`` is ``None`` for automatic (stderr is a terminal and the work is large), ``True`` to force
a bar (drawn even when stderr is not a terminal, and left on screen at the end), ``False`` for none.
Standard output is never touched, so ``reviewtrail cas cat`` stays a clean byte stream.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Task
    from rich.text import Text

__all__ = ["LARGE_BYTES", "PROGRESS_HELP", "byte_progress", "phase_progress"]

LARGE_BYTES = 16 * 1024 * 1024
PROGRESS_HELP = "Show a progress bar on stderr (default: only on a terminal, for large work)."


def _wanted(show: bool | None, large: bool) -> bool:
    return show if show is not None else (large and sys.stderr.isatty())


def _console(show: bool | None) -> object:
    from rich.console import Console

    return Console(stderr=True, force_terminal=True if show else None)


@contextmanager
def byte_progress(description: str, total: int | None, show: bool | None) -> Iterator[Callable[[int], None] | None]:
    """A callback that advances a byte bar of ``total`` bytes, or ``None`` when no bar is wanted."""
    if not _wanted(show, (total or 0) >= LARGE_BYTES):
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(binary_units=True),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=_console(show),  # type: ignore[arg-type]
        transient=not show,
    ) as bar:
        task = bar.add_task(description, total=total)

        def advance(n: int) -> None:
            bar.advance(task, n)

        yield advance


def _count_or_bytes_column() -> object:
    from rich.progress import DownloadColumn, MofNCompleteColumn, ProgressColumn

    class CountOrBytes(ProgressColumn):
        """Bytes for the ``bytes`` phase, ``done/total`` for the others."""

        def __init__(self) -> None:
            super().__init__()
            self._bytes = DownloadColumn(binary_units=True)
            self._count = MofNCompleteColumn()

        def render(self, task: Task) -> Text:
            return (self._bytes if task.fields.get("unit") == "bytes" else self._count).render(task)

    return CountOrBytes()


@contextmanager
def phase_progress(verb: str, show: bool | None) -> Iterator[Callable[[str, int, int], None] | None]:
    """A ``(phase, advance, total)`` callback drawing one bar per phase (``bytes`` in bytes), or
    ``None`` when no bar is wanted (so the work behind a bar, such as sizing objects, is skipped)."""
    if not _wanted(show, True):
        yield None
        return
    from rich.progress import BarColumn, Progress, TaskID, TextColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        _count_or_bytes_column(),  # type: ignore[arg-type]
        console=_console(show),  # type: ignore[arg-type]
        transient=not show,
    ) as bar:
        tasks: dict[str, TaskID] = {}

        def tick(phase: str, advance: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(f"{verb} {phase}", total=total, unit=phase)
            bar.update(tasks[phase], advance=advance)

        yield tick
