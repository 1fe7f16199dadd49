"""Drop-in recording of the OpenAI and Anthropic SDK clients: one line records every call.

Public API (also at the top level, as ``reviewtrail.instrument`` and ``reviewtrail.reviewer_call``)::

    import anthropic, reviewtrail
    client = reviewtrail.instrument(anthropic.Anthropic())      # the same client, its calls recorded
    client.messages.create(model="claude-sonnet-4-5", max_tokens=1024, messages=[...])

    with reviewtrail.reviewer_call(skill="research-review", purpose="round-1") as review:
        answer = client.messages.create(...)                      # also saved as a reviewer trace
        review.verdict, review.review_completed = "ready", True

Recorded: OpenAI ``chat.completions.create`` and ``responses.create``, Anthropic ``messages.create``
and ``messages.stream``, synchronous and asynchronous, streamed or not. The SDKs are optional
extras (``reviewtrail[openai]``, ``reviewtrail[anthropic]``) and never imported here.
"""

import importlib
import typing

if typing.TYPE_CHECKING:
    from reviewtrail.instrumentation._instrument import instrument
    from reviewtrail.instrumentation._reviewer import ReviewerCall, reviewer_call

_LAZY = {"instrument": "_instrument", "reviewer_call": "_reviewer", "ReviewerCall": "_reviewer"}


def __getattr__(name: str) -> typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = ["ReviewerCall", "instrument", "reviewer_call"]
