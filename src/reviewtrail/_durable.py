"""Durability primitives shared by the CAS and the trace writer."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["fsync_dir", "sync_files"]


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """fsync a directory, so names linked into it survive a crash."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _load_syncfs() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        fn = ctypes.CDLL(name, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


_SYNCFS = _load_syncfs()


def sync_files(directory: str | Path, paths: Sequence[str | os.PathLike[str]]) -> None:
    """Make the data of every file in ``paths`` durable, with one barrier when possible.

    With more than one file, ``syncfs(2)`` on ``directory``'s filesystem flushes them all
    at once instead of one fsync each; without it (non-Linux), each file is fsynced.
    """
    if len(paths) > 1 and _SYNCFS is not None:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            if _SYNCFS(fd) == 0:
                return
        finally:
            os.close(fd)
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
