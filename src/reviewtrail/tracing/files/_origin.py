"""Which project folder a trace record came from: the folder's own id, kept beside its traces.

A store may be shared by several project folders (on one host or many), while the trace files of
``.aris/traces`` stay where they were saved (seed 000: project-local, never committed). So each
``trace.review-call@1`` record names the folder that saved it (``origin``): 32 hex digits kept in
``<project>/.aris/meta/project-id``, made once, at the first recorded save. ``verify`` compares a
folder's files only with the records of that folder (and with records written before records named
their folder), so the calls another folder saved are not reported missing here.

An id, not a path or a host name: a folder keeps its id when it is moved, when its host is renamed
or when it runs in a new container, and a copy of a folder (traces included) is the same origin.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from reviewtrail._durable import fsync_dir
from reviewtrail.errors import IntegrityError
from reviewtrail.tracing.files._layout import ARIS_DIR

__all__ = ["ORIGIN_PATTERN", "ensure_project_id", "project_id_path", "read_project_id"]

ORIGIN_PATTERN = r"^[0-9a-f]{32}$"
_ID = re.compile(ORIGIN_PATTERN)


def project_id_path(project: Path) -> Path:
    return project / ARIS_DIR / "meta" / "project-id"


def read_project_id(project: Path) -> str | None:
    """The folder's id, or None when it has none yet (no recorded save since records name their folder).

    A file that is not exactly one id (a symlink, another kind of file, other content) is an
    :class:`IntegrityError` naming it: records cannot be matched to the folder while it is wrong."""
    path = project_id_path(project)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise IntegrityError(f"{path}: cannot be read as the project folder's id ({exc})", field="origin") from exc
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(64)
    text = data.decode("ascii", errors="replace").strip()
    if not _ID.fullmatch(text):
        raise IntegrityError(f"{path}: does not hold a project folder id (32 hex digits)", field="origin")
    return text


def ensure_project_id(project: Path) -> str:
    """The folder's id, made now when it has none. Concurrent saves agree: the file is published
    with a hard link, which fails when another save published it first."""
    found = read_project_id(project)
    if found is not None:
        return found
    path = project_id_path(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = path.with_name(f".project-id.{os.urandom(8).hex()}.tmp")
    fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(f"{os.urandom(16).hex()}\n".encode("ascii"))
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(staged, path)
    finally:
        staged.unlink(missing_ok=True)
    fsync_dir(path.parent)
    made = read_project_id(project)
    if made is None:  # published above, by this save or a concurrent one: removed since
        raise IntegrityError(f"{path}: removed while it was being made", field="origin")
    return made
