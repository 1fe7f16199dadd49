"""What a ``reviewtrail mcp`` server may do, decided once when it starts (at the command line)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ServerOptions"]


def _no_reviewer() -> str | None:
    return None


@dataclass(frozen=True)
class ServerOptions:
    """``allow_writes``: the write tools may append records (off: they are refused and the store is
    opened read-only). ``allow_run``: ``run_code`` may run code in the sandbox (it needs
    ``allow_writes`` too). ``project``: the project of sessions and artifacts when a call names
    none (``REVIEWTRAIL_PROJECT``, default ``default``). ``project_dir``: the folder whose
    ``.aris/traces`` the traces resources list (None: the git top level of the working folder).
    ``default_reviewer``: the reviewer id a decision records when the call gives none (the
    command line passes the settings' lookup, read when a decision needs it)."""

    allow_writes: bool = False
    allow_run: bool = False
    project: str = "default"
    project_dir: Path | None = None
    default_reviewer: Callable[[], str | None] = _no_reviewer
