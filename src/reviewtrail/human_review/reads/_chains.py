"""Following a human-review record's amendments, from the records as read (docs/human-review.md,
"Amendments"): its corrections and reclassifications, and a candidate run's current run, receipt
and output records. A record is *amended* by later records that name it in the envelope's
``supersedes``: a record of the same type is a correction (it becomes the current content), and a
``human-review.privacy-reclassification@1`` makes its privacy stricter.

Nothing here reads a payload: every read path (:mod:`._resolve`) follows amendments by these rules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import msgspec

from reviewtrail.human_review.records._record_names import PRIVACY_ORDER, RECLASSIFICATION, RESPONSE
from reviewtrail.ledger import Envelope, Privacy

__all__ = [
    "Current",
    "Records",
    "RunState",
    "amended_after",
    "amended_problems",
    "current",
    "heads",
    "latest_runs",
    "records_of",
    "run_parts",
    "run_state",
    "stricter",
]

T = TypeVar("T")


class Records(Protocol):
    """What the rules here read: a record by id, the records naming one in ``supersedes`` (in
    append order) and checked query-table rows, and ``memo(make, key)``: what ``make(records,
    key)`` gives, kept or made afresh as the records allow. The live
    :class:`~reviewtrail.ledger.Ledger` is one (it keeps nothing); a page of items preloaded in a
    few bulk reads is another (``_bulk_resolve``: prompts and runs shared by its items are
    resolved once), so both paths resolve through the same rules."""

    def get(self, record_id: str) -> Envelope: ...

    def superseded_by(self, record_id: str) -> list[str]: ...

    def rows(self, table: str, **where: Any) -> list[dict[str, Any]]: ...

    def memo(self, make: Callable[[Records, str], T], key: str) -> T: ...


def stricter(a: str, b: str) -> Privacy:
    """The stricter of two privacy levels."""
    return PRIVACY_ORDER[max(PRIVACY_ORDER.index(a), PRIVACY_ORDER.index(b))]


class Current(msgspec.Struct, frozen=True):
    """A record as it stands: the seq of the record asked about, its current content (the latest
    correction, or itself), the privacy in force (reclassifications applied) and whether anything
    amended it."""

    original_seq: int
    content: Envelope
    privacy: Privacy
    amended: bool
    forked: bool  # two corrections of one record: neither is taken as current


def current(ledger: Records, env: Envelope) -> Current:
    """Follow the corrections and reclassifications of ``env``."""
    by = ledger.superseded_by(env.id)
    if not by:  # nothing amends it (the usual record): as it was recorded
        return Current(env.seq, env, env.privacy, False, False)  # type: ignore[arg-type]
    content, privacy, amended, forked = env, env.privacy, False, False
    seen = {env.id}
    while by:
        amended = True
        corrections = []
        for later_id in by:
            later = ledger.get(later_id)
            if later.type == RECLASSIFICATION:
                privacy = stricter(privacy, later.privacy)
            elif later.type == content.type and later.id not in seen:
                corrections.append(later)
        if not corrections:
            break
        if len(corrections) > 1:
            forked = True
        content = corrections[-1]
        seen.add(content.id)
        privacy = stricter(privacy, content.privacy)
        by = ledger.superseded_by(content.id)
    return Current(env.seq, content, privacy, amended, forked)  # type: ignore[arg-type]


def heads(ledger: Records, envs: list[Envelope]) -> list[Current]:
    """The records of ``envs`` (in seq order) no later one of them corrects, each as it stands:
    its ``original`` is the first record of its correction chain (a corrected record keeps its
    place), and its privacy is the strictest along the chain, reclassifications of every earlier
    record included (a correction never reopens what was reclassified)."""
    by_id = {env.id: env for env in envs}
    corrected = {env.supersedes for env in envs if env.supersedes in by_id}
    out = []
    for env in envs:
        if env.id in corrected:
            continue
        now, root = current(ledger, env), env
        privacy: Privacy = now.privacy
        while root.supersedes is not None and root.supersedes in by_id:
            root = by_id[root.supersedes]
            privacy = stricter(privacy, current(ledger, root).privacy)
        same = root is env and privacy == now.privacy  # nothing earlier in the chain: as it stands
        out.append(now if same else msgspec.structs.replace(now, original_seq=root.seq, privacy=privacy))
    return out


def records_of(ledger: Records, table: str, run_id: str) -> list[Envelope]:
    """The records ``table`` (``hr_runs`` or ``hr_run_parts``) lists for ``run_id``, in seq order."""
    return [ledger.get(r["record_id"]) for r in sorted(ledger.rows(table, run_id=run_id), key=lambda r: r["seq"])]


def latest_runs(ledger: Records, run_id: str) -> list[Current]:
    """The run records of ``run_id`` no later one corrects, each as it stands."""
    return heads(ledger, records_of(ledger, "hr_runs", run_id))


def run_parts(ledger: Records, run_id: str) -> tuple[list[Current], list[Current]]:
    """The current context receipts and review-response outputs of ``run_id``."""
    receipts: list[Current] = []
    outputs: list[Current] = []
    for now in heads(ledger, records_of(ledger, "hr_run_parts", run_id)):
        (outputs if now.content.type == RESPONSE else receipts).append(now)
    return receipts, outputs


class RunState(msgspec.Struct, frozen=True):
    """A run as it stands: its one current run record, its current receipts and outputs."""

    run: Current
    receipts: list[Current]
    outputs: list[Current]


def run_state(ledger: Records, run_id: str) -> RunState | None:
    """``run_id`` as it stands, or None when it has no single current run record (none, several,
    or two corrections of one)."""
    runs = latest_runs(ledger, run_id)
    if len(runs) != 1 or runs[0].forked:
        return None
    receipts, outputs = run_parts(ledger, run_id)
    return RunState(runs[0], receipts, outputs)


def amended_after(ledger: Records, record_id: str, seq: int) -> Envelope | None:
    """The first record amending ``record_id`` (or one of its corrections) appended after ``seq``:
    an amendment recorded before an item was frozen is part of what the item froze."""
    todo, seen = [record_id], {record_id}
    found: Envelope | None = None
    while todo:
        for later_id in ledger.superseded_by(todo.pop()):
            if later_id in seen:
                continue
            seen.add(later_id)
            later = ledger.get(later_id)
            if later.seq > seq and (found is None or later.seq < found.seq):
                found = later
            todo.append(later_id)
    return found


def amended_problems(
    ledger: Records, prompt_id: str, prompt_amended: bool, item: Envelope, item_amended: bool
) -> list[str]:
    """Why an item no longer binds its own chain, in the order its problems list them first: its
    item record was amended, and its prompt was amended after the item was frozen (an amendment
    recorded before is part of what the item froze)."""
    problems = []
    if item_amended:
        problems.append(f"the item record {item.id} was amended")
    later = amended_after(ledger, prompt_id, item.seq) if prompt_amended else None
    if later is not None:
        how = f"reclassified {later.privacy} by" if later.type == RECLASSIFICATION else "corrected by"
        problems.append(f"the prompt {prompt_id} was {how} {later.id} after the item was frozen")
    return problems
