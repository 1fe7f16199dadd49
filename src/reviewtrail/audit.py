"""``reviewtrail verify``: the whole custody check, and ``--repair``.

One call gathers every check that commands' reads depend on: the store itself (objects, chain,
identity, layout files, append-only guards, query tables; see :func:`reviewtrail.verify.verify_store`), runs and
session removals that a crash interrupted, reviewer-call trace files against their records,
and the checkpoints the caller kept. ``repair=True`` then completes what can be completed
from the chain: query tables are rebuilt, interrupted runs recorded, session removals finished,
trace files recorded — but only when the chain itself is sound, since repairs trust it.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reviewtrail.store import Progress, Store
from reviewtrail.verify import VerifyReport, verify_store

if TYPE_CHECKING:
    from reviewtrail.ledger import TrustedKeys

__all__ = ["VERIFY_STATUS_FILE", "AuditOptions", "VerifyStatus", "audit", "last_verify_status"]

#: Beside the store's objects: the outcome of the last ``reviewtrail verify`` run there. Not a
#: ledger record (verify appends nothing), so it is advisory: the inspector shows it as such.
VERIFY_STATUS_FILE = "verify-status.json"


@dataclass(frozen=True)
class AuditOptions:
    """What to check beyond the store, and whether to repair."""

    project_dir: Path | None = None  # where `.aris/traces` live; None skips the trace comparison
    checkpoints: Sequence[Path] = field(default_factory=tuple)
    public_keys: Sequence[Path] = field(default_factory=tuple)
    # PEM public keys of the writers trusted to sign every record (``verify --trusted-keys``)
    trusted_keys: Path | None = None
    repair: bool = False
    since: Path | None = None  # a checkpoint: check it, then only what follows its seq
    read_data: bool = True  # re-hash every object; False lists them (presence and size) without reading
    # write VERIFY_STATUS_FILE in the store's folder (reviewtrail verify does); False (the default)
    # writes nothing there: a read-only caller (the MCP server without --allow-writes) leaves it so
    keep_status: bool = False


@dataclass(frozen=True)
class VerifyStatus:
    """The outcome of the last ``reviewtrail verify`` run on a store: when, what it found, the head
    it checked and how much it checked (``since_seq``: from a checkpoint's seq on; ``objects_read``:
    every object re-hashed, not only listed).

    ``ok`` is true only for a whole check that passed: a check from a checkpoint, or one that
    listed the objects without reading them (``--no-read-data``), is ``partial``, and its pass
    (``passed``) is never ``ok``. A partial pass after a failure keeps that failure in
    ``last_failure`` (when, how many problems, the head), until a whole check passes."""

    checked_at: str
    ok: bool
    problems: int
    head_seq: int
    head_hash: str | None
    records_checked: int
    objects_checked: int
    since_seq: int | None = None
    objects_read: bool = True
    partial: bool = False
    passed: bool | None = None  # what was checked passed (None: as ``ok``, a status file before this field)
    last_failure: dict[str, Any] | None = None  # {"checkedAt", "problems", "headSeq"}

    def to_json(self) -> dict[str, Any]:
        return {
            "checkedAt": self.checked_at,
            "ok": self.ok,
            "passed": self.ok if self.passed is None else self.passed,
            "partial": self.partial,
            "objectsRead": self.objects_read,
            "problems": self.problems,
            "headSeq": self.head_seq,
            "headHash": self.head_hash,
            "recordsChecked": self.records_checked,
            "objectsChecked": self.objects_checked,
            "sinceSeq": self.since_seq,
            "lastFailure": self.last_failure,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> VerifyStatus:
        since = doc.get("sinceSeq")
        ok, partial = doc["ok"], doc.get("partial", since is not None)
        if "partial" not in doc and partial and ok is True:
            ok = False  # a file from before "partial": its pass from a checkpoint was partial all the same
        status = cls(
            checked_at=str(doc["checkedAt"]),
            ok=ok,
            problems=doc["problems"],
            head_seq=doc["headSeq"],
            head_hash=doc.get("headHash"),
            records_checked=doc["recordsChecked"],
            objects_checked=doc["objectsChecked"],
            since_seq=since,
            objects_read=doc.get("objectsRead", True),
            partial=partial,
            passed=doc.get("passed", doc["ok"]),
            last_failure=doc.get("lastFailure"),
        )
        numbers = (status.problems, status.head_seq, status.records_checked, status.objects_checked)
        flags = (status.ok, status.objects_read, status.partial, status.passed)
        if not all(isinstance(flag, bool) for flag in flags) or not all(type(n) is int and n >= 0 for n in numbers):
            raise ValueError("not a verify status")
        if since is not None and type(since) is not int:
            raise ValueError("not a verify status")
        if status.ok and status.partial:  # a partial check is never ok, whoever wrote the file
            raise ValueError("not a verify status")
        if status.last_failure is not None and not isinstance(status.last_failure, dict):
            raise ValueError("not a verify status")
        return status

    def failure(self) -> dict[str, Any] | None:
        """The failure this status stands for or carries: its own when it failed, else the one a
        partial pass kept."""
        if not (self.ok if self.passed is None else self.passed):
            return {"checkedAt": self.checked_at, "problems": self.problems, "headSeq": self.head_seq}
        return self.last_failure


def last_verify_status(store: Store) -> VerifyStatus | None:
    """What the last ``reviewtrail verify`` on ``store`` found, from its status file; None when
    no run left one (or the store has no folder). A file that is not a status reads as None too:
    it is advisory, and the ledger is the record."""
    if store.root is None:
        return None
    try:
        return VerifyStatus.from_json(json.loads((store.root / VERIFY_STATUS_FILE).read_bytes()))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _keep_status(store: Store, report: VerifyReport, options: AuditOptions) -> None:
    from reviewtrail._durable import replace_file

    if store.root is None:
        return
    since = report.since.get("seq") if report.since else None
    partial = options.since is not None or not options.read_data
    earlier = last_verify_status(store)
    kept = earlier.failure() if earlier is not None and report.ok and partial else None
    status = VerifyStatus(
        checked_at=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        ok=report.ok and not partial,
        problems=len(report.problems),
        head_seq=report.head_seq,
        head_hash=report.head_hash,
        records_checked=report.records_checked,
        objects_checked=report.objects_checked,
        since_seq=since if isinstance(since, int) else None,
        objects_read=options.read_data,
        partial=partial,
        passed=report.ok,
        last_failure=kept,
    )
    try:
        replace_file(store.root / VERIFY_STATUS_FILE, json.dumps(status.to_json(), indent=2).encode() + b"\n")
    except OSError as exc:
        report.notes.append(f"the verify status file could not be written ({exc.strerror or exc}); the report stands")


def audit(store: Store, options: AuditOptions, progress: Progress | None = None) -> VerifyReport:
    """Verify everything; with ``options.repair``, then complete what the chain supports."""
    from reviewtrail.provenance.runs import (
        orphan_workspaces,
        pending_run_problems,
        unfinished_session_removals,
        workspace_problems,
    )

    if options.since is not None and options.repair:
        from reviewtrail.errors import InvalidInputError

        raise InvalidInputError(
            "--repair rebuilds from the whole chain, which --since does not check: run a full verify to repair",
            field="since",
        )
    trusted = _trusted_keys(options)
    if options.since is None:
        report = verify_store(store, progress, trusted_keys=trusted, read_data=options.read_data)
    else:
        report = _verify_since(store, options, options.since, progress, trusted)
    projection_problems = [p for p in report.problems if p.startswith("query table ")]
    report.problems.extend(_checkpoint_problems(store, options, report.notes))
    report.problems.extend(pending_run_problems(store))
    report.problems.extend(unfinished_session_removals(store))
    report.problems.extend(workspace_problems(store))
    report.notes.extend(orphan_workspaces(store))
    if options.project_dir is not None:
        from reviewtrail.tracing.custody import trace_ledger_check

        trace_problems, trace_notes = trace_ledger_check(store, options.project_dir)
        report.problems.extend(trace_problems)
        report.notes.extend(trace_notes)
    if options.repair:
        _repair(store, options, report, rebuild=bool(projection_problems))
    if options.keep_status:
        _keep_status(store, report, options)
    return report


def _trusted_keys(options: AuditOptions) -> TrustedKeys | None:
    if options.trusted_keys is None:
        return None
    from reviewtrail.ledger import load_trusted_keys

    return load_trusted_keys(options.trusted_keys)


def _verify_since(
    store: Store, options: AuditOptions, path: Path, progress: Progress | None, trusted: TrustedKeys | None
) -> VerifyReport:
    """Check the checkpoint as ``--checkpoint`` does; when it holds, verify only what follows it."""
    from reviewtrail.ledger import check_checkpoint, load_checkpoint

    checkpoint = load_checkpoint(path)
    keys = _public_keys(options)
    found = check_checkpoint(store.ledger, checkpoint, public_keys=keys, store_id=store.store_id)
    seq = int(checkpoint["seq"])
    if found:
        head = store.ledger.head()
        report = VerifyReport(store_id=store.store_id, chain_ok=False)
        report.since = {
            "seq": seq,
            "hash": checkpoint["headHash"],
            "checkpoint": str(path),
            "checked": "nothing: the checkpoint does not hold",
        }
        report.head_seq, report.head_hash = (head.seq, head.hash) if head is not None else (0, None)
        report.problems.extend(f"checkpoint {path}: {p}" for p in found)
        report.notes.append(
            f"nothing after seq {seq} was checked: the checkpoint {path} does not hold; run 'reviewtrail verify' "
            "without --since to check the whole store"
        )
        return report
    report = verify_store(store, progress, since=(seq, str(checkpoint["headHash"])), trusted_keys=trusted)
    if report.since is not None:
        report.since["checkpoint"] = str(path)
    if not keys and "signature" in checkpoint:
        report.notes.append(f"checkpoint {path} is signed, but its signature was not checked: give --public-key")
    report.notes.append(
        f"checked only what follows seq {seq} of the checkpoint {path}, which holds: records up to seq {seq}, "
        f"CAS objects no later record names and query rows only earlier records give were not checked; "
        "'reviewtrail verify' without --since checks them"
    )
    return report


def _public_keys(options: AuditOptions) -> list[bytes]:
    from reviewtrail.inputs import read_input

    return [read_input(path, "key", field="public_key") for path in options.public_keys]


def _checkpoint_problems(store: Store, options: AuditOptions, notes: list[str]) -> list[str]:
    if not options.checkpoints:
        return []
    from reviewtrail.ledger import check_checkpoint, load_checkpoint

    keys = _public_keys(options)
    problems: list[str] = []
    for path in options.checkpoints:
        checkpoint = load_checkpoint(path)
        found = check_checkpoint(store.ledger, checkpoint, public_keys=keys, store_id=store.store_id)
        problems.extend(f"checkpoint {path}: {p}" for p in found)
        if not keys and "signature" in checkpoint:
            notes.append(f"checkpoint {path} is signed, but its signature was not checked: give --public-key")
    return problems


def _repair(store: Store, options: AuditOptions, report: VerifyReport, *, rebuild: bool) -> None:
    if not report.chain_ok:
        report.notes.append("nothing repaired: the chain itself is damaged, and every repair rests on it")
        return
    from reviewtrail.provenance.runs import finish_session_removals, remove_orphan_workspaces, repair_pending_runs

    if rebuild:
        store.ledger.rebuild_projections()
        report.repairs.append("query tables rebuilt from the chain")
    report.repairs.extend(repair_pending_runs(store))
    report.repairs.extend(finish_session_removals(store))
    report.repairs.extend(remove_orphan_workspaces(store))
    if options.project_dir is not None:
        from reviewtrail.tracing.custody import repair_trace_links

        report.repairs.extend(repair_trace_links(store, options.project_dir))
