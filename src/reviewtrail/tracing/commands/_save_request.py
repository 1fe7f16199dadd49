"""``trace save`` as a request: every option of the reference helper, named, then one save.

:func:`trace_save_request` checks that the options name exactly the request's fields (so the
command line and the request cannot drift apart); :func:`save_trace` reads the prompt and
response, revalidates native evidence, records the call and warns about contradicted claims.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from reviewtrail.tracing.commands._cli_support import read_prompt, read_response, split_files, warn_claims
from reviewtrail.tracing.custody._ledger_link import StoreLocator
from reviewtrail.tracing.custody._record import TraceResult, record_call
from reviewtrail.tracing.files._documents import CallLabels, ReviewCall

if TYPE_CHECKING:
    from reviewtrail.store import Store
    from reviewtrail.tracing.native._native_evidence import NativeEvidence

__all__ = ["TraceSaveRequest", "save_trace", "trace_save_request"]


class TraceSaveRequest(CallLabels, frozen=True):  # type: ignore[misc]  # msgspec freezes the labels too
    """The options of ``reviewtrail trace save`` (and of the reference ``save_trace.sh``): the
    call's labels, then the rest."""

    prompt_file: Path | None = None
    response_file: Path | None = None
    prompt: str | None = None
    response: str | None = None
    status: str = "ok"
    verdict: str | None = None
    review_completed: bool = False
    review_scope_complete: bool = False
    review_positive: bool = False
    trace_mode: str | None = None
    files_referenced: list[str] | None = None
    duration_ms: int | None = None
    identity_validated: bool = False
    fallback_reason: str | None = None
    reviewer_profile: str | None = None
    memory_hash: str | None = None
    executor_family: str | None = None
    reviewer_family: str | None = None
    independence_verified: str | None = None
    native_evidence: Path | None = None
    reviewer_kind: str = "model"
    input_tokens: int | None = None
    output_tokens: int | None = None
    skill_args: str | None = None
    run_id: str | None = None
    project_dir: Path | None = None
    gate: bool = False  # set review_positive from the positive gate (:mod:`reviewtrail.tracing.rules._gate`) and score
    score: float | None = None  # the reviewer's score, read by the gate only (not a trace field)


FIELDS = frozenset(TraceSaveRequest.__struct_fields__)


def trace_save_request(options: Mapping[str, Any]) -> TraceSaveRequest:
    """The request of the ``trace save`` options, by name. Options that name no field, or
    required fields missing, are a programming error (``TypeError`` naming them)."""
    unknown = sorted(set(options) - FIELDS)
    if unknown:
        raise TypeError(f"trace save has no option(s) {', '.join(unknown)}")
    return _gated(TraceSaveRequest(**options))


def _gated(request: TraceSaveRequest) -> TraceSaveRequest:
    """With ``gate``: ``review_positive`` as the /auto-review-loop gate decides from ``score``
    and ``verdict``; a ``--review-positive`` the gate does not grant is refused (exit 2). A score
    without ``gate`` is refused: nothing else reads it."""
    from reviewtrail.errors import InvalidInputError
    from reviewtrail.tracing.rules._gate import positive_gate

    if not request.gate:
        if request.score is not None:
            raise InvalidInputError("is read only by --gate", field="score")
        return request
    outcome = positive_gate(request.score, request.verdict)
    if request.review_positive and not outcome.positive:
        raise InvalidInputError(f"the positive gate does not grant it ({outcome.reason})", field="review-positive")
    return msgspec.structs.replace(request, review_positive=outcome.positive)


def _native_evidence(path: Path | None) -> NativeEvidence | None:
    """The call's validated host-session evidence, when ``--native-evidence`` names one."""
    if path is None:
        return None
    from reviewtrail.tracing.native._native_evidence import validate_native_evidence

    return validate_native_evidence(path)


# The request's fields a call takes as they are, each named here: the labels, then the others (a
# field new to both the request and the call, a new label too, is not carried until it is listed).
# The others are read, split, checked or renamed first; ``identity_validated`` is never carried:
# only native evidence validates identity.
_AS_GIVEN = (
    *("skill", "purpose", "backend", "tool", "executor", "executor_model", "requested_reviewer_model"),
    *("reported_reviewer_model", "model", "effort", "thread_id", "agent_id"),
    "reviewer_kind", "reviewer_profile", "memory_hash", "status", "verdict",
    *("fallback_reason", "review_completed", "review_positive", "review_scope_complete", "duration_ms"),
    *("input_tokens", "output_tokens"),
)  # fmt: skip


def _review_call(r: TraceSaveRequest) -> ReviewCall:
    return ReviewCall(
        **{name: getattr(r, name) for name in _AS_GIVEN},
        prompt=read_prompt(r.prompt, r.prompt_file),
        response=read_response(r.response, r.response_file),
        files_referenced=split_files(r.files_referenced),
        declared_executor_family=r.executor_family,
        declared_reviewer_family=r.reviewer_family,
        declared_independence_verified=r.independence_verified,
        native_evidence=_native_evidence(r.native_evidence),
    )


def save_trace(
    request: TraceSaveRequest, *, env: Mapping[str, str], store: Store | StoreLocator | None = None
) -> TraceResult:
    """Save the request's call (see :func:`~reviewtrail.tracing.custody.record_call`; ``env``: the trace
    settings by variable name), then warn on stderr about each declared label the rules
    contradict and about ``--identity-validated``, which grants nothing."""
    call = _review_call(request)
    result = record_call(
        call,
        project_dir=request.project_dir,
        mode=request.trace_mode,
        skill_args=request.skill_args,
        run_id=request.run_id,
        env=env,
        store=store,
    )
    warn_claims(call, identity_flag=request.identity_validated)
    return result
