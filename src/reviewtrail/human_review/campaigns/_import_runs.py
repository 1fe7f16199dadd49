"""``campaign import-runs``: candidate runs produced elsewhere, with their context receipts and
outputs, recorded and validated like local runs (docs/human-review.md, "Imported runs").

A file is JSONL, one run per line::

    {"run": {CandidateRun wire fields}, "receipt": {ContextReceipt wire fields} | null,
     "outputs": [{"response": "..."}], "privacy": "public-source" | "private" | "sensitive"}

Every line's shape is checked first, and its trigger and privacy against the ledger; a bad line
refuses the whole file (``line N: <field>``) and nothing is appended. Then every new run is
recorded in one batch, including the runs that fail a pairing condition: they are kept as evidence
of their exclusion, never paired.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import msgspec

from reviewtrail._struct import Model, decode, parse, words
from reviewtrail.errors import InvalidInputError, NotFoundError
from reviewtrail.human_review.campaigns._campaign_file import jsonl_lines
from reviewtrail.human_review.campaigns._run_batch import response_problem
from reviewtrail.human_review.reads._chains import current
from reviewtrail.human_review.reads._resolve import prompt_ref, run_facts, runs_over
from reviewtrail.human_review.records._record_names import ACTOR, ERROR_MAX_CHARS, PRIVACY_ORDER, PROMPT, prompt_digest
from reviewtrail.human_review.records._records import ReviewResponse
from reviewtrail.human_review.records._run_records import CandidateRun, ContextReceipt
from reviewtrail.human_review.rules._labels import prompt_label
from reviewtrail.human_review.rules._run_rules import Exclusion, pairable_runs
from reviewtrail.ledger import Envelope, NewRecord, Privacy, new_record
from reviewtrail.store import Store

__all__ = ["MAX_IMPORT_OUTPUTS", "ImportRunsReport", "ImportedRun", "import_runs"]

#: Outputs one imported run may carry (more than one already excludes it).
MAX_IMPORT_OUTPUTS = 16


class _Output(Model, frozen=True, kw_only=True):
    response: str


class _Line(Model, frozen=True, kw_only=True):
    run: dict[str, Any]
    receipt: dict[str, Any] | None = None
    outputs: Annotated[list[_Output], msgspec.Meta(max_length=MAX_IMPORT_OUTPUTS)]
    privacy: Privacy


@dataclass(frozen=True)
class _Checked:
    line: int
    run: CandidateRun
    receipt: ContextReceipt | None
    outputs: tuple[str, ...]  # the contract-valid responses
    privacy: Privacy


@dataclass(frozen=True)
class ImportedRun:
    """One line of the file: its run, whether it was appended now, and its pairing as recorded
    now (every run over its trigger considered); its trigger prompt is named by its id and its
    short label (:func:`~._labels.prompt_label`)."""

    line: int
    run_id: str
    agent_id: str
    trigger_event_id: str
    status: Literal["imported", "already-present"]
    pairable: bool
    exclusions: tuple[Exclusion, ...]
    prompt_label: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "runId": self.run_id,
            "agentId": self.agent_id,
            "triggerEventId": self.trigger_event_id,
            "promptLabel": self.prompt_label,
            "status": self.status,
            "pairable": self.pairable,
            "exclusions": [e.to_json() for e in self.exclusions],
        }


@dataclass(frozen=True)
class ImportRunsReport:
    runs: list[ImportedRun] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for r in self.runs if r.status == status)

    def to_json(self) -> dict[str, Any]:
        return {
            "imported": self.count("imported"),
            "alreadyPresent": self.count("already-present"),
            "pairable": sum(1 for r in self.runs if r.pairable),
            "excluded": sum(1 for r in self.runs if not r.pairable),
            "runs": [r.to_json() for r in self.runs],
        }


def import_runs(store: Store, text: str, *, actor: str = ACTOR) -> ImportRunsReport:
    """Record the runs of an import-runs file (see the module docstring). A run id already recorded
    is reported ``already-present`` and not appended again, so importing a file twice appends
    nothing the second time."""
    checked = _check_file(store, text)
    records: list[NewRecord] = []
    present: set[str] = set()
    for c in checked:
        if store.ledger.rows("hr_runs", run_id=c.run.run_id):
            present.add(c.run.run_id)
        else:
            records.extend(_records(c, actor))
    if records:
        store.append(records)
    verdicts, labels = _verdicts(store, {c.run.trigger_event_id for c in checked})
    report = ImportRunsReport()
    for c in checked:
        run = c.run
        excluded = verdicts.get(run.run_id)
        report.runs.append(
            ImportedRun(
                line=c.line,
                run_id=run.run_id,
                agent_id=run.agent.id,
                trigger_event_id=run.trigger_event_id,
                status="already-present" if run.run_id in present else "imported",
                pairable=excluded is not None and not excluded,
                exclusions=tuple(excluded) if excluded else (),
                prompt_label=labels[run.trigger_event_id],
            )
        )
    return report


def _verdicts(store: Store, triggers: set[str]) -> tuple[dict[str, list[Exclusion]], dict[str, str]]:
    """Per run id over these triggers: its exclusions (empty when it is pairable); and per
    trigger, its prompt's label."""
    out: dict[str, list[Exclusion]] = {}
    labels: dict[str, str] = {}
    for trigger in sorted(triggers):
        ref, _ = prompt_ref(store.ledger, trigger)
        labels[trigger] = prompt_label(ref.prompt.prompt)
        facts = [f for f in (run_facts(store.ledger, r) for r in runs_over(store.ledger, trigger)) if f]
        pairable, excluded = pairable_runs(facts, ref)
        out.update({f.run.run_id: [] for f in pairable.values()})
        out.update(excluded)
    return out, labels


def _records(c: _Checked, actor: str) -> list[NewRecord]:
    subject = c.run.run_id
    records = [new_record(c.run, actor=actor, privacy=c.privacy, subject=subject)]
    if c.receipt is not None:
        records.append(new_record(c.receipt, actor=actor, privacy=c.privacy, subject=subject))
    for response in c.outputs:
        records.append(new_record(ReviewResponse(response=response), actor=actor, privacy=c.privacy, subject=subject))
    return records


def _check_file(store: Store, text: str) -> list[_Checked]:
    out: list[_Checked] = []
    lines: dict[str, int] = {}
    for number, raw in jsonl_lines(text):
        if not raw:
            continue
        c = _check_line(store, number, raw)
        if c.run.run_id in lines:
            raise InvalidInputError(
                f"the run id {c.run.run_id} repeats line {lines[c.run.run_id]}", field=f"line {number}: run.runId"
            )
        lines[c.run.run_id] = number
        out.append(c)
    if not out:
        raise InvalidInputError("the import-runs file holds no runs", field="file")
    return out


def _check_line(store: Store, number: int, raw: str) -> _Checked:
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        problem = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise InvalidInputError(f"not JSON: {problem}", field=f"line {number}: line") from None
    if not isinstance(value, dict):
        raise InvalidInputError("a line is a JSON object", field=f"line {number}: line")
    try:
        line = parse(_Line, value, field="line")
    except InvalidInputError as exc:
        raise InvalidInputError(words(exc), field=f"line {number}: {exc.field}") from None
    run = decode(CandidateRun, {**line.run, "origin": "imported"}, field=f"line {number}: run")
    trigger = _record_or_none(store, run.trigger_event_id)  # read once: the receipt's check and the trigger's
    receipt = None
    if line.receipt is not None:
        line.receipt["inputs"] = _prompt_hashes(trigger, number, run.trigger_event_id, line.receipt.get("inputs"))
        receipt = decode(ContextReceipt, line.receipt, field=f"line {number}: receipt")
        if receipt.run_id != run.run_id:
            raise InvalidInputError(
                f"the receipt names run {receipt.run_id}, not {run.run_id}", field=f"line {number}: receipt.runId"
            )
    _check_trigger(store, trigger, number, run.trigger_event_id, line.privacy)
    valid = tuple(o.response for o in line.outputs if response_problem(o.response) is None)
    problems = [p for o in line.outputs if (p := response_problem(o.response)) is not None]
    if problems:
        given = [run.output_problem] if run.output_problem else []
        joined = "; ".join([*given, *problems])[:ERROR_MAX_CHARS]
        run = msgspec.structs.replace(run, output_problem=joined)
    return _Checked(number, run, receipt, valid, line.privacy)


_HEX64 = re.compile(r"[0-9a-f]{64}")


def _record_or_none(store: Store, record_id: str) -> Envelope | None:
    try:
        return store.ledger.get(record_id)
    except NotFoundError:
        return None


def _prompt_hashes(prompt: Envelope | None, number: int, trigger: str, inputs: Any) -> Any:
    """The receipt's inputs with the trigger prompt's ``payloadHash`` written as the record's
    payload hash (bare hex). Accepted for it: the payload hash, bare or as ``sha256:HEX``, or the
    ``promptDigest`` that ``campaign import --json`` printed for the prompt. Any other value is a
    malformed receipt (exit 2, naming the field, what to give and where to find it), never
    recorded as an exclusion that would keep the run out for ever. Inputs naming other events are
    left as given (the pairing rules judge them). ``prompt``: the trigger's record, if any."""
    if not isinstance(inputs, list) or prompt is None or prompt.type != PROMPT:
        return inputs  # the trigger check names a missing or wrong trigger
    digest = prompt_digest(prompt.payload_value, prompt.privacy)
    out = []
    for i, given in enumerate(inputs):
        if not isinstance(given, dict) or given.get("eventId") != trigger:
            out.append(given)
            continue
        value = given.get("payloadHash")
        bare = value.removeprefix("sha256:") if isinstance(value, str) else None
        if bare == prompt.payload_hash or value == digest or bare == digest.removeprefix("sha256:"):
            out.append({**given, "payloadHash": prompt.payload_hash})
            continue
        what = "is not a SHA-256 (64 lowercase hex digits, bare or as sha256:HEX)"
        if bare is not None and _HEX64.fullmatch(bare):
            what = f"is neither the payload hash nor the digest of the prompt {trigger}"
        raise InvalidInputError(
            f"{value!r} {what}: give the prompt record's payload hash, {prompt.payload_hash} (bare or as "
            f"sha256:HEX; 'campaign import --json' prints it as payloadHash, 'ledger show {trigger}' too), "
            "or the promptDigest 'campaign import --json' printed for it",
            field=f"line {number}: receipt.inputs.{i}.payloadHash",
        )
    return out


def _check_trigger(store: Store, env: Envelope | None, number: int, trigger: str, privacy: Privacy) -> None:
    """The trigger (``env``: its record, if any) is a recorded review prompt, and ``privacy`` is
    no more open than its privacy in force."""
    at = f"line {number}: run.triggerEventId"
    if env is None:
        raise InvalidInputError(f"no record {trigger} is recorded", field=at)
    if env.type != PROMPT:
        raise InvalidInputError(f"the record {trigger} is a {env.type}, not a review prompt", field=at)
    level = current(store.ledger, env).privacy
    if PRIVACY_ORDER.index(privacy) < PRIVACY_ORDER.index(level):
        raise InvalidInputError(
            f"the privacy {privacy} is more open than the prompt's ({level})", field=f"line {number}: privacy"
        )
