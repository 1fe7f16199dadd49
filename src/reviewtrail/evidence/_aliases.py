"""Alias maps: what a turn's provenance chips (``[ev1]``, ``[evidence2]``, ``[artifact3]``) point at.

A chip means nothing by itself; the turn that writes it records an alias map (``ev1`` → an
evidence id). A map applies to a text by content (the CAS digest of the reply it was recorded
with) or to one artifact version it names. At review a chip is checked against the maps that
apply to the artifact version: no mapping, conflicting mappings, a mapping to evidence that is
not recorded, and evidence whose chain back to its run, artifact version or content is broken
are each reported with their own code.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from reviewtrail.errors import InvalidInputError
from reviewtrail.evidence._records import CHIP_ALIAS, AliasMap, ClaimCitation, EvidenceItem
from reviewtrail.ledger import Envelope, new_record
from reviewtrail.store import Store

__all__ = ["alias_map_record", "alias_maps_for", "chain_problem", "chip_citation", "parse_aliases", "record_alias_map"]

_ALIAS = re.compile(CHIP_ALIAS, re.IGNORECASE)


def parse_aliases(doc: object, *, field: str = "aliases") -> dict[str, str]:
    """A JSON object ``{"ev1": "<evidence id>", ...}`` checked and with its aliases lower-cased."""
    if not isinstance(doc, Mapping):
        raise InvalidInputError(f"must be a JSON object of chip → evidence id, not {type(doc).__name__}", field=field)
    out: dict[str, str] = {}
    for key, value in doc.items():
        where = f"{field}.{key}"
        if not isinstance(key, str) or not _ALIAS.fullmatch(key):
            raise InvalidInputError(f"{key!r} is not a chip alias like ev1, evidence2 or artifact3", field=where)
        if not isinstance(value, str) or not value or any(c.isspace() for c in value):
            raise InvalidInputError(
                f"must be an evidence id (a non-empty string without spaces), not {value!r}", field=where
            )
        alias = key.lower()
        if alias in out:
            raise InvalidInputError(f"{key!r} repeats {alias!r} (aliases are case-insensitive)", field=where)
        out[alias] = value
    return out


def alias_map_record(
    aliases: Mapping[str, str],
    *,
    turn_id: str | None = None,
    review_run_id: str | None = None,
    source: dict[str, Any] | None = None,
    artifact: Any = None,
) -> AliasMap:
    """The record for an alias map; ``artifact`` is a :class:`~reviewtrail.provenance.artifacts.VersionInfo` or None."""
    for value, name in ((turn_id, "turnId"), (review_run_id, "reviewRunId")):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise InvalidInputError(f"must be a non-empty string or None, not {value!r}", field=name)
    return AliasMap.read(
        {
            "aliases": parse_aliases(aliases),
            "turnId": turn_id,
            "reviewRunId": review_run_id,
            "source": source,
            "artifactId": artifact.version.artifact_id if artifact is not None else None,
            "artifactVersion": artifact.version.version if artifact is not None else None,
        }
    )


def record_alias_map(
    store: Store,
    aliases: Mapping[str, str],
    *,
    turn_id: str | None = None,
    review_run_id: str | None = None,
    source: dict[str, Any] | None = None,
    artifact: Any = None,
    actor: str = "agent",
) -> Envelope:
    """Record what the chips of a turn point at (for the text ``source`` or the version ``artifact``)."""
    record = alias_map_record(aliases, turn_id=turn_id, review_run_id=review_run_id, source=source, artifact=artifact)
    subject = f"turn:{turn_id}" if turn_id else None
    [env] = store.append([new_record(record, actor=actor, privacy="private", subject=subject)])
    return env


def alias_maps_for(
    store: Store,
    *,
    digest: str | None = None,
    artifact_id: str | None = None,
    version: int | None = None,
    turn_id: str | None = None,
) -> dict[str, list[str]]:
    """Every evidence id each alias is mapped to by the maps recorded for the text with ``digest``,
    for the artifact version, or by the turn (oldest first, each id once)."""
    rows: list[dict[str, Any]] = []
    if digest is not None:
        rows += store.ledger.rows("ev_alias_maps", source_digest=digest)
    if artifact_id is not None and version is not None:
        rows += store.ledger.rows("ev_alias_maps", artifact_id=artifact_id, artifact_version=version)
    if turn_id is not None:
        rows += store.ledger.rows("ev_alias_maps", turn_id=turn_id)
    out: dict[str, list[str]] = {}
    seen: set[str] = set()
    for row in sorted(rows, key=lambda r: r["seq"]):
        if row["record_id"] in seen:
            continue
        seen.add(row["record_id"])
        for alias, evidence_id in store.ledger.get(row["record_id"]).payload_value["aliases"].items():
            ids = out.setdefault(alias, [])
            if evidence_id not in ids:
                ids.append(evidence_id)
    return out


def chip_citation(store: Store, chip: Any, evidence_ids: list[str]) -> ClaimCitation:
    """A chip as recorded: resolved when exactly one evidence id is mapped and that evidence is recorded."""
    evidence_id = evidence_ids[0] if len(evidence_ids) == 1 else None
    recorded = evidence_id is not None and bool(store.ledger.rows("ev_items", evidence_id=evidence_id))
    return ClaimCitation(
        type=chip.type,
        id=chip.id,
        raw=chip.raw,
        resolved=recorded,
        target=f"evidence:{evidence_id}" if recorded else None,
        alias=chip.alias,
        evidence_id=evidence_id,
    )


def chain_problem(store: Store, item: EvidenceItem) -> str | None:
    """Why the recorded evidence ``item`` does not lead back to what it names, or ``None`` when it does.

    Execution evidence needs its run recorded (and its output, if named, in the CAS); artifact
    evidence needs that version recorded with the same content, and the content in the CAS;
    user input needs its content in the CAS.
    """
    origin = item.origin
    if origin.kind == "execution":
        if not store.ledger.rows("prov_runs", record_id=origin.run_id):
            return f"its execution run {origin.run_id} is not recorded"
        return _missing_content(store, origin.output, "the run's output")
    if origin.kind == "artifact":
        versions = store.ledger.rows("prov_artifact_versions", artifact_id=origin.artifact_id)
        match = [r for r in versions if r["version"] == origin.version]
        if not match:
            return f"version {origin.version} of {origin.name} is not recorded"
        recorded = store.ledger.get(match[0]["record_id"]).payload_value
        if recorded["content"].get("digest") != origin.content.get("digest"):
            return f"{origin.name}@{origin.version} was recorded with other content"
        return _missing_content(store, origin.content, f"the content of {origin.name}@{origin.version}")
    if origin.kind == "user-input":
        return _missing_content(store, origin.content, "the user's input")
    return None


def _missing_content(store: Store, ref: dict[str, Any] | None, what: str) -> str | None:
    digest = (ref or {}).get("digest")
    if not isinstance(digest, str):
        return None
    try:
        present = store.cas.has(digest)
    except Exception as exc:  # a malformed digest is a broken chain, not a crash of the review
        return f"{what} has an unusable address {digest!r} ({exc})"
    return None if present else f"{what} ({digest}) is missing from the store or damaged"
