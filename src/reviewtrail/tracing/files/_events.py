"""Reading ``.aris/meta/events.jsonl`` line by line, as bytes: a bad line is reported, never a crash."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewtrail.canonical import loads_document
from reviewtrail.tracing.files._layout import events_path

__all__ = ["EVENTS_LABEL", "EventLine", "parse_line", "read_event_lines"]

EVENTS_LABEL = ".aris/meta/events.jsonl"


@dataclass(frozen=True)
class EventLine:
    number: int  # 1-based line number in the file
    raw: bytes  # the line's exact bytes, without the newline
    doc: dict[str, Any] | None  # the parsed object, None when the line is not one
    problem: str | None  # why it is not (not UTF-8, not JSON, not an object)


def parse_line(number: int, raw: bytes) -> EventLine:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return EventLine(number, raw, None, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})")
    try:
        doc = loads_document(text)
    except ValueError as exc:
        return EventLine(number, raw, None, f"not valid JSON ({exc})")
    if not isinstance(doc, dict):
        return EventLine(number, raw, None, f"not a JSON object ({type(doc).__name__})")
    return EventLine(number, raw, doc, None)


def read_event_lines(project: Path) -> list[EventLine]:
    """Every non-blank line of the project's events file (none when it does not exist)."""
    path = events_path(project)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        return []  # not the file a save writes: the layout check reports it
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    pieces = data.split(b"\n")
    if pieces and pieces[-1] == b"":
        pieces.pop()
    return [parse_line(i, raw) for i, raw in enumerate(pieces, start=1) if raw.strip()]
