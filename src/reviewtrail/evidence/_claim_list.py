"""The claims of one reply as :func:`~reviewtrail.evidence.record_claims` returns them, held compactly.

A reply of a few megabytes can carry hundreds of thousands of claims and citations; one
validated :class:`~reviewtrail.evidence._records.Claim` per claim costs kilobytes. A
:class:`ClaimList` keeps, per claim, its id, its offsets in the reply and whether it is
numeric, and per citation its offsets and what it resolved to (outcomes shared), in flat
arrays; it is a read-only sequence of :class:`Claim` built on access, equal to the ones
built at once. Its memory is a small multiple of the reply's.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Any, overload

from reviewtrail.evidence._claims import Citation, ExtractedClaim, citation_at
from reviewtrail.evidence._records import Claim, ClaimCitation

__all__ = ["ClaimList", "Outcome"]

#: What a citation resolved to: (resolved, target, evidence id); evidence id only for a chip.
Outcome = tuple[bool, str | None, str | None]


class ClaimList(Sequence[Claim]):
    """The claims of ``reply`` in order; :meth:`add` appends one, indexing builds its :class:`Claim`."""

    def __init__(self, reply: str, *, review_run_id: str | None, turn_id: str | None, source: Any) -> None:
        self._reply = reply
        self._review_run_id = review_run_id
        self._turn_id = turn_id
        self._source = source
        self._ids: list[str] = []
        self._spans = array("q")  # sentence start, end per claim
        self._numeric = bytearray()
        self._first = array("q", [0])  # claim i's citations are _first[i]:_first[i + 1]
        self._cites = array("q")  # start, end per citation
        self._outcome_of = array("q")  # index into _outcomes per citation
        self._outcomes: list[Outcome] = []
        self._outcome_index: dict[Outcome, int] = {}

    def add(self, claim_id: str, claim: ExtractedClaim, outcomes: list[Outcome]) -> None:
        """Append ``claim`` under ``claim_id``, its citations resolved to ``outcomes`` (one each)."""
        self._ids.append(claim_id)
        self._spans.extend((claim.sentence_start, claim.sentence_end))
        self._numeric.append(claim.numeric)
        for citation, outcome in zip(claim.citations, outcomes, strict=True):
            self._cites.extend((citation.start, citation.end))
            index = self._outcome_index.setdefault(outcome, len(self._outcomes))
            if index == len(self._outcomes):
                self._outcomes.append(outcome)
            self._outcome_of.append(index)
        self._first.append(len(self._outcome_of))

    def __len__(self) -> int:
        return len(self._ids)

    @overload
    def __getitem__(self, index: int) -> Claim: ...

    @overload
    def __getitem__(self, index: slice) -> list[Claim]: ...

    def __getitem__(self, index: int | slice) -> Claim | list[Claim]:
        if isinstance(index, slice):
            return [self._claim(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("claim index out of range")
        return self._claim(index)

    def __iter__(self) -> Iterator[Claim]:
        return (self._claim(i) for i in range(len(self)))

    def unresolved(self) -> list[tuple[str, str]]:
        """(claim id, raw citation) for every citation that resolves to nothing, without building claims."""
        out = []
        for i, claim_id in enumerate(self._ids):
            for k in range(self._first[i], self._first[i + 1]):
                if not self._outcomes[self._outcome_of[k]][0]:
                    out.append((claim_id, self._reply[self._cites[2 * k] : self._cites[2 * k + 1]]))
        return out

    def _claim(self, i: int) -> Claim:
        start, end = self._spans[2 * i], self._spans[2 * i + 1]
        citations = [
            _claim_citation(citation_at(self._reply, self._cites[2 * k], self._cites[2 * k + 1]), self._outcome(k))
            for k in range(self._first[i], self._first[i + 1])
        ]
        return Claim(
            claim_id=self._ids[i],
            text=self._reply[start:end],
            citations=citations,
            review_run_id=self._review_run_id,
            turn_id=self._turn_id,
            numeric=bool(self._numeric[i]),
            source=self._source,
            sentence_start=start,
            sentence_end=end,
        )

    def _outcome(self, k: int) -> Outcome:
        return self._outcomes[self._outcome_of[k]]


def _claim_citation(c: Citation, outcome: Outcome) -> ClaimCitation:
    resolved, target, evidence_id = outcome
    if c.alias is not None:
        return ClaimCitation(
            type=c.type, id=c.id, raw=c.raw, resolved=resolved, target=target, alias=c.alias, evidence_id=evidence_id
        )
    return ClaimCitation(type=c.type, id=c.id, raw=c.raw, resolved=resolved, target=target)
