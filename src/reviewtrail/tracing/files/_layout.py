"""The ``.aris`` trace layout: names, paths and the project root. Pure apart from ``project_root``.

```
<project>/.aris/traces/<skill>/<YYYY-MM-DD>_run<NN>/
    run.meta.json
    NNN-<purpose>.request.json
    NNN-<purpose>.response.md
    NNN-<purpose>.meta.json
<project>/.aris/meta/events.jsonl
```
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from reviewtrail.errors import InvalidInputError

__all__ = [
    "ARIS_DIR",
    "RUN_ID",
    "TRACES_DIR",
    "CallFiles",
    "call_files",
    "check_name",
    "events_path",
    "existing_project_root",
    "parse_call_filename",
    "project_root",
    "skill_dir",
    "traces_root",
]

ARIS_DIR = ".aris"
TRACES_DIR = "traces"  # under ARIS_DIR
_NAME = re.compile(r"[A-Za-z0-9_-]{1,128}")
RUN_ID = re.compile(r"(?P<date>\d{4}-\d{2}-\d{2})_run(?P<n>\d{2,})")
_CALL_FILE = re.compile(
    r"(?P<n>\d{3,})-(?P<purpose>[A-Za-z0-9_-]{1,128})\.(?P<kind>request\.json|response\.md|meta\.json)"
)


def check_name(value: object, field: str) -> str:
    """A skill or purpose: letters, digits, ``-`` and ``_`` only (no separators, no ``..``)."""
    if not isinstance(value, str) or _NAME.fullmatch(value) is None:
        raise InvalidInputError(
            f"{value!r} is not a simple name (letters, digits, '-' and '_'; 1-128 characters)", field=field
        )
    return value


def check_run_id(value: object, field: str = "run_id") -> str:
    if not isinstance(value, str) or RUN_ID.fullmatch(value) is None:
        raise InvalidInputError(f"{value!r} is not a run id like 2026-04-15_run01", field=field)
    return value


def project_root(explicit: str | Path | None = None, cwd: Path | None = None) -> Path:
    """``explicit`` if given, else the git top level of ``cwd``, else ``cwd``."""
    if explicit is not None:
        return Path(explicit).absolute()
    here = (cwd or Path.cwd()).absolute()
    import subprocess  # only here: a save given its project folder starts without it

    try:
        out = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], cwd=here, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return here
    top = out.stdout.strip()
    return Path(top) if out.returncode == 0 and top else here


def existing_project_root(explicit: str | Path | None = None) -> Path:
    """:func:`project_root`; an explicit one must be an existing folder (nothing is created for it)."""
    from reviewtrail.errors import InvalidInputError

    project = project_root(explicit)
    if explicit is not None:
        if not project.exists():
            raise InvalidInputError(f"{project} does not exist", field="project_dir")
        if not project.is_dir():
            raise InvalidInputError(f"{project} is not a folder", field="project_dir")
    return project


def traces_root(project: Path) -> Path:
    return project / ARIS_DIR / TRACES_DIR


def skill_dir(project: Path, skill: str) -> Path:
    return traces_root(project) / check_name(skill, "skill")


def events_path(project: Path) -> Path:
    return project / ARIS_DIR / "meta" / "events.jsonl"


class CallFiles(msgspec.Struct, frozen=True):
    number: int
    purpose: str
    request: Path
    response: Path
    meta: Path

    @property
    def stem(self) -> str:
        return self.request.name[: -len(".request.json")]


def call_files(run: Path, number: int, purpose: str) -> CallFiles:
    stem = f"{number:03d}-{check_name(purpose, 'purpose')}"
    return CallFiles(
        number, purpose, run / f"{stem}.request.json", run / f"{stem}.response.md", run / f"{stem}.meta.json"
    )


def parse_call_filename(name: str) -> tuple[int, str, str] | None:
    """``(number, purpose, kind)`` for a call file name, else ``None``."""
    m = _CALL_FILE.fullmatch(name)
    if m is None:
        return None
    return int(m["n"]), m["purpose"], m["kind"]
