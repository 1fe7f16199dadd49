"""The options of ``reviewtrail trace save``: every flag of the reference ``save_trace.sh``.

Each option's name is the name of its :class:`reviewtrail.tracing.TraceSaveRequest` field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = [
    "AgentId",
    "Backend",
    "DurationMs",
    "Effort",
    "Executor",
    "ExecutorFamily",
    "ExecutorModel",
    "FallbackReason",
    "FilesReferenced",
    "Gate",
    "IdentityValidated",
    "IndependenceVerified",
    "InputTokens",
    "MemoryHash",
    "Model",
    "NativeEvidence",
    "OutputTokens",
    "Prompt",
    "PromptFile",
    "Purpose",
    "ReportedReviewerModel",
    "RequestedReviewerModel",
    "Response",
    "ResponseFile",
    "ReviewCompleted",
    "ReviewPositive",
    "ReviewScopeComplete",
    "ReviewerFamily",
    "ReviewerKind",
    "ReviewerProfile",
    "RunId",
    "Score",
    "Skill",
    "SkillArgs",
    "Status",
    "ThreadId",
    "Tool",
    "TraceModeOpt",
    "Verdict",
]

Skill = Annotated[str, typer.Option("--skill", help="Skill name (letters, digits, '-', '_').")]
Purpose = Annotated[str, typer.Option("--purpose", help="Call purpose, e.g. round-1-review.")]
Backend = Annotated[str | None, typer.Option("--backend", help="Reviewer backend/route, e.g. grok.")]
Tool = Annotated[str | None, typer.Option("--tool", help="Tool used for the call, e.g. mcp__grok__grok.")]
Executor = Annotated[str | None, typer.Option("--executor", help="Executing host, e.g. codex.")]
ExecutorModel = Annotated[str | None, typer.Option("--executor-model", help="The executor's actual model.")]
RequestedReviewerModel = Annotated[
    str | None, typer.Option("--requested-reviewer-model", help="Reviewer model that was asked for.")
]
ReportedReviewerModel = Annotated[
    str | None, typer.Option("--reported-reviewer-model", help="Model the backend reported.")
]
Model = Annotated[str | None, typer.Option("--model", help="Legacy caller-supplied model field.")]
Effort = Annotated[str | None, typer.Option("--effort", help="Reasoning effort used.")]
ThreadId = Annotated[str | None, typer.Option("--thread-id", help="Reviewer session/thread id.")]
AgentId = Annotated[str | None, typer.Option("--agent-id", help="Native agent id.")]
PromptFile = Annotated[Path | None, typer.Option("--prompt-file", help="Prompt file ('-': stdin).")]
ResponseFile = Annotated[Path | None, typer.Option("--response-file", help="Response file, kept byte for byte.")]
Prompt = Annotated[str | None, typer.Option("--prompt", help="The prompt text.")]
Response = Annotated[str | None, typer.Option("--response", help="The response text.")]
Status = Annotated[str, typer.Option("--status", help="ok, fallback_used, success, completed, error...")]
Verdict = Annotated[str | None, typer.Option("--verdict", help="The reviewer's raw verdict.")]
ReviewCompleted = Annotated[bool, typer.Option("--review-completed", help="Finished, successful review.")]
ReviewScopeComplete = Annotated[
    bool, typer.Option("--review-scope-complete", help="Only when the requested inputs were actually covered.")
]
Gate = Annotated[
    bool,
    typer.Option(
        "--gate", help="Set --review-positive from the auto-review-loop gate: --score >= 6 and verdict ready/almost."
    ),
]
Score = Annotated[float | None, typer.Option("--score", help="With --gate: the reviewer's score.")]
ReviewPositive = Annotated[
    bool, typer.Option("--review-positive", help="Only after the skill's own positive gate succeeded.")
]
TraceModeOpt = Annotated[str | None, typer.Option("--trace-mode", help="full (default), meta or off.")]
FilesReferenced = Annotated[
    list[str] | None, typer.Option("--files-referenced", help="File the review covered (repeatable).")
]
DurationMs = Annotated[int | None, typer.Option("--duration-ms", min=0, help="How long the call took.")]
IdentityValidated = Annotated[
    bool,
    typer.Option(
        "--identity-validated", hidden=True, help="Kept for old callers; grants nothing (use --native-evidence)."
    ),
]
FallbackReason = Annotated[
    str | None, typer.Option("--fallback-reason", help="Why a fallback reviewer route was used.")
]
ReviewerProfile = Annotated[
    str | None, typer.Option("--reviewer-profile", help="The reviewer profile the skill selected.")
]
MemoryHash = Annotated[
    str | None, typer.Option("--memory-hash", help="Hash of the reviewer memory given with the prompt.")
]
ExecutorFamily = Annotated[
    str | None,
    typer.Option("--executor-family", help="Caller's claimed executor family: recorded, never used by the rules."),
]
ReviewerFamily = Annotated[
    str | None,
    typer.Option("--reviewer-family", help="Caller's claimed reviewer family: recorded, never used by the rules."),
]
IndependenceVerified = Annotated[
    str | None,
    typer.Option(
        "--independence-verified", help="Caller's claim (true/false/unverified): recorded, never used by the rules."
    ),
]
NativeEvidence = Annotated[
    Path | None,
    typer.Option(
        "--native-evidence",
        help="Host-session evidence (aris.copilot-native.evidence/v1) of a --backend copilot-native review; "
        "validated before anything is written.",
    ),
]
ReviewerKind = Annotated[str, typer.Option("--reviewer-kind", help="model (default) or deterministic.")]
InputTokens = Annotated[int | None, typer.Option("--input-tokens", min=0, help="Prompt tokens, if known.")]
OutputTokens = Annotated[int | None, typer.Option("--output-tokens", min=0, help="Response tokens.")]
SkillArgs = Annotated[str | None, typer.Option("--skill-args", help="Skill arguments ('--- trace: MODE' applies).")]
RunId = Annotated[str | None, typer.Option("--run-id", help="Join this run (YYYY-MM-DD_runNN).")]
