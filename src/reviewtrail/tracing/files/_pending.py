"""Markers of trace saves in progress: ``<project>/.aris/meta/pending/<token>.json``.

A save that will be recorded in a store writes a marker naming the call it is about to
write (skill, run id, call number, purpose, whether it creates the run) before it writes
any trace file, and removes it once the call's ledger record is appended. The saving
process holds an exclusive ``flock`` on its marker for as long as it runs, so a marker
whose lock can be taken belongs to a save that was interrupted (killed, crashed, lost
its store): ``trace_ledger_problems`` reports it and ``repair_trace_links`` completes it.
Traces saved with no store write no marker.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import msgspec

from reviewtrail._durable import fsync_dir
from reviewtrail.canonical import loads_document
from reviewtrail.tracing.files._layout import ARIS_DIR, RUN_ID, check_name

__all__ = ["Pending", "PendingMarker", "parse_marker", "pending_dir", "read_markers", "taken"]


SAVE_TOKEN = re.compile(r"[0-9a-f]{32}")


def pending_dir(project: Path) -> Path:
    return project / ARIS_DIR / "meta" / "pending"


class Pending(msgspec.Struct, frozen=True):
    """One marker: the call a save was about to write (or was writing)."""

    path: Path
    skill: str
    run_id: str
    call_number: int
    purpose: str
    run_created: bool
    live: bool  # its save is still running
    save: str | None = None  # the save's token (its trace.save-begun@1 record); None in older markers

    @property
    def stem(self) -> str:
        return f"{self.call_number:03d}-{self.purpose}"

    @property
    def key(self) -> tuple[str, str, int, str]:
        return (self.skill, self.run_id, self.call_number, self.purpose)


class PendingMarker:
    """The marker of one save; :meth:`claim` before writing, :meth:`clear` after the record."""

    def __init__(self, project: Path, skill: str, purpose: str) -> None:
        self.folder = pending_dir(project)
        self.skill = skill
        self.purpose = purpose
        self._fd: int | None = None
        self._path: Path | None = None
        self._claimed: tuple[str, int, bool] | None = None
        self.save = os.urandom(16).hex()  # one per save, in every marker it writes and in its records

    def claim(self, run_id: str, number: int, created: bool) -> None:
        """Name the call about to be written (a new marker file replaces the previous one)."""
        if self._claimed == (run_id, number, created):
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        doc = {
            "skill": self.skill,
            "run_id": run_id,
            "call_number": number,
            "purpose": self.purpose,
            "run_created": created,
            "pid": os.getpid(),
            "save": self.save,
        }
        token = os.urandom(8).hex()
        tmp = self.folder / f".{token}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # the lock stays with the file when it is renamed
            os.write(fd, json.dumps(doc).encode("utf-8"))
            os.fsync(fd)
            final = self.folder / f"{token}.json"
            os.rename(tmp, final)
            fsync_dir(self.folder)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        self._drop()
        self._fd, self._path, self._claimed = fd, final, (run_id, number, created)

    def clear(self) -> None:
        """The call is recorded (or nothing was written): remove the marker."""
        self._drop()

    def release(self) -> None:
        """The save failed after writing files: leave the marker for verify and repair, drop the lock."""
        if self._fd is not None:
            os.close(self._fd)
        self._fd = self._path = self._claimed = None

    def _drop(self) -> None:
        if self._path is not None:
            with contextlib.suppress(FileNotFoundError):
                self._path.unlink()
        if self._fd is not None:
            os.close(self._fd)
        self._fd = self._path = self._claimed = None


def parse_marker(path: Path, live: bool) -> Pending | None:
    try:
        doc = loads_document(path.read_bytes())
        number = doc["call_number"]
        if not isinstance(number, int) or isinstance(number, bool) or number < 0:
            return None
        run_id = doc["run_id"]
        if not isinstance(run_id, str) or RUN_ID.fullmatch(run_id) is None:
            return None
        save = doc.get("save")
        return Pending(
            path,
            check_name(doc["skill"], "skill"),
            run_id,
            number,
            check_name(doc["purpose"], "purpose"),
            doc.get("run_created") is True,
            live,
            save if isinstance(save, str) and SAVE_TOKEN.fullmatch(save) else None,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def read_markers(project: Path) -> tuple[list[Pending], list[str]]:
    """Every marker (live or not) and a problem line for each unreadable one."""
    folder = pending_dir(project)
    if not folder.is_dir():
        return [], []
    markers: list[Pending] = []
    problems: list[str] = []
    for path in sorted(folder.glob("*.json")):
        with taken(path) as mine:
            if mine is None:
                continue  # removed meanwhile: its save finished
            marker = parse_marker(path, live=not mine)
        if marker is None:
            problems.append(f".aris/meta/pending/{path.name}: unreadable marker of an interrupted trace save")
        else:
            markers.append(marker)
    return markers, problems


@contextlib.contextmanager
def taken(path: Path) -> Iterator[bool | None]:
    """Try to take a marker's lock: True (its save is gone; held until the block ends), False
    (its save is running) or None (the marker was removed meanwhile)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        yield None
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True if os.fstat(fd).st_nlink > 0 else None
    finally:
        os.close(fd)
