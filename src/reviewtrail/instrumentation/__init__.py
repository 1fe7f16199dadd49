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

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.instrumentation._instrument import instrument as instrument
    from reviewtrail.instrumentation._reviewer import ReviewerCall as ReviewerCall
    from reviewtrail.instrumentation._reviewer import reviewer_call as reviewer_call
else:
    __getattr__, __dir__ = _face.lazy(__name__)
