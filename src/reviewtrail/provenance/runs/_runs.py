"""Execution runs: run code in a session's sandbox, record exactly what happened.

Each run appends one ``ExecutionRun`` and one ``ArtifactDerivation`` per created or
modified workspace file, in one atomic batch. Ordinary runs never create artifact
versions: only uploads, downloads and declarations do (see ``artifacts._catalog``).

Runs in one session are serialized by the session's run lock, and each run leaves a
pending-run marker until its record is appended (see ``_pending``). A full disk while
recording is :class:`BackendUnavailableError` (exit 5); the marker then stays, and
``reviewtrail verify --repair`` records the run once there is room.
"""

from __future__ import annotations

import functools
import os
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reviewtrail.canonical import canonical_json, canonical_sha256
from reviewtrail.errors import BackendUnavailableError, InvalidInputError, NotFoundError
from reviewtrail.ledger import Envelope, Recorded, format_time, new_id, new_record
from reviewtrail.media import media_type_for
from reviewtrail.provenance.records._records import ExecutionRun
from reviewtrail.provenance.records._run_record import (
    RunFacts,
    StoredFile,
    decide_run,
)
from reviewtrail.provenance.records._storage_errors import disk_full_errors, refuse_read_only
from reviewtrail.provenance.runs._pending import begin_run, remove_marker, session_lock
from reviewtrail.provenance.runs._sessions import require_live_session
from reviewtrail.provenance.runs._snapshot import FileState, Snapshot, changes, open_beneath, snapshot
from reviewtrail.provenance.sandbox._bwrap import require_bwrap
from reviewtrail.provenance.sandbox._cgroup import require_enforceable
from reviewtrail.provenance.sandbox._input import Network, check_sandbox_input
from reviewtrail.provenance.sandbox._limits import DEFAULT_LIMITS, ResourceLimits
from reviewtrail.provenance.sandbox._plan import SandboxRequest, SandboxResult
from reviewtrail.provenance.sandbox._sandbox import run_sandboxed
from reviewtrail.store import Store

__all__ = [
    "RunOutcome",
    "environment_revision_id",
    "record_run",
    "run_code",
]


@dataclass(frozen=True)
class RunOutcome(Recorded[ExecutionRun]):
    """The recorded run, the derivations recorded with it and what the sandbox returned."""

    derivations: list[Envelope]
    result: SandboxResult | None

    @property
    def run(self) -> ExecutionRun:
        return self.record

    def to_json(self) -> dict[str, Any]:
        doc = super().to_json()
        doc["derivationIds"] = [d.id for d in self.derivations]
        return doc


def _version(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unavailable"
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr).strip() else "unknown"


@functools.cache
def environment_revision_id() -> str:
    """Identifies the sandbox's software: bubblewrap, the system python and bash."""
    facts = {
        "sandbox": "bubblewrap",
        "bwrap": _version(["bwrap", "--version"]),
        "python": _version(["/usr/bin/python3", "--version"]),
        "bash": _version(["/bin/bash", "--version"]),
    }
    return "env-" + canonical_sha256(facts)[:32]


def run_code(
    store: Store,
    *,
    session_id: str,
    code: str,
    lang: str,
    env: Mapping[str, str] | None = None,
    timeout: float = 60.0,
    network: Network = "none",
    allowlist: Sequence[str] = (),
    resolve: Mapping[str, str] | None = None,
    limits: ResourceLimits = DEFAULT_LIMITS,
    cwd: str = "/workspace",
    tool_name: str = "reviewtrail.run",
    actor: str = "user",
    cancel: threading.Event | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> RunOutcome:
    """Run ``code`` once in the session's sandbox and record it. Bad input raises before any run;
    a missing bubblewrap raises (exit 5) before any run too, and nothing is recorded.
    ``on_wait`` is told when another run in the session must finish first."""
    injected = dict(env or {})
    check_sandbox_input(
        lang=lang, env=injected, timeout=timeout, network=network, allowlist=tuple(allowlist), resolve=resolve
    )
    refuse_read_only(store, "a run")
    session = require_live_session(store, session_id)
    request = SandboxRequest(
        code=code,
        lang=lang,  # type: ignore[arg-type]
        workspace=session.workspace,
        env=injected,
        timeout=timeout,
        network=network,
        cwd=cwd,
        allowlist=tuple(allowlist),
        resolve=dict(resolve or {}),
        limits=limits,
        max_output=limits.max_output,
    )
    require_bwrap()
    require_enforceable(limits)  # refused before anything is recorded
    run_id = new_id()
    with session_lock(store, session_id, on_wait):
        require_live_session(store, session_id)  # a `session rm` may have won the lock meanwhile
        with disk_full_errors(f"preparing run {run_id}", field="storage", after="; the code did not run"):
            before = snapshot(session.workspace, max_file_size=limits.max_file_size)
            marker, code_ref = begin_run(
                store, run_id, session_id, before, code=code, lang=lang, timeout=timeout, network=network,
                allowlist=allowlist, resolve=resolve, tool_name=tool_name, actor=actor,
                max_file_size=limits.max_file_size,
            )  # fmt: skip
        try:
            with disk_full_errors(f"starting run {run_id}", field="storage", after="; the code did not run"):
                result: SandboxResult | None = run_sandboxed(request, cancel=cancel)
            failure = None
        except BackendUnavailableError as exc:
            result, failure = None, _message(exc)
        except (InvalidInputError, NotFoundError):  # refused before the sandbox started: nothing ran
            remove_marker(marker)
            raise
        after = (f"; the run's files stay in the workspace and its marker {marker} stays: free some space, "
                 "then 'reviewtrail verify --repair' records it")  # fmt: skip
        with disk_full_errors(f"recording run {run_id}", field="storage", after=after):
            outcome = record_run(
                store, session_id=session_id, workspace=session.workspace, code=code, lang=lang, result=result,
                before=before, timeout=timeout, network=network, allowlist=allowlist, resolve=resolve,
                limits=limits, tool_name=tool_name, actor=actor, failure=failure, run_id=run_id,
                code_ref=code_ref,
            )  # fmt: skip
            remove_marker(marker)
    if failure is not None:
        raise BackendUnavailableError(f"{failure} (recorded as failed run {outcome.envelope.id})", field="sandbox")
    return outcome


def _message(exc: BackendUnavailableError) -> str:
    """The error's text without its ``field: `` prefix."""
    text = str(exc)
    return text[len(exc.field) + 2 :] if exc.field and text.startswith(f"{exc.field}: ") else text


def record_run(
    store: Store,
    *,
    session_id: str,
    workspace: Path,
    code: str | None,
    lang: str,
    result: SandboxResult | None,
    before: dict[str, FileState],
    timeout: float,
    network: Network,
    allowlist: Sequence[str],
    tool_name: str,
    actor: str,
    failure: str | None = None,
    kernel_id: str | None = None,
    run_id: str | None = None,
    resolve: Mapping[str, str] | None = None,
    limits: ResourceLimits = DEFAULT_LIMITS,
    code_ref: dict[str, Any] | None = None,
    started_at: str | None = None,
) -> RunOutcome:
    """Store the run's bytes in the CAS and append the run and its derivations atomically.
    ``code_ref`` (the code already in the CAS) replaces ``code``; ``started_at`` is for runs
    recorded without a result (an interrupted run's marker). Gathers the facts (the workspace's
    changes, the bytes stored in the CAS), decides the records (:func:`decide_run`), appends them."""
    run_id = run_id or new_id()
    cas = store.cas
    if code_ref is None:
        code_ref = cas.put((code or "").encode("utf-8"), pool="agent-state", media_type="text/plain").to_json()
    after = snapshot(workspace, before)  # with the bound ``before`` was taken with
    created, modified = changes(before, after)
    outputs = _store_outputs(store, result)
    stored, vanished = _store_files(store, workspace, before, after, [*created, *modified])
    if result is not None:
        started, ended = format_time(result.started_at), format_time(result.ended_at)
    else:
        ended = format_time(datetime.now(UTC))
        started = started_at or ended
    facts = RunFacts(
        run_id=run_id, session_id=session_id, tool_name=tool_name, lang=lang, code_ref=code_ref, result=result,
        failure=failure, timeout=timeout, network=network, allowlist=allowlist, resolve=resolve, limits=limits,
        kernel_id=kernel_id, started_at=started, ended_at=ended, environment_revision_id=environment_revision_id(),
        stdout=outputs[0], stderr=outputs[1], env_snapshot=outputs[2], created=created, modified=modified,
        sizes={p: after[p].size for p in [*created, *modified]},
        oversize=[p for p in [*created, *modified] if after[p].oversize],
        size_bound=getattr(after, "max_file_size", limits.max_file_size),  # a bare dict in tests
        vanished=vanished,
    )  # fmt: skip
    run, derivations = decide_run(facts, stored)
    subject = f"session:{session_id}"
    records = [new_record(run, actor=actor, privacy="private", subject=subject, id=run_id)]
    records += [new_record(d, actor=actor, privacy="private", subject=subject) for d in derivations]
    envs = store.append(records)
    return RunOutcome(run, envs[0], envs[1:], result)


def _store_outputs(store: Store, result: SandboxResult | None) -> tuple[dict[str, Any] | None, ...]:
    """Refs of the run's stdout, stderr and environment snapshot, put in the CAS (None without them)."""
    if result is None:
        return None, None, None
    cas = store.cas
    stdout = cas.put(result.stdout, pool="agent-state", media_type="text/plain").to_json()
    stderr = cas.put(result.stderr, pool="agent-state", media_type="text/plain").to_json()
    env_ref = (
        cas.put(canonical_json(result.env), pool="agent-state", media_type="application/json").to_json()
        if result.env is not None
        else None
    )
    return stdout, stderr, env_ref


def _store_files(
    store: Store, workspace: Path, before: dict[str, FileState], after: Snapshot, paths: list[str]
) -> tuple[list[StoredFile], list[str]]:
    """Put each changed file (not larger than the snapshot's bound) in the CAS, read beneath the
    workspace without following links; (stored files, paths that vanished or were not regular files)."""
    cas = store.cas
    stored: list[StoredFile] = []
    vanished: list[str] = []
    for path in paths:
        if after[path].oversize:
            continue
        fd = open_beneath(workspace, path)
        if fd is None:  # gone, or swapped for a symlink or a special file: never read through it
            vanished.append(path)
            continue
        with os.fdopen(fd, "rb", buffering=0) as stream:
            content = cas.put_stream(stream, pool="data", media_type=media_type_for(path))
        previous = None
        if path in before and not before[path].oversize:
            old = before[path]
            if cas.has(f"sha256:{old.sha256}"):
                previous = {
                    "pool": "data",
                    "digest": f"sha256:{old.sha256}",
                    "size": old.size,
                    "mediaType": content.media_type,
                }
        stored.append(StoredFile(path=path, content=content.to_json(), previous=previous))
    return stored, vanished
