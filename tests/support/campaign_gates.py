"""The campaign's gate attacks: damage that ``verify`` reports, aimed at the commands that decide
what may leave the store or count as a label (export, decide, queue, coverage, artifact show).

Each case takes a copy of the populated project through some legitimate steps (``setup``), copies
it once more, damages the second copy as someone with write access to the ledger file could, and
then runs each ``check`` command on both. The gate holds when the damaged copy refuses (exit 4) or
gives exactly what the untouched copy gives: the same exit code and the same output (for an
export, the same example files). A command that serves what only the damage could have made
fails the case.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.campaign import Facts, Project, Result, unguarded

__all__ = ["GATE_CASES", "SWEEP_CHECKS", "GateCase", "gate_answers", "run_gate_case", "sweep_attack"]

CANARY = ("canary", "--version", "1")
Steps = Callable[[Project, Facts], list[tuple[str, ...]]]
Damage = Callable[[Project, Facts, sqlite3.Connection], None]


@dataclass(frozen=True)
class Check:
    """A gate command and what of its output must match the untouched copy's."""

    args: Callable[[Facts], tuple[str, ...]]
    compare: str = "stdout"  # "stdout", "export" (the example files) or "decision" (exit and activity)


@dataclass(frozen=True)
class GateCase:
    damage: Damage
    checks: tuple[Check, ...]
    setup: Steps = field(default=lambda p, f: [])
    guarded: bool = True  # False: the damage edits rt_records (append-only triggers put back after)


def _one(conn: sqlite3.Connection, sql: str, *params: Any) -> Any:
    row = conn.execute(sql, params).fetchone()
    if row is None:
        raise AssertionError(f"gate case: nothing found for {sql!r} {params}")
    return row[0]


def _prompt(conn: sqlite3.Connection) -> str:
    return str(_one(conn, "SELECT record_id FROM rt_p_hr_prompts WHERE campaign_id = 'canary'"))


def _output(conn: sqlite3.Connection) -> str:
    return str(_one(conn, "SELECT record_id FROM rt_p_hr_run_parts WHERE kind = 'output' ORDER BY rt_seq"))


EXPORT = Check(lambda f: ("review", "export", *CANARY, "--out", "gate-out", "--json"), compare="export")
COVERAGE = Check(lambda f: ("campaign", "coverage", *CANARY, "--json"))
QUEUE = Check(lambda f: ("review", "queue", *CANARY, "--json"))
DECIDE = Check(  # a second look at the decided item: it supersedes the item's active decision
    lambda f: ("review", "decide", f.extra["review_item"], "--prefer", "B", "--strength", "strong",
               "--supersedes", f.extra["review_decision"], "--json"),
    compare="decision",
)  # fmt: skip
ARTIFACT = Check(lambda f: ("artifact", "show", "out.md", "--json"))


# --- setups: legitimate steps taken on both copies -------------------------------------------------
def _reclassify_prompt(p: Project, f: Facts) -> list[tuple[str, ...]]:
    with p.connect() as conn:
        prompt = _prompt(conn)
    return [("campaign", "reclassify", prompt, "--privacy", "private", "--reason", "names a customer")]


def _correct_output(p: Project, f: Facts) -> list[tuple[str, ...]]:
    with p.connect() as conn:
        output = _output(conn)
    (p.root / "fixed.txt").write_text("Accuracy is 0.93 on the held-out split.\n")
    return [("campaign", "correct-output", output, "--response-file", "fixed.txt")]


def _second_decision(p: Project, f: Facts) -> list[tuple[str, ...]]:
    again = ("review", "decide", f.extra["review_item"], "--prefer", "B", "--strength", "strong")
    return [(*again, "--use-for-training", "--supersedes", f.extra["review_decision"])]


def _no_training(p: Project, f: Facts) -> list[tuple[str, ...]]:
    return [("campaign", "settings", *CANARY, "--no-training")]


# --- damage ----------------------------------------------------------------------------------------
def _drop_supersession_of_prompt(p: Project, f: Facts, conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM rt_p_supersessions WHERE superseded_id = ?", (_prompt(conn),))


def _drop_correction_rows(p: Project, f: Facts, conn: sqlite3.Connection) -> None:
    output = _output(conn)
    fix = _one(conn, "SELECT by_id FROM rt_p_supersessions WHERE superseded_id = ?", output)
    conn.execute("DELETE FROM rt_p_supersessions WHERE superseded_id = ?", (output,))
    conn.execute("DELETE FROM rt_p_hr_run_parts WHERE record_id = ?", (fix,))


def _drop_active_decision_row(p: Project, f: Facts, conn: sqlite3.Connection) -> None:
    active = _one(conn, "SELECT record_id FROM rt_p_hr_decisions WHERE supersedes = ?", f.extra["review_decision"])
    conn.execute("DELETE FROM rt_p_hr_decisions WHERE record_id = ?", (active,))


def _restore_open_row(p: Project, f: Facts, conn: sqlite3.Connection) -> None:
    item = f.extra["review_item"]
    seq = _one(conn, "SELECT seq FROM rt_p_hr_items WHERE item_id = ?", item)
    conn.execute(
        "UPDATE rt_p_hr_open SET campaign_id = 'canary', campaign_version = 1, item_seq = ?, rt_seq = ? "
        "WHERE item_id = ?",
        (seq, seq, item),
    )


def _drop_item_row(p: Project, f: Facts, conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM rt_p_hr_items WHERE item_id = ?", (f.extra["review_item"],))


def _stale_settings_row(p: Project, f: Facts, conn: sqlite3.Connection) -> None:
    older = conn.execute(
        "SELECT id, seq FROM rt_records WHERE type = 'human-review.campaign@1' ORDER BY seq"
    ).fetchone()
    conn.execute(
        "UPDATE rt_p_hr_campaigns SET training_enabled = 1, record_id = ?, rt_seq = ?, seq = ? "
        "WHERE campaign_id = 'canary' AND version = 1",
        (older[0], older[1], older[1]),
    )


def _drop_artifact_version_row(p: Project, f: Facts, conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM rt_p_prov_artifact_versions WHERE name = 'out.md'")


def _edit_prompt_record(p: Project, f: Facts, conn: sqlite3.Connection) -> None:
    prompt = _prompt(conn)
    payload = bytes(_one(conn, "SELECT payload FROM rt_records WHERE id = ?", prompt))
    edited = payload.replace(b"Explain the accuracy figure.", b"Explain the secret figure!!")
    if edited == payload:
        raise AssertionError("gate case: the prompt text to edit was not found")
    conn.execute("UPDATE rt_records SET payload = ? WHERE id = ?", (edited, prompt))


GATE_CASES: dict[str, GateCase] = {
    "gate: a reclassified prompt's supersession row deleted": GateCase(
        _drop_supersession_of_prompt, (EXPORT, COVERAGE, DECIDE), setup=_reclassify_prompt
    ),
    "gate: a corrected output's rows deleted": GateCase(
        _drop_correction_rows, (EXPORT, DECIDE, COVERAGE), setup=_correct_output
    ),
    "gate: the active decision's row deleted": GateCase(
        _drop_active_decision_row, (EXPORT, COVERAGE), setup=_second_decision
    ),
    "gate: a decided item's open row restored": GateCase(_restore_open_row, (QUEUE,)),
    "gate: an item's row deleted": GateCase(_drop_item_row, (EXPORT, COVERAGE, DECIDE)),
    "gate: campaign settings row pointed back at training": GateCase(
        _stale_settings_row, (EXPORT, COVERAGE), setup=_no_training
    ),
    "gate: an artifact version's row deleted": GateCase(_drop_artifact_version_row, (ARTIFACT,)),
    "gate: a prompt record's bytes edited": GateCase(_edit_prompt_record, (EXPORT, QUEUE), guarded=False),
}


# --- running a case --------------------------------------------------------------------------------
def _examples(project: Project) -> dict[str, str]:
    out = project.root / "gate-out"
    return {p.name: p.read_text() for p in sorted(out.glob("*.jsonl"))} if out.is_dir() else {}


def _decision(result: Result) -> Any:
    if result.code != 0:
        return None
    doc = result.json()
    return {k: doc.get(k) for k in ("active", "superseded", "disposition", "resubmitted")}


def _same(check: Check, ref: Result, ref_dir: Project, got: Result, got_dir: Project) -> str | None:
    """Why ``got`` differs from ``ref`` (None when it is the same answer)."""
    if got.code != ref.code:
        return f"exit {got.code} where the untouched copy gives {ref.code}"
    if check.compare == "export":
        if _examples(got_dir) != _examples(ref_dir):
            return "exported other examples than the untouched copy"
        return None
    if check.compare == "decision":
        return None if _decision(got) == _decision(ref) else f"decided {_decision(got)}, untouched {_decision(ref)}"
    return None if got.out == ref.out else "printed other output than the untouched copy"


def run_gate_case(template: Project, facts: Facts, work: Path, name: str, case: GateCase) -> tuple[str, bool, str]:
    base = template.clone(work / f"gate-{uuid.uuid4().hex[:12]}")
    for step in case.setup(base, facts):
        result = base.cli(*step)
        if result.code != 0:
            return name, False, f"setup {' '.join(step[:2])} failed: {result.describe()}"
    damaged = base.clone(work / f"gate-{uuid.uuid4().hex[:12]}")
    try:
        if case.guarded:
            with damaged.connect() as conn:
                case.damage(damaged, facts, conn)
        else:
            with unguarded(damaged) as conn:
                case.damage(damaged, facts, conn)
    except (AssertionError, sqlite3.Error) as exc:
        return name, False, f"the damage could not be done: {exc}"
    verified, _ = damaged.verify()
    if verified.code != 4:
        return name, False, f"verify exit {verified.code} on the damaged copy (the case damages nothing verify sees)"
    for check in case.checks:
        args = check.args(facts)
        ref, got = base.cli(*args), damaged.cli(*args)
        if "Traceback" in got.err:
            return name, False, f"{' '.join(args[:2])}: a traceback: {got.err.strip().splitlines()[-1]}"
        if got.code == 4:
            continue
        why = _same(check, ref, base, got, damaged)
        if why is not None:
            return name, False, f"{' '.join(args[:2])}: {why} ({got.describe()[:300]})"
    return name, True, "every gate refused or answered as the chain gives"


# --- every verify attack through the gates ----------------------------------------------------------
#: The gate commands every attack of the campaign is also run through (no setup: the populated
#: project has a decided item, an export and an artifact with versions).
SWEEP_CHECKS = (EXPORT, QUEUE, COVERAGE, ARTIFACT)


def gate_answers(project: Project, facts: Facts) -> dict[tuple[str, ...], tuple[Result, dict[str, str]]]:
    """What each sweep check gives on ``project`` (an untouched copy's answers are the reference)."""
    out = {}
    for check in SWEEP_CHECKS:
        args = check.args(facts)
        out[args] = (project.cli(*args), _examples(project) if check.compare == "export" else {})
    return out


def sweep_attack(
    project: Project, facts: Facts, reference: dict[tuple[str, ...], tuple[Result, dict[str, str]]]
) -> str | None:
    """Why a gate served what the damage made on ``project`` (already damaged), or None: each
    check must refuse (any non-zero exit, a traceback aside) or answer as the untouched copy."""
    for check in SWEEP_CHECKS:
        args = check.args(facts)
        got = project.cli(*args)
        if "Traceback" in got.err:
            return f"{' '.join(args[:2])}: a traceback: {got.err.strip().splitlines()[-1]}"
        if got.code != 0:
            continue
        ref, ref_examples = reference[args]
        if ref.code != 0:
            return f"{' '.join(args[:2])}: exit 0 where the untouched copy gives {ref.code}"
        if check.compare == "export":
            if _examples(project) != ref_examples:
                return "review export: exported other examples than the untouched copy"
        elif got.out != ref.out:
            return f"{' '.join(args[:2])}: printed other output than the untouched copy"
    return None
