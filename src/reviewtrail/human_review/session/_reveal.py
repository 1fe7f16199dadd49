"""What a reviewer may see of a review item's candidates: their positions ("A", "B"), problems
worded without naming any run or output event while the item is blinded, and the candidates'
provenance once a decision is recorded, with whether each candidate's text names a candidate's
identity (docs/human-review.md, "Blinding" and "Self-identifying candidates")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reviewtrail.human_review.reads._chains import Records
from reviewtrail.human_review.reads._resolve import run_facts
from reviewtrail.human_review.records._records import ReviewItem
from reviewtrail.human_review.rules._frozen import POSITIONS
from reviewtrail.human_review.session._reveal_gate import reveal_gate

__all__ = ["CandidateProvenance", "candidate_provenance", "gated_provenance", "position_run", "preferred_run"]


def position_run(item: ReviewItem, position: str) -> str | None:
    """The run id shown at ``position`` ("A" or "B"), or None for any other value."""
    if position not in POSITIONS:
        return None
    return item.display_order[POSITIONS.index(position)]


@dataclass(frozen=True)
class CandidateProvenance:
    """Who produced the candidate shown at ``position``: revealed only after a decision. Fields
    are None when the run no longer has a single current record. ``named``: what the candidate's
    text names of a candidate's identity, as the item recorded it at materialize (``own-model``,
    ``other-provider``...; empty for nothing), None when the item was never checked.
    ``withheld``: when the producer is withheld by the reveal gate, when it will be shown; every
    other field but ``position`` is then None (:meth:`withholding`)."""

    position: str
    run_id: str | None
    agent_id: str | None
    model: str | None
    provider: str | None
    execution_adapter: str | None
    learned_adapter: str | None
    catalog_generation: str | None
    named: tuple[str, ...] | None = None
    withheld: str | None = None

    @classmethod
    def withholding(cls, position: str, statement: str) -> CandidateProvenance:
        """The position ``position`` with its producer withheld: nothing but when it is shown."""
        return cls(position, None, None, None, None, None, None, None, None, statement)

    def to_json(self) -> dict[str, Any]:
        if self.withheld is not None:
            return {"position": self.position, "withheld": self.withheld}
        return {
            "position": self.position,
            "runId": self.run_id,
            "agentId": self.agent_id,
            "model": self.model,
            "provider": self.provider,
            "executionAdapter": self.execution_adapter,
            "learnedAdapter": self.learned_adapter,
            "catalogGeneration": self.catalog_generation,
            "selfIdentification": None if self.named is None else list(self.named),
        }

    def self_identifying(self) -> str:
        """Whether the candidate's text names a candidate's identity, for a reviewer: ``no``,
        ``not checked``, or ``yes:`` and what it names (``own model, B's provider``)."""
        if self.named is None:
            return "not checked"
        if not self.named:
            return "no"
        other = POSITIONS[1 - POSITIONS.index(self.position)] if self.position in POSITIONS else "the other"
        said = [("own " if name.startswith("own-") else f"{other}'s ") + name.split("-", 1)[1] for name in self.named]
        return "yes: " + ", ".join(said)

    #: Column titles of :meth:`cells`, for a table of revealed provenance.
    COLUMNS = (
        "",
        "agent",
        "model",
        "provider",
        "execution adapter",
        "learned adapter",
        "catalog",
        "run",
        "names an identity",
    )

    def cells(self) -> list[str]:
        """One table row: position, agent, model, provider, adapters, catalog, run (``?`` where
        the run no longer has a single current record; an empty cell for no learned adapter) and
        whether its text names a candidate's identity (:meth:`self_identifying`); a withheld
        position gives its position and when it is shown, every other cell empty."""
        if self.withheld is not None:
            return [self.position, self.withheld] + [""] * (len(self.COLUMNS) - 2)
        return [
            self.position,
            self.agent_id or "?",
            self.model or "?",
            self.provider or "?",
            self.execution_adapter or "?",
            self.learned_adapter or "",
            self.catalog_generation or "?",
            self.run_id or "?",
            self.self_identifying(),
        ]


def candidate_provenance(ledger: Records, item: ReviewItem) -> tuple[CandidateProvenance, ...]:
    """The provenance of the item's candidates A and B, from their run records as they stand, and
    what each one's text names of a candidate's identity, as the item recorded it."""
    out = []
    for position, run_id in zip(POSITIONS, item.display_order, strict=True):
        named = item.named_by(run_id)
        facts = run_facts(ledger, run_id)
        if facts is None:
            out.append(CandidateProvenance(position, run_id, None, None, None, None, None, None, named))
            continue
        agent = facts.run.agent
        out.append(
            CandidateProvenance(
                position,
                run_id,
                agent.id,
                agent.model,
                agent.provider,
                agent.execution_adapter,
                agent.learned_adapter,
                agent.catalog_generation,
                named,
            )
        )
    return tuple(out)


def gated_provenance(records: Records, item: ReviewItem) -> tuple[CandidateProvenance, ...]:
    """:func:`candidate_provenance` through the reveal gate (:func:`~._reveal_gate.reveal_gate`):
    a position whose response an open item still shows is withheld, saying when it is shown."""
    gates = reveal_gate(records, item)
    if not any(g.revealed for g in gates):
        return tuple(CandidateProvenance.withholding(g.position, g.statement() or "") for g in gates)
    shown = candidate_provenance(records, item)
    return tuple(
        p if g.revealed else CandidateProvenance.withholding(g.position, g.statement() or "")
        for p, g in zip(shown, gates, strict=True)
    )


def preferred_run(item: ReviewItem, preferred: str) -> str:
    """``preferred`` as a run id: a position ("A", "B", either case: the one rule of every surface)
    is the run shown there (a position wins over a run id spelled the same); anything else is taken
    as a run id, checked later."""
    return position_run(item, preferred.upper() if preferred in ("a", "b") else preferred) or preferred
