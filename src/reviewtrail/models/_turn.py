"""A model call made elsewhere (by a provider's own SDK client), recorded as :func:`invoke` records its
calls: CAS objects for the text, then a prompt manifest and a usage record in one batch."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from reviewtrail.canonical import canonical_json
from reviewtrail.cas import CasRef
from reviewtrail.ledger import Privacy, Recorded
from reviewtrail.models._invoke import JSON_MEDIA_TYPE, TEXT_MEDIA_TYPE, RecordedTurn, call_records, token_usage
from reviewtrail.models._prices import price_usage
from reviewtrail.models._records import CallError, CallOutcome, CallType, PromptManifest, RedactionStatus
from reviewtrail.models._usage import Tokens

if TYPE_CHECKING:
    from reviewtrail.store import Store

__all__ = ["ModelTurn", "record_turn"]

_UNKNOWN_MODEL = "unknown"


@dataclass(frozen=True)
class ModelTurn:
    """Everything known about one finished model call, as plain values.

    ``messages`` is the input as sent (any JSON value: a message list, or the text of a one-shot
    input); ``system`` the system prompt sent beside it (text, or a JSON value such as a list of
    content blocks), ``None`` when none was. ``response_text`` is the answer's text as it arrived
    (the part that arrived, for an incomplete or failed call). ``settings`` are the other request
    fields sent. ``outcome`` is ``None`` for a call that completed. ``tool_calls`` is the list of the
    tool calls the answer made, in the endpoint's own JSON shape (``None`` or empty: none).
    """

    endpoint_host: str
    provider: str | None
    requested_model: str | None
    reported_model: str | None
    messages: Any
    response_text: str
    started_at: datetime
    ended_at: datetime
    duration_ms: int
    system: Any = None
    tokens: Tokens = field(default_factory=Tokens)
    settings: Mapping[str, Any] = field(default_factory=dict)
    response_id: str | None = None
    finish_reason: str | None = None
    outcome: CallOutcome | None = None
    error: CallError | None = None
    tool_calls: Any = None


def record_turn(
    store: Store,
    turn: ModelTurn,
    *,
    call_type: CallType = "task",
    actor: str = "agent",
    privacy: Privacy = "private",
    session_id: str | None = None,
    specialist: str | None = None,
    redaction_status: RedactionStatus = "not-applied",
) -> RecordedTurn:
    """Record ``turn`` in ``store``: the input (its RFC 8785 JSON), the system prompt (UTF-8 text, or
    the RFC 8785 JSON of a non-text value), the answer text and its tool calls (RFC 8785 JSON, when it
    made any) go to the ``agent-state`` pool, then a
    ``provenance.prompt-manifest@1`` and a ``provenance.model-usage@1`` naming it are appended in one
    atomic batch, both with subject ``model-call:<manifest id>``. The call is priced at its start from
    the provider, the model that answered (else the requested one) and the tokens. Every write is
    durable when this returns. Values that have no canonical JSON form raise
    :class:`~reviewtrail.errors.CanonicalJSONError` before anything is written."""
    messages_bytes = canonical_json(turn.messages, field="messages")
    system_bytes, system_type = _system(turn.system)
    settings = dict(turn.settings)
    canonical_json(settings, field="settings")
    tool_calls_bytes = canonical_json(list(turn.tool_calls), field="tool_calls") if turn.tool_calls else None
    texts = [turn.response_text.encode("utf-8")]
    if system_type == TEXT_MEDIA_TYPE and system_bytes is not None:
        texts.append(system_bytes)
    cas = store.cas
    text_refs = cas.put_many(texts, pool="agent-state", media_type=TEXT_MEDIA_TYPE)
    json_items = [messages_bytes] + ([system_bytes] if system_type == JSON_MEDIA_TYPE and system_bytes else [])
    json_items += [tool_calls_bytes] if tool_calls_bytes is not None else []
    json_refs = cas.put_many(json_items, pool="agent-state", media_type=JSON_MEDIA_TYPE)
    system_ref: CasRef | None = None
    if system_bytes is not None:
        system_ref = text_refs[1] if system_type == TEXT_MEDIA_TYPE else json_refs[1]
    tool_calls_ref = json_refs[-1] if tool_calls_bytes is not None else None
    manifest = PromptManifest(
        model=turn.reported_model or turn.requested_model or _UNKNOWN_MODEL,
        endpoint_host=turn.endpoint_host,
        system_prompt=system_ref,
        input_messages=json_refs[0],
        response=text_refs[0],
        specialist=specialist,
        usage=(usage := token_usage(turn.tokens)),
        cost=price_usage(turn.provider, turn.reported_model or turn.requested_model, usage, at=turn.started_at),
        runtime_settings=settings,
        redaction_status=redaction_status,
        session_id=session_id,
        started_at=turn.started_at,
        ended_at=turn.ended_at,
        call_type=call_type,
        provider=turn.provider or None,
        requested_model=turn.requested_model or None,
        reported_model=turn.reported_model or None,
        response_id=turn.response_id or None,
        finish_reason=turn.finish_reason or None,
        outcome=turn.outcome,
        error=turn.error,
        tool_calls=tool_calls_ref,
    )
    manifest_record, usage_record, usage_payload = call_records(
        manifest, turn.duration_ms, call_type=call_type, actor=actor, privacy=privacy
    )
    manifest_env, usage_env = store.append([manifest_record, usage_record])
    return RecordedTurn(Recorded(manifest, manifest_env), Recorded(usage_payload, usage_env))


def _system(value: Any) -> tuple[bytes | None, str | None]:
    """The system prompt's bytes and media type: UTF-8 text for a string, RFC 8785 JSON otherwise."""
    if value is None:
        return None, None
    if isinstance(value, str):
        return value.encode("utf-8"), TEXT_MEDIA_TYPE
    return canonical_json(value, field="system"), JSON_MEDIA_TYPE
