"""Where an instrumented client's calls go: the store (prompt manifests and usage records) and the
project folder (reviewer traces), with the trace settings read once when the client was instrumented."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reviewtrail.errors import ReviewtrailError

if TYPE_CHECKING:
    from reviewtrail.ledger import Privacy
    from reviewtrail.models import ModelTurn, RecordedTurn
    from reviewtrail.store import Store
    from reviewtrail.tracing.custody import TraceResult
    from reviewtrail.tracing.files import ReviewCall

__all__ = ["Endpoint", "Recorder"]


class Recorder:
    """Records calls in ``store`` and saves reviewer traces under ``project_dir``.

    A record that is due while another is being written by the same thread (a stream dropped and
    collected in the middle of a write) is written right after it, never inside it.
    """

    def __init__(
        self,
        store: Store,
        *,
        project_dir: Path,
        trace_env: Mapping[str, str],
        actor: str,
        privacy: Privacy,
        session_id: str | None,
    ) -> None:
        self.store = store
        self.project_dir = project_dir
        self.trace_env = dict(trace_env)
        self.actor = actor
        self.privacy: Privacy = privacy
        self.session_id = session_id
        self._local = threading.local()
        self._later: list[Callable[[], object]] = []
        self._lock = threading.Lock()

    def record(self, turn: ModelTurn) -> RecordedTurn:
        """Append the call's records; durable when this returns."""
        from reviewtrail.models import record_turn

        self._local.busy = True
        try:
            return record_turn(self.store, turn, actor=self.actor, privacy=self.privacy, session_id=self.session_id)
        finally:
            self._local.busy = False
            self._drain()

    def save_trace(self, call: ReviewCall, *, mode: str | None, run_id: str | None) -> TraceResult:
        """Save one reviewer call in the project's ``.aris/traces`` and record it in the store."""
        from reviewtrail.tracing.custody import record_call

        return record_call(
            call, project_dir=self.project_dir, mode=mode, run_id=run_id, env=self.trace_env, store=self.store
        )

    def when_safe(self, write: Callable[[], object]) -> None:
        """Run ``write`` now, or right after the write this thread is in the middle of."""
        if getattr(self._local, "busy", False):
            with self._lock:
                self._later.append(write)
            return
        _warn_on_failure(write)

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._later:
                    return
                write = self._later.pop(0)
            _warn_on_failure(write)


def _warn_on_failure(write: Callable[[], object]) -> None:
    """Writes due when nobody waits for them (a dropped stream): a failure is a warning, not lost."""
    try:
        write()
    except ReviewtrailError as exc:
        warnings.warn(f"reviewtrail: an abandoned stream's call was not recorded: {exc}", RuntimeWarning, stacklevel=2)


@dataclass(frozen=True)
class Endpoint:
    """The endpoint a client calls (its ``host[:port]``, recorded in the manifest; the ``genai-prices`` provider
    its calls are priced with, ``None`` when unknown) and the recorder of its calls."""

    recorder: Recorder
    host: str
    provider: str | None
    backend: str  # the route named in reviewer traces: "openai" or "anthropic"
