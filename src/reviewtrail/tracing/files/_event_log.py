"""The event log ``.aris/meta/events.jsonl``: one JSON line per event, each appended with one write
under an exclusive lock; a write that fails part way is cut back, so the file never holds half a line."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from reviewtrail.errors import StorageFullError
from reviewtrail.tracing.files._layout import events_path

__all__ = ["append_event", "event_line", "full_disk"]


@contextlib.contextmanager
def full_disk(doing: str, lost: str, field: str) -> Iterator[None]:
    """A full disk (or quota) met in the block as a :class:`StorageFullError` naming ``field``:
    "no space left to ``doing`` (why); ``lost``"."""
    try:
        yield
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StorageFullError(f"no space left to {doing} ({exc.strerror}); {lost}", field=field) from exc
        raise


def event_line(event: dict[str, Any]) -> bytes:
    """The exact bytes of an event's line in ``events.jsonl``, without the newline."""
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def append_event(project: Path, event: dict[str, Any] | bytes) -> bytes:
    """Append one JSON line to ``.aris/meta/events.jsonl`` (one write, under an exclusive lock).

    Returns the line's bytes (without the newline). A write that fails part way (a full disk) is
    cut back, so the file never holds half a line.
    """
    path = events_path(project)
    line = event if isinstance(event, bytes) else event_line(event)
    with full_disk(f"append the event line to {path}", "the line was not kept", "events"):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size
            try:
                if os.write(fd, line + b"\n") != len(line) + 1:
                    raise OSError(errno.ENOSPC, "short write", str(path))
                os.fsync(fd)
            except OSError:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                    os.fsync(fd)
                raise
        finally:
            os.close(fd)
    return line
