"""The ``save_trace.sh`` helper: install it, and resolve the helper chain."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from reviewtrail.errors import ConflictError
from reviewtrail.tracing._layout import ARIS_DIR, existing_project_root, project_root

__all__ = ["HELPER_CHAIN", "helper_script", "install", "resolve"]

HELPER_CHAIN = (f"{ARIS_DIR}/tools/save_trace.sh", "tools/save_trace.sh")


def _reviewtrail_executable() -> str:
    candidate = Path(sys.executable).parent / "reviewtrail"
    if candidate.exists():
        return str(candidate)
    return shutil.which("reviewtrail") or "reviewtrail"


def helper_script(executable: str | None = None) -> str:
    exe = executable or _reviewtrail_executable()
    quoted = exe.replace("'", "'\\''")
    return (
        "#!/bin/sh\n"
        "# save_trace.sh installed by 'reviewtrail trace install-helper': every flag goes to\n"
        "# 'reviewtrail trace save'. Set REVIEWTRAIL_BIN to use another reviewtrail.\n"
        f"RT=\"${{REVIEWTRAIL_BIN:-'{quoted}'}}\"\n"
        'if ! command -v "$RT" >/dev/null 2>&1; then RT=reviewtrail; fi\n'
        'exec "$RT" trace save "$@"\n'
    )


def install(project_dir: str | Path | None, *, force: bool = False) -> Path:
    project = existing_project_root(project_dir)
    target = project / HELPER_CHAIN[0]
    target.parent.mkdir(parents=True, exist_ok=True)
    script = helper_script()
    if target.exists() and target.read_text(encoding="utf-8", errors="replace") != script and not force:
        raise ConflictError(f"{target} exists and differs; pass --force to replace it", field="helper")
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_text(script, encoding="utf-8")
    tmp.chmod(0o755)
    os.replace(tmp, target)
    return target


def resolve(project_dir: str | Path | None, env: dict[str, str] | None = None) -> Path | None:
    """The first helper that exists: project's .aris/tools, project's tools, then $ARIS_REPO/tools."""
    environ = os.environ if env is None else env
    project = project_root(project_dir)
    candidates = [project / rel for rel in HELPER_CHAIN]
    if environ.get("ARIS_REPO"):
        candidates.append(Path(environ["ARIS_REPO"]) / "tools" / "save_trace.sh")
    for c in candidates:
        if c.is_file():
            return c
    return None
