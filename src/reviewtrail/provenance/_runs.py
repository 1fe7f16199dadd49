"""Execution runs: run code in a session's sandbox, record exactly what happened.

Each run appends one ``ExecutionRun`` and one ``ArtifactDerivation`` per created or
modified workspace file, in one atomic batch. Ordinary runs never create artifact
versions: only uploads, downloads and declarations do (see ``_catalog``).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from reviewtrail.canonical import canonical_json
from reviewtrail.errors import BackendUnavailableError, InvalidInputError
from reviewtrail.ledger import Envelope, new_record
from reviewtrail.ledger._envelope import format_time, new_id
from reviewtrail.provenance._records import ArtifactDerivation, ExecutionRun
from reviewtrail.provenance._sandbox import SandboxRequest, SandboxResult, run_sandboxed
from reviewtrail.provenance._sessions import require_live_session
from reviewtrail.provenance._snapshot import Snapshot, changes, open_beneath, snapshot
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
        "shareNet": network == "allowlist",
        "capabilities": "none",
        "clearenv": True,
        "mounts": {"/workspace": "rw", "/usr": "ro", "/etc": "ro", "/tmp": "tmpfs"},  # noqa: S108
        "allowlist": sorted(allowlist) if network == "allowlist" else [],
    }
    return "pe-" + hashlib.sha256(canonical_json(policy)).hexdigest()[:32]


def network_access_revision(network: Network, allowlist: Sequence[str]) -> str | None:
    if network != "allowlist":
        return None
    return "na-" + hashlib.sha256(canonical_json(sorted(allowlist))).hexdigest()[:32]


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
    cwd: str = "/workspace",
    tool_name: str = "reviewtrail.run",
    actor: str = "user",
    cancel: threading.Event | None = None,
) -> RunOutcome:
    """Run ``code`` once in the session's sandbox and record it. Bad input raises before any run."""
    injected = dict(env or {})
    _check(lang, injected, timeout, network)
    session = require_live_session(store, session_id)
    request = SandboxRequest(
        code=code,
        lang=lang,  # type: ignore[arg-type]
        workspace=session.workspace,
        env=injected,
        timeout=timeout,
        network=network,
        cwd=cwd,
    )
    before = snapshot(session.workspace)
    try:
        result: SandboxResult | None = run_sandboxed(request, cancel=cancel)
        failure = None
    except BackendUnavailableError as exc:
        result, failure = None, str(exc)
    outcome = record_run(
        store,
        session_id=session_id,
        workspace=session.workspace,
        code=code,
        lang=lang,
        result=result,
        before=before,
        timeout=timeout,
        network=network,
        allowlist=allowlist,
        tool_name=tool_name,
        actor=actor,
        failure=failure,
    )
    if failure is not None:
        raise BackendUnavailableError(f"{failure} (recorded as failed run {outcome.envelope.id})", field="sandbox")
    return outcome


def record_run(
    store: Store,
    *,
    session_id: str,
    workspace: Path,
    code: str,
    lang: str,
    result: SandboxResult | None,
    before: Snapshot,
    timeout: float,
    network: Network,
    allowlist: Sequence[str],
    tool_name: str,
    actor: str,
    failure: str | None = None,
    kernel_id: str | None = None,
) -> RunOutcome:
    """Store the run's bytes in the CAS and append the run and its derivations atomically."""
    run_id = new_id()
    cas = store.cas
    code_ref = cas.put(code.encode("utf-8"), pool="agent-state", media_type="text/plain")
    after = snapshot(workspace, before)
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
        started = ended = format_time(datetime.now(UTC))
    run = ExecutionRun(
        run_id=run_id,
        session_id=session_id,
        tool_name=tool_name,
        language=lang,
        code=code_ref.to_json(),
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
        network_access_revision=network_access_revision(network, allowlist),
        created_files=created,
        modified_files=modified,
        status=result.status if result else "failed",
        working_directory=result.working_directory if result else "unavailable",
        env_snapshot=env_ref,
        timeout_seconds=timeout,
        error=failure if result is None else result.error,
    )
    records = [new_record(run, actor=actor, privacy="private", subject=f"session:{session_id}", id=run_id)]
    vanished: list[str] = []
    for path in [*created, *modified]:
        fd = open_beneath(workspace, path)
        if fd is None:  # gone, or swapped for a symlink or a special file: never read through it
            vanished.append(path)
            continue
        with os.fdopen(fd, "rb", buffering=0) as stream:
            content = cas.put_stream(stream, pool="data", media_type=_media_type(path))
        previous = None
        if path in before:
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
    if vanished:
        note = f"not stored (vanished or not a regular file when read): {', '.join(vanished)}"
        run = run.model_copy(update={"error": f"{run.error}; {note}" if run.error else note})
        records[0] = new_record(run, actor=actor, privacy="private", subject=f"session:{session_id}", id=run_id)
    envs = store.append(records)
    return RunOutcome(run, envs[0], envs[1:], result)


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


class SessionKernel:
    """A persistent python worker or shell for one session; every evaluation is a recorded run.

    For these runs ``kernelMode`` is ``persistent``, ``kernelId`` names the kernel, and the
    recorded working directory and environment are those observed at the end of the evaluation.
    """

    def __init__(
        self,
        store: Store,
        session_id: str,
        lang: str,
        *,
        env: Mapping[str, str] | None = None,
        network: Network = "none",
        allowlist: Sequence[str] = (),
        actor: str = "user",
    ) -> None:
        from reviewtrail.provenance._kernels import PythonKernel, ShellKernel

        injected = dict(env or {})
        _check(lang, injected, 1.0, network)
        self.store = store
        self.session = require_live_session(store, session_id)
        self.lang = lang
        self.network: Network = network
        self.allowlist = tuple(allowlist)
        self.actor = actor
        kernel_type = PythonKernel if lang == "python" else ShellKernel
        self.kernel = kernel_type(self.session.workspace, injected, network)

    @property
    def kernel_id(self) -> str:
        return self.kernel.kernel_id

    def evaluate(self, code: str, timeout: float = 60.0) -> RunOutcome:
        if not timeout > 0:
            raise InvalidInputError("must be > 0 seconds", field="timeout")
        before = snapshot(self.session.workspace)
        result = self.kernel.evaluate(code, timeout)
        return record_run(
            self.store,
            session_id=self.session.session_id,
            workspace=self.session.workspace,
            code=code,
            lang=self.lang,
            result=result,
            before=before,
            timeout=timeout,
            network=self.network,
            allowlist=self.allowlist,
            tool_name=f"reviewtrail.kernel.{self.lang}",
            actor=self.actor,
            kernel_id=self.kernel.kernel_id,
        )

    def close(self) -> None:
        self.kernel.close()

    def __enter__(self) -> SessionKernel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
