"""The trace run rule (tracing.rules._run_choice): which runNN a call joins, from facts about existing runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.errors import InvalidInputError
from reviewtrail.tracing.files._writer import choose_run, run_choice_facts
from reviewtrail.tracing.rules._run_choice import LatestRun, RunChoiceFacts, decide_run

TODAY = "2026-04-16"
NOW = 1_000_000.0
IDLE = 1800.0


def _decide(facts: RunChoiceFacts, **kw: object) -> tuple[str, bool]:
    args: dict[str, object] = dict(
        today=TODAY, run_id=None, thread_id=None, executor="codex", backend="openai", idle_seconds=IDLE, now=NOW
    )
    return decide_run(facts, **{**args, **kw})  # type: ignore[arg-type]


_LATEST = st.builds(
    LatestRun,
    name=st.integers(1, 120).map(lambda n: f"{TODAY}_run{n:02d}"),
    number=st.integers(1, 120),
    executor=st.sampled_from(["codex", "claude", None, 3]),
    backend=st.sampled_from(["openai", "anthropic", None]),
    last_activity=st.floats(NOW - 2 * IDLE, NOW),
)
_FACTS = st.builds(
    RunChoiceFacts,
    explicit_exists=st.booleans(),
    thread_run=st.sampled_from([None, "2026-04-01_run03"]),
    latest_today=st.none() | _LATEST,
)


@given(
    _FACTS,
    st.sampled_from([None, "2026-01-01_run07"]),
    st.sampled_from([None, "", "t-1"]),
    st.sampled_from(["codex", "claude", None]),
    st.sampled_from(["openai", None]),
)
def test_the_run_rule_in_order(
    facts: RunChoiceFacts, run_id: str | None, thread_id: str | None, executor: str | None, backend: str | None
) -> None:
    chosen = _decide(facts, run_id=run_id, thread_id=thread_id, executor=executor, backend=backend)
    latest = facts.latest_today
    if run_id is not None:  # 1. an explicit run, created when missing
        assert chosen == (run_id, not facts.explicit_exists)
    elif thread_id and facts.thread_run is not None:  # 2. the thread's run
        assert chosen == (facts.thread_run, False)
    elif latest is None:  # 4. the first run of today
        assert chosen == (f"{TODAY}_run01", True)
    elif NOW - latest.last_activity < IDLE and (latest.executor, latest.backend) == (executor, backend):
        assert chosen == (latest.name, False)  # 3. today's latest, still active, same executor and backend
    else:  # 4. the next run of today
        assert chosen == (f"{TODAY}_run{latest.number + 1:02d}", True)
    assert chosen[1] or chosen[0] in (run_id, facts.thread_run, latest and latest.name)


def test_the_idle_window_is_strict() -> None:
    latest = LatestRun(f"{TODAY}_run04", 4, "codex", "openai", NOW - IDLE)
    assert _decide(RunChoiceFacts(latest_today=latest)) == (f"{TODAY}_run05", True)
    just_active = LatestRun(f"{TODAY}_run04", 4, "codex", "openai", NOW - IDLE + 0.001)
    assert _decide(RunChoiceFacts(latest_today=just_active)) == (f"{TODAY}_run04", False)
    assert _decide(RunChoiceFacts(latest_today=LatestRun(f"{TODAY}_run99", 99, "x", "y", 0))) == (
        f"{TODAY}_run100",
        True,
    )


def _run(skill: Path, name: str, meta: dict[str, object] | None, calls: dict[str, dict[str, object]]) -> Path:
    path = skill / name
    path.mkdir(parents=True)
    if meta is not None:
        (path / "run.meta.json").write_text(json.dumps(meta))
    for filename, doc in calls.items():
        (path / filename).write_text(json.dumps(doc))
    return path


def test_the_facts_come_from_the_skill_folder(tmp_path: Path) -> None:
    skill = tmp_path / "research-review"
    _run(skill, "2026-04-10_run02", {}, {"001-review.request.json": {"thread_id": "t-1"}})
    _run(skill, "2026-04-12_run01", {}, {"001-review.meta.json": {"thread_id": "t-1"}})
    _run(skill, f"{TODAY}_run01", {"executor": "codex"}, {})
    latest = _run(skill, f"{TODAY}_run03", {"executor": "codex", "reviewer_backend": "openai"}, {})
    os.utime(latest, (NOW - 5, NOW - 5))
    (skill / f"{TODAY}_run09.txt").write_text("not a run folder")

    assert run_choice_facts(skill, today=TODAY, run_id=None, thread_id="t-1") == RunChoiceFacts(
        thread_run="2026-04-12_run01"
    )
    assert run_choice_facts(skill, today=TODAY, run_id=None, thread_id="t-2") == RunChoiceFacts(
        latest_today=LatestRun(f"{TODAY}_run03", 3, "codex", "openai", NOW - 5)
    )
    assert run_choice_facts(skill, today="2026-04-17", run_id=None, thread_id=None) == RunChoiceFacts()
    assert run_choice_facts(skill, today=TODAY, run_id=f"{TODAY}_run01", thread_id="t-1") == RunChoiceFacts(
        explicit_exists=True
    )
    kw: dict[str, object] = dict(today=TODAY, thread_id=None, executor="codex", backend="openai", idle_seconds=IDLE)
    assert choose_run(skill, run_id=None, now=NOW, **kw) == (f"{TODAY}_run03", False)  # type: ignore[arg-type]
    assert choose_run(skill, run_id=None, now=NOW + IDLE, **kw) == (f"{TODAY}_run04", True)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError) as info:
        choose_run(skill, run_id="../x", now=NOW, **kw)  # type: ignore[arg-type]
    assert info.value.field == "run_id"
