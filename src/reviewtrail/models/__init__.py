"""LLM backends whose every call yields a prompt manifest and a usage record.

Public API::

    from reviewtrail.models import OpenAICompatibleBackend, AnthropicBackend, ScriptedBackend, invoke
    backend = OpenAICompatibleBackend("https://api.openai.com/v1", api_key, "gpt-4o")  # retry=RetryPolicy(...)
    result = invoke(store, backend, [{"role": "user", "content": "Check this claim."}], system="Be terse.")
    result.completion.text, result.manifest_envelope.id, result.usage_envelope.id

    from reviewtrail.models import price
    price("openai", "gpt-4o", 1000, 500)   # Cost(amount='0.0075', currency='USD', source='genai-prices')
    reprice(result.manifest)               # the recorded call priced again from what its manifest holds

    from reviewtrail.models import ModelTurn, record_turn  # a call made by a provider's own client
    record_turn(store, ModelTurn(endpoint_host="api.openai.com", provider="openai", ...))

The record types ``provenance.prompt-manifest@1`` and ``provenance.model-usage@1`` are in
``RECORD_TYPES``: a store opened through :mod:`reviewtrail.app` validates appends of them.
"""

from reviewtrail.models._anthropic import AnthropicBackend
from reviewtrail.models._completion import Completion, ModelBackend
from reviewtrail.models._invoke import Invocation, invoke
from reviewtrail.models._openai import OpenAICompatibleBackend
from reviewtrail.models._prices import price, price_usage, reprice
from reviewtrail.models._records import (
    CALL_OUTCOMES,
    CALL_TYPES,
    MANIFEST_TYPE,
    PROJECTIONS,
    RECORD_TYPES,
    REDACTION_STATUSES,
    USAGE_TYPE,
    CallError,
    CallOutcome,
    CallType,
    Cost,
    CostSource,
    HttpAttempt,
    ModelInvocationUsage,
    PromptManifest,
    RedactionStatus,
    SkillRef,
    TokenUsage,
)
from reviewtrail.models._retry import RetryPolicy, parse_retry_after, retry_wait
from reviewtrail.models._scripted import SCRIPTED_HOST, ScriptedBackend, ScriptedCall
from reviewtrail.models._turn import ModelTurn, RecordedTurn, record_turn
from reviewtrail.models._usage import RESPONSE_FORMATS, ResponseFormat, Tokens, extract_tokens

__all__ = [
    "CALL_OUTCOMES",
    "CALL_TYPES",
    "MANIFEST_TYPE",
    "PROJECTIONS",
    "RECORD_TYPES",
    "REDACTION_STATUSES",
    "RESPONSE_FORMATS",
    "SCRIPTED_HOST",
    "USAGE_TYPE",
    "AnthropicBackend",
    "CallError",
    "CallOutcome",
    "CallType",
    "Completion",
    "Cost",
    "CostSource",
    "HttpAttempt",
    "Invocation",
    "ModelBackend",
    "ModelInvocationUsage",
    "ModelTurn",
    "OpenAICompatibleBackend",
    "PromptManifest",
    "RecordedTurn",
    "RedactionStatus",
    "ResponseFormat",
    "RetryPolicy",
    "ScriptedBackend",
    "ScriptedCall",
    "SkillRef",
    "TokenUsage",
    "Tokens",
    "extract_tokens",
    "invoke",
    "parse_retry_after",
    "price",
    "price_usage",
    "record_turn",
    "reprice",
    "retry_wait",
]
