"""``trace verify``: trace files against the schemas and rules, and against the project's store
when one is configured for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewtrail.tracing.custody._ledger_check import ledger_problems
from reviewtrail.tracing.custody._ledger_link import StoreLocator
from reviewtrail.tracing.files._layout import project_root
from reviewtrail.tracing.files._verify import trace_scope, verify_traces

__all__ = ["TraceCheck", "check_traces"]


@dataclass(frozen=True)
class TraceCheck:
    """Files checked, whether the ledger was compared, and every problem found."""

    files_checked: int
    ledger_checked: bool
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "filesChecked": self.files_checked,
            "ledgerChecked": self.ledger_checked,
            "problems": self.problems,
        }


def check_traces(path: Path | None, stores: StoreLocator) -> TraceCheck:
    """Check the traces under ``path`` (a project, its ``.aris``, a skill or a run folder;
    None: the project root), then, when ``stores`` finds a store for the project, compare
    them with its records (unreadable ``events.jsonl`` lines are reported once, by the first check)."""
    target = path if path is not None else project_root(None)
    checked, problems = verify_traces(target)
    project, skill, run_id = trace_scope(target)
    if not stores.exists(project):
        return TraceCheck(checked, False, problems)
    with stores.open(project) as store:
        problems += ledger_problems(store, project, skill=skill, run_id=run_id, report_unreadable=False)
    return TraceCheck(checked, True, problems)
