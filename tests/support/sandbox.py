"""Running code in a real sandbox for tests, and finding what it left running on the host."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from reviewtrail.provenance.sandbox import ResourceLimits
from reviewtrail.provenance.sandbox._plan import SandboxRequest, SandboxResult
from reviewtrail.provenance.sandbox._sandbox import run_sandboxed


def run(ws: Path, code: str, lang: str = "python", limits: ResourceLimits | None = None, **kw: Any) -> SandboxResult:
    """``code`` run once in a fresh sandbox over the workspace ``ws`` (no variables injected, a
    60 s timeout unless ``kw`` says otherwise)."""
    kw.setdefault("env", {})
    kw.setdefault("timeout", 60.0)
    return run_sandboxed(
        SandboxRequest(code=code, lang=lang, workspace=ws, limits=limits or ResourceLimits(), **kw)  # type: ignore[arg-type]
    )


def processes_with(marker: str) -> list[str]:
    """The pids of the host's processes whose command line holds ``marker``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path("/proc", pid, "cmdline").read_bytes():
                found.append(pid)
        except OSError:
            continue
    return found
