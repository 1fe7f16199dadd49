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

import typing

from reviewtrail import _face

# Each name loads on first use: the composition root reads the record types and query tables alone.
if typing.TYPE_CHECKING:
    from reviewtrail.models._anthropic import AnthropicBackend as AnthropicBackend
    from reviewtrail.models._completion import Completion as Completion
    from reviewtrail.models._completion import ModelBackend as ModelBackend
    from reviewtrail.models._invoke import Invocation as Invocation
    from reviewtrail.models._invoke import RecordedTurn as RecordedTurn
    from reviewtrail.models._invoke import invoke as invoke
    from reviewtrail.models._openai import OpenAICompatibleBackend as OpenAICompatibleBackend
    from reviewtrail.models._prices import price as price
    from reviewtrail.models._prices import price_usage as price_usage
    from reviewtrail.models._prices import reprice as reprice
    from reviewtrail.models._records import CALL_OUTCOMES as CALL_OUTCOMES
    from reviewtrail.models._records import CALL_TYPES as CALL_TYPES
    from reviewtrail.models._records import RECORD_TYPES as RECORD_TYPES
    from reviewtrail.models._records import REDACTION_STATUSES as REDACTION_STATUSES
    from reviewtrail.models._records import CallError as CallError
    from reviewtrail.models._records import CallOutcome as CallOutcome
    from reviewtrail.models._records import CallType as CallType
    from reviewtrail.models._records import Cost as Cost
    from reviewtrail.models._records import CostSource as CostSource
    from reviewtrail.models._records import HttpAttempt as HttpAttempt
    from reviewtrail.models._records import ModelInvocationUsage as ModelInvocationUsage
    from reviewtrail.models._records import PromptManifest as PromptManifest
    from reviewtrail.models._records import RedactionStatus as RedactionStatus
    from reviewtrail.models._records import SkillRef as SkillRef
    from reviewtrail.models._records import TokenUsage as TokenUsage
    from reviewtrail.models._retry import RetryPolicy as RetryPolicy
    from reviewtrail.models._retry import parse_retry_after as parse_retry_after
    from reviewtrail.models._retry import retry_wait as retry_wait
    from reviewtrail.models._scripted import SCRIPTED_HOST as SCRIPTED_HOST
    from reviewtrail.models._scripted import ScriptedBackend as ScriptedBackend
    from reviewtrail.models._scripted import ScriptedCall as ScriptedCall
    from reviewtrail.models._turn import ModelTurn as ModelTurn
    from reviewtrail.models._turn import record_turn as record_turn
    from reviewtrail.models._usage import RESPONSE_FORMATS as RESPONSE_FORMATS
    from reviewtrail.models._usage import ResponseFormat as ResponseFormat
    from reviewtrail.models._usage import Tokens as Tokens
    from reviewtrail.models._usage import extract_tokens as extract_tokens
    from reviewtrail.models.catalog import MANIFEST_TYPE as MANIFEST_TYPE
    from reviewtrail.models.catalog import PROJECTIONS as PROJECTIONS
    from reviewtrail.models.catalog import RECORD_TYPE_NAMES as RECORD_TYPE_NAMES
    from reviewtrail.models.catalog import USAGE_TYPE as USAGE_TYPE
else:
    __getattr__, __dir__ = _face.lazy(__name__)
