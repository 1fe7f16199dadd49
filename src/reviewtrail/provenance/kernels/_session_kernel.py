"""Persistent kernels of a session: every evaluation is a recorded run (see ``runs._runs``)."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from reviewtrail.errors import BackendUnavailableError
from reviewtrail.ledger import new_id
from reviewtrail.provenance.runs._pending import begin_run, remove_marker, session_lock
from reviewtrail.provenance.runs._runs import RunOutcome, record_run
from reviewtrail.provenance.runs._sessions import require_live_session
from reviewtrail.provenance.runs._snapshot import Snapshot, snapshot
from reviewtrail.provenance.sandbox._input import Network, check_sandbox_input
from reviewtrail.provenance.sandbox._limits import DEFAULT_LIMITS, ResourceLimits
from reviewtrail.provenance.sandbox._plan import SandboxResult
from reviewtrail.store import Store

__all__ = ["SessionKernel"]


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
        resolve: Mapping[str, str] | None = None,
        limits: ResourceLimits = DEFAULT_LIMITS,
    ) -> None:
        from reviewtrail.provenance.kernels._kernels import PythonKernel, ShellKernel

        injected = dict(env or {})
        check_sandbox_input(lang=lang, env=injected, network=network, allowlist=tuple(allowlist), resolve=resolve)
        self.store = store
        self.session = require_live_session(store, session_id)
        self.lang = lang
        self.network: Network = network
        self.allowlist = tuple(allowlist)
        self.resolve = dict(resolve or {})
        self.limits = limits
        self.actor = actor
        kernel_type = PythonKernel if lang == "python" else ShellKernel
        self.kernel = kernel_type(self.session.workspace, injected, network, max_output=limits.max_output,
                                  allowlist=self.allowlist, resolve=self.resolve, limits=limits)  # fmt: skip

    @property
    def kernel_id(self) -> str:
        return self.kernel.kernel_id

    def evaluate(
        self, code: str, timeout: float = 60.0, *, cancel: threading.Event | None = None, actor: str | None = None
    ) -> RunOutcome:
        """Run ``code`` in the kernel and record it (by ``actor``, default the kernel's). Bad input,
        and a kernel that has ended, raise before anything is recorded. ``cancel`` cancels the
        evaluation (recorded as cancelled), which ends the kernel, as a timeout does."""
        check_sandbox_input(code=code, timeout=timeout)
        actor = actor or self.actor
        run_id = new_id()
        with session_lock(self.store, self.session.session_id):
            require_live_session(self.store, self.session.session_id)  # removed since the kernel started?
            if not self.kernel.alive:
                raise BackendUnavailableError(f"kernel {self.kernel_id} has ended; start a new one", field="kernel")
            before = snapshot(self.session.workspace, max_file_size=self.limits.max_file_size)
            marker, code_ref = begin_run(
                self.store, run_id, self.session.session_id, before, code=code, lang=self.lang, timeout=timeout,
                network=self.network, allowlist=self.allowlist, resolve=self.resolve, tool_name=self._tool,
                actor=actor, max_file_size=self.limits.max_file_size, kernel_id=self.kernel.kernel_id,
            )  # fmt: skip
            result = self.kernel.evaluate(code, timeout, cancel=cancel)
            outcome = self._record(run_id, code_ref, result, before, timeout, actor)
            remove_marker(marker)
            return outcome

    @property
    def _tool(self) -> str:
        return f"reviewtrail.kernel.{self.lang}"

    def _record(
        self, run_id: str, code_ref: dict[str, Any], result: SandboxResult, before: Snapshot, timeout: float, actor: str
    ) -> RunOutcome:
        return record_run(
            self.store,
            session_id=self.session.session_id,
            workspace=self.session.workspace,
            code=None,
            lang=self.lang,
            result=result,
            before=before,
            timeout=timeout,
            network=self.network,
            allowlist=self.allowlist,
            resolve=self.resolve,
            limits=self.limits,
            tool_name=self._tool,
            actor=actor,
            kernel_id=self.kernel.kernel_id,
            run_id=run_id,
            code_ref=code_ref,
        )

    def close(self) -> None:
        self.kernel.close()

    def __enter__(self) -> SessionKernel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
