"""Files a command is given to read: only regular files (or standard input where a command says
``-``), each kind at most its documented size, checked while reading (README, "Input files").

A FIFO, a device, a socket or a folder is refused before a byte is read (opening does not block:
``O_NONBLOCK``), and so is a regular file whose size is past its kind's limit (a sparse 10 GB file
costs one ``fstat``). At most the limit plus one byte is ever read, so a file that grows while it
is read, or standard input without end, is refused too. Every refusal is invalid input naming the
argument (exit 2).
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import BinaryIO, Literal

from reviewtrail.errors import InvalidInputError

__all__ = ["INPUT_LIMITS", "InputKind", "read_input", "read_input_text", "read_regular", "require_regular_file"]

MiB = 1 << 20

InputKind = Literal[
    "campaign", "agents", "runs", "correction", "response", "key", "checkpoint", "code", "reply", "pdf",
    "prompt", "trace-response", "payload", "envelope",
]  # fmt: skip

#: The largest file of each kind a command reads (bytes).
INPUT_LIMITS: dict[str, int] = {
    "campaign": 64 * MiB,  # campaign file (JSONL or YAML)
    "agents": 4 * MiB,  # agents file of `campaign run`
    "runs": 256 * MiB,  # runs file of `campaign import-runs`
    "correction": 16 * MiB,  # `review decide --correct`
    "response": 16 * MiB,  # a response file of `campaign item`
    "key": 64 * 1024,  # an Ed25519 key (PEM): `--key`, `--public-key`
    "checkpoint": 64 * 1024,  # a checkpoint file (`verify --checkpoint|--since`)
    "code": 16 * MiB,  # the code file of `run`
    "reply": 64 * MiB,  # a reply or document of `review claims|check`, `--user-input`
    "pdf": 256 * MiB,  # `evidence extract-pdf`
    "prompt": 64 * MiB,  # `trace save --prompt-file`
    "trace-response": 256 * MiB,  # `trace save --response-file`
    "payload": 64 * MiB,  # `ledger append --payload @FILE`
    "envelope": 64 * MiB,  # a signed in-toto statement (`artifact verify-envelope`)
}

_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a folder",
}
_CHUNK = 1 << 20


def _not_regular(path: Path | str, mode: int) -> str:
    what = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
    return f"{path} is {what}, not a regular file"


def _too_large(path: Path | str, kind: str, most: int) -> str:
    return f"{path} is larger than {most:,} bytes, the most a {kind} file may hold"


def require_regular_file(path: Path | str, *, field: str) -> os.stat_result:
    """The status of ``path``, which must be a regular file (not a FIFO, device, socket or
    folder); refused naming ``field`` (exit 2) otherwise, or when it is missing or unreadable."""
    fd = _open(path, field)
    try:
        return os.fstat(fd)
    finally:
        os.close(fd)


def _open(path: Path | str, field: str) -> int:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError as exc:
        raise InvalidInputError(f"{path} does not exist", field=field) from exc
    except OSError as exc:
        raise InvalidInputError(f"cannot read {path}: {exc.strerror or exc}", field=field) from exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise InvalidInputError(_not_regular(path, mode), field=field)
    return fd


def read_regular(path: Path | str, most: int, *, field: str, too_large: str | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most ``most``; refused naming ``field`` (exit 2)
    when it is not a regular file, is missing or unreadable, or holds more (``too_large``: the
    message then)."""
    refusal = too_large or f"{path} is larger than {most:,} bytes"
    fd = _open(path, field)
    try:
        if os.fstat(fd).st_size > most:
            raise InvalidInputError(refusal, field=field)
        data = _read_limited(fd, most, path, field)
    finally:
        os.close(fd)
    if len(data) > most:
        raise InvalidInputError(refusal, field=field)
    return data


def read_input(path: Path | str, kind: InputKind, *, field: str, stdin: bool = False) -> bytes:
    """The bytes of the ``kind`` file ``path`` (``-`` with ``stdin``: standard input), at most
    :data:`INPUT_LIMITS` of its kind; refused naming ``field`` (exit 2) when it is not a regular
    file, is missing or unreadable, or holds more."""
    most = INPUT_LIMITS[kind]
    if stdin and str(path) == "-":
        data = _read_stream(sys.stdin.buffer, most, field)
        if len(data) > most:
            raise InvalidInputError(_too_large("standard input", kind, most), field=field)
        return data
    return read_regular(path, most, field=field, too_large=_too_large(path, kind, most))


def read_input_text(path: Path | str, kind: InputKind, *, field: str, stdin: bool = False) -> str:
    """:func:`read_input` as UTF-8 text (refused naming ``field`` when it is not)."""
    data = read_input(path, kind, field=field, stdin=stdin)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"cannot read {path} as UTF-8 text: {exc}", field=field) from exc


def _read_stream(stream: BinaryIO, most: int, field: str) -> bytes:
    """At most ``most + 1`` bytes of standard input (whatever stands in for it: a pipe, a file,
    a test runner's buffer)."""
    parts: list[bytes] = []
    left = most + 1
    try:
        while left > 0 and (chunk := stream.read(min(_CHUNK, left))):
            parts.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise InvalidInputError(f"cannot read standard input: {exc.strerror or exc}", field=field) from exc
    return b"".join(parts)


def _read_limited(fd: int, most: int, path: Path | str, field: str) -> bytes:
    """At most ``most + 1`` bytes of ``fd`` (blocking reads, whatever the open flags)."""
    os.set_blocking(fd, True)
    parts: list[bytes] = []
    left = most + 1
    try:
        while left > 0 and (chunk := os.read(fd, min(_CHUNK, left))):
            parts.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise InvalidInputError(f"cannot read {path}: {exc.strerror or exc}", field=field) from exc
    return b"".join(parts)
