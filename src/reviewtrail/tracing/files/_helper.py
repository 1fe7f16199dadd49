"""The ``save_trace.sh`` helper: install it, and resolve the helper chain.

The resolver follows this order (README, "Using it"; docs/architecture.md, "Reviewer-call
tracing"):

1. the project root (explicit, else the git top level, else the current folder);
2. the ARIS checkout: ``$ARIS_REPO`` when set, else the ``repo_root`` line of
   ``.aris/installed-skills.txt`` (tab-separated), else the first line of the global
   pointer file ``~/.aris/repo``;
3. the first helper that is a file: ``.aris/tools/save_trace.sh``, ``tools/save_trace.sh``,
   then ``<ARIS checkout>/tools/save_trace.sh``; none is an empty answer.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from reviewtrail._durable import replace_file
from reviewtrail.errors import ConflictError
from reviewtrail.tracing.files._gitignore import ignore_traces
from reviewtrail.tracing.files._layout import ARIS_DIR, existing_project_root, project_root

__all__ = [
    "HELPER_CHAIN",
    "InstalledHelper",
    "aris_repo",
    "helper_script",
    "install_helper",
    "resolve_helper",
    "shell_quote",
]

HELPER_CHAIN = (f"{ARIS_DIR}/tools/save_trace.sh", "tools/save_trace.sh")
MANIFEST = f"{ARIS_DIR}/installed-skills.txt"


def _reviewtrail_executable() -> str:
    candidate = Path(sys.executable).parent / "reviewtrail"
    if candidate.exists():
        return str(candidate)
    return shutil.which("reviewtrail") or "reviewtrail"


def shell_quote(text: str) -> str:
    """``text`` as one POSIX shell word (single quotes; an embedded quote closes and reopens them)."""
    return "'" + text.replace("'", "'\\''") + "'"


def helper_script(executable: str | None = None) -> str:
    """A POSIX sh script (runs under bash and dash) that hands every flag to ``reviewtrail trace save``.

    The absolute path of this reviewtrail is kept in a variable of its own, so it is used as is
    when ``reviewtrail`` is not on PATH; ``REVIEWTRAIL_BIN`` overrides it.
    """
    exe = executable or _reviewtrail_executable()
    return (
        "#!/bin/sh\n"
        "# save_trace.sh installed by 'reviewtrail trace install-helper': every flag goes to\n"
        "# 'reviewtrail trace save'. Set REVIEWTRAIL_BIN to use another reviewtrail.\n"
        f"RT_DEFAULT={shell_quote(exe)}\n"
        'RT="${REVIEWTRAIL_BIN:-$RT_DEFAULT}"\n'
        'if ! command -v "$RT" >/dev/null 2>&1; then RT=reviewtrail; fi\n'
        'exec "$RT" trace save "$@"\n'
    )


@dataclass(frozen=True)
class InstalledHelper:
    """The helper written, and whether the project's ``.gitignore`` gained ``.aris/traces/``."""

    helper: Path
    gitignore: Path
    gitignore_changed: bool


def install_helper(project_dir: str | Path | None, *, force: bool = False) -> InstalledHelper:
    """Write ``.aris/tools/save_trace.sh`` (a different one is replaced only with ``force``), and
    make the project's ``.gitignore`` ignore ``.aris/traces/`` (trace files are project-local
    and not committed), leaving its other lines as they are."""
    project = existing_project_root(project_dir)
    target = project / HELPER_CHAIN[0]
    target.parent.mkdir(parents=True, exist_ok=True)
    script = helper_script()
    if target.exists() and target.read_text(encoding="utf-8", errors="replace") != script and not force:
        raise ConflictError(f"{target} exists and differs; pass --force to replace it", field="helper")
    replace_file(target, script.encode("utf-8"), mode=0o755)
    changed = ignore_traces(project)
    return InstalledHelper(target, project / ".gitignore", changed)


def _read_text(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8", errors="replace") if path.is_file() else None  # newlines kept as is
    except OSError:
        return None


def manifest_repo_root(text: str) -> str:
    """The second field of the first ``repo_root`` line (as ``awk -F'\\t' '$1=="repo_root"{print $2}'``)."""
    for line in text.split("\n"):
        fields = line.split("\t")
        if fields[0] == "repo_root":
            return fields[1] if len(fields) > 1 else ""
    return ""


def aris_repo(project: Path, env: Mapping[str, str]) -> str:
    """The ARIS checkout by the reference order: ``$ARIS_REPO``, the install manifest, ``~/.aris/repo``."""
    repo = env.get("ARIS_REPO", "")
    if not repo:
        manifest = _read_text(project / MANIFEST)
        if manifest is not None:
            repo = manifest_repo_root(manifest)
    if not repo and env.get("HOME"):
        pointer = _read_text(Path(env["HOME"]) / ".aris" / "repo")
        if pointer is not None:
            repo = pointer.rstrip("\n")  # as "$(cat ~/.aris/repo)"
    return repo


def resolve_helper(project_dir: str | Path | None, env: Mapping[str, str] | None = None) -> Path | None:
    """The first helper that is a file, by the chain in this module's docstring; ``None`` when none is.

    ``env``: ``ARIS_REPO`` and ``HOME`` from the caller (see :meth:`reviewtrail.config.TraceSettings.environ`);
    without them only the project's own helpers and its install manifest are looked at."""
    environ = {} if env is None else env
    project = project_root(project_dir)
    candidates = [project / rel for rel in HELPER_CHAIN]
    repo = aris_repo(project, environ)
    if repo:
        candidates.append(project / repo / "tools" / "save_trace.sh")  # a relative one is read from the project
    for c in candidates:
        if c.is_file():
            return c
    return None
