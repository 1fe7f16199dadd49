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
    command line passes the settings' lookup, read when a decision needs it). ``allowed_paths``:
    folders besides the project folder that a path argument may name (``--allow-path``; see
    :mod:`._paths`). ``secret_paths``: files and folders no path argument may name, besides the store's own
    (the command line adds the user's configuration folder, the review capability file and the
    nonce book). ``serve_private``: serve
    prompts and responses whose privacy join is not ``public-source`` (``--serve-private``; off:
    they are withheld, with a count and the reason). ``call_wait``: the most seconds a call waits
    for the call before it to release the store; then it is refused (exit 5), nothing done."""

    allow_writes: bool = False
    allow_run: bool = False
    project: str = "default"
    project_dir: Path | None = None
    default_reviewer: Callable[[], str | None] = _no_reviewer
    allowed_paths: tuple[Path, ...] = ()
    secret_paths: tuple[Path, ...] = ()
    serve_private: bool = False
    call_wait: float = 30.0
