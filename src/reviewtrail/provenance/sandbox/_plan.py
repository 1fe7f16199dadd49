"""A one-shot sandbox run as data, without I/O: the request (checked by :mod:`._input`),
the environment and command the sandbox gets, reading the launcher's report, and the rule that
turns what happened into the run's status (see :mod:`._sandbox` for the whole picture)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from reviewtrail.provenance.sandbox._input import (
    SANDBOX_WORKSPACE,
    Language,
    Network,
    check_sandbox_input,
    net_policy,
    sandbox_cwd,
)
from reviewtrail.provenance.sandbox._launch import BRIDGE_PORT, bash_command, supervisor_command
from reviewtrail.provenance.sandbox._limits import DEFAULT_LIMITS, LimitName, ResourceLimits, limit_outcome
from reviewtrail.provenance.sandbox._netproxy_rules import NetPolicy

__all__ = [
    "BASE_ENV",
    "DEFAULT_MAX_OUTPUT",
    "PROXY_ENV",
    "Outcome",
    "SandboxRequest",
    "SandboxResult",
    "Status",
    "effective_env",
    "parse_report",
    "run_status",
    "sandbox_command",
]

Status = Literal["succeeded", "failed", "cancelled"]
#: How waiting for the sandbox ended.
# "limit": the host stopped the sandbox because the kernel enforced a limit of its control group.
Outcome = Literal["exited", "timeout", "cancelled", "limit"]

DEFAULT_MAX_OUTPUT = 10 * 1024 * 1024
# Set unless the caller's env overrides them; documented in :mod:`._sandbox`.
BASE_ENV: Mapping[str, str] = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": SANDBOX_WORKSPACE, "LANG": "C.UTF-8"}
_PROXY_URL = f"http://127.0.0.1:{BRIDGE_PORT}"
# Set in allowlist mode (over BASE_ENV, under the caller's variables): the bridge to the host proxy.
PROXY_ENV: Mapping[str, str] = {name: _PROXY_URL for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
                                                                "https_proxy", "ALL_PROXY", "all_proxy")}  # fmt: skip


@dataclass(frozen=True)
class SandboxRequest:
    """One execution. ``env`` holds the only variables injected (over :data:`BASE_ENV`)."""

    code: str
    lang: Language
    workspace: Path
    env: Mapping[str, str]
    timeout: float
    network: Network = "none"
    max_output: int = DEFAULT_MAX_OUTPUT
    cwd: str = SANDBOX_WORKSPACE
    allowlist: tuple[str, ...] = ()
    resolve: Mapping[str, str] = field(default_factory=dict)
    limits: ResourceLimits = DEFAULT_LIMITS

    def __post_init__(self) -> None:
        check_sandbox_input(
            lang=self.lang, code=self.code, env=self.env, timeout=self.timeout, network=self.network,
            max_output=self.max_output, cwd=self.cwd, allowlist=self.allowlist, resolve=self.resolve,
            limits=self.limits,
        )  # fmt: skip

    @property
    def policy(self) -> NetPolicy | None:
        return net_policy(self.network, self.allowlist, self.resolve)

    @property
    def sandbox_cwd(self) -> str:
        """``cwd`` as an absolute, normalized path inside the sandbox."""
        return sandbox_cwd(self.cwd)


@dataclass(frozen=True)
class SandboxResult:
    """What happened. ``working_directory``/``env`` are reported by the code's own process."""

    status: Status
    exit_code: int | None
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    started_at: datetime
    ended_at: datetime
    working_directory: str
    env: dict[str, str] | None
    timed_out: bool
    error: str | None
    argv: list[str]
    limit_exceeded: LimitName | None = None
    network_decisions: list[dict[str, object]] = field(default_factory=list)
    network_decisions_dropped: int = 0
    #: Which mechanism enforced each limit (:func:`~._limits.enforcement`).
    enforced_by: dict[str, str] = field(default_factory=dict)


def effective_env(env: Mapping[str, str], network: Network = "none") -> dict[str, str]:
    """The variables set after ``--clearenv``: :data:`BASE_ENV` (and :data:`PROXY_ENV` in
    allowlist mode) overridden by ``env``."""
    return {**BASE_ENV, **(PROXY_ENV if network == "allowlist" else {}), **env}


def sandbox_command(
    req: SandboxRequest, control_fd: int, report_fd: int, code_fd: int, *, address_space: bool = False
) -> list[str]:
    """Python: the supervisor runs the code in its child. Bash without network: bash is the command and
    starts the supervisor in the background. Bash with the proxy: the supervisor (and its bridge) first.
    ``address_space``: no control group holds memory, so ``RLIMIT_AS`` does (shared mappings count)."""
    cpu = math.ceil(req.timeout)
    if req.lang == "bash" and req.network == "none":
        return bash_command(report_fd, code_fd, control_fd, req.limits, cpu, address_space=address_space)
    mode = ["py", str(report_fd), str(code_fd)]
    if req.lang == "bash":
        mode = ["exec", *bash_command(report_fd, code_fd, None, req.limits, cpu)]
    port = BRIDGE_PORT if req.network == "allowlist" else 0
    return supervisor_command(
        control_fd, port, req.limits, cpu, (report_fd, code_fd), mode, address_space=address_space
    )


def parse_report(data: bytes) -> tuple[str, dict[str, str]] | None:
    """The launcher's (cwd, env) report, or None if it never wrote a complete one."""
    if not data.endswith(b"\0\0"):
        return None
    cwd, *entries = data[:-2].decode("utf-8", "surrogateescape").split("\0")
    return cwd, dict(entry.split("=", 1) for entry in entries if "=" in entry)


def run_status(
    req: SandboxRequest,
    outcome: Outcome,
    *,
    started: bool,
    returncode: int | None,
    stderr: bytes,
    truncated: bool,
    limit: LimitName | None,
) -> tuple[Status, int | None, LimitName | None, str | None]:
    """(status, exit code, limit exceeded, error) of a run, from how waiting ended, whether the code
    started (the launcher reported), bubblewrap's exit status, the code's stderr, whether output
    was cut, and the limit the supervisor reported (see the module docs of :mod:`._sandbox`)."""
    status: Status
    exit_code: int | None = None
    error: str | None = None
    if outcome == "timeout":
        status, error, limit = "cancelled", f"timed out after {req.timeout:g} s; the sandbox was killed", "time"
    elif outcome == "cancelled":
        status, error = "cancelled", "cancelled; the sandbox was killed"
    elif outcome == "limit":  # the host killed every process of the sandbox (SIGKILL)
        status, exit_code = "failed", 128 + 9
    elif not started:
        detail = stderr.decode("utf-8", "replace").strip().splitlines()
        status = "failed"
        error = f"the sandbox failed before the code ran (bwrap exit status {returncode})" + (
            f": {detail[-1]}" if detail else ""
        )
    else:
        exit_code = returncode
        status = "succeeded" if exit_code == 0 else "failed"
    status, limit, error = limit_outcome(
        status, limit, error, truncated, req.limits, req.max_output, req.timeout, exit_code
    )
    return status, exit_code, limit, error
