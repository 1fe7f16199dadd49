"""Pure rules of review items: the item id, the blinded display order, the candidate digest and
which candidates name a candidate's identity (docs/human-review.md, "Review items" and
"Self-identifying candidates")."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from typing import Any

import msgspec

from reviewtrail._struct import Model
from reviewtrail.canonical import canonical_json
from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.records._records import CandidateSelfIdentification, ReviewItem, ReviewPrompt
from reviewtrail.human_review.records._self_identification import CandidateIdentity, self_identification
from reviewtrail.human_review.rules._frozen import facts_digest, spliced_digest
from reviewtrail.ledger import Privacy

__all__ = [
    "ITEM_NAMESPACE",
    "CandidateFacts",
    "candidate_digest",
    "candidate_digest_of",
    "candidate_identity",
    "display_order",
    "displayed_runs",
    "item_id",
    "item_problems",
    "self_identification_of",
]

#: The UUIDv5 namespace of review item ids.
ITEM_NAMESPACE = uuid.UUID("4d2b8e61-0c5f-5a7e-9b13-6f0e2a9c7d44")


def item_id(prompt_event_id: str, criterion_id: str, criterion_version: int, run_a: str, run_b: str) -> str:
    """The review item id: UUIDv5 (in :data:`ITEM_NAMESPACE`) of the RFC 8785 bytes of the prompt
    event id, the criterion identity and the two run ids sorted, so it does not depend on the
    order the runs are given in. Two equal runs are not a pair."""
    if run_a == run_b:
        raise InvalidInputError("a review item pairs two different runs", field="runB")
    name = canonical_json(
        {
            "promptEventId": prompt_event_id,
            "criterionId": criterion_id,
            "criterionVersion": criterion_version,
            "runIds": sorted((run_a, run_b)),
        }
    )
    return str(uuid.uuid5(ITEM_NAMESPACE, name.decode("utf-8")))


def display_order(item_id: str) -> tuple[int, int]:
    """Which candidate is shown first: indices into the item's candidates (ordered by run id),
    ``(0, 1)`` or ``(1, 0)``, from the lowest bit of SHA-256 of the item id: stable for an item,
    and balanced across items because it does not follow the runs' sorted order."""
    swapped = hashlib.sha256(item_id.encode("utf-8")).digest()[0] & 1
    return (1, 0) if swapped else (0, 1)


def displayed_runs(item_id: str, run_a: str, run_b: str) -> tuple[str, str]:
    """The two run ids as a reviewer sees them (the first is "A")."""
    runs = sorted((run_a, run_b))
    first, second = display_order(item_id)
    return runs[first], runs[second]


class CandidateFacts(Model, frozen=True, rename="camel"):
    """Every training-relevant fact of one candidate, as recorded; the digest covers them all.

    ``run`` holds the completed run's own fields (status, trigger, agent, times...) and
    ``contextManifest`` the context receipt's manifest, each exactly as recorded."""

    run_id: str
    run: dict[str, Any]
    output_event_id: str
    output_payload_hash: str
    context_manifest: dict[str, Any]
    model: str
    provider: str
    prompt_hash: str
    execution_adapter: str
    learned_adapter: str | None
    catalog_generation: str
    run_privacy: Privacy
    output_privacy: Privacy

    def wire(self) -> dict[str, Any]:
        """The facts as JSON values under their wire names."""
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out


def candidate_digest(facts: CandidateFacts) -> str:
    """``sha256:`` + SHA-256 of the RFC 8785 bytes of every field of ``facts`` (wire names, with
    ``digestVersion``): a change to any of them gives another digest."""
    return facts_digest(facts.wire())


def candidate_digest_of(facts: CandidateFacts, run_bytes: bytes, manifest_bytes: bytes) -> str:
    """:func:`candidate_digest` of ``facts``, given the stored payload bytes of its run record
    (``run_bytes``, whose value is ``facts.run``) and of its context receipt (``manifest_bytes``,
    ``facts.context_manifest``): those two are spliced into the digested bytes as stored instead
    of being encoded again, and the flat fields are written in RFC 8785 key order directly.
    Stored bytes that hash to their record's ``payloadHash`` are the canonical bytes the writer
    hashed, so the digest is the same; bytes that are not canonical give another digest, and the
    item is invalid (it fails closed). tests/test_human_review_items.py holds it to
    :func:`candidate_digest` on generated facts."""
    f = facts
    flat = {
        "catalogGeneration": f.catalog_generation,
        "executionAdapter": f.execution_adapter,
        "learnedAdapter": f.learned_adapter,
        "model": f.model,
        "outputEventId": f.output_event_id,
        "outputPayloadHash": f.output_payload_hash,
        "outputPrivacy": f.output_privacy,
        "promptHash": f.prompt_hash,
        "provider": f.provider,
        "runId": f.run_id,
        "runPrivacy": f.run_privacy,
    }
    digest = spliced_digest(flat, run_bytes, manifest_bytes)
    return digest if digest is not None else candidate_digest(facts)  # a lone surrogate: the encoder names it


def item_problems(
    item: ReviewItem, current: Mapping[str, CandidateFacts], digests: Mapping[str, str] | None = None
) -> list[str]:
    """Why ``item`` no longer binds the bytes it froze, given each candidate's facts as recorded
    now (by run id; a run missing from ``current`` is no longer a completed candidate). Empty
    when every output event id and digest still matches: otherwise the item is invalid, and a
    label is never rebound to other bytes. ``digests``: each candidate's digest already computed
    (by run id, :func:`candidate_digest_of`); one missing is computed here."""
    problems = []
    for frozen in item.candidates:
        run_id, output_event_id = frozen.run_id, frozen.output_event_id
        now = current.get(run_id)
        if now is None or now.run_id != run_id:
            problems.append(f"candidate {run_id}: the run is not a completed candidate")
        elif now.output_event_id != output_event_id:
            problems.append(
                f"candidate {run_id}: the output event is {now.output_event_id}, the item froze {output_event_id}"
            )
        elif _digest(now, digests) != frozen.digest:  # asked only once its run and output event match
            problems.append(
                f"candidate {run_id}: the digest differs (the run, output, context manifest, "
                "model, provider, prompt hash, adapter, catalog or privacy changed)"
            )
    return problems


def _digest(facts: CandidateFacts, digests: Mapping[str, str] | None) -> str:
    known = digests.get(facts.run_id) if digests is not None else None
    return known if known is not None else candidate_digest(facts)


def candidate_identity(facts: CandidateFacts) -> CandidateIdentity:
    """The names of a candidate: its run's agent id, its model, provider and adapters (``run`` is
    a recorded candidate run's payload, whose ``agent.id`` is a string)."""
    learned = (facts.learned_adapter,) if facts.learned_adapter is not None else ()
    return CandidateIdentity(
        agent=str(facts.run["agent"]["id"]),
        model=facts.model,
        provider=facts.provider,
        adapters=(facts.execution_adapter, *learned),
    )


def self_identification_of(
    prompt: ReviewPrompt, a: tuple[CandidateFacts, str], b: tuple[CandidateFacts, str]
) -> list[CandidateSelfIdentification]:
    """The item's ``selfIdentification``: each of the two candidates (its facts and its response
    text) whose text names its own or the other's agent, model, provider or adapter, ordered by
    run id; the names the prompt and its evidence hold are not held against either."""
    named = self_identification(
        (a[1], b[1]),
        (candidate_identity(a[0]), candidate_identity(b[0])),
        context=(prompt.prompt, *(() if prompt.evidence is None else (prompt.evidence,))),
    )
    found = [
        CandidateSelfIdentification(run_id=facts.run_id, named=list(names))
        for (facts, _), names in zip((a, b), named, strict=True)
        if names
    ]
    return sorted(found, key=lambda flag: flag.run_id)
