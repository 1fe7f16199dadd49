"""Reading trace runs back from disk (for ls/show/diff/divergence/verify/export)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewtrail.canonical import loads_document
from reviewtrail.errors import InvalidInputError, NotFoundError
from reviewtrail.tracing.files._layout import (
    RUN_ID,
    CallFiles,
    call_files,
    check_name,
    parse_call_filename,
    traces_root,
)

__all__ = ["TraceCall", "TraceRun", "find_run", "iter_runs", "load_run"]


@dataclass
class TraceCall:
    files: CallFiles
    request: dict[str, Any] | None
    meta: dict[str, Any] | None

    @property
    def number(self) -> int:
        return self.files.number

    @property
    def purpose(self) -> str:
        return self.files.purpose

    def response_text(self) -> str | None:
        """The response exactly as saved (``None`` in meta mode, where there is no response file)."""
        try:
            return self.files.response.read_bytes().decode("utf-8", errors="replace")
        except FileNotFoundError:
            return None

    @property
    def complete(self) -> bool:
        """A call is complete once its meta file exists (it is written last)."""
        return self.meta is not None


@dataclass
class TraceRun:
    skill: str
    run_id: str
    path: Path
    meta: dict[str, Any] | None
    calls: list[TraceCall] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.skill}/{self.run_id}"

    def call(self, number: int) -> TraceCall:
        for c in self.calls:
            if c.number == number:
                return c
        raise NotFoundError(f"run {self.key} has no call {number:03d}", field="call")


def _load_json(path: Path) -> dict[str, Any] | None:
    try:
        value = loads_document(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def load_run(path: Path) -> TraceRun:
    """Load one run folder: its run.meta.json and every call, ordered by call number."""
    if not path.is_dir():
        raise NotFoundError(f"no trace run at {path}", field="run")
    grouped: dict[tuple[int, str], set[str]] = {}
    for entry in path.iterdir():
        parsed = parse_call_filename(entry.name)
        if parsed is not None:
            grouped.setdefault((parsed[0], parsed[1]), set()).add(parsed[2])
    calls = []
    for number, purpose in sorted(grouped):
        files = call_files(path, number, purpose)
        calls.append(TraceCall(files, _load_json(files.request), _load_json(files.meta)))
    return TraceRun(path.parent.name, path.name, path, _load_json(path / "run.meta.json"), calls)


def iter_runs(project: Path, skill: str | None = None) -> Iterator[TraceRun]:
    """Every run under ``<project>/.aris/traces``, by skill then run id."""
    root = traces_root(project)
    if not root.is_dir():
        return
    skills = [check_name(skill, "skill")] if skill else sorted(p.name for p in root.iterdir() if p.is_dir())
    for name in skills:
        base = root / name
        if not base.is_dir():
            continue
        for run in sorted(base.iterdir(), key=lambda p: _run_sort_key(p.name)):
            if run.is_dir() and RUN_ID.fullmatch(run.name):
                yield load_run(run)


def _run_sort_key(name: str) -> tuple[str, int]:
    m = RUN_ID.fullmatch(name)
    return (m["date"], int(m["n"])) if m else ("", 0)


def find_run(project: Path, ref: str) -> TraceRun:
    """Resolve ``<skill>/<run_id>``, a bare ``<run_id>`` (when unique) or a path to a run folder."""
    candidate = Path(ref)
    if candidate.is_dir() and RUN_ID.fullmatch(candidate.name):
        return load_run(candidate.absolute())
    if "/" in ref:
        skill, _, run_id = ref.partition("/")
        path = traces_root(project) / check_name(skill, "skill") / run_id
        if RUN_ID.fullmatch(run_id) is None:
            raise InvalidInputError(f"{run_id!r} is not a run id like 2026-04-15_run01", field="run")
        return load_run(path)
    if RUN_ID.fullmatch(ref) is None:
        raise InvalidInputError(f"{ref!r} is not '<skill>/<run id>' or a run id like 2026-04-15_run01", field="run")
    matches = [r for r in iter_runs(project) if r.run_id == ref]
    if not matches:
        raise NotFoundError(f"no trace run {ref} under {traces_root(project)}", field="run")
    if len(matches) > 1:
        raise InvalidInputError(
            f"run id {ref} exists for several skills ({', '.join(m.skill for m in matches)}); use <skill>/{ref}",
            field="run",
        )
    return matches[0]
