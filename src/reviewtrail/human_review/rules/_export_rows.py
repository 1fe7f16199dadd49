"""The ``thoughtstream.training-example.v4`` row of one decision, built from an explicit allowlist
of exportable facts (docs/human-review.md, "Export").

:class:`ExampleFacts` holds only what may leave the store: no source, run, event, item, actor,
submission or decision id, no note and no other payload field, so a row cannot carry them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from reviewtrail.human_review.records._record_names import RESPONSE_MAX_CHARS
from reviewtrail.human_review.records._records import Disposition, ReviewDecision, ReviewItem, ReviewPrompt, Strength
from reviewtrail.human_review.rules._decision_rules import Refusal, check_decision
from reviewtrail.human_review.rules._eligibility import ChainPrivacy, Eligibility, externally_eligible
from reviewtrail.human_review.rules._item_rules import CandidateFacts, item_problems

__all__ = [
    "TRAINING_EXAMPLE_V4",
    "ExampleCandidate",
    "ExampleFacts",
    "example_facts",
    "example_refusal",
    "training_example_v4",
]

#: The schema version of the rows :func:`training_example_v4` makes.
TRAINING_EXAMPLE_V4 = "thoughtstream.training-example.v4"


class ExampleCandidate(msgspec.Struct, frozen=True):
    """One candidate as it may be exported: its exact response and its provenance."""

    response: str
    model: str
    provider: str
    execution_adapter: str
    learned_adapter: str | None
    catalog_generation: str

    def provenance(self) -> dict[str, Any]:
        return {
            "model": {"id": self.model, "provider": self.provider},
            "executionAdapter": self.execution_adapter,
            "learnedAdapter": self.learned_adapter,
            "catalogGeneration": self.catalog_generation,
        }


class ExampleFacts(msgspec.Struct, frozen=True):
    """Everything a v4 row may hold, plus whether the decision may become one.

    ``candidates`` are in the item's order (by run id); ``preferred`` is an index into them."""

    campaign_id: str
    campaign_version: int
    prompt: str
    evidence: str | None
    criterion_id: str
    criterion_version: int
    criterion_label: str
    disposition: Disposition
    strength: Strength | None
    confidence: float | None
    reason_codes: tuple[str, ...]
    response_tags: tuple[str, ...]
    preferred: int | None
    replacement: str | None
    candidates: tuple[ExampleCandidate, ExampleCandidate]
    active: bool
    eligibility: Eligibility
    problems: tuple[str, ...] = ()


def example_facts(
    prompt: ReviewPrompt,
    item: ReviewItem,
    decision: ReviewDecision,
    candidates: Mapping[str, tuple[CandidateFacts, str]],
    *,
    active: bool,
    training_enabled: bool,
    privacy: ChainPrivacy,
    problems: Sequence[str] | None = None,
    enabled_when_decided: bool,
    fits: bool = False,
) -> ExampleFacts:
    """The exportable facts of ``decision`` on ``item``: ``candidates`` maps each run id to its
    facts as recorded now and its exact response. The frozen digests are re-checked (a problem
    makes the facts unexportable) and external eligibility is decided here, never by the caller.
    A decision that does not fit its item and criterion is refused (``InvalidInputError``).

    ``problems``: what ``item_problems(item, candidates)`` already gave for these very candidates
    (a resolved item's ``candidate_problems``), so the digests are not computed twice; None:
    the re-check is made here. ``enabled_when_decided``: whether the settings in force when the
    decision was recorded enabled training (``quality_eligible``). ``fits``: the caller already
    held ``decision`` to :func:`check_decision` against ``item`` and ``prompt``'s criterion (a
    counted decision of the item was), so it is not checked again."""
    refusal = None if fits else check_decision(decision, item, prompt.criterion)
    if refusal is not None:
        raise refusal.error()
    runs = item.run_ids()
    if problems is None:
        found = tuple(item_problems(item, {run: pair[0] for run, pair in candidates.items()}))
    else:
        found = tuple(problems)
    training = (training_enabled, enabled_when_decided)
    a, b = candidates.get(runs[0]), candidates.get(runs[1])
    if a is None or b is None:
        return _facts(prompt, decision, None, active, privacy, training, found)
    preferred = runs.index(decision.preferred) if decision.preferred is not None else None
    return _facts(prompt, decision, (_candidate(*a), _candidate(*b)), active, privacy, training, found, preferred)


def _candidate(facts: CandidateFacts, response: str) -> ExampleCandidate:
    return ExampleCandidate(
        response=response,
        model=facts.model,
        provider=facts.provider,
        execution_adapter=facts.execution_adapter,
        learned_adapter=facts.learned_adapter,
        catalog_generation=facts.catalog_generation,
    )


_MISSING = ExampleCandidate("", "", "", "", None, "")


def _facts(
    prompt: ReviewPrompt,
    decision: ReviewDecision,
    pair: tuple[ExampleCandidate, ExampleCandidate] | None,
    active: bool,
    privacy: ChainPrivacy,
    training: tuple[bool, bool],
    problems: tuple[str, ...],
    preferred: int | None = None,
) -> ExampleFacts:
    eligibility = externally_eligible(
        decision, training_enabled=training[0], prompt=prompt, privacy=privacy, enabled_when_decided=training[1]
    )
    return ExampleFacts(
        campaign_id=prompt.campaign.id,
        campaign_version=prompt.campaign.version,
        prompt=prompt.prompt,
        evidence=prompt.evidence,
        criterion_id=prompt.criterion.id,
        criterion_version=prompt.criterion.version,
        criterion_label=prompt.criterion.label,
        disposition=decision.disposition,
        strength=decision.strength,
        confidence=decision.confidence,
        reason_codes=tuple(decision.reason_codes),
        response_tags=tuple(decision.response_tags),
        preferred=preferred,
        replacement=decision.replacement,
        candidates=pair or (_MISSING, _MISSING),
        active=active,
        eligibility=eligibility,
        problems=problems if pair else (*problems, "a candidate's response is missing"),
    )


def _valid_response(text: str | None) -> bool:
    return text is not None and 0 < len(text) <= RESPONSE_MAX_CHARS


def example_refusal(facts: ExampleFacts) -> Refusal | None:
    """Why ``facts`` may not become a v4 row, or None: only an active, externally eligible
    ``prefer`` or ``correct`` whose frozen item still holds, with contract-valid responses."""
    if facts.disposition not in ("prefer", "correct"):
        return Refusal("disposition", f"a {facts.disposition} decision is never a training example")
    if not facts.active:
        return Refusal("decision", "the decision is not active (it was superseded)")
    if not facts.eligibility.eligible:
        return Refusal(facts.eligibility.code, f"not externally eligible: {facts.eligibility.reason}")
    if facts.problems:
        return Refusal("item", "the item is invalid: " + "; ".join(facts.problems))
    first, second = facts.candidates
    if not (_valid_response(first.response) and _valid_response(second.response)):
        return Refusal("response", "a candidate response is empty or longer than RESPONSE_MAX_CHARS")
    if facts.disposition == "prefer" and (facts.preferred not in (0, 1) or facts.strength is None):
        return Refusal("preferred", "prefer must name one of the two candidates and a strength")
    if facts.disposition == "correct" and not _valid_response(facts.replacement):
        return Refusal("replacement", "correct must carry a replacement of 1 to RESPONSE_MAX_CHARS characters")
    return None


def training_example_v4(facts: ExampleFacts) -> dict[str, Any]:
    """The v4 row of an active, externally eligible ``prefer`` or ``correct`` decision. For
    ``prefer`` the preferred candidate is chosen and the other rejected; for ``correct`` the
    replacement is chosen and both candidates are rejected. Anything else is refused
    (``InvalidInputError`` naming the field)."""
    refusal = example_refusal(facts)
    if refusal is not None:
        raise refusal.error()
    first, second = facts.candidates
    if facts.disposition == "prefer":
        winner = facts.candidates[facts.preferred or 0]
        chosen = _response(winner.response, "candidate", winner)
        rejected = [_response(c.response, "candidate", c) for c in facts.candidates if c is not winner]
    else:
        chosen = _response(facts.replacement or "", "correction", None)
        rejected = [_response(first.response, "candidate", first), _response(second.response, "candidate", second)]
    judgment: dict[str, Any] = {
        "disposition": facts.disposition,
        "reasonCodes": list(facts.reason_codes),
        "responseTags": list(facts.response_tags),
    }
    if facts.strength is not None and facts.disposition == "prefer":
        judgment["strength"] = facts.strength
    if facts.confidence is not None:
        judgment["confidence"] = facts.confidence
    row: dict[str, Any] = {
        "schemaVersion": TRAINING_EXAMPLE_V4,
        "campaign": {"id": facts.campaign_id, "version": facts.campaign_version},
        "prompt": facts.prompt,
        "criterion": {"id": facts.criterion_id, "version": facts.criterion_version, "label": facts.criterion_label},
        "judgment": judgment,
        "chosen": chosen,
        "rejected": rejected,
    }
    if facts.evidence is not None:
        row["evidence"] = facts.evidence
    return row


def _response(text: str, origin: str, candidate: ExampleCandidate | None) -> dict[str, Any]:
    """One response of a row: its exact text, where it came from, the candidate's provenance
    (none for a reviewer's correction) and an empty trajectory: a label binds the frozen
    prompt/response pair, not a trace that can gain later chunks."""
    return {
        "response": text,
        "origin": origin,
        "provenance": candidate.provenance() if candidate is not None else None,
        "trajectory": [],
    }
