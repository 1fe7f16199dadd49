"""Record types reserved for reviewtrail's own packages (a pure rule, no I/O).

The generic ``reviewtrail ledger append`` is for a user's own record types. A record
whose type belongs to one of reviewtrail's namespaces (provenance runs, traces, reviews,
evidence, store identity, checkpoints, human review...) must come from the code that
owns it, which builds its payload and its references; anyone could otherwise forge
one by hand. Library appends are not restricted: the packages themselves use them.
"""

from __future__ import annotations

__all__ = ["RESERVED_TYPE_NAMESPACES", "is_reserved_type"]

# Every record type the package defines lives under one of these names: either the name
# itself (``store@1``) or the name followed by a dot (``store.identity@1``).
RESERVED_TYPE_NAMESPACES: tuple[str, ...] = (
    "checkpoint",
    "evidence",
    "human-review",
    "provenance",
    "review",
    "reviewer",
    "reviewtrail",
    "store",
    "stream.thought",
    "trace",
)


def is_reserved_type(type_: str) -> bool:
    """True when ``type_`` (``name@version`` or a bare ``name``) is in a reviewtrail namespace."""
    name = type_.split("@", 1)[0]
    return any(name == ns or name.startswith(ns + ".") for ns in RESERVED_TYPE_NAMESPACES)
