"""Reading a review session's input: single keys from a terminal (cbreak mode, restored on exit,
Ctrl-C included), or one key per line when standard input is not a terminal, so a session can be
scripted (``printf 'a\\n2\\nq\\n' | reviewtrail review session camp``)."""

from __future__ import annotations

import contextlib
import os
import select
import sys
from collections.abc import Iterator
from typing import IO, Protocol

__all__ = ["KeyInput", "LineKeys", "TerminalKeys", "key_input"]

ESC = "\x1b"
END_OF_TEXT = "."  # a line holding only this ends a multi-line text
_NAMED = {"esc": ESC, "enter": "\n"}
_QUIT_BYTES = {"\x03": "q", "\x04": "q"}  # Ctrl-C, Ctrl-D read as keys


class KeyInput(Protocol):
    def key(self) -> str | None:
        """One key (None at the end of input)."""

    def line(self) -> str | None:
        """One line, without its line ending (None at the end of input)."""

    def text(self) -> str | None:
        """Lines up to one holding a single ".", joined (None at the end of input before it)."""


def _text(read_line: KeyInput) -> str | None:
    lines: list[str] = []
    while True:
        line = read_line.line()
        if line is None:
            return None
        if line == END_OF_TEXT:
            return "\n".join(lines)
        lines.append(line)


class LineKeys:
    """One key per line: a one-character line is that key, an empty line is Enter, ``esc`` and
    ``enter`` name those keys; anything longer is passed on as is (and refused as a key)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def line(self) -> str | None:
        raw = self._stream.readline()
        return None if raw == "" else raw.rstrip("\r\n")

    def key(self) -> str | None:
        line = self.line()
        if line is None:
            return None
        if line == "":
            return "\n"
        return _NAMED.get(line.lower(), line) if len(line) > 1 else line

    def text(self) -> str | None:
        return _text(self)


class TerminalKeys:
    """Single keys from the terminal on ``fd`` in cbreak mode (no Enter needed, no echo); lines
    and texts are read with the terminal's own line editing and echo.

    ``interrupts``: the read end of a pipe that a Ctrl-C (SIGINT) handler writes to. Every read
    waits on the terminal and on that pipe, and a Ctrl-C raises ``KeyboardInterrupt`` here, at a
    read, never at whatever line the signal happened to land on (where a cleanup that swallows
    exceptions could lose it)."""

    def __init__(self, fd: int, interrupts: int | None = None) -> None:
        self._fd = fd
        self._interrupts = interrupts
        self._pending = b""

    def _read(self) -> bytes:
        if self._interrupts is not None:
            ready, _, _ = select.select([self._fd, self._interrupts], [], [])
            if self._interrupts in ready:
                raise KeyboardInterrupt
        return os.read(self._fd, 1024)

    def key(self) -> str | None:
        if not self._pending:
            self._pending = self._read()
            if not self._pending:
                return None
        first = self._pending[:1]
        if first == ESC.encode():
            # Esc alone, or the start of an escape sequence (an arrow key): take it whole.
            rest = self._pending[1:]
            while not rest and select.select([self._fd], [], [], 0.02)[0]:
                rest = self._read()
            self._pending = b""
            return ESC if not rest else "esc-sequence"
        size = _utf8_size(first[0])
        while len(self._pending) < size:
            more = self._read()
            if not more:
                break
            self._pending += more
        chunk, self._pending = self._pending[:size], self._pending[size:]
        key = chunk.decode("utf-8", errors="replace")
        return _QUIT_BYTES.get(key, key)

    def line(self) -> str | None:
        with _cooked(self._fd):
            buffered, self._pending = self._pending, b""
            while b"\n" not in buffered:
                more = self._read()
                if not more:
                    return buffered.decode("utf-8", errors="replace") or None
                buffered += more
            line, _, rest = buffered.partition(b"\n")
            self._pending = rest
            return line.decode("utf-8", errors="replace").rstrip("\r")

    def text(self) -> str | None:
        return _text(self)


def _utf8_size(lead: int) -> int:
    if lead >= 0xF0:
        return 4
    if lead >= 0xE0:
        return 3
    if lead >= 0xC0:
        return 2
    return 1


@contextlib.contextmanager
def _cooked(fd: int) -> Iterator[None]:
    import termios

    saved = termios.tcgetattr(fd)
    cooked = termios.tcgetattr(fd)
    cooked[3] |= termios.ICANON | termios.ECHO
    termios.tcsetattr(fd, termios.TCSADRAIN, cooked)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


@contextlib.contextmanager
def key_input() -> Iterator[KeyInput]:
    """Keys from standard input: single keys when it is a terminal (its settings restored on
    the way out, whatever ends the session), else one key per line."""
    stdin = sys.stdin
    if not stdin.isatty():
        yield LineKeys(stdin)
        return
    import termios
    import tty

    fd = stdin.fileno()
    saved = termios.tcgetattr(fd)
    with _interrupt_pipe() as interrupts:
        try:
            tty.setcbreak(fd, termios.TCSANOW)
            yield TerminalKeys(fd, interrupts)
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)


@contextlib.contextmanager
def _interrupt_pipe() -> Iterator[int]:
    """A pipe that Ctrl-C (SIGINT) writes to while the session runs, its read end yielded; the
    earlier handler and wakeup descriptor are restored on the way out. The interpreter's own
    signal handler writes to the pipe (``signal.set_wakeup_fd``), whichever thread the signal is
    delivered to, so a read waiting in the main thread always wakes; the Python-level handler
    does nothing. The next read of a key or a line raises ``KeyboardInterrupt`` (a decision being
    recorded is finished first)."""
    import signal

    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)

    def note(signum: int, frame: object) -> None:
        """Noted through the wakeup descriptor; acted on at the next read."""

    earlier = signal.signal(signal.SIGINT, note)
    earlier_fd = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    try:
        yield read_end
    finally:
        signal.set_wakeup_fd(earlier_fd)
        signal.signal(signal.SIGINT, earlier)
        os.close(read_end)
        os.close(write_end)
