"""Which checks an artifact's media type gets (its kind is :func:`reviewtrail.media.media_kind`):

* narrative (``text/markdown``, ``text/plain``, ``text/html``, ``application/x-tex``): the
  citation check and the text's numeric claims;
* JSON (``application/json`` and any ``+json`` type): a structure check (the bytes must
  parse), no narrative checks;
* anything else (``text/csv``, source code, binary data): neither; the computation check still
  looks at claims recorded with evidence that points at the artifact.
"""

from __future__ import annotations

from reviewtrail.media import MediaKind

__all__ = ["checks_for"]


def checks_for(kind: MediaKind) -> list[str]:
    """The Quick-tier checks that run on an artifact of this kind. (A review still records the
    citation check as ``skipped`` for the kinds it does not apply to.)"""
    if kind == "narrative":
        return ["citation", "computation"]
    if kind == "json":
        return ["structure", "computation"]
    return ["computation"]
