"""The two ledger records every model call yields: a prompt manifest and a usage record
(docs/architecture.md, "Model turns").

``provenance.prompt-manifest@1`` says exactly what was sent and received (by CAS reference,
never inline); ``provenance.model-usage@1`` carries only tokens, cost and time, and points
at its manifest. Wire names are camelCase; Python attributes are snake_case.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_serializer,
    field_validator,
    model_serializer,
    model_validator,
)

from reviewtrail._strict import IS_INT, StrictInt
from reviewtrail.cas import CasRef, is_digest, is_hex
from reviewtrail.ledger import Projection, RecordPayload, record_type

__all__ = [
    "CALL_OUTCOMES",
    "CALL_TYPES",
    "MANIFEST_TYPE",
    "PROJECTIONS",
    "RECORD_TYPES",
    "REDACTION_STATUSES",
    "USAGE_TYPE",
    "CallError",
    "CallOutcome",
    "CallType",
    "Cost",
    "CostSource",
    "HttpAttempt",
    "ModelInvocationUsage",
    "PromptManifest",
    "RedactionStatus",
    "SkillRef",
    "TokenUsage",
]

MANIFEST_TYPE = "provenance.prompt-manifest@1"
USAGE_TYPE = "provenance.model-usage@1"

# What new records may say. Stored records may hold older call types: readers accept any string.
CallType = Literal["task", "paper-vision"]
CALL_TYPES: tuple[CallType, ...] = ("task", "paper-vision")
# No automatic secret redaction exists: "not-applied" says so; "not-required" is the caller's assertion.
RedactionStatus = Literal["not-applied", "not-required"]
REDACTION_STATUSES: tuple[RedactionStatus, ...] = ("not-applied", "not-required")
CostSource = Literal["genai-prices", "unknown"]
# How a call ended, when not with a whole answer (a manifest without ``outcome`` records a complete call):
# ``incomplete``, a streamed answer abandoned before its end; ``failed``, no answer (the error says why).
CallOutcome = Literal["incomplete", "failed"]
CALL_OUTCOMES: tuple[CallOutcome, ...] = ("incomplete", "failed")

_DECIMAL = re.compile(r"(0|[1-9][0-9]*)(\.[0-9]+)?")

Count = Annotated[int, Field(ge=0), IS_INT] | None
Text = Annotated[str, Field(min_length=1)] | None


def _wire_time(moment: datetime) -> str:
    """RFC 3339 UTC with microseconds and a ``Z`` (the ledger's own time format)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _drop_unset(model: BaseModel, data: Any, names: frozenset[str]) -> Any:
    """``data`` without the keys of ``names`` whose value is ``None`` (under field name or alias)."""
    if not isinstance(data, dict):
        return data
    for name in names:
        alias = type(model).model_fields[name].alias
        for key in (name, alias):
            if key is not None and key in data and data[key] is None:
                del data[key]
    return data


class _OmitUnset(BaseModel):
    # Fields added after records were first written: left out of the payload when None, so a
    # record written before them reads back and serializes to exactly what it was.
    _OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _drop_unset(self, handler(self), self._OMIT_IF_NONE)


class _Part(_OmitUnset):
    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="forbid", defer_build=True)


class SkillRef(_Part):
    """A skill the call was made with: its id, content hash (``sha256:<hex>``), version and revision."""

    id: str = Field(min_length=1)
    content_hash: str = Field(alias="contentHash")
    version: str | None = None
    revision: str | None = None
    specialist: str | None = None

    @field_validator("content_hash")
    @classmethod
    def _hash(cls, v: str) -> str:
        if not is_digest(v):
            raise ValueError(f"{v!r} is not 'sha256:' followed by 64 lowercase hex digits")
        return v


class TokenUsage(_Part):
    """Token counts as the provider reported them; ``None`` where it reported nothing.

    ``inputTokens`` counts every input token, cached ones included; the cache counts say how
    many of them were read from a prompt cache and written to one (all writes, then the
    5-minute and 1-hour writes where the provider tells them apart). With the model and
    provider of the manifest, these are what the call is priced from.
    """

    _OMIT_IF_NONE = frozenset(
        {"cache_read_tokens", "cache_write_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens"}
    )

    input_tokens: Count = Field(default=None, alias="inputTokens")
    output_tokens: Count = Field(default=None, alias="outputTokens")
    total_tokens: Count = Field(default=None, alias="totalTokens")
    cache_read_tokens: Count = Field(default=None, alias="cacheReadTokens")
    cache_write_tokens: Count = Field(default=None, alias="cacheWriteTokens")
    cache_write_5m_tokens: Count = Field(default=None, alias="cacheWrite5mTokens")
    cache_write_1h_tokens: Count = Field(default=None, alias="cacheWrite1hTokens")

    @classmethod
    def of(
        cls,
        input_tokens: int | None,
        output_tokens: int | None,
        *,
        cache_read_tokens: int | None = None,
        cache_write_tokens: int | None = None,
        cache_write_5m_tokens: int | None = None,
        cache_write_1h_tokens: int | None = None,
    ) -> TokenUsage:
        total = None if input_tokens is None or output_tokens is None else input_tokens + output_tokens
        return cls(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=total,
            cache_read_tokens=cache_read_tokens,
            cache_write_tokens=cache_write_tokens,
            cache_write_5m_tokens=cache_write_5m_tokens,
            cache_write_1h_tokens=cache_write_1h_tokens,
        )


class HttpAttempt(_Part):
    """One HTTP request of a call: the status it got and, when another attempt followed, the
    ``Retry-After`` the server sent (as received) and the wait chosen before retrying."""

    _OMIT_IF_NONE = frozenset({"retry_after", "wait_ms"})

    status: StrictInt = Field(ge=100, le=599)
    retry_after: str | None = Field(default=None, alias="retryAfter", max_length=200)
    wait_ms: Count = Field(default=None, alias="waitMs")


class CallError(_Part):
    """Why a call gave no whole answer: the exception's type and message, and the HTTP status the
    endpoint answered with (none when no answer came: a timeout, a refused connection)."""

    _OMIT_IF_NONE = frozenset({"status"})

    type: str = Field(min_length=1, max_length=200)
    message: str = Field(max_length=4000)
    status: StrictInt | None = Field(default=None, ge=100, le=599)


class Cost(_Part):
    """A price in USD as a decimal string, or ``None`` with source ``unknown``: never invented."""

    amount: str | None = None
    currency: Literal["USD"] = "USD"
    source: CostSource = "unknown"

    @field_validator("amount")
    @classmethod
    def _amount(cls, v: str | None) -> str | None:
        if v is not None and _DECIMAL.fullmatch(v) is None:
            raise ValueError(f"{v!r} is not a non-negative decimal like '0.0075'")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> Cost:
        if (self.amount is None) != (self.source == "unknown"):
            raise ValueError("amount is null exactly when source is 'unknown'")
        return self

    @classmethod
    def unknown(cls) -> Cost:
        return cls(amount=None, source="unknown")


class _Timed(RecordPayload, _OmitUnset):
    started_at: AwareDatetime = Field(alias="startedAt")
    ended_at: AwareDatetime = Field(alias="endedAt")
    # Any string on read, so records written with older call types stay readable.
    call_type: str = Field(alias="callType", min_length=1)

    @field_serializer("started_at", "ended_at")
    def _time(self, moment: datetime) -> str:
        return _wire_time(moment)


@record_type(MANIFEST_TYPE)
class PromptManifest(_Timed):
    """One model turn: who answered, from where, with what input, settings and result.

    ``model`` is the model that answered (as reported, else as requested). The optional audit
    fields, absent from records written before them: ``provider`` (the ``genai-prices``
    provider id the call was priced with), ``requestedModel`` and ``reportedModel``,
    ``responseId`` and ``finishReason`` as the endpoint sent them, and ``attempts`` (one entry
    per HTTP request, retries included). ``outcome`` and ``error`` say how a call that gave no
    whole answer ended (see :data:`CallOutcome`); absent, the call completed and ``response`` holds
    its whole answer. Otherwise ``response`` holds the part of the answer that arrived before the
    end (often nothing, as empty text). ``toolCalls``, absent when the answer called no tool, is the
    RFC 8785 JSON array of the tool calls it made, each in the endpoint's own shape (OpenAI chat: the
    message's ``tool_calls``; OpenAI Responses: its ``*_call`` output items; Anthropic: its
    ``*tool_use`` content blocks): a call answered by tool calls alone has an empty ``response``.
    """

    _OMIT_IF_NONE = frozenset(
        {
            "provider",
            "requested_model",
            "reported_model",
            "response_id",
            "finish_reason",
            "attempts",
            "outcome",
            "error",
            "tool_calls",
        }
    )

    model: str = Field(min_length=1)
    endpoint_host: str = Field(alias="endpointHost", min_length=1)
    system_prompt: CasRef | None = Field(alias="systemPrompt")
    input_messages: CasRef = Field(alias="inputMessages")
    response: CasRef
    skill_refs: tuple[SkillRef, ...] = Field(default=(), alias="skillRefs")
    specialist: str | None = None
    usage: TokenUsage
    cost: Cost
    runtime_settings: dict[str, Any] = Field(default_factory=dict, alias="runtimeSettings")
    redaction_status: RedactionStatus = Field(alias="redactionStatus")
    session_id: str | None = Field(default=None, alias="sessionId")
    provider: Text = None
    requested_model: Text = Field(default=None, alias="requestedModel")
    reported_model: Text = Field(default=None, alias="reportedModel")
    response_id: Text = Field(default=None, alias="responseId")
    finish_reason: Text = Field(default=None, alias="finishReason")
    attempts: tuple[HttpAttempt, ...] | None = None
    outcome: CallOutcome | None = None
    error: CallError | None = None
    tool_calls: CasRef | None = Field(default=None, alias="toolCalls")

    @model_validator(mode="after")
    def _error_of_failure(self) -> PromptManifest:
        if self.outcome == "failed" and self.error is None:
            raise ValueError("a failed call names its error")
        if self.outcome is None and self.error is not None:
            raise ValueError("a completed call has no error")
        return self


@record_type(USAGE_TYPE)
class ModelInvocationUsage(_Timed):
    """Tokens, cost and time of one call, and its manifest: no prompt or response text, ever.

    ``manifestHash`` is the manifest record's ``payloadHash`` (SHA-256 of its RFC 8785 payload
    bytes): known before the pair is appended, so both go in one atomic batch.
    """

    usage: TokenUsage
    cost: Cost
    duration_ms: StrictInt = Field(alias="durationMs", ge=0)
    manifest_id: str = Field(alias="manifestId", min_length=1)
    manifest_hash: str = Field(alias="manifestHash")

    @field_validator("manifest_hash")
    @classmethod
    def _hash(cls, v: str) -> str:
        if not is_hex(v):
            raise ValueError(f"{v!r} is not 64 lowercase hex digits (the manifest record's payloadHash)")
        return v


# What this package adds to the application's record catalog (see reviewtrail.app).
RECORD_TYPES: tuple[type[RecordPayload], ...] = (PromptManifest, ModelInvocationUsage)
PROJECTIONS: tuple[Projection, ...] = ()
