"""The four trace documents and the event line, built from one call's facts. Pure.

Field names are the protocol's (snake_case). ``full`` mode keeps the prompt text in
the request file and the response bytes in ``response.md``; ``meta`` mode keeps
neither anywhere, only their SHA-256 and length.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from reviewtrail.errors import InvalidInputError
from reviewtrail.tracing.files._layout import check_name
from reviewtrail.tracing.rules._assurance import Assurance, assess, declared_mismatches
from reviewtrail.tracing.rules._families import model_family

if TYPE_CHECKING:
    from reviewtrail.tracing.native._native_evidence import NativeEvidence

__all__ = [
    "CallLabels",
    "ReviewCall",
    "TraceMode",
    "build_event",
    "build_meta",
    "build_request",
    "build_run_meta",
    "event_from_meta",
    "iso",
]

TraceMode = Literal["full", "meta", "off"]


def iso(moment: datetime) -> str:
    """ISO 8601 with the local UTC offset and millisecond precision, as in the protocol's examples."""
    return moment.astimezone().isoformat(timespec="milliseconds")


_TEXT_FIELDS = (
    "verdict", "thread_id", "agent_id", "model", "backend", "tool", "executor", "effort", "fallback_reason",
    "reviewer_profile", "memory_hash", "declared_executor_family", "declared_reviewer_family",
    "declared_independence_verified", "prompt_manifest_id",
)  # fmt: skip


class CallLabels(msgspec.Struct):
    """What a reviewer call is saved under: its skill and purpose, the executor and the reviewer
    (backend, tool, models, effort), and its thread and agent. A call and the ``trace save``
    request that names it both start with these."""

    skill: str
    purpose: str
    backend: str | None = None
    tool: str | None = None
    executor: str | None = None
    executor_model: str | None = None
    requested_reviewer_model: str | None = None
    reported_reviewer_model: str | None = None
    model: str | None = None
    effort: str | None = None
    thread_id: str | None = None
    agent_id: str | None = None


class ReviewCall(CallLabels):
    """Everything known about one reviewer call.

    ``declared_*`` are the caller's own labels (``--executor-family``, ``--reviewer-family``,
    ``--independence-verified``): recorded as claims, never used by the rules. Identity is
    host-validated only through ``native_evidence`` (see ``validate_native_evidence``);
    ``identity_validated`` follows from it.
    """

    prompt: str | None = None
    response: bytes | None = None
    status: str = "ok"
    verdict: str | None = None
    review_completed: bool = False
    review_scope_complete: bool = False
    review_positive: bool = False
    files_referenced: list[str] = msgspec.field(default_factory=list)
    duration_ms: int | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    identity_validated: bool = False
    reviewer_kind: Literal["model", "deterministic"] = "model"
    error: dict[str, str] | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    fallback_reason: str | None = None
    reviewer_profile: str | None = None
    memory_hash: str | None = None
    declared_executor_family: str | None = None
    declared_reviewer_family: str | None = None
    declared_independence_verified: str | None = None
    native_evidence: NativeEvidence | None = None
    prompt_manifest_id: str | None = None  # the ledger's prompt manifest of the model call, when recorded

    def validate(self) -> None:
        """Check every fact before anything is written; a str response is kept as its UTF-8 bytes.

        A native host backend (``copilot-native``) takes its identities and response from its
        validated evidence (see ``_native_bind``).
        """
        check_name(self.skill, "skill")
        if isinstance(self.response, str):
            self.response = self.response.encode("utf-8")
        if self.response is not None and not isinstance(self.response, bytes):
            raise InvalidInputError(f"must be bytes or text, not {type(self.response).__name__}", field="response")
        if self.prompt is not None and not isinstance(self.prompt, str):
            raise InvalidInputError(f"must be text, not {type(self.prompt).__name__}", field="prompt")
        for name in _TEXT_FIELDS:
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise InvalidInputError(f"must be text, not {type(value).__name__}", field=name)
        for name in ("executor", "thread_id", "agent_id"):  # identifiers: also ledger actor and subject
            value = getattr(self, name)
            if value is not None and (
                not value or len(value) > 1024 or any(ord(c) < 32 or ord(c) == 127 for c in value)
            ):
                raise InvalidInputError("must be 1-1024 printable characters", field=name)
        check_name(self.purpose, "purpose")
        if not isinstance(self.status, str) or not self.status.strip():
            raise InvalidInputError("must not be empty", field="status")
        if any(ord(c) < 32 or ord(c) == 127 for c in self.status):
            raise InvalidInputError(
                f"{self.status!r} holds a control character (newline, tab, escape...)", field="status"
            )
        if self.reviewer_kind not in ("model", "deterministic"):
            raise InvalidInputError("must be 'model' or 'deterministic'", field="reviewer_kind")
        for name in ("duration_ms", "input_tokens", "output_tokens"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise InvalidInputError("must be a non-negative integer", field=name)
        if not all(isinstance(f, str) and f for f in self.files_referenced):
            raise InvalidInputError("must be a list of non-empty paths", field="files_referenced")
        from reviewtrail.tracing.native._native_bind import bind_native

        bind_native(self)

    def assurance(self) -> Assurance:
        return assess(
            executor_model=self.executor_model,
            requested_reviewer_model=self.requested_reviewer_model,
            reported_reviewer_model=self.reported_reviewer_model,
            status=self.status,
            review_completed=self.review_completed,
            review_scope_complete=self.review_scope_complete,
            review_positive=self.review_positive,
            identity_validated=self.native_evidence is not None,
            reviewer_kind=self.reviewer_kind,
            backend=self.backend,
        )

    def declared_mismatches(self, a: Assurance | None = None) -> list[str]:
        """The declared labels the rules contradict (field names)."""
        return declared_mismatches(
            a or self.assurance(),
            executor_family=self.declared_executor_family,
            reviewer_family=self.declared_reviewer_family,
            independence_verified=self.declared_independence_verified,
        )

    def executor_model_source(self) -> str:
        if self.native_evidence is not None:
            return "host-session-event"
        return "caller-declared" if self.executor_model else "unavailable"

    def times(self, now: datetime) -> tuple[datetime, datetime]:
        """(start, end) of the call: given times, else derived from ``duration_ms``, else ``now``."""
        end = self.ended_at or now
        if self.started_at is not None:
            return self.started_at, end
        if self.duration_ms is not None:
            return end - timedelta(milliseconds=self.duration_ms), end
        return end, end


def _digest(data: bytes | None) -> tuple[str | None, int | None]:
    if data is None:
        return None, None
    return hashlib.sha256(data).hexdigest(), len(data)


def build_run_meta(
    call: ReviewCall, *, run_id: str, started: datetime, project_dir: str, mode: TraceMode
) -> dict[str, Any]:
    return {
        "skill": call.skill,
        "run_id": run_id,
        "started_at": iso(started),
        "executor": call.executor,
        "executor_model": call.executor_model,
        "executor_family": model_family(call.executor_model),
        "executor_model_source": call.executor_model_source(),
        "reviewer_backend": call.backend,
        "project_dir": project_dir,
        "trace_mode": mode,
    }


def build_request(call: ReviewCall, a: Assurance, *, number: int, start: datetime, mode: TraceMode) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "call_number": number,
        "purpose": call.purpose,
        "timestamp": iso(start),
        "tool": call.tool,
        "model": call.model,
        "effort": call.effort,
        "backend": call.backend,
        "executor": call.executor,
        "executor_model": call.executor_model,
        "executor_family": a.identity.executor_family,
        "requested_reviewer_model": a.identity.requested_reviewer_model,
        "reported_reviewer_model": a.identity.reported_reviewer_model,
        "reviewer_model": a.identity.reviewer_model,
        "reviewer_model_source": a.identity.reviewer_model_source,
        "review_independence": a.review_independence,
        "acceptance_status": a.acceptance_status,
        "independence_verified": a.independence_verified,
        "review_completed": call.review_completed,
        "review_scope_complete": call.review_scope_complete,
        "verdict": call.verdict,
        "files_referenced": list(call.files_referenced),
        "thread_id": call.thread_id,
        "reviewer_kind": call.reviewer_kind,
        "trace_mode": mode,
        **_reference_fields(call, a),
    }
    prompt_bytes = call.prompt.encode("utf-8") if call.prompt is not None else None
    if mode == "full":
        doc["prompt"] = call.prompt
    else:
        doc["prompt_sha256"], doc["prompt_bytes"] = _digest(prompt_bytes)
    doc["review_positive"] = call.review_positive
    return doc


def build_meta(
    call: ReviewCall, a: Assurance, *, number: int, start: datetime, end: datetime, mode: TraceMode
) -> dict[str, Any]:
    sha, size = _digest(call.response)
    duration = call.duration_ms
    if duration is None and call.started_at is not None and call.ended_at is not None:
        duration = max(0, int((call.ended_at - call.started_at).total_seconds() * 1000))
    return {
        "call_number": number,
        "purpose": call.purpose,
        "timestamp": iso(end),
        "agent_id": call.agent_id,
        "thread_id": call.thread_id,
        "model": call.model,
        "reviewer_model": a.identity.reviewer_model,
        "reviewer_model_source": a.identity.reviewer_model_source,
        "requested_reviewer_model": a.identity.requested_reviewer_model,
        "reported_reviewer_model": a.identity.reported_reviewer_model,
        "model_family": a.identity.model_family,
        "executor_model": call.executor_model,
        "executor_family": a.identity.executor_family,
        "review_completed": call.review_completed,
        "review_scope_complete": call.review_scope_complete,
        "verdict": call.verdict,
        "review_independence": a.review_independence,
        "acceptance_status": a.acceptance_status,
        "independence_verified": a.independence_verified,
        "identity_validated": call.native_evidence is not None,
        "reviewer_kind": call.reviewer_kind,
        "backend": call.backend,
        **_reference_fields(call, a),
        "duration_ms": duration,
        "status": call.status,
        "error": call.error,
        "input_tokens": call.input_tokens,
        "output_tokens": call.output_tokens,
        "response_sha256": sha,
        "response_bytes": size,
        "trace_mode": mode,
        "review_positive": call.review_positive,
        # only when known, so that the meta of every other call keeps its bytes
        **({"prompt_manifest_id": call.prompt_manifest_id} if call.prompt_manifest_id is not None else {}),
    }


def _reference_fields(call: ReviewCall, a: Assurance) -> dict[str, Any]:
    """The reference helper's extra fields, and the caller's declared labels with their mismatches."""
    evidence = call.native_evidence
    return {
        "executor_model_source": call.executor_model_source(),
        "fallback_reason": call.fallback_reason,
        "reviewer_profile": call.reviewer_profile,
        "memory_hash": call.memory_hash,
        "native_evidence_id": evidence.evidence_id if evidence else None,
        "native_evidence_path": str(evidence.path) if evidence else None,
        "declared_executor_family": call.declared_executor_family,
        "declared_reviewer_family": call.declared_reviewer_family,
        "declared_independence_verified": call.declared_independence_verified,
        "declared_mismatches": call.declared_mismatches(a),
    }


def build_event(
    call: ReviewCall, a: Assurance, *, trace_path: str, number: int, end: datetime, mode: TraceMode
) -> dict[str, Any]:
    return {
        "event": "review_trace",
        "skill": call.skill,
        "purpose": call.purpose,
        "agent_id": call.agent_id,
        "trace_path": trace_path,
        "status": call.status,
        "call_number": number,
        "thread_id": call.thread_id,
        "acceptance_status": a.acceptance_status,
        "trace_mode": mode,
        "timestamp": iso(end),
    }


def event_from_meta(skill: str, trace_path: str, meta: dict[str, Any]) -> dict[str, Any]:
    """The event line of a call, rebuilt from its meta file (what :func:`build_event` wrote for it)."""
    return {
        "event": "review_trace",
        "skill": skill,
        "purpose": meta.get("purpose"),
        "agent_id": meta.get("agent_id"),
        "trace_path": trace_path,
        "status": meta.get("status"),
        "call_number": meta.get("call_number"),
        "thread_id": meta.get("thread_id"),
        "acceptance_status": meta.get("acceptance_status"),
        "trace_mode": meta.get("trace_mode", "full"),
        "timestamp": meta.get("timestamp"),
    }
