"""A sandboxed run as the command line asks for it: options checked and named, then run.

:func:`run_request` turns the ``reviewtrail run`` options into a :class:`RunRequest` (the code
file is read; nothing else is touched) and :func:`start_run` runs it in its session, or in a new
one of the project, through :func:`~reviewtrail.provenance.runs.run_code`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reviewtrail.errors import InvalidInputError
from reviewtrail.inputs import read_input_text
from reviewtrail.provenance.records._storage_errors import refuse_read_only
from reviewtrail.provenance.runs._runs import RunOutcome, run_code
from reviewtrail.provenance.runs._sessions import DEFAULT_PROJECT, create_session
from reviewtrail.provenance.sandbox._limits import DEFAULT_LIMITS, ResourceLimits
from reviewtrail.store import Store

__all__ = ["RunRequest", "parse_pairs", "run_request", "start_run"]


@dataclass(frozen=True)
class RunRequest:
    """One run: the code and how to run it. ``session_id`` None: a new session of ``project_id``."""

    code: str
    lang: str = "python"
    session_id: str | None = None
    project_id: str = DEFAULT_PROJECT
    env: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 60.0
    network: str = "none"
    allowlist: tuple[str, ...] = ()
    resolve: Mapping[str, str] = field(default_factory=dict)
    limits: ResourceLimits = DEFAULT_LIMITS
    cwd: str = "/workspace"


def parse_pairs(items: Sequence[str], *, field: str, shape: str, need_key: bool, need_value: bool) -> dict[str, str]:
    """``K=V`` items as a mapping; an item without ``=`` (or with an empty key or value, when
    those are required) is refused naming ``field`` and the expected ``shape``."""
    pairs: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or (need_key and not key) or (need_value and not value):
            raise InvalidInputError(f"{item!r} is not {shape}", field=field)
        pairs[key] = value
    return pairs


def _read_code(file: Path) -> str:
    return read_input_text(file, "code", field="file")


def run_request(
    *,
    file: Path | None = None,
    code: str | None = None,
    session: str | None = None,
    project: str = DEFAULT_PROJECT,
    lang: str = "python",
    env: Sequence[str] = (),
    timeout: float = 60.0,
    network: str = "none",
    allow: Sequence[str] = (),
    allow_resolve: Sequence[str] = (),
    max_memory: str | None = None,
    max_procs: int | None = None,
    max_file_size: str | None = None,
    max_output: str | None = None,
    cwd: str = "/workspace",
    weak_limits: bool = False,
) -> RunRequest:
    """The request of the ``reviewtrail run`` options, each problem named by its option:
    ``--allow``/``--allow-resolve`` need ``--network allowlist``; ``--allow-resolve`` is
    ``HOST=IP``; limits are sizes; exactly one of ``file`` and ``code``; ``--env`` is ``K=V``.
    The sandbox's own input rules (language, timeout, hosts) are checked by ``run_code``."""
    if (allow or allow_resolve) and network != "allowlist":
        raise InvalidInputError("--allow and --allow-resolve need --network allowlist", field="allow")
    resolve = parse_pairs(allow_resolve, field="allow_resolve", shape="HOST=IP", need_key=True, need_value=True)
    limits = ResourceLimits.parse(
        max_memory=max_memory,
        max_procs=max_procs,
        max_file_size=max_file_size,
        max_output=max_output,
        weak=weak_limits,
    )
    if (file is None) == (code is None):
        raise InvalidInputError("give exactly one of FILE or -c CODE", field="code")
    text = _read_code(file) if file is not None else code
    assert text is not None
    injected = parse_pairs(env, field="env", shape="K=V", need_key=False, need_value=False)
    return RunRequest(
        code=text,
        lang=lang,
        session_id=session,
        project_id=project,
        env=injected,
        timeout=timeout,
        network=network,
        allowlist=tuple(allow),
        resolve=resolve,
        limits=limits,
        cwd=cwd,
    )


def start_run(
    store: Store,
    request: RunRequest,
    *,
    cancel: threading.Event | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> RunOutcome:
    """Run the request in its session (a new session of its project when it names none) and
    record it; the outcome's run names the session. A read-only store is refused before a session
    is created (:class:`~reviewtrail.errors.ReadOnlyStoreError`)."""
    refuse_read_only(store, "a run")
    session_id = request.session_id or create_session(store, request.project_id).session_id
    return run_code(
        store,
        session_id=session_id,
        code=request.code,
        lang=request.lang,
        env=request.env,
        timeout=request.timeout,
        network=request.network,  # type: ignore[arg-type]  # checked by run_code
        allowlist=request.allowlist,
        resolve=request.resolve,
        limits=request.limits,
        cwd=request.cwd,
        cancel=cancel,
        on_wait=on_wait,
    )
