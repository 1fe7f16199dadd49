"""``reviewtrail verify``: the whole custody check, and ``--repair``.

One call gathers every check that commands' reads depend on: the store itself (objects, chain,
identity, layout files, append-only guards, query tables; see :meth:`Store.verify`), runs and
session removals that a crash interrupted, reviewer-call trace files against their records,
and the checkpoints the caller kept. ``repair=True`` then completes what can be completed
from the chain: query tables are rebuilt, interrupted runs recorded, session removals finished,
trace files recorded — but only when the chain itself is sound, since repairs trust it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reviewtrail.store import Progress, Store, VerifyReport

__all__ = ["AuditOptions", "audit"]


@dataclass(frozen=True)
class AuditOptions:
    """What to check beyond the store, and whether to repair."""

    project_dir: Path | None = None  # where `.aris/traces` live; None skips the trace comparison
    checkpoints: Sequence[Path] = field(default_factory=tuple)
    public_keys: Sequence[Path] = field(default_factory=tuple)
    repair: bool = False
    since: Path | None = None  # a checkpoint: check it, then only what follows its seq


def audit(store: Store, options: AuditOptions, progress: Progress | None = None) -> VerifyReport:
    """Verify everything; with ``options.repair``, then complete what the chain supports."""
    from reviewtrail.provenance import (
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
    report = store.verify(progress) if options.since is None else _verify_since(store, options, options.since, progress)
    projection_problems = [p for p in report.problems if p.startswith("query table ")]
    report.problems.extend(_checkpoint_problems(store, options, report.notes))
    report.problems.extend(pending_run_problems(store))
    report.problems.extend(unfinished_session_removals(store))
    report.problems.extend(workspace_problems(store))
    report.notes.extend(orphan_workspaces(store))
    if options.project_dir is not None:
        from reviewtrail.tracing import trace_ledger_problems

        report.problems.extend(trace_ledger_problems(store, options.project_dir))
    if options.repair:
        _repair(store, options, report, rebuild=bool(projection_problems))
    return report


def _verify_since(store: Store, options: AuditOptions, path: Path, progress: Progress | None) -> VerifyReport:
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
    report = store.verify(progress, since=(seq, str(checkpoint["headHash"])))
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
    from reviewtrail.provenance import finish_session_removals, remove_orphan_workspaces, repair_pending_runs

    if rebuild:
        store.ledger.rebuild_projections()
        report.repairs.append("query tables rebuilt from the chain")
    report.repairs.extend(repair_pending_runs(store))
    report.repairs.extend(finish_session_removals(store))
    report.repairs.extend(remove_orphan_workspaces(store))
    if options.project_dir is not None:
        from reviewtrail.tracing import repair_trace_links

        report.repairs.extend(repair_trace_links(store, options.project_dir))
