"""Smart and Deep tiers: an LLM reviewer through ``reviewtrail.models``, every call traced.

Same checkpoint, finding and summary contract as the Quick tier. Each call is recorded as a
PromptManifest (by ``invoke``) and saved as a reviewer trace (skill ``reviewer-specialist``)
with honest identity fields: the requested model is the backend's configured model, the
reported model only what the endpoint said, and the review counts as positive only when the
specialist's own gate (no error findings from any check) holds. The LLM and the trace mode
come from the caller's :class:`~reviewtrail.config.ReviewerSettings` and
:class:`~reviewtrail.config.TraceSettings`; nothing here reads the environment.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from reviewtrail.config import ReviewerSettings, TraceSettings
from reviewtrail.errors import ConfigError
from reviewtrail.provenance.artifacts import VersionInfo, lineage, render_tree
from reviewtrail.reviewer._records import CheckResult, ReviewFinding
from reviewtrail.store import Store

__all__ = ["LlmReview", "configured_backend", "llm_review", "prepare_backend", "reviewer_identity"]

_PROMPT_TEXT_LIMIT = 60_000
_CODE = re.compile(r"[^A-Z0-9_]")


@dataclass
class LlmReview:
    check: CheckResult
    findings: list[ReviewFinding] = field(default_factory=list)
    manifest_ids: list[str] = field(default_factory=list)
    trace_paths: list[str] = field(default_factory=list)


def configured_backend(settings: ReviewerSettings) -> Any:
    """The reviewer's LLM backend named by ``settings.backend`` (REVIEWTRAIL_REVIEWER_BACKEND:
    openai, anthropic)."""
    from reviewtrail.models import AnthropicBackend, OpenAICompatibleBackend

    kind = (settings.backend or "").lower()
    model = settings.model or ""
    if kind == "openai":
        base = settings.base_url if settings.base_url is not None else "https://api.openai.com/v1"
        return OpenAICompatibleBackend(base, settings.openai_api_key, model or "gpt-4o")
    if kind == "anthropic":
        return AnthropicBackend(settings.anthropic_api_key or "", model or "claude-sonnet-4-5")
    raise ConfigError(
        "smart and deep reviews need an LLM: set REVIEWTRAIL_REVIEWER_BACKEND=openai|anthropic "
        "(and REVIEWTRAIL_REVIEWER_MODEL), or pass a backend",
        field="REVIEWTRAIL_REVIEWER_BACKEND",
    )


def prepare_backend(backend: Any, settings: ReviewerSettings, trace: TraceSettings) -> Any:
    """The backend a Smart or Deep review will call: ``backend`` or the one ``settings`` configure,
    once the trace mode allows such a review (it keeps the prompt and the response)."""
    from reviewtrail.tracing.files import resolve_mode

    mode = resolve_mode(None, env=trace.environ())
    if mode != "full":
        raise ConfigError(
            f"trace mode is {mode!r}: Smart and Deep reviews keep the prompt and the response (a PromptManifest and "
            "a trace), which that mode forbids; use the Quick tier or trace mode full",
            field="ARIS_TRACE_MODE",
        )
    return backend or configured_backend(settings)


def reviewer_identity(backend: Any) -> dict[str, Any]:
    """What identifies the LLM reviewer in a review's configuration: backend kind, endpoint host, model."""
    return {
        "kind": type(backend).__name__,
        "endpoint": getattr(backend, "endpoint_host", None),
        "model": getattr(backend, "model", None),
    }


def _prompt(info: VersionInfo, text: str | None, findings: list[ReviewFinding], context: str | None) -> str:
    v = info.version
    body = text if text is not None else "(binary artifact: content not shown)"
    truncated = text is not None and len(body) > _PROMPT_TEXT_LIMIT
    parts = [
        f"You are reviewing the artifact {v.name}@{v.version}. Report problems with its claims, citations and",
        'computations. Answer with one JSON object: {"verdict": "ready"|"revise", "findings": [{"code":',
        '"UPPER_SNAKE", "severity": "error"|"warning"|"info", "message": "..."}]}.',
        "",
        "Automatic checks already found:",
        *(f"- {f.code} ({f.severity}): {f.message}" for f in findings),
        "" if findings else "- nothing",
        "Artifact content:" + (" (truncated)" if truncated else ""),
        body[:_PROMPT_TEXT_LIMIT],
    ]
    if context:
        parts += ["", "Lineage of the artifact:", context]
    return "\n".join(parts)


def _first_object(text: str) -> Any:
    """The first JSON object in ``text`` that has a "findings" or "verdict" key (prose around it allowed)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            doc, _end = decoder.raw_decode(text, start)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and ("findings" in doc or "verdict" in doc):
            return doc
        start = text.find("{", start + 1)
    return None


def _parse(text: str, check: str) -> tuple[str | None, list[ReviewFinding], bool]:
    doc = _first_object(text)
    if not isinstance(doc, dict) or not isinstance(doc.get("findings", []), list):
        return (
            None,
            [
                ReviewFinding.new(
                    code="LLM_REVIEW_UNPARSEABLE",
                    severity="warning",
                    check=check,
                    message="the LLM reviewer's answer was not the requested JSON",
                )
            ],
            False,
        )
    out = []
    for item in doc.get("findings", []):
        if not isinstance(item, dict):
            continue
        code = _CODE.sub("_", str(item.get("code", "LLM_FINDING")).upper())[:60].strip("_") or "LLM_FINDING"
        if not code[0].isalpha() or len(code) < 3:
            code = f"LLM_{code}"
        said = item.get("severity")
        severity: Literal["error", "warning", "info"] = (
            "error" if said == "error" else "info" if said == "info" else "warning"
        )
        out.append(
            ReviewFinding(code=code, severity=severity, check=check, message=str(item.get("message", ""))[:2000])
        )
    verdict = doc.get("verdict")
    return (str(verdict) if verdict is not None else None), out, True


def llm_review(
    store: Store,
    info: VersionInfo,
    text: str | None,
    findings: list[ReviewFinding],
    *,
    tier: str,
    backend: Any = None,
    project_dir: str | Path | None = None,
    review_run_id: str,
    settings: ReviewerSettings,
    trace: TraceSettings,
) -> LlmReview:
    from reviewtrail.models import invoke
    from reviewtrail.tracing.custody import record_call
    from reviewtrail.tracing.files import ReviewCall

    backend = prepare_backend(backend, settings, trace)
    # A scripted backend is a stand-in, not a semantic model review: it is recorded as deterministic.
    reviewer_kind = "deterministic" if getattr(backend, "endpoint_host", "") == "scripted.local" else "model"
    context = _lineage_context(store, info) if tier == "deep" else None
    rounds = 2 if tier == "deep" else 1
    result = LlmReview(CheckResult(check=tier, status="passed"))
    prompt = _prompt(info, text, findings, context)
    for round_no in range(1, rounds + 1):
        if round_no == 2:
            prompt += "\n\nSecond pass: look for what the first pass missed; be adversarial about the numbers."
        turn = invoke(
            store,
            backend,
            [{"role": "user", "content": prompt}],
            call_type="task",
            actor="reviewer-specialist",
            specialist="reviewer-specialist",
        )
        answer = turn.completion.text
        verdict, found, parsed = _parse(answer, tier)
        result.findings += found
        result.manifest_ids.append(turn.manifest_envelope.id)
        # The specialist's own positive gate: the reviewer said "ready" and no check found an error.
        gate = (
            parsed
            and (verdict or "").strip().lower() == "ready"
            and not any(f.severity == "error" for f in [*findings, *result.findings])
        )
        call = ReviewCall(
            skill="reviewer-specialist",
            purpose=f"{tier}-review-round-{round_no}",
            prompt=prompt,
            response=answer.encode("utf-8"),
            backend=getattr(backend, "endpoint_host", None),
            tool="reviewtrail.models.invoke",
            executor="reviewtrail",
            executor_model=settings.executor_model or None,
            requested_reviewer_model=getattr(backend, "model", None),
            reported_reviewer_model=turn.completion.model_reported,
            thread_id=review_run_id,
            status="ok",
            verdict=verdict,
            review_completed=parsed,
            review_scope_complete=parsed and text is not None and len(text) <= _PROMPT_TEXT_LIMIT,
            review_positive=gate,
            reviewer_kind=reviewer_kind,  # type: ignore[arg-type]
            input_tokens=turn.completion.input_tokens,
            output_tokens=turn.completion.output_tokens,
            started_at=turn.manifest.started_at,
            ended_at=turn.manifest.ended_at,
        )
        # no store: the PromptManifest already records the call in the ledger
        saved = record_call(call, project_dir=project_dir, env=trace.environ())
        if saved.run_path is not None and saved.meta_path is not None:
            result.trace_paths.append(str(saved.meta_path))
    result.check = _tier_check(tier, result.findings)
    return result


def _lineage_context(store: Store, info: VersionInfo) -> str:
    """The artifact's lineage as a tree, the Deep tier's context (or why it could not be read)."""
    try:
        return render_tree(lineage(store, info.version.name, info.version.version, info.version.project_id))
    except Exception as exc:
        return f"(lineage unavailable: {exc})"


def _tier_check(tier: str, findings: list[ReviewFinding]) -> CheckResult:
    """The LLM tier's check: inconclusive when an answer could not be read, failed on any error."""
    if any(f.code == "LLM_REVIEW_UNPARSEABLE" for f in findings):
        return CheckResult(check=tier, status="inconclusive", detail="the LLM's answer could not be read")
    if any(f.severity == "error" for f in findings):
        return CheckResult(check=tier, status="failed")
    return CheckResult(check=tier, status="passed")
