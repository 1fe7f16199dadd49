"""``campaign run``: each declared candidate agent over each prompt of a campaign version, through
the models layer, each run recorded with its prompt manifest, context receipt and output
(docs/human-review.md, "Candidate runs"). Re-running fills only what is missing.

One model call per needed run, even with several ``campaign run``s at once: before the call for
(agent, prompt), the runner claims the pair (``_run_claims``: a file lock in the store folder,
and on PostgreSQL an advisory lock too) and holds the claim until the run is appended. A pair
another process holds is put aside and waited for once every free pair is done; whoever gets a
claim reads the runs over the prompt again and makes no call when a run of that agent was
recorded since it planned (it reports that run: ``already-present`` when it is pairable, else
that run's ``failed`` or ``invalid-output``). A claim dies with its process."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from reviewtrail.errors import ReviewtrailError
from reviewtrail.human_review.campaigns._agents import BackendFor, backend_builder
from reviewtrail.human_review.campaigns._agents_file import AgentConfig
from reviewtrail.human_review.campaigns._campaigns import require_campaign
from reviewtrail.human_review.campaigns._run_batch import RunOutcome, run_records
from reviewtrail.human_review.campaigns._run_claims import RunClaims
from reviewtrail.human_review.reads._resolve import prompt_ref, run_facts, runs_over
from reviewtrail.human_review.rules._labels import prompt_label
from reviewtrail.human_review.rules._run_rules import PromptRef, RunFacts, pairable_runs
from reviewtrail.ledger import Privacy
from reviewtrail.models import ModelBackend, invoke
from reviewtrail.store import Store

__all__ = ["RUN_STATUSES_REPORTED", "RunEntry", "RunProgress", "RunReport", "run_campaign"]

RunEntryStatus = Literal["recorded", "already-present", "failed", "invalid-output", "not-configured"]
#: What happened to each (prompt, declared agent) of a run, in report order.
RUN_STATUSES_REPORTED: tuple[RunEntryStatus, ...] = (
    "recorded",
    "already-present",
    "failed",
    "invalid-output",
    "not-configured",
)

#: Called after each run this call had to make is settled (by its model call, or by the run another
#: ``campaign run`` recorded meanwhile): ``(done, total, entry)``.
RunProgress = Callable[[int, int, "RunEntry"], None]


@dataclass(frozen=True)
class RunEntry:
    """One declared agent over one prompt (named by its id and its short label,
    :func:`~._labels.prompt_label`): what this call did, and the run that now stands."""

    prompt_event_id: str
    scenario_family: str
    agent_id: str
    status: RunEntryStatus
    run_id: str | None = None
    retry_of: str | None = None
    problem: str | None = None  # the error of a failed run, or why its output was refused
    prompt_label: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "promptEventId": self.prompt_event_id,
            "promptLabel": self.prompt_label,
            "scenarioFamily": self.scenario_family,
            "agentId": self.agent_id,
            "status": self.status,
            "runId": self.run_id,
            "retryOf": self.retry_of,
            "problem": self.problem,
        }


@dataclass(frozen=True)
class RunReport:
    campaign_id: str
    version: int
    entries: list[RunEntry] = field(default_factory=list)

    def count(self, status: RunEntryStatus) -> int:
        return sum(1 for e in self.entries if e.status == status)

    def to_json(self) -> dict[str, Any]:
        return {
            "campaignId": self.campaign_id,
            "version": self.version,
            "counts": {status: self.count(status) for status in RUN_STATUSES_REPORTED},
            "runs": [e.to_json() for e in self.entries],
        }


@dataclass(frozen=True)
class _Planned:
    ref: PromptRef
    privacy: Privacy
    family: str
    agent: AgentConfig
    retry_of: str | None
    label: str  # the prompt's short label


def run_campaign(
    store: Store,
    campaign_id: str,
    version: int,
    agents: Sequence[AgentConfig],
    *,
    env: Mapping[str, str] | None = None,
    backend_for: BackendFor | None = None,
    progress: RunProgress | None = None,
) -> RunReport:
    """Run every declared agent that has no pairable run yet over every prompt of the campaign
    version, in prompt order. A configured agent's backend comes from ``backend_for`` (default:
    :func:`backend_builder` over ``env``). A backend failure is recorded as a failed run and an
    invalid response as a completed run with its ``outputProblem``; neither is ever paired. A run
    that replaces the agent's excluded run names it in ``retryOf``. An agent the prompt declares
    but ``agents`` lacks is reported ``not-configured`` and nothing is recorded for it."""
    require_campaign(store.ledger, campaign_id, version)
    prompts = sorted(
        store.ledger.rows("hr_prompts", campaign_id=campaign_id, campaign_version=version), key=lambda r: r["seq"]
    )
    configured = {agent.id: agent for agent in agents}
    get_backend = backend_for or backend_builder(env or {})
    report = RunReport(campaign_id, version)
    planned: list[tuple[int, _Planned]] = []
    for row in prompts:
        ref, now = prompt_ref(store.ledger, row["record_id"])
        facts = [f for f in (run_facts(store.ledger, run) for run in runs_over(store.ledger, ref.event_id)) if f]
        pairable, excluded = pairable_runs(facts, ref)
        standing = _standing_excluded(facts, excluded)
        label = prompt_label(ref.prompt.prompt)
        family = ref.prompt.scenario_family
        for agent_id in ref.prompt.candidate_agent_ids:
            if agent_id in pairable:
                run = pairable[agent_id].run.run_id
                entry = RunEntry(ref.event_id, family, agent_id, "already-present", run, prompt_label=label)
            elif agent_id not in configured:
                entry = RunEntry(ref.event_id, family, agent_id, "not-configured", prompt_label=label)
            else:
                job = _Planned(ref, now.privacy, family, configured[agent_id], standing.get(agent_id), label)
                planned.append((len(report.entries), job))
                entry = RunEntry(ref.event_id, family, agent_id, "failed", prompt_label=label)  # replaced below
            report.entries.append(entry)
    backends = {job.agent.id: get_backend(job.agent) for _, job in planned}  # config errors before any call
    done = 0
    with RunClaims(store) as claims:
        waiting: list[tuple[int, _Planned]] = []  # claimed by another process: waited for at the end
        for wait, queue in ((False, planned), (True, waiting)):
            for slot, job in queue:
                with claims.take(job.ref.event_id, job.agent.id, wait=wait) as held:
                    if not held:
                        waiting.append((slot, job))
                        continue
                    report.entries[slot] = _run_claimed(store, job, backends[job.agent.id])
                done += 1
                if progress is not None:
                    progress(done, len(planned), report.entries[slot])
    return report


def _run_claimed(store: Store, job: _Planned, backend: ModelBackend) -> RunEntry:
    """Under the claim on (agent, prompt): the run another process recorded since ``job`` was
    planned, if any, else a new run (see :func:`_run_one`)."""
    facts = [f for f in (run_facts(store.ledger, run) for run in runs_over(store.ledger, job.ref.event_id)) if f]
    pairable, excluded = pairable_runs(facts, job.ref)
    agent, family = job.agent.id, job.family
    label = job.label
    if agent in pairable:
        run_id = pairable[agent].run.run_id
        return RunEntry(job.ref.event_id, family, agent, "already-present", run_id, prompt_label=label)
    standing = _standing_excluded(facts, excluded).get(agent)
    if standing is None or standing == job.retry_of:
        return _run_one(store, job, backend)
    run = next(f.run for f in facts if f.run.run_id == standing)
    if run.status == "failed":
        return RunEntry(job.ref.event_id, family, agent, "failed", run.run_id, run.retry_of, run.error, label)
    if run.output_problem is not None:
        problem = run.output_problem
        return RunEntry(job.ref.event_id, family, agent, "invalid-output", run.run_id, run.retry_of, problem, label)
    # excluded for another reason (an imported run, say): retried, as a later campaign run would
    return _run_one(store, replace(job, retry_of=standing), backend)


def _standing_excluded(facts: Sequence[RunFacts], excluded: Mapping[str, Any]) -> dict[str, str]:
    """Per agent, its latest excluded run that was not itself replaced or a duplicate: the run a
    new run retries."""
    out: dict[str, str] = {}
    for f in sorted(facts, key=lambda f: f.seq):
        codes = {e.code for e in excluded.get(f.run.run_id, [])}
        if codes and not codes & {"replaced", "duplicate-agent"}:
            out[f.run.agent.id] = f.run.run_id
    return out


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _run_one(store: Store, job: _Planned, backend: ModelBackend) -> RunEntry:
    """One model call over the prompt, whole, as the only input (no system prompt, no tools), and
    the run's records appended in one batch."""
    started = _now()
    try:
        call = invoke(
            store,
            backend,
            [{"role": "user", "content": job.ref.prompt.prompt}],
            settings=job.agent.settings or None,
            session_id=f"campaign:{job.ref.prompt.campaign.id}",
            actor="reviewtrail.human-review",
            privacy=job.privacy,
        )
        outcome = RunOutcome(
            started_at=started,
            ended_at=_now(),
            response=call.completion.text,
            prompt_manifest_id=call.manifest_envelope.id,
        )
    except ReviewtrailError as exc:
        outcome = RunOutcome(started_at=started, ended_at=_now(), error=f"{type(exc).__name__}: {exc}")
    records = run_records(job.ref, job.agent.identity(), outcome, privacy=job.privacy, retry_of=job.retry_of)
    store.append(records)
    run = records[0].payload
    run_id = str(run["runId"])
    status: RunEntryStatus = "recorded"
    problem = run.get("error") or run.get("outputProblem")
    if run.get("error") is not None:
        status = "failed"
    elif run.get("outputProblem") is not None:
        status = "invalid-output"
    return RunEntry(job.ref.event_id, job.family, job.agent.id, status, run_id, job.retry_of, problem, job.label)
