"""One model call, recorded: CAS objects for the text, then a manifest and a usage record in one batch."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from reviewtrail.canonical import canonical_json, canonical_sha256
from reviewtrail.cas import CasRef
from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger import Envelope, NewRecord, Privacy, Recorded, new_id, new_record
from reviewtrail.models._completion import Completion, ModelBackend, check_messages, check_settings
from reviewtrail.models._prices import price_usage
from reviewtrail.models._records import (
    CALL_TYPES,
    REDACTION_STATUSES,
    CallType,
    ModelInvocationUsage,
    PromptManifest,
    RedactionStatus,
    SkillRef,
    TokenUsage,
)
from reviewtrail.models.catalog import MANIFEST_TYPE

if TYPE_CHECKING:
    from reviewtrail.models._usage import Tokens
    from reviewtrail.store import Store

__all__ = ["JSON_MEDIA_TYPE", "TEXT_MEDIA_TYPE", "Invocation", "RecordedTurn", "call_records", "invoke", "token_usage"]

TEXT_MEDIA_TYPE = "text/plain"  # UTF-8 bytes
JSON_MEDIA_TYPE = "application/json"  # RFC 8785 bytes


@dataclass(frozen=True)
class RecordedTurn:
    """The two records of a call, as appended."""

    prompt_manifest: Recorded[PromptManifest]
    model_usage: Recorded[ModelInvocationUsage]

    @property
    def manifest(self) -> PromptManifest:
        return self.prompt_manifest.record

    @property
    def usage(self) -> ModelInvocationUsage:
        return self.model_usage.record

    @property
    def manifest_envelope(self) -> Envelope:
        return self.prompt_manifest.envelope

    @property
    def usage_envelope(self) -> Envelope:
        return self.model_usage.envelope


@dataclass(frozen=True)
class Invocation(RecordedTurn):
    """The answer and the two records that now vouch for it."""

    completion: Completion


def invoke(
    store: Store,
    backend: ModelBackend,
    messages: Sequence[Mapping[str, Any]],
    *,
    system: str | None = None,
    settings: Mapping[str, Any] | None = None,
    skill_refs: Iterable[SkillRef | Mapping[str, Any]] = (),
    specialist: str | None = None,
    session_id: str | None = None,
    call_type: CallType = "task",
    actor: str = "agent",
    privacy: Privacy = "private",
    redaction_status: RedactionStatus = "not-applied",
) -> Invocation:
    """Call ``backend`` and record the call in ``store``.

    Inputs are checked before the call. Then the system prompt (``text/plain``), the
    message list (its RFC 8785 JSON, ``application/json``) and the response text
    (``text/plain``) go to the ``agent-state`` CAS pool, and a
    ``provenance.prompt-manifest@1`` record and a ``provenance.model-usage@1`` record
    pointing at it are appended in one atomic batch; both have subject
    ``model-call:<manifest id>``. The manifest also records the provider the call was
    priced with, the requested and reported model, the response id and finish reason, the
    token counts with their prompt-cache split, and each HTTP attempt (retries included), so
    that :func:`~reviewtrail.models.reprice` can price it again.

    If the backend call fails (:class:`~reviewtrail.errors.BackendUnavailableError` or
    any other error), the error propagates and nothing is written: no CAS object, no
    record. (Should the append itself fail, the CAS objects already stored stay, unreferenced
    and harmless.) Prompts are recorded as given: no secret redaction is applied
    (``redactionStatus`` says ``not-applied`` unless the caller asserts ``not-required``).
    """
    plain, messages_bytes, refs = _checked_inputs(
        messages, settings, skill_refs, call_type=call_type, redaction_status=redaction_status
    )
    NewRecord.make(type=MANIFEST_TYPE, actor=actor, privacy=privacy)  # actor and privacy, before paying for a call
    call = _timed_call(backend, plain, system=system, settings=settings)
    manifest = _manifest(
        backend,
        call,
        _stored_contents(store, system, messages_bytes, call.completion),
        settings=settings,
        skill_refs=refs,
        specialist=specialist,
        session_id=session_id,
        call_type=call_type,
        redaction_status=redaction_status,
    )
    manifest_record, usage_record, usage = call_records(
        manifest, call.duration_ms, call_type=call_type, actor=actor, privacy=privacy
    )
    manifest_env, usage_env = store.append([manifest_record, usage_record])
    return Invocation(Recorded(manifest, manifest_env), Recorded(usage, usage_env), completion=call.completion)


@dataclass(frozen=True)
class _Call:
    """A finished backend call and when it ran."""

    completion: Completion
    started_at: datetime
    ended_at: datetime
    duration_ms: int


@dataclass(frozen=True)
class _Contents:
    """The call's bytes in the ``agent-state`` pool."""

    system: CasRef | None
    messages: CasRef
    response: CasRef


def _checked_inputs(
    messages: Sequence[Mapping[str, Any]],
    settings: Mapping[str, Any] | None,
    skill_refs: Iterable[SkillRef | Mapping[str, Any]],
    *,
    call_type: str,
    redaction_status: str,
) -> tuple[list[dict[str, Any]], bytes, tuple[SkillRef, ...]]:
    """The messages as plain JSON and their RFC 8785 bytes, and the skill references; every input
    checked (nothing is called or written yet)."""
    if call_type not in CALL_TYPES:
        raise InvalidInputError(f"{call_type!r} is not one of {', '.join(CALL_TYPES)}", field="call_type")
    if redaction_status not in REDACTION_STATUSES:
        raise InvalidInputError(
            f"{redaction_status!r} is not one of {', '.join(REDACTION_STATUSES)}", field="redaction_status"
        )
    plain = check_messages(messages)
    messages_bytes = canonical_json(plain, field="messages")
    check_settings(settings, frozenset())
    refs = tuple(_skill_ref(r, i) for i, r in enumerate(skill_refs))
    return plain, messages_bytes, refs


def _timed_call(
    backend: ModelBackend,
    plain: list[dict[str, Any]],
    *,
    system: str | None,
    settings: Mapping[str, Any] | None,
) -> _Call:
    started_at = datetime.now(UTC)
    t0 = time.monotonic()
    completion = backend.complete(plain, system=system, settings=settings)
    duration_ms = round((time.monotonic() - t0) * 1000)
    return _Call(completion, started_at, datetime.now(UTC), duration_ms)


def _stored_contents(store: Store, system: str | None, messages_bytes: bytes, completion: Completion) -> _Contents:
    cas = store.cas
    system_ref = (
        None if system is None else cas.put(system.encode("utf-8"), pool="agent-state", media_type=TEXT_MEDIA_TYPE)
    )
    messages_ref = cas.put(messages_bytes, pool="agent-state", media_type=JSON_MEDIA_TYPE)
    response_ref = cas.put(completion.text.encode("utf-8"), pool="agent-state", media_type=TEXT_MEDIA_TYPE)
    return _Contents(system_ref, messages_ref, response_ref)


def _manifest(
    backend: ModelBackend,
    call: _Call,
    contents: _Contents,
    *,
    settings: Mapping[str, Any] | None,
    skill_refs: tuple[SkillRef, ...],
    specialist: str | None,
    session_id: str | None,
    call_type: CallType,
    redaction_status: RedactionStatus,
) -> PromptManifest:
    """The prompt manifest of a finished call, priced at its start."""
    completion = call.completion
    model = completion.model_reported or backend.model
    usage = token_usage(completion)
    return PromptManifest(
        model=model,
        endpoint_host=backend.endpoint_host,
        system_prompt=contents.system,
        input_messages=contents.messages,
        response=contents.response,
        skill_refs=skill_refs,
        specialist=specialist,
        usage=usage,
        cost=price_usage(backend.provider, model, usage, at=call.started_at),
        runtime_settings={**(settings or {}), **completion.settings},
        redaction_status=redaction_status,
        session_id=session_id,
        started_at=call.started_at,
        ended_at=call.ended_at,
        call_type=call_type,
        provider=backend.provider or None,
        requested_model=backend.model or None,
        reported_model=completion.model_reported,
        response_id=completion.response_id,
        finish_reason=completion.finish_reason,
        attempts=completion.attempts or None,
    )


def call_records(
    manifest: PromptManifest, duration_ms: int, *, call_type: CallType, actor: str, privacy: Privacy
) -> tuple[NewRecord, NewRecord, ModelInvocationUsage]:
    """The manifest record, the usage record naming it (by id and payload hash, both known before
    appending; both have subject ``model-call:<manifest id>``), and that usage (the call's times
    are the manifest's)."""
    manifest_id = new_id()
    subject = f"model-call:{manifest_id}"
    manifest_record = new_record(manifest, actor=actor, privacy=privacy, subject=subject, id=manifest_id)
    usage = ModelInvocationUsage(
        usage=manifest.usage,
        cost=manifest.cost,
        started_at=manifest.started_at,
        ended_at=manifest.ended_at,
        duration_ms=duration_ms,
        manifest_id=manifest_id,
        manifest_hash=canonical_sha256(manifest_record.payload),
        call_type=call_type,
    )
    return manifest_record, new_record(usage, actor=actor, privacy=privacy, subject=subject), usage


def token_usage(counts: Completion | Tokens) -> TokenUsage:
    """The token counts of an answer, as a record keeps them."""
    return TokenUsage.of(
        counts.input_tokens,
        counts.output_tokens,
        cache_read_tokens=counts.cache_read_tokens,
        cache_write_tokens=counts.cache_write_tokens,
        cache_write_5m_tokens=counts.cache_write_5m_tokens,
        cache_write_1h_tokens=counts.cache_write_1h_tokens,
    )


def _skill_ref(value: SkillRef | Mapping[str, Any], index: int) -> SkillRef:
    if isinstance(value, SkillRef):
        return value
    return SkillRef.read(dict(value), field=f"skill_refs[{index}]")
