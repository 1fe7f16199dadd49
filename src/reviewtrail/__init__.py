"""reviewtrail: chain of custody for judgments about AI work.

Submodules: :mod:`reviewtrail.cas` (content-addressed store), :mod:`reviewtrail.ledger`
(append-only hash-chained ledger), :mod:`reviewtrail.store` (both together),
:mod:`reviewtrail.canonical` (RFC 8785 JSON), :mod:`reviewtrail.errors`.
"""

__version__ = "0.1.0"
