"""Stores for the inspector's audit pages (tests/test_web_pages.py), built with the library: an
artifact whose lineage holds a sandbox run with an environment snapshot and a run recorded
without one, its Reviewer Specialist review, reviewer-call traces over three rounds, and a
campaign with decisions in two scenario families."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reviewtrail.config import ReviewerSettings
from reviewtrail.human_review.records import ReviewItem
from reviewtrail.human_review.session import decide
from reviewtrail.store import Store

__all__ = [
    "HOSTILE_FAMILY",
    "REPORT_V1",
    "REPORT_V2",
    "TRACE_RUN",
    "Artifact",
    "artifact_with_two_runs",
    "campaign_in_two_families",
    "three_rounds",
]

REPORT_V1 = "line 1\nline 2\n"
REPORT_V2 = "line 1\nTransformers scale well [1].\nline 3\n"  # a citation with no reference: a finding
HOSTILE_FAMILY = "<script>alert(1)</script>&family"
TRACE_RUN = "2026-04-15_run01"
ROUNDS = (
    ("round-1", "Score: 5/10\n\nThe main table is missing the strongest baseline.\n", "not ready"),
    ("round-2", "Score: 7/10\n\nThe new baseline row closes my earlier gap.\n", "almost"),
    ("round-3", "Score: 7/10\n\nThe new baseline row closes my earlier gap.\n", "almost"),
)


@dataclass(frozen=True)
class Artifact:
    session_id: str
    snapshot_run: str  # the sandbox run with an environment snapshot
    unrecorded_run: str  # the run recorded without a result: no snapshot, cwd "unavailable"
    review_run: str


def artifact_with_two_runs(store: Store) -> Artifact:
    """``report.md`` v1, written by a real sandbox run with injected variables, and v2, written
    by a run recorded without a result (as ``verify --repair`` records an interrupted run), then
    reviewed at the quick tier; ``notes.md`` v1, never reviewed."""
    from reviewtrail.provenance.artifacts import declare_artifact
    from reviewtrail.provenance.runs import create_session, run_code
    from reviewtrail.provenance.runs._runs import record_run
    from reviewtrail.provenance.runs._snapshot import snapshot
    from reviewtrail.reviewer import review_artifact

    session = create_session(store)
    sid = session.session_id
    first = run_code(
        store,
        session_id=sid,
        code=f"open('report.md', 'w').write({REPORT_V1!r})\nopen('notes.md', 'w').write('notes\\n')",
        lang="python",
        env={"SEED": "42", "GREETING": "<b>hello</b>"},
    )
    declare_artifact(store, session_id=sid, name="report.md", path="report.md")
    declare_artifact(store, session_id=sid, name="notes.md", path="notes.md")
    before = snapshot(session.workspace)
    (session.workspace / "report.md").write_text(REPORT_V2, encoding="utf-8")  # what the interrupted run wrote
    second = record_run(
        store,
        session_id=sid,
        workspace=session.workspace,
        code="printf ... > report.md",
        lang="bash",
        result=None,
        before=before,
        timeout=60.0,
        network="none",
        allowlist=(),
        tool_name="reviewtrail.run",
        actor="user",
        failure="the sandbox was interrupted",
    )
    declare_artifact(store, session_id=sid, name="report.md", path="report.md")
    review = review_artifact(store, "report.md", settings=ReviewerSettings(tier="quick"), trigger="cli")
    return Artifact(sid, first.envelope.id, second.envelope.id, review.run.review_run_id)


def three_rounds(store: Store, project: Path) -> None:
    """Run ``auto-review-loop/2026-04-15_run01`` of ``project``: three reviewer calls, recorded
    in the store; the verdict and score change between the first two rounds only."""
    from reviewtrail.tracing.custody import record_call
    from reviewtrail.tracing.files import ReviewCall

    for purpose, response, verdict in ROUNDS:
        call = ReviewCall(
            skill="auto-review-loop",
            purpose=purpose,
            prompt="Review the paper.",
            response=response.encode(),
            backend="grok",
            executor="codex",
            executor_model="gpt-6-astra",
            requested_reviewer_model="grok-4",
            reported_reviewer_model="grok-4-0709",
            model="grok-4-0709",
            status="ok",
            verdict=verdict,
            review_completed=True,
            review_scope_complete=True,
        )
        record_call(call, project_dir=project, mode="full", run_id=TRACE_RUN, env={}, store=store)


def campaign_in_two_families(store: Store) -> tuple[list[ReviewItem], set[str]]:
    """Campaign ``camp`` v1: three items of family ``refunds`` (planted names, see
    support.web.PLANTED), two decided (a tie, a prefer), and one
    item of :data:`HOSTILE_FAMILY` decided as skip; and every name no page may show."""
    from support.human_review import add_item, add_prompt, add_run
    from support.web import planted_campaign

    items, hidden = planted_campaign(store)
    decide(store, items[0].item_id, {"disposition": "tie"}, reviewer="rev-1")
    decide(store, items[1].item_id, {"disposition": "prefer", "preferred": "A", "strength": "strong"}, reviewer="rev-1")
    prompt = add_prompt(store, family=HOSTILE_FAMILY, agents=("agent-x", "agent-y"))
    runs = [add_run(store, prompt, a) for a in ("agent-x", "agent-y")]
    hostile = add_item(store, prompt, *runs)
    decide(store, hostile.item_id, {"disposition": "skip"}, reviewer="rev-2")
    hidden.update(runs)
    hidden.update({"agent-x", "agent-y", "model-agent-x", "model-agent-y"})
    return [*items, hostile], hidden
