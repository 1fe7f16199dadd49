"""Amending the records under review items, only by appending (docs/human-review.md,
"Amendments"): a privacy reclassification that makes a prompt, run, context-receipt or output
record stricter, and corrections of a candidate's output or run record. Each appended record names
the record it amends in the envelope's ``supersedes``; nothing is rewritten. An item that froze the
earlier record becomes invalid with the reason (:func:`resolve_item`) instead of being rebound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from reviewtrail._struct import parse, read
from reviewtrail.errors import ConflictError, InvalidInputError, NotFoundError
from reviewtrail.human_review.reads._chains import current
from reviewtrail.human_review.records._record_names import ACTOR, PRIVACY_ORDER, PROMPT, RECEIPT, RESPONSE, RUN
from reviewtrail.human_review.records._records import ReviewResponse
from reviewtrail.human_review.records._run_records import (
    CandidateRun,
    PrivacyReclassification,
    new_reclassification_record,
)
from reviewtrail.ledger import Envelope, Ledger, PayloadModel, Privacy, new_record
from reviewtrail.store import Store

__all__ = ["AMENDABLE", "Amendment", "correct_output", "correct_run", "reclassify"]

#: The record types that can be reclassified, and what each is called.
AMENDABLE: dict[str, str] = {PROMPT: "prompt", RUN: "run", RECEIPT: "receipt", RESPONSE: "output"}


@dataclass(frozen=True)
class Amendment:
    """One appended amendment: what kind of record it amends, the record it supersedes, the new
    record and the privacy in force after it."""

    action: Literal["reclassified", "corrected"]
    kind: str
    target_id: str
    record_id: str
    privacy: Privacy

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "kind": self.kind,
            "targetId": self.target_id,
            "recordId": self.record_id,
            "privacy": self.privacy,
        }


def _record(ledger: Ledger, record_id: str, field: str) -> Envelope:
    try:
        return ledger.get(record_id)
    except NotFoundError:
        raise NotFoundError(f"no record with id {record_id!r}", field=field) from None


def reclassify(store: Store, record_id: str, privacy: str, *, reason: str, actor: str = ACTOR) -> Amendment:
    """Make a prompt, run, context-receipt or output record stricter: append a
    ``human-review.privacy-reclassification@1`` superseding the record as it stands now (its
    latest correction). ``privacy`` must be stricter than the privacy in force, else
    :class:`InvalidInputError` (field ``privacy``) and nothing is appended."""
    env = _record(store.ledger, record_id, "record")
    kind = AMENDABLE.get(env.type)
    if kind is None:
        raise InvalidInputError(
            f"record {record_id} is a {env.type} record; only prompt, run, context-receipt and output records "
            "are reclassified",
            field="record",
        )
    if privacy not in PRIVACY_ORDER:
        raise InvalidInputError(f"{privacy!r} is not one of {', '.join(PRIVACY_ORDER)}", field="privacy")
    now = current(store.ledger, env)
    if PRIVACY_ORDER.index(privacy) <= PRIVACY_ORDER.index(now.privacy):
        stricter = [p for p in PRIVACY_ORDER if PRIVACY_ORDER.index(p) > PRIVACY_ORDER.index(now.privacy)]
        allowed = f"only {' or '.join(stricter)} is allowed" if stricter else "it cannot be made stricter"
        raise InvalidInputError(
            f"the {kind} record {record_id} is {now.privacy}; privacy can only become stricter ({allowed})",
            field="privacy",
        )
    target = now.content
    fields = {"targetId": target.id, "privacy": privacy, "reason": reason}
    payload = parse(PrivacyReclassification, fields, field="reason")
    [appended] = store.append([new_reclassification_record(payload, target.subject, actor=actor)])
    return Amendment("reclassified", kind, target.id, appended.id, appended.privacy)  # type: ignore[arg-type]


def correct_output(store: Store, output_event_id: str, response: str, *, actor: str = ACTOR) -> Amendment:
    """Correct a candidate's output: append a ``stream.thought.output.review-response@1`` holding
    ``response`` that supersedes the output as it stands now (same run id as subject, its privacy
    in force). A response that is not contract-valid or equals the current one is refused
    (field ``response``)."""
    env = _record(store.ledger, output_event_id, "output")
    if env.type != RESPONSE:
        raise InvalidInputError(f"record {output_event_id} is a {env.type} record, not an output", field="output")
    now = current(store.ledger, env)
    corrected = parse(ReviewResponse, {"response": response}, field="response")
    if read(ReviewResponse, now.content.payload) == corrected:
        raise InvalidInputError(
            "the response is the output as it stands; there is nothing to correct", field="response"
        )
    return _append_correction(store, "output", now.content, corrected, now.privacy, actor)


def correct_run(store: Store, run_id: str, *, actor: str = ACTOR, **changes: Any) -> Amendment:
    """Correct a candidate-run record: append the run as it stands with ``changes`` (wire names; a
    mapping for ``agent`` or ``campaign`` changes only the keys it names, e.g.
    ``agent={"model": "gpt-4.1"}``), superseding it. The run id cannot change; a correction that
    changes nothing or breaks the record is refused, naming the field."""
    head = _current_run(store.ledger, run_id)
    now = current(store.ledger, head)
    wire: dict[str, Any] = dict(now.content.payload_value)
    if not changes:
        raise InvalidInputError("name at least one field to correct", field="changes")
    for key, value in changes.items():
        if key in ("runId", "run_id"):
            raise InvalidInputError("a correction keeps the run id; record a new run instead", field="runId")
        if isinstance(value, dict) and isinstance(wire.get(key), dict):
            wire[key] = {**wire[key], **value}
        else:
            wire[key] = value
    run = parse(CandidateRun, wire, field="run")
    if run == read(CandidateRun, now.content.payload):
        raise InvalidInputError("the changes leave the run record as it stands", field="changes")
    return _append_correction(store, "run", now.content, run, now.privacy, actor)


def _current_run(ledger: Ledger, run_id: str) -> Envelope:
    """The one run record of ``run_id`` no later run record supersedes."""
    rows = sorted(ledger.rows("hr_runs", run_id=run_id), key=lambda r: r["seq"])
    if not rows:
        raise NotFoundError(f"no candidate run {run_id}", field="run")
    envs = [ledger.get(r["record_id"]) for r in rows]
    superseded = {e.supersedes for e in envs}
    heads = [e for e in envs if e.id not in superseded]
    if len(heads) != 1:
        named = ", ".join(e.id for e in heads)
        raise ConflictError(f"run {run_id} has {len(heads)} current records ({named}); none is corrected", field="run")
    return heads[0]


def _append_correction(
    store: Store, kind: str, target: Envelope, payload: PayloadModel, privacy: Privacy, actor: str
) -> Amendment:
    record = new_record(payload, actor=actor, privacy=privacy, subject=target.subject, supersedes=target.id)
    [appended] = store.append([record])
    return Amendment("corrected", kind, target.id, appended.id, privacy)
