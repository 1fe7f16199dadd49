"""Which checks an artifact's media type gets: the one place that knows.

* narrative (:data:`NARRATIVE_MEDIA_TYPES`: ``text/markdown``, ``text/plain``, ``text/html``,
  ``application/x-tex``): the citation check and the text's numeric claims;
* JSON (:data:`JSON_MEDIA_TYPES` and any ``+json`` type): a structure check (the bytes must
  parse), no narrative checks;
* anything else (``text/csv``, source code, binary data): neither; the computation check still
  looks at claims recorded with evidence that points at the artifact.

Media types are compared by their essence: parameters (``; charset=utf-8``) are dropped and the
case is ignored.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = ["JSON_MEDIA_TYPES", "NARRATIVE_MEDIA_TYPES", "MediaKind", "checks_for", "media_essence", "media_kind"]

MediaKind = Literal["narrative", "json", "other"]

NARRATIVE_MEDIA_TYPES: Final[frozenset[str]] = frozenset(
    {"text/markdown", "text/plain", "text/html", "application/x-tex"}
)
JSON_MEDIA_TYPES: Final[frozenset[str]] = frozenset({"application/json"})


def media_essence(media_type: str) -> str:
    """``type/subtype`` in lower case, without parameters."""
    return media_type.split(";", 1)[0].strip().lower()


def media_kind(media_type: str) -> MediaKind:
    """``narrative``, ``json`` or ``other`` for a media type (parameters and case ignored)."""
    essence = media_essence(media_type)
    if essence in NARRATIVE_MEDIA_TYPES:
        return "narrative"
    if essence in JSON_MEDIA_TYPES or (essence.startswith("application/") and essence.endswith("+json")):
        return "json"
    return "other"


def checks_for(kind: MediaKind) -> list[str]:
    """The Quick-tier checks that run on an artifact of this kind. (A review still records the
    citation check as ``skipped`` for the kinds it does not apply to.)"""
    if kind == "narrative":
        return ["citation", "computation"]
    if kind == "json":
        return ["structure", "computation"]
    return ["computation"]
