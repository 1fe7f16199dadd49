"""Execution runs: run code in a session's sandbox, record exactly what happened.

Each run appends one ``ExecutionRun`` and one ``ArtifactDerivation`` per created or
modified workspace file, in one atomic batch. Ordinary runs never create artifact
versions: only uploads, downloads and declarations do (see ``_catalog``).

Runs in one session are serialized by the session's run lock, and each run leaves a
pending-run marker until its record is appended (see ``_pending``). A full disk while
recording is :class:`BackendUnavailableError` (exit 5); the marker then stays, and
``reviewtrail verify --repair`` records the run once there is room.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from reviewtrail.canonical import canonical_json
from reviewtrail.errors import BackendUnavailableError, InvalidInputError, NotFoundError
from reviewtrail.ledger import Envelope, new_record
from reviewtrail.ledger._envelope import format_time, new_id
from reviewtrail.provenance._limits import DEFAULT_LIMITS, LimitName, ResourceLimits, limit_outcome
from reviewtrail.provenance._pending import begin_run, remove_marker, session_lock
from reviewtrail.provenance._records import ArtifactDerivation, ExecutionRun, RunStatus
from reviewtrail.provenance._sandbox import SandboxRequest, SandboxResult, net_policy, require_bwrap, run_sandboxed
from reviewtrail.provenance._sessions import require_live_session
from reviewtrail.provenance._snapshot import FileState, Snapshot, changes, open_beneath, snapshot
from reviewtrail.provenance._storage_errors import disk_full_errors
from reviewtrail.store import Store

__all__ = [
    "LANGUAGES",
    "RunOutcome",
    "SessionKernel",
    "environment_revision_id",
    "permission_epoch_id",
    "record_run",
    "run_code",
]

LANGUAGES = ("python", "bash")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
Network = Literal["none", "allowlist"]


@dataclass(frozen=True)
class RunOutcome:
    run: ExecutionRun
    envelope: Envelope
    derivations: list[Envelope]
    result: SandboxResult | None

    def to_json(self) -> dict[str, Any]:
        doc = self.run.model_dump(mode="json", by_alias=True)
        doc["recordId"] = self.envelope.id
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
    return "env-" + hashlib.sha256(canonical_json(facts)).hexdigest()[:32]


def permission_epoch_id(network: Network, allowlist: Sequence[str]) -> str:
    """Identifies the permission set a run had: namespaces, mounts, capabilities, network."""
    policy = {
        "unshare": "all",
        "shareNet": False,
        "egress": "proxy" if network == "allowlist" else "none",
        "capabilities": "none",
        "clearenv": True,
        "mounts": {"/workspace": "rw", "/usr": "ro", "/etc": "ro", "/tmp": "tmpfs"},  # noqa: S108
        "allowlist": sorted(allowlist) if network == "allowlist" else [],
    }
    return "pe-" + hashlib.sha256(canonical_json(policy)).hexdigest()[:32]


def network_access_revision(
    network: Network, allowlist: Sequence[str], resolve: Mapping[str, str] | None = None
) -> str | None:
    if network != "allowlist":
        return None
    doc: Any = (
        sorted(allowlist) if not resolve else {"allow": sorted(allowlist), "resolve": dict(sorted(resolve.items()))}
    )
    return "na-" + hashlib.sha256(canonical_json(doc)).hexdigest()[:32]


def _check(lang: str, env: Mapping[str, str], timeout: float, network: str) -> None:
    if lang not in LANGUAGES:
        raise InvalidInputError(f"{lang!r} is not a supported language; use python or bash", field="lang")
    for key, value in env.items():
        if _ENV_NAME.fullmatch(key) is None:
            raise InvalidInputError(f"{key!r} is not a variable name", field="env")
        if "\x00" in value:
            raise InvalidInputError(f"the value of {key} contains a NUL byte", field="env")
    if not timeout > 0:
        raise InvalidInputError("must be > 0 seconds", field="timeout")
    if network not in ("none", "allowlist"):
        raise InvalidInputError(f"{network!r} is not a network policy; use none or allowlist", field="network")


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
    _check(lang, injected, timeout, network)
    net_policy(network, tuple(allowlist), dict(resolve or {}))
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
    recorded without a result (an interrupted run's marker)."""
    run_id = run_id or new_id()
    cas = store.cas
    if code_ref is None:
        code_ref = cas.put((code or "").encode("utf-8"), pool="agent-state", media_type="text/plain").to_json()
    after = snapshot(workspace, before)  # with the bound ``before`` was taken with
    created, modified = changes(before, after)
    stdout: dict[str, Any] | None
    stderr: dict[str, Any] | None
    env_ref: dict[str, Any] | None
    if result is not None:
        stdout = cas.put(result.stdout, pool="agent-state", media_type="text/plain").to_json()
        stderr = cas.put(result.stderr, pool="agent-state", media_type="text/plain").to_json()
        env_ref = (
            cas.put(canonical_json(result.env), pool="agent-state", media_type="application/json").to_json()
            if result.env is not None
            else None
        )
        started, ended = format_time(result.started_at), format_time(result.ended_at)
    else:
        stdout = stderr = env_ref = None
        ended = format_time(datetime.now(UTC))
        started = started_at or ended
    status, limit, error = _file_size_hit(result, failure, [*created, *modified], after, limits, timeout)
    run = ExecutionRun(
        run_id=run_id,
        session_id=session_id,
        tool_name=tool_name,
        language=lang,
        code=code_ref,
        stdout=stdout,
        stderr=stderr,
        stdout_truncated=bool(result and result.stdout_truncated),
        stderr_truncated=bool(result and result.stderr_truncated),
        exit_code=result.exit_code if result else None,
        started_at=started,
        ended_at=ended,
        environment_revision_id=environment_revision_id(),
        kernel_mode="persistent" if kernel_id else "one-shot",
        kernel_id=kernel_id,
        permission_epoch_id=permission_epoch_id(network, allowlist),
        network_policy=network,
        network_access_revision=network_access_revision(network, allowlist, resolve),
        created_files=created,
        modified_files=modified,
        status=status,
        working_directory=result.working_directory if result else "unavailable",
        env_snapshot=env_ref,
        timeout_seconds=timeout,
        error=error,
        network_allowlist=list(allowlist) if network == "allowlist" else None,
        network_resolve=dict(resolve) if network == "allowlist" and resolve else None,
        network_decisions=list(result.network_decisions) if result and network == "allowlist" else None,
        network_decisions_dropped=result.network_decisions_dropped if result and network == "allowlist" else None,
        resource_limits=limits.to_json(),
        limit_exceeded=limit,
    )
    records = [new_record(run, actor=actor, privacy="private", subject=f"session:{session_id}", id=run_id)]
    vanished: list[str] = []
    oversize = [p for p in [*created, *modified] if after[p].oversize]
    for path in [*created, *modified]:
        if after[path].oversize:
            continue
        fd = open_beneath(workspace, path)
        if fd is None:  # gone, or swapped for a symlink or a special file: never read through it
            vanished.append(path)
            continue
        with os.fdopen(fd, "rb", buffering=0) as stream:
            content = cas.put_stream(stream, pool="data", media_type=_media_type(path))
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
        derivation = ArtifactDerivation(
            path=path,
            content=content.to_json(),
            execution_run_ids=[run_id],
            session_id=session_id,
            previous_content=previous,
        )
        records.append(new_record(derivation, actor=actor, privacy="private", subject=f"session:{session_id}"))
    notes = [f"not stored (vanished or not a regular file when read): {', '.join(vanished)}"] if vanished else []
    if oversize:
        bound = getattr(after, "max_file_size", limits.max_file_size)
        notes.append(f"not stored (larger than --max-file-size, {bound} bytes): {', '.join(oversize)}")
    if notes:
        note = "; ".join(notes)
        run = run.model_copy(update={"error": f"{run.error}; {note}" if run.error else note})
        records[0] = new_record(run, actor=actor, privacy="private", subject=f"session:{session_id}", id=run_id)
    envs = store.append(records)
    return RunOutcome(run, envs[0], envs[1:], result)


def _file_size_hit(
    result: SandboxResult | None, failure: str | None, written: list[str], after: Snapshot, limits: ResourceLimits,
    timeout: float,
) -> tuple[RunStatus, LimitName | None, str | None]:  # fmt: skip
    """The run's status, limit and error; a written file exactly at ``--max-file-size`` means a
    write past it was refused (by a process the supervisor cannot see, e.g. a shell's child)."""
    if result is None:
        return "failed", None, failure
    at_limit = [p for p in written if after[p].size == limits.max_file_size]
    if result.limit_exceeded is not None or not at_limit:
        return result.status, result.limit_exceeded, result.error
    status, limit, error = limit_outcome(
        result.status, "file-size", result.error, False, limits, limits.max_output, timeout
    )
    return status, limit, f"{error} ({', '.join(at_limit)} reached it)"


_TEXT_SUFFIXES = {
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".csv": "text/csv",
    ".json": "application/json",
    ".py": "text/x-python",
    ".sh": "text/x-shellscript",
    ".tex": "application/x-tex",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".html": "text/html",
    ".xml": "application/xml",
    ".tsv": "text/tab-separated-values",
}


def _media_type(path: str) -> str:
    return _TEXT_SUFFIXES.get(Path(path).suffix.lower(), "application/octet-stream")


def media_type_for(path: str) -> str:
    return _media_type(path)


from reviewtrail.provenance._session_kernel import SessionKernel  # noqa: E402 - it builds on record_run above
