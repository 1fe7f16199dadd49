"""The run rule, without I/O: which ``runNN`` a call joins (the rule itself is documented in
:mod:`reviewtrail.tracing.files._writer`), decided from facts about the skill folder's existing runs
(:class:`RunChoiceFacts`, gathered by :func:`reviewtrail.tracing.files._writer.choose_run`)."""

from __future__ import annotations

import msgspec

__all__ = ["LatestRun", "RunChoiceFacts", "decide_run"]


class LatestRun(msgspec.Struct, frozen=True):
    """Today's latest run: its name and number, the executor and reviewer backend its
    ``run.meta.json`` names (None when absent), and when its folder last changed (epoch seconds)."""

    name: str
    number: int
    executor: object
    backend: object
    last_activity: float


class RunChoiceFacts(msgspec.Struct, frozen=True):
    """``explicit_exists``: the explicit run's folder exists; ``thread_run``: the latest run (any
    day) that holds a call of the thread; ``latest_today``: today's latest run, if any."""

    explicit_exists: bool = False
    thread_run: str | None = None
    latest_today: LatestRun | None = None


def decide_run(
    facts: RunChoiceFacts,
    *,
    today: str,
    run_id: str | None,
    thread_id: str | None,
    executor: str | None,
    backend: str | None,
    idle_seconds: float,
    now: float,
) -> tuple[str, bool]:
    """(run id, must create): an explicit run; else the thread's run; else today's latest run when
    it was active less than ``idle_seconds`` ago with the same executor and backend; else the
    next run of today."""
    if run_id is not None:
        return run_id, not facts.explicit_exists
    if thread_id and facts.thread_run is not None:
        return facts.thread_run, False
    latest = facts.latest_today
    if latest is None:
        return f"{today}_run01", True
    same = latest.executor == executor and latest.backend == backend
    if now - latest.last_activity < idle_seconds and same:
        return latest.name, False
    return f"{today}_run{latest.number + 1:02d}", True
