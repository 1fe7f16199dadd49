"""Media types, the one place that knows them: the type a file gets from its name, and the kind
of text a type is.

* :func:`media_type_for`: a file's media type from its suffix (case ignored) by
  :data:`SUFFIX_MEDIA_TYPES`; anything else is ``application/octet-stream``.
* :func:`is_text_media_type`: whether a type is diffed as text (every ``text/*`` type,
  :data:`TEXT_MEDIA_TYPES` and the ``+json``, ``+xml`` and ``+yaml`` structured suffixes).
* :func:`media_kind`: ``narrative`` (:data:`NARRATIVE_MEDIA_TYPES`: ``text/markdown``,
  ``text/plain``, ``text/html``, ``application/x-tex``), ``json`` (:data:`JSON_MEDIA_TYPES`
  and any ``application/…+json`` type) or ``other`` (``text/csv``, source code, binary data).

Media types are compared by their essence (:func:`media_essence`): parameters
(``; charset=utf-8``) are dropped and the case is ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Final, Literal

__all__ = [
    "DEFAULT_MEDIA_TYPE",
    "JSON_MEDIA_TYPES",
    "NARRATIVE_MEDIA_TYPES",
    "SUFFIX_MEDIA_TYPES",
    "TEXT_MEDIA_TYPES",
    "MediaKind",
    "is_text_media_type",
    "media_essence",
    "media_kind",
    "media_type_for",
]

MediaKind = Literal["narrative", "json", "other"]

DEFAULT_MEDIA_TYPE: Final = "application/octet-stream"
SUFFIX_MEDIA_TYPES: Final[Mapping[str, str]] = MappingProxyType(
    {
        ".txt": "text/plain",
        ".md": "text/markdown",
        ".csv": "text/csv",
        ".json": "application/json",
        ".py": "text/x-python",
        ".sh": "text/x-shellscript",
        ".tex": "application/x-tex",
        ".yaml": "application/yaml",
        ".yml": "application/yaml",
        ".html": "text/html",
        ".xml": "application/xml",
        ".tsv": "text/tab-separated-values",
    }
)
NARRATIVE_MEDIA_TYPES: Final[frozenset[str]] = frozenset(
    {"text/markdown", "text/plain", "text/html", "application/x-tex"}
)
JSON_MEDIA_TYPES: Final[frozenset[str]] = frozenset({"application/json"})


def media_type_for(path: str) -> str:
    """The media type of a file named ``path`` (by its suffix; see the module docs)."""
    return SUFFIX_MEDIA_TYPES.get(PurePosixPath(path).suffix.lower(), DEFAULT_MEDIA_TYPE)


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


#: Exact ``type/subtype`` values (parameters stripped, lowercased) that are diffed as text,
#: besides every ``text/*`` type and every ``+json`` / ``+xml`` / ``+yaml`` structured suffix.
TEXT_MEDIA_TYPES: frozenset[str] = frozenset(
    {
        "application/json",
        "application/x-ndjson",
        "application/jsonl",
        "application/xml",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/csv",
        "application/javascript",
        "application/x-javascript",
        "application/ecmascript",
        "application/typescript",
        "application/x-python",
        "application/x-python-code",
        "application/x-sh",
        "application/x-shellscript",
        "application/sql",
        "application/graphql",
        "application/x-tex",
        "application/x-latex",
        "application/x-bibtex",
        "application/x-ipynb+json",
    }
)
_TEXT_SUFFIXES = ("+json", "+xml", "+yaml")


def is_text_media_type(media_type: str) -> bool:
    """True when ``media_type`` (parameters allowed, any case) names a diffable text format."""
    essence = media_essence(media_type)
    if "/" not in essence:
        return False
    top, _, sub = essence.partition("/")
    if not top or not sub:
        return False
    return top == "text" or essence in TEXT_MEDIA_TYPES or sub.endswith(_TEXT_SUFFIXES)
