"""Persistent kernels for ``run_code`` with ``kernel: true``: one python worker (or shell) per
session and language, kept by the server between calls, so variables and imports persist.

``reviewtrail run`` is one process per run and cannot keep a kernel; the MCP server is one
long-lived process, so it can (:class:`~reviewtrail.provenance.kernels.SessionKernel`: every evaluation is
a recorded run with ``kernelMode`` ``persistent`` and its ``kernelId``). A kernel starts with the
first call's environment, network and limits; a later call that asks for others is refused
(field ``kernel``) rather than silently run with the first call's. A kernel that died (a timeout,
a limit) is replaced by a new one, with a new id. The server closes every kernel when it stops.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

from reviewtrail.errors import InvalidInputError

if TYPE_CHECKING:
    from reviewtrail.provenance.kernels import SessionKernel
    from reviewtrail.provenance.runs import RunOutcome, RunRequest
    from reviewtrail.store import Store

__all__ = ["KernelPool"]


def _settings(request: RunRequest) -> Hashable:
    """What a kernel is started with, comparable between calls."""
    return (
        tuple(sorted(request.env.items())),
        request.network,
        request.allowlist,
        tuple(sorted(request.resolve.items())),
        request.limits,
    )


class KernelPool:
    """The server's kernels by (session, language)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._kernels: dict[tuple[str, str], tuple[SessionKernel, Hashable]] = {}

    def evaluate(self, session_id: str, request: RunRequest) -> RunOutcome:
        """Run ``request.code`` in the session's kernel for its language (started on first use)."""
        if request.cwd != "/workspace":
            raise InvalidInputError(
                "a kernel keeps its own working directory (cd inside it); cwd is for one-off runs", field="cwd"
            )
        key = (session_id, request.lang)
        wanted = _settings(request)
        held = self._kernels.get(key)
        if held is not None and not held[0].kernel.alive:
            self._kernels.pop(key)[0].close()
            held = None
        if held is not None and held[1] != wanted:
            raise InvalidInputError(
                f"session {session_id} already has a {request.lang} kernel ({held[0].kernel_id}) started with "
                "another environment, network or limits; call again with the same ones, or without kernel",
                field="kernel",
            )
        if held is None:
            held = (self._start(session_id, request), wanted)
            self._kernels[key] = held
        return held[0].evaluate(request.code, request.timeout)

    def _start(self, session_id: str, request: RunRequest) -> SessionKernel:
        from reviewtrail.provenance.kernels import SessionKernel

        return SessionKernel(
            self._store,
            session_id,
            request.lang,
            env=request.env,
            network=request.network,  # type: ignore[arg-type]  # checked by SessionKernel
            allowlist=request.allowlist,
            resolve=request.resolve,
            limits=request.limits,
        )

    def close(self) -> None:
        """Close every kernel."""
        while self._kernels:
            _, (kernel, _) = self._kernels.popitem()
            kernel.close()
