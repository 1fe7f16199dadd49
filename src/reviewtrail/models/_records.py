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

import msgspec
from msgspec import Meta, field

from reviewtrail._struct import FieldProblem, Model, PayloadStruct
from reviewtrail.cas import CasRef, is_digest, is_hex
from reviewtrail.ledger import record_type
from reviewtrail.models.catalog import MANIFEST_TYPE, USAGE_TYPE

__all__ = [
    "CALL_OUTCOMES",
    "CALL_TYPES",
    "RECORD_TYPES",
    "REDACTION_STATUSES",
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

Count = Annotated[int, Meta(ge=0)] | None
Text = Annotated[str, Meta(min_length=1)] | None
Time = Annotated[datetime, Meta(tz=True)]


def _wire_time(moment: datetime) -> str:
    """RFC 3339 UTC with microseconds and a ``Z`` (the ledger's own time format)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _json(value: Any) -> Any:
    """``value``'s JSON form: a part's fields of ``OMIT_IF_NONE`` left out when ``None``, times as
    the ledger writes them."""
    if isinstance(value, _Part | _Timed):
        omit = value.OMIT_IF_NONE
        return {
            f.encode_name: _json(v)
            for f in msgspec.structs.fields(value)
            if (v := getattr(value, f.name)) is not None or f.name not in omit
        }
    if isinstance(value, tuple | list):
        return [_json(v) for v in value]
    if isinstance(value, datetime):
        return _wire_time(value)
    return msgspec.to_builtins(value)


class _Part(Model, frozen=True, kw_only=True, rename="camel"):
    # Fields added after records were first written: left out of the payload when None, so a
    # record written before them reads back and serializes to exactly what it was.
    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset()

    def to_json(self) -> dict[str, Any]:
        """The part's JSON form under its wire names."""
        out: dict[str, Any] = _json(self)
        return out


class SkillRef(_Part, frozen=True):
    """A skill the call was made with: its id, content hash (``sha256:<hex>``), version and revision."""

    id: Annotated[str, Meta(min_length=1)]
    content_hash: str
    version: str | None = None
    revision: str | None = None
    specialist: str | None = None

    def __post_init__(self) -> None:
        if not is_digest(self.content_hash):
            raise FieldProblem(
                "contentHash", f"{self.content_hash!r} is not 'sha256:' followed by 64 lowercase hex digits"
            )


_TOKENS = {
    "input_tokens": "inputTokens",
    "output_tokens": "outputTokens",
    "total_tokens": "totalTokens",
    "cache_read_tokens": "cacheReadTokens",
    "cache_write_tokens": "cacheWriteTokens",
    "cache_write_5m_tokens": "cacheWrite5mTokens",  # "5m", where rename="camel" would write "5M"
    "cache_write_1h_tokens": "cacheWrite1hTokens",
}


class TokenUsage(_Part, frozen=True, rename=_TOKENS):
    """Token counts as the provider reported them; ``None`` where it reported nothing.

    ``inputTokens`` counts every input token, cached ones included; the cache counts say how
    many of them were read from a prompt cache and written to one (all writes, then the
    5-minute and 1-hour writes where the provider tells them apart). With the model and
    provider of the manifest, these are what the call is priced from.
    """

    OMIT_IF_NONE = frozenset(
        {"cache_read_tokens", "cache_write_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens"}
    )

    input_tokens: Count = None
    output_tokens: Count = None
    total_tokens: Count = None
    cache_read_tokens: Count = None
    cache_write_tokens: Count = None
    cache_write_5m_tokens: Count = None
    cache_write_1h_tokens: Count = None

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


class HttpAttempt(_Part, frozen=True):
    """One HTTP request of a call: the status it got and, when another attempt followed, the
    ``Retry-After`` the server sent (as received) and the wait chosen before retrying."""

    OMIT_IF_NONE = frozenset({"retry_after", "wait_ms"})

    status: Annotated[int, Meta(ge=100, le=599)]
    retry_after: Annotated[str, Meta(max_length=200)] | None = None
    wait_ms: Count = None


class CallError(_Part, frozen=True):
    """Why a call gave no whole answer: the exception's type and message, and the HTTP status the
    endpoint answered with (none when no answer came: a timeout, a refused connection)."""

    OMIT_IF_NONE = frozenset({"status"})

    type: Annotated[str, Meta(min_length=1, max_length=200)]
    message: Annotated[str, Meta(max_length=4000)]
    # published as pydantic described it: the bounds as "ge" and "le" beside the union
    status: Annotated[int, Meta(ge=100, le=599, extra_json_schema={"ge": 100, "le": 599})] | None = None


class Cost(_Part, frozen=True):
    """A price in USD as a decimal string, or ``None`` with source ``unknown``: never invented."""

    amount: str | None = None
    currency: Literal["USD"] = "USD"
    source: CostSource = "unknown"

    def __post_init__(self) -> None:
        if self.amount is not None and _DECIMAL.fullmatch(self.amount) is None:
            raise FieldProblem("amount", f"{self.amount!r} is not a non-negative decimal like '0.0075'")
        if (self.amount is None) != (self.source == "unknown"):
            raise FieldProblem(None, "amount is null exactly when source is 'unknown'")

    @classmethod
    def unknown(cls) -> Cost:
        return cls(amount=None, source="unknown")


class _Timed(PayloadStruct, frozen=True, kw_only=True, rename="camel"):
    OMIT_IF_NONE: ClassVar[frozenset[str]] = frozenset()

    started_at: Time
    ended_at: Time
    # Any string on read, so records written with older call types stay readable.
    call_type: Annotated[str, Meta(min_length=1)]

    def payload_json(self) -> dict[str, Any]:
        out: dict[str, Any] = _json(self)
        return out


@record_type(MANIFEST_TYPE)
class PromptManifest(_Timed, frozen=True, kw_only=True, rename="camel"):
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

    OMIT_IF_NONE = frozenset(
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

    model: Annotated[str, Meta(min_length=1)]
    endpoint_host: Annotated[str, Meta(min_length=1)]
    system_prompt: CasRef | None
    input_messages: CasRef
    response: CasRef
    skill_refs: tuple[SkillRef, ...] = ()
    specialist: str | None = None
    usage: TokenUsage
    cost: Cost
    runtime_settings: dict[str, Any] = field(default_factory=dict)
    redaction_status: RedactionStatus
    session_id: str | None = None
    provider: Text = None
    requested_model: Text = None
    reported_model: Text = None
    response_id: Text = None
    finish_reason: Text = None
    attempts: tuple[HttpAttempt, ...] | None = None
    outcome: CallOutcome | None = None
    error: CallError | None = None
    tool_calls: CasRef | None = None

    def __post_init__(self) -> None:
        if self.outcome == "failed" and self.error is None:
            raise FieldProblem(None, "a failed call names its error")
        if self.outcome is None and self.error is not None:
            raise FieldProblem(None, "a completed call has no error")


@record_type(USAGE_TYPE)
class ModelInvocationUsage(_Timed, frozen=True, kw_only=True, rename="camel"):
    """Tokens, cost and time of one call, and its manifest: no prompt or response text, ever.

    ``manifestHash`` is the manifest record's ``payloadHash`` (SHA-256 of its RFC 8785 payload
    bytes): known before the pair is appended, so both go in one atomic batch.
    """

    usage: TokenUsage
    cost: Cost
    duration_ms: Annotated[int, Meta(ge=0)]
    manifest_id: Annotated[str, Meta(min_length=1)]
    manifest_hash: str

    def __post_init__(self) -> None:
        if not is_hex(self.manifest_hash):
            raise FieldProblem(
                "manifestHash",
                f"{self.manifest_hash!r} is not 64 lowercase hex digits (the manifest record's payloadHash)",
            )


# What this package adds to the application's record catalog (see reviewtrail.app).
RECORD_TYPES: tuple[type[PayloadStruct], ...] = (PromptManifest, ModelInvocationUsage)
