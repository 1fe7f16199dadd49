"""What a run's records say, decided without I/O from facts gathered beforehand.

:func:`decide_run` turns :class:`RunFacts` (the sandbox's result, the refs of the bytes already
in the CAS, the workspace's changes) into the ``ExecutionRun`` and its ``ArtifactDerivation``
records:

* a run recorded without a result (it never started, or was interrupted) is ``failed`` with the
  failure as its error;
* a written file exactly at ``--max-file-size`` means a write past it was refused (by a process
  the supervisor cannot see, e.g. a shell's child): the run fails with ``file-size`` named,
  unless it already hit a limit;
* created or modified files that were not stored (larger than ``--max-file-size``; vanished or
  not a regular file when read) are named in the run's error;
* each stored file is one derivation, pointing at its previous content when that is in the CAS.

The identifiers that say what environment and permissions a run had (:func:`permission_epoch_id`,
:func:`network_access_revision`) are hashes of their canonical JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reviewtrail.canonical import canonical_sha256
from reviewtrail.provenance.records._records import ArtifactDerivation, ExecutionRun, RunStatus
from reviewtrail.provenance.sandbox._input import Network
from reviewtrail.provenance.sandbox._limits import LimitName, ResourceLimits, limit_outcome
from reviewtrail.provenance.sandbox._plan import SandboxResult

__all__ = [
    "RunFacts",
    "StoredFile",
    "decide_run",
    "network_access_revision",
    "permission_epoch_id",
    "run_status",
]


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
    return "pe-" + canonical_sha256(policy)[:32]


def network_access_revision(
    network: Network, allowlist: Sequence[str], resolve: Mapping[str, str] | None = None
) -> str | None:
    """Identifies what an allowlist run could reach (None without network)."""
    if network != "allowlist":
        return None
    doc: Any = (
        sorted(allowlist) if not resolve else {"allow": sorted(allowlist), "resolve": dict(sorted(resolve.items()))}
    )
    return "na-" + canonical_sha256(doc)[:32]


@dataclass(frozen=True)
class StoredFile:
    """A created or modified file whose bytes are in the CAS; ``previous`` is its old content's
    ref when that is in the CAS too."""

    path: str
    content: dict[str, Any]
    previous: dict[str, Any] | None = None


@dataclass(frozen=True)
class RunFacts:
    """Everything a run's records are made of, gathered before deciding them."""

    run_id: str
    session_id: str
    tool_name: str
    lang: str
    code_ref: dict[str, Any]
    result: SandboxResult | None
    failure: str | None
    timeout: float
    network: Network
    allowlist: Sequence[str]
    resolve: Mapping[str, str] | None
    limits: ResourceLimits
    kernel_id: str | None
    started_at: str
    ended_at: str
    environment_revision_id: str
    stdout: dict[str, Any] | None
    stderr: dict[str, Any] | None
    env_snapshot: dict[str, Any] | None
    created: Sequence[str]
    modified: Sequence[str]
    sizes: Mapping[str, int]  # size after the run of each created or modified file
    oversize: Sequence[str]  # not read: larger than the snapshot's bound
    size_bound: int  # the bound the snapshot was taken with
    vanished: Sequence[str]  # gone, or not a regular file, when read


def run_status(
    result: SandboxResult | None, failure: str | None, written: Mapping[str, int], limits: ResourceLimits,
    timeout: float,
) -> tuple[RunStatus, LimitName | None, str | None]:  # fmt: skip
    """The run's status, limit and error (see the module docs); ``written`` maps each created or
    modified file to its size."""
    if result is None:
        return "failed", None, failure
    at_limit = [p for p, size in written.items() if size == limits.max_file_size]
    if result.limit_exceeded is not None or not at_limit:
        return result.status, result.limit_exceeded, result.error
    status, limit, error = limit_outcome(
        result.status, "file-size", result.error, False, limits, limits.max_output, timeout
    )
    return status, limit, f"{error} ({', '.join(at_limit)} reached it)"


def _notes(facts: RunFacts) -> list[str]:
    notes = []
    if facts.vanished:
        notes.append(f"not stored (vanished or not a regular file when read): {', '.join(facts.vanished)}")
    if facts.oversize:
        notes.append(f"not stored (larger than --max-file-size, {facts.size_bound} bytes): {', '.join(facts.oversize)}")
    return notes


def decide_run(facts: RunFacts, stored: Sequence[StoredFile]) -> tuple[ExecutionRun, list[ArtifactDerivation]]:
    """The run record and one derivation per stored file (see the module docs)."""
    result, network = facts.result, facts.network
    written = {p: facts.sizes[p] for p in [*facts.created, *facts.modified]}
    status, limit, error = run_status(result, facts.failure, written, facts.limits, facts.timeout)
    notes = _notes(facts)
    if notes:
        note = "; ".join(notes)
        error = f"{error}; {note}" if error else note
    allow = network == "allowlist"
    run = ExecutionRun(
        run_id=facts.run_id,
        session_id=facts.session_id,
        tool_name=facts.tool_name,
        language=facts.lang,  # type: ignore[arg-type]  # checked when the record is appended
        code=facts.code_ref,
        stdout=facts.stdout,
        stderr=facts.stderr,
        stdout_truncated=bool(result and result.stdout_truncated),
        stderr_truncated=bool(result and result.stderr_truncated),
        exit_code=result.exit_code if result else None,
        started_at=facts.started_at,
        ended_at=facts.ended_at,
        environment_revision_id=facts.environment_revision_id,
        kernel_mode="persistent" if facts.kernel_id else "one-shot",
        kernel_id=facts.kernel_id,
        permission_epoch_id=permission_epoch_id(network, facts.allowlist),
        network_policy=network,
        network_access_revision=network_access_revision(network, facts.allowlist, facts.resolve),
        created_files=list(facts.created),
        modified_files=list(facts.modified),
        status=status,
        working_directory=result.working_directory if result else "unavailable",
        env_snapshot=facts.env_snapshot,
        timeout_seconds=facts.timeout,
        error=error,
        network_allowlist=list(facts.allowlist) if allow else None,
        network_resolve=dict(facts.resolve) if allow and facts.resolve else None,
        network_decisions=list(result.network_decisions) if result and allow else None,
        network_decisions_dropped=result.network_decisions_dropped if result and allow else None,
        resource_limits=facts.limits.to_json(),
        limit_exceeded=limit,
        enforced_by=dict(result.enforced_by) if result is not None and result.enforced_by else None,
    )
    derivations = [
        ArtifactDerivation(
            path=f.path,
            content=f.content,
            execution_run_ids=[facts.run_id],
            session_id=facts.session_id,
            previous_content=f.previous,
        )
        for f in stored
    ]
    return run, derivations
