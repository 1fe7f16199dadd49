"""What a frozen review item binds, as plain values: the candidate digest and the blinded
wording of an item's problems (docs/human-review.md, "Review items", "Re-check" and "Blinding").
Every read path (:mod:`._resolve`) words an item's problems through these and
:func:`~._item_rules.item_problems`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from reviewtrail.canonical import canonical_sha256

__all__ = ["DIGEST_VERSION", "POSITIONS", "blind", "facts_digest", "spliced_digest"]

#: Part of every candidate digest: a new set of digested fields gets a new version.
DIGEST_VERSION = 1
#: The positions of an item's two candidates, in its display order.
POSITIONS = ("A", "B")


def facts_digest(wire: Mapping[str, Any]) -> str:
    """``sha256:`` + SHA-256 of the RFC 8785 bytes of a candidate's facts (wire names) with
    ``digestVersion``."""
    return "sha256:" + canonical_sha256({"digestVersion": DIGEST_VERSION, **wire}, field="candidate")


_STR: Any = json.encoder.encode_basestring  # RFC 8785's string form (no ASCII escaping)


def _text(value: str | None) -> str:
    return "null" if value is None else str(_STR(value))


def spliced_digest(flat: Mapping[str, str | None], run_bytes: bytes, manifest_bytes: bytes) -> str | None:
    """:func:`facts_digest` of a candidate whose flat fields (wire names: every field but ``run``
    and ``contextManifest``) are ``flat``, given the stored payload bytes of its run record and of
    its context receipt, spliced in as stored instead of being encoded again, the flat fields
    written in RFC 8785 key order directly. None when a field holds a lone surrogate (the caller
    takes :func:`facts_digest`, whose encoder names it)."""
    f = flat
    try:
        head = f'{{"catalogGeneration":{_text(f["catalogGeneration"])},"contextManifest":'.encode()
        middle = (
            f',"digestVersion":{DIGEST_VERSION},"executionAdapter":{_text(f["executionAdapter"])},'
            f'"learnedAdapter":{_text(f["learnedAdapter"])},"model":{_text(f["model"])},'
            f'"outputEventId":{_text(f["outputEventId"])},"outputPayloadHash":{_text(f["outputPayloadHash"])},'
            f'"outputPrivacy":{_text(f["outputPrivacy"])},"promptHash":{_text(f["promptHash"])},'
            f'"provider":{_text(f["provider"])},"run":'
        ).encode()
        tail = f',"runId":{_text(f["runId"])},"runPrivacy":{_text(f["runPrivacy"])}}}'.encode()
    except UnicodeEncodeError:
        return None
    return "sha256:" + hashlib.sha256(head + manifest_bytes + middle + run_bytes + tail).hexdigest()


def blind(problems: Iterable[str], display_order: Iterable[str], withheld: Iterable[str]) -> tuple[str, ...]:
    """``problems`` with every run id of ``display_order`` replaced by its position and every
    value of ``withheld`` (output event ids, digests) by ``(withheld)``, longest values first, so
    that saying why an item is invalid reveals nothing a blinded card hides."""
    names: dict[str, str] = {}
    for position, run_id in zip(POSITIONS, display_order, strict=True):
        names[run_id] = position
    for value in withheld:
        names[value] = "(withheld)"
    out = []
    for problem in problems:
        text = problem
        for value in sorted(names, key=len, reverse=True):
            text = text.replace(value, names[value])
        out.append(text)
    return tuple(out)
