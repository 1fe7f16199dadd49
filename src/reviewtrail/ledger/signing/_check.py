"""``verify``'s check of record signatures: who wrote each record, held to the chain's writer keys
and, when a reader gives them, to the keys it trusts.

The key records are read first (by type: a handful) into a :class:`~reviewtrail.ledger.KeyBook`; then
records are streamed in seq order (seq, type, hash and signature; no payloads) and held to the
book's rule (:meth:`~reviewtrail.ledger.KeyBook.problem`): before the point from which every record must
be signed (the require point, or with trusted keys the trusted one), only the signed records
(an unsigned one is no problem there), from it on every record. Memory holds the key book and one
page of the stream, never one entry per record; a store that signs nothing costs one empty read.

Call it inside ``ledger.snapshot()``, with the walk that checks the records' own hashes and links:
a signature is checked against the hash stored with its record, which that walk holds to the
record's bytes.

With trusted keys, the records from the earliest ``store.signatures.required@1`` record signed by a
trusted key on must each be signed by a trusted key (not after its revocation); the records before
it are held only to the chain's own rule. When no such record exists, every record is held to the
trusted keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from reviewtrail.ledger.keys._writer_keys import KEY_RECORD_TYPES, KeyBook

if TYPE_CHECKING:
    from reviewtrail.ledger.contract._protocol import Ledger
    from reviewtrail.ledger.keys._signing_keys import TrustedKeys

__all__ = ["SignatureReport", "key_book", "signature_problems"]

_MOST_STRAYS = 20


@dataclass
class SignatureReport:
    """What the signature check found: problems, and how much was signed."""

    problems: list[str] = field(default_factory=list)
    checked: int = 0  # records held to the rule: the signed ones, and every one from the point on
    signed: int = 0
    required_from: int | None = None
    trusted_from: int | None = None

    def note(self) -> str:
        """One line for verify's notes."""
        parts = [f"{self.signed} signed record(s) checked"]
        if self.required_from is not None:
            parts.append(f"signatures are required from seq {self.required_from}")
        if self.trusted_from is not None:
            parts.append(f"held to the trusted keys from seq {self.trusted_from}")
        return "signed records: " + "; ".join(parts)


def key_book(ledger: Ledger, *, end: int | None = None, checked: bool = False) -> KeyBook:
    """The writer keys of ``ledger`` up to seq ``end`` (to the head when None), from its key
    records and their signatures in seq order. ``checked``: each record is checked as it is read
    (``Ledger.checked_records``: refused, exit 4, when damaged), for a caller that does not walk
    the chain itself."""
    book = KeyBook()
    records = [env for type_ in KEY_RECORD_TYPES for env in ledger.read(type=type_, end=end)]
    ordered = ledger.checked_records(records, signed=False) if checked else sorted(records, key=lambda e: e.seq)
    signatures = ledger.signatures_at(env.seq for env in ordered)
    for env in ordered:
        try:
            payload = env.payload_value
        except ValueError:
            payload = None
        book.add(env.seq, env.type, payload, record_hash=env.hash, signature=signatures.get(env.seq))
    return book


def signature_problems(
    ledger: Ledger, *, end: int, after: int = 0, trusted: TrustedKeys | None = None
) -> SignatureReport:
    """Every record in ``(after, end]`` whose signature breaks the rule (see the module), and
    every signature row that names no record."""
    report = SignatureReport()
    if end <= after:
        return report
    book = key_book(ledger, end=end)
    report.problems.extend(book.problems)
    report.required_from = book.required_from
    trusted_from = 1
    if trusted is not None:
        requirements = book.requirements
        hashes = {env.seq: env.hash for env in ledger.records_at(requirements).values()}
        trusted_from = book.trusted_from(trusted, ledger.signatures_at(requirements), hashes)
        report.trusted_from = trusted_from
    problem = book.problem
    # From ``every`` on each record must be signed; before it, only the signed ones are checked.
    points = [p for p in (book.required_from, trusted_from if trusted is not None else None) if p is not None]
    every = max(after + 1, min(points)) if points else end + 1
    before = ledger.signed_scan(start=after + 1, end=every - 1) if every > after + 1 else iter(())
    later = ledger.signature_scan(start=every, end=end) if every <= end else iter(())
    for rows in (before, later):
        for seq, type_, record_hash, signature in rows:
            report.checked += 1
            report.signed += signature is not None
            found = problem(seq, record_hash, signature, trusted=trusted, trusted_from=trusted_from)
            if found is not None:
                report.problems.append(f"ledger seq {seq} ({type_}): {found}")
    strays = ledger.stray_signatures(limit=_MOST_STRAYS)
    report.problems.extend(
        f"ledger: a signature is stored for seq {seq}, which holds no record (rt_signatures was written outside "
        "reviewtrail)"
        for seq in strays
    )
    return report
