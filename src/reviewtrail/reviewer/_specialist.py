"""The Reviewer Specialist: an explicit, read-only review checkpoint for an artifact version.

Off unless enabled (``REVIEWTRAIL_REVIEWER=quick|smart|deep`` or ``reviewer = "..."`` in
reviewtrail.toml, read by :func:`reviewtrail.config.load_settings` and given here as
:class:`~reviewtrail.config.ReviewerSettings`). Triggered by ``reviewtrail review run``, by
:func:`review_artifact` (API) or by :func:`review_checkpoint`. It runs as its own checkpoint:
it never changes the artifact, never decides whether the main agent's response succeeded, and
never forces a re-run; its findings and a bounded summary are feedback for a later agent turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import msgspec

from reviewtrail.config import ReviewerSettings, TraceSettings
from reviewtrail.errors import ConfigError, InvalidInputError, NotFoundError
from reviewtrail.ledger import Recorded, format_time, new_id, new_record
from reviewtrail.media import MediaKind, is_text_media_type, media_kind
from reviewtrail.provenance.artifacts import VersionInfo, get_version
from reviewtrail.provenance.runs import DEFAULT_PROJECT
from reviewtrail.reviewer._cite_report import is_citation_code
from reviewtrail.reviewer._quick import quick_checks
from reviewtrail.reviewer._records import SUMMARY_LIMIT, ArtifactReviewRun, CheckResult, Decision, ReviewFinding
from reviewtrail.reviewer._reuse import configuration_digest, find_reusable, review_configuration
from reviewtrail.store import Store

__all__ = [
    "TIERS",
    "ReviewOutcome",
    "get_review",
    "review_artifact",
    "review_checkpoint",
    "reviewer_tier",
    "summarize",
    "version_reviews",
]

Tier = Literal["quick", "smart", "deep"]
Trigger = Literal["cli", "api", "review_checkpoint"]
TIERS: tuple[Tier, ...] = ("quick", "smart", "deep")
_TEXT_LIMIT = 2_000_000


def reviewer_tier(settings: ReviewerSettings | None = None) -> Tier | None:
    """The enabled tier, or ``None`` when the reviewer is off (the default, and without settings)."""
    value = ((settings.tier if settings is not None else None) or "off").strip().lower()
    if value in ("", "off", "false", "0", "no"):
        return None
    for tier in TIERS:
        if value == tier:
            return tier
    raise ConfigError(f"{value!r} is not off, quick, smart or deep", field="REVIEWTRAIL_REVIEWER")


@dataclass(frozen=True)
class ReviewOutcome(Recorded[ArtifactReviewRun]):
    """A recorded review run."""

    @property
    def run(self) -> ArtifactReviewRun:
        return self.record


def decide(checks: list[CheckResult], findings: list[ReviewFinding]) -> Decision:
    """``REVISE_AND_RETRY`` on any error or any ``CITATION_*`` finding (whatever its severity);
    ``SKIPPED`` when every check was skipped; ``ACCEPT_AND_PROCEED`` otherwise."""
    if any(f.severity == "error" or is_citation_code(f.code) for f in findings):
        return "REVISE_AND_RETRY"
    if all(c.status == "skipped" for c in checks):
        return "SKIPPED"
    return "ACCEPT_AND_PROCEED"


def summarize(name: str, version: int, tier: str, decision: str, findings: list[ReviewFinding]) -> str:
    """A bounded summary for a later agent turn's context (at most SUMMARY_LIMIT characters)."""
    errors = sum(f.severity == "error" for f in findings)
    warnings = sum(f.severity == "warning" for f in findings)
    head = f"Review of {name}@{version} ({tier}): {decision}; {errors} error(s), {warnings} warning(s)."
    parts = [head]
    for f in sorted(findings, key=lambda f: {"error": 0, "warning": 1, "info": 2}[f.severity]):
        parts.append(f" {f.code}: {f.message}")
    text = "".join(parts)
    return text if len(text) <= SUMMARY_LIMIT else text[: SUMMARY_LIMIT - 1] + "…"


def _text_of(store: Store, info: VersionInfo, kind: MediaKind) -> tuple[str | None, str | None]:
    """(text, why it could not be read): binary artifacts have neither; unreadable text says why."""
    content = info.version.content
    if kind == "other" and not is_text_media_type(str(content.get("mediaType", ""))):
        return None, None
    if int(content["size"]) > _TEXT_LIMIT:
        return None, f"the text is larger than {_TEXT_LIMIT:,} bytes"
    try:
        return store.cas.read(content["digest"]).decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, f"the text is not UTF-8 ({exc.reason} at byte {exc.start})"


def _chosen_tier(tier: Tier | None, settings: ReviewerSettings | None) -> Tier:
    chosen = tier or reviewer_tier(settings)
    if chosen is None:
        raise ConfigError(
            "the Reviewer Specialist is off; enable it with REVIEWTRAIL_REVIEWER=quick (or smart, deep)",
            field="reviewer",
        )
    if chosen not in TIERS:
        raise InvalidInputError(f"{chosen!r} is not quick, smart or deep", field="tier")
    return chosen


def review_artifact(
    store: Store,
    name: str,
    version: int | None = None,
    *,
    project_id: str = DEFAULT_PROJECT,
    tier: Tier | None = None,
    trigger: Trigger = "api",
    backend: Any = None,
    settings: ReviewerSettings | None = None,
    trace: TraceSettings | None = None,
    project_dir: str | Path | None = None,
    actor: str = "reviewer-specialist",
    force: bool = False,
) -> ReviewOutcome:
    """Run the enabled tier on an artifact version and persist an ArtifactReviewRun.

    An unchanged version already reviewed with the same configuration reuses that review (see
    :mod:`._reuse`) unless ``force``. Raises :class:`ConfigError` when the reviewer is off (in
    ``settings``; off without them) and no ``tier`` is forced by the caller. Smart and Deep call
    ``backend`` (default: the one ``settings`` configure) and trace each call by ``trace``.
    """
    settings = settings if settings is not None else ReviewerSettings()
    trace = trace if trace is not None else TraceSettings()
    chosen = _chosen_tier(tier, settings)
    started = format_time(datetime.now(UTC))
    info = get_version(store, name, version, project_id)
    kind = media_kind(str(info.version.content.get("mediaType", "")))
    reviewer = None
    if chosen in ("smart", "deep"):
        from reviewtrail.reviewer._llm import prepare_backend, reviewer_identity

        backend = prepare_backend(backend, settings, trace)
        reviewer = reviewer_identity(backend)
    configuration = review_configuration(chosen, kind, reviewer)
    digest = configuration_digest(configuration)
    content_digest = str(info.version.content["digest"])
    if not force:
        earlier = find_reusable(store, info, digest, content_digest)
        if earlier is not None:
            return _record_reuse(store, earlier[0], trigger=trigger, started=started, actor=actor)
    text, unreadable = _text_of(store, info, kind)
    checks, findings = quick_checks(store, info, kind, text, unreadable)
    review_run_id = new_id()
    manifests: list[str] = []
    traces: list[str] = []
    if chosen in ("smart", "deep"):
        from reviewtrail.reviewer._llm import llm_review

        llm = llm_review(store, info, text, findings, tier=chosen, backend=backend, project_dir=project_dir,
                         review_run_id=review_run_id, settings=settings, trace=trace)  # fmt: skip
        checks.append(llm.check)
        findings += llm.findings
        manifests, traces = llm.manifest_ids, llm.trace_paths
    decision = decide(checks, findings)
    v = info.version
    run = ArtifactReviewRun(
        review_run_id=review_run_id,
        artifact_id=v.artifact_id,
        project_id=v.project_id,
        name=v.name,
        version=v.version,
        version_record_id=info.envelope.id,
        tier=chosen,
        trigger=trigger,
        checks=checks,
        findings=findings,
        decision=decision,
        summary=summarize(v.name, v.version, chosen, decision, findings),
        started_at=started,
        ended_at=format_time(datetime.now(UTC)),
        prompt_manifest_ids=manifests,
        trace_paths=traces,
        configuration=configuration,
        configuration_digest=digest,
        content_digest=content_digest,
    )
    return _append(store, run, actor)


def _append(store: Store, run: ArtifactReviewRun, actor: str) -> ReviewOutcome:
    subject = f"artifact:{run.artifact_id}"
    [envelope] = store.append([new_record(run, actor=actor, privacy="private", subject=subject)])
    return ReviewOutcome(run, envelope)


def _record_reuse(
    store: Store, earlier: ArtifactReviewRun, *, trigger: Trigger, started: str, actor: str
) -> ReviewOutcome:
    """A review of its own that reuses ``earlier``'s checks, findings, decision and summary."""
    run = msgspec.structs.replace(
        earlier,
        review_run_id=new_id(),
        trigger=trigger,
        started_at=started,
        ended_at=format_time(datetime.now(UTC)),
        prompt_manifest_ids=[],
        trace_paths=[],
        reused_from_review_id=earlier.review_run_id,
    )
    return _append(store, run, actor)


def review_checkpoint(store: Store, name: str, version: int | None = None, **options: Any) -> ReviewOutcome | None:
    """``review_checkpoint``: review when the specialist is enabled; ``None`` (nothing done) when it is off,
    whatever tier the caller asks for."""
    if reviewer_tier(options.get("settings")) is None:
        return None
    return review_artifact(store, name, version, trigger="review_checkpoint", **options)


def version_reviews(
    store: Store, name: str, version: int | None, project_id: str = DEFAULT_PROJECT
) -> tuple[VersionInfo, list[ReviewOutcome]]:
    """The version of ``name`` (``version`` None: the latest; exit 3 when there is none) and the
    review runs of exactly that version record, oldest first ([] when none reviewed it)."""
    info = get_version(store, name, version, project_id)
    try:
        found = get_review(store, f"{name}@{info.version.version}", project_id)
    except NotFoundError:
        found = []
    return info, [o for o in found if o.run.version_record_id == info.envelope.id]


def get_review(store: Store, ref: str, project_id: str = DEFAULT_PROJECT) -> list[ReviewOutcome]:
    """A review by id, or every review of an artifact name (oldest first)."""
    rows = store.ledger.rows("rv_runs", review_run_id=ref)
    if not rows:
        from reviewtrail.provenance.artifacts import parse_spec
        from reviewtrail.provenance.records import artifact_id_for

        name, version = parse_spec(ref)
        artifact_id = artifact_id_for(project_id, name)
        rows = [
            r
            for r in store.ledger.rows("rv_runs", artifact_id=artifact_id)
            if version is None or r["version"] == version
        ]
    if not rows:
        raise NotFoundError(f"no review run or reviewed artifact {ref!r}", field="review")
    out = []
    for row in sorted(rows, key=lambda r: r["seq"]):
        env = store.ledger.get(row["record_id"])
        out.append(ReviewOutcome.of(ArtifactReviewRun, env))
    return out
