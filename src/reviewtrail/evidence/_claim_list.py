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
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, overload

import msgspec

from reviewtrail.evidence._claims import Citation, ClaimSpan, citation_at
from reviewtrail.evidence._records import Claim, ClaimCitation

__all__ = ["ClaimList", "LazyList", "Outcome"]

#: What a citation resolved to: (resolved, target, evidence id); evidence id only for a chip.
Outcome = tuple[bool, str | None, str | None]


class ClaimList(Sequence[Claim]):
    """The claims of ``reply`` in order; :meth:`add` appends one, indexing builds its :class:`Claim`.

    ``tokens`` are the reply's citations and chips as (start, end) pairs (``Layout.tokens``).
    """

    def __init__(
        self, reply: str, tokens: array[int], *, review_run_id: str | None, turn_id: str | None, source: Any
    ) -> None:
        self._reply = reply
        self._tokens = tokens
        self._review_run_id = review_run_id
        self._turn_id = turn_id
        self._source = source
        self._ids: list[str] = []
        self._claims = array("q")  # per claim: sentence start, end, first token, stop token, first outcome
        self._numeric = bytearray()
        self._outcome_of = array("i")  # per citation of a claim, in order: index into _outcomes
        self._outcomes: list[Outcome] = []
        self._outcome_index: dict[Outcome, int] = {}
        self._dumps: dict[tuple[str, int], dict[str, Any]] = {}  # recent citations as JSON, for to_json

    def add(self, claim_id: str, span: ClaimSpan, outcomes: Iterable[Outcome]) -> None:
        """Append the claim ``span`` under ``claim_id``, its citations resolved to ``outcomes`` (one each)."""
        base = len(self._outcome_of)
        for outcome in outcomes:
            index = self._outcome_index.setdefault(outcome, len(self._outcomes))
            if index == len(self._outcomes):
                self._outcomes.append(outcome)
            self._outcome_of.append(index)
        if len(self._outcome_of) - base != span.stop - span.first:
            raise ValueError(f"{span.stop - span.first} citations, {len(self._outcome_of) - base} outcomes")
        self._ids.append(claim_id)
        self._claims.extend((span.start, span.end, span.first, span.stop, base))
        self._numeric.append(span.numeric)

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

    def summaries(self) -> Iterator[tuple[str, str, Iterator[tuple[str, bool]]]]:
        """Per claim: its id, its text and its citations as (raw, resolved), without building claims."""
        for i in range(len(self)):
            start, end = self._claims[5 * i : 5 * i + 2]
            yield self._ids[i], self._reply[start:end], self._marks(i)

    def _marks(self, i: int) -> Iterator[tuple[str, bool]]:
        _, _, first, stop, base = self._claims[5 * i : 5 * i + 5]
        for k in range(first, stop):
            resolved = self._outcomes[self._outcome_of[base + k - first]][0]
            yield self._reply[self._tokens[2 * k] : self._tokens[2 * k + 1]], resolved

    def json_claims(self, record_ids: Sequence[str | None]) -> LazyList:
        """The claims as JSON documents with their ``recordId``, each made (its citations one by one)
        while :class:`json.JSONEncoder` with an indent writes it."""
        return LazyList(len(self), lambda i: self._json_claim(i, record_ids[i]))

    def json_unresolved(self) -> LazyList:
        """``{"claimId", "citation"}`` for every citation that resolves to nothing, made while written."""
        rows = self._unresolved()
        return LazyList(self.unresolved_count(), lambda _: self._unresolved_doc(next(rows)))

    def _unresolved_doc(self, row: tuple[int, int, int]) -> dict[str, str]:
        i, start, end = row
        return {"claimId": self._ids[i], "citation": self._reply[start:end]}

    def _json_claim(self, i: int, record_id: str | None) -> dict[str, Any]:
        _, _, first, stop, base = self._claims[5 * i : 5 * i + 5]
        doc = self._shell(i).payload_json()
        doc["citations"] = LazyList(stop - first, lambda n: self._json_citation(first + n, base + n))
        return {**doc, "recordId": record_id}

    def _json_citation(self, k: int, outcome: int) -> dict[str, Any]:
        """Token ``k`` as JSON; the same text with the same outcome gives the same (shared) document."""
        key = (self._reply[self._tokens[2 * k] : self._tokens[2 * k + 1]], self._outcome_of[outcome])
        if key not in self._dumps:
            if len(self._dumps) >= 4096:
                self._dumps.clear()
            self._dumps[key] = msgspec.to_builtins(self._citation(k, outcome))
        return self._dumps[key]

    def unresolved(self) -> list[tuple[str, str]]:
        """(claim id, raw citation) for every citation that resolves to nothing, without building claims."""
        return [(self._ids[i], self._reply[s:e]) for i, s, e in self._unresolved()]

    def unresolved_count(self) -> int:
        return sum(1 for _ in self._unresolved())

    def _unresolved(self) -> Iterator[tuple[int, int, int]]:
        tokens = self._tokens
        for i in range(len(self)):
            _, _, first, stop, base = self._claims[5 * i : 5 * i + 5]
            for k in range(first, stop):
                if not self._outcomes[self._outcome_of[base + k - first]][0]:
                    yield i, tokens[2 * k], tokens[2 * k + 1]

    def _claim(self, i: int) -> Claim:
        _, _, first, stop, base = self._claims[5 * i : 5 * i + 5]
        citations = [self._citation(k, base + k - first) for k in range(first, stop)]
        return self._shell(i, citations)

    def _citation(self, k: int, outcome: int) -> ClaimCitation:
        """Token ``k`` with the outcome at ``outcome`` as a recorded citation."""
        c = citation_at(self._reply, self._tokens[2 * k], self._tokens[2 * k + 1])
        return _claim_citation(c, self._outcomes[self._outcome_of[outcome]])

    def _shell(self, i: int, citations: list[ClaimCitation] | None = None) -> Claim:
        start, end = self._claims[5 * i : 5 * i + 2]
        return Claim(
            claim_id=self._ids[i],
            text=self._reply[start:end],
            citations=citations or [],
            review_run_id=self._review_run_id,
            turn_id=self._turn_id,
            numeric=bool(self._numeric[i]),
            source=self._source,
            sentence_start=start,
            sentence_end=end,
        )


def _claim_citation(c: Citation, outcome: Outcome) -> ClaimCitation:
    resolved, target, evidence_id = outcome
    if c.alias is not None:
        return ClaimCitation(
            type=c.type, id=c.id, raw=c.raw, resolved=resolved, target=target, alias=c.alias, evidence_id=evidence_id
        )
    return ClaimCitation(type=c.type, id=c.id, raw=c.raw, resolved=resolved, target=target)


class LazyList(list):  # type: ignore[type-arg]  # a list to the JSON encoder, its items made on demand
    """``length`` items, item ``n`` being ``make(n)``, made each time the list is iterated (in order)."""

    def __init__(self, length: int, make: Callable[[int], Any]) -> None:
        super().__init__()
        self._length = length
        self._make = make

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[Any]:
        return (self._make(n) for n in range(self._length))
