"""reviewtrail: chain of custody for judgments about AI work.

Submodules: :mod:`reviewtrail.cas` (content-addressed store), :mod:`reviewtrail.ledger`
(append-only hash-chained ledger), :mod:`reviewtrail.store` (both together),
:mod:`reviewtrail.canonical` (RFC 8785 JSON), :mod:`reviewtrail.errors`.

Recording the calls of an OpenAI or Anthropic SDK client (loaded on first use, see
:mod:`reviewtrail.instrumentation`)::

    client = reviewtrail.instrument(openai.OpenAI())
    with reviewtrail.reviewer_call(skill="research-review", purpose="round-1") as review:
        ...
"""

from reviewtrail import _face
from reviewtrail._version import __version__ as __version__

# Loaded on first use: importing reviewtrail (every command does) loads none of them. (Typed where they
# are defined, reviewtrail.instrumentation: a typed import here would put every module that imports
# reviewtrail, whatever its layer, above that package.)
__getattr__, __dir__ = _face.lazy(
    __name__, {"reviewtrail.instrumentation": ("instrument", "reviewer_call", "ReviewerCall")}
)
