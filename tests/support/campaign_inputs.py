"""The campaign's bad inputs: each must be a clean error that changes nothing.

Clean means: an exit code among the documented ones the case allows (all within 2-6),
``error:`` on stderr (click's own usage errors say ``Error:``), no ``Traceback`` anywhere, the
store's files and head exactly as before, and ``verify`` still exiting 0 afterwards. ``verify``
runs once per group of cases; when a group's ``verify`` fails, its cases are replayed one by one
on a fresh copy so the failure names the case that caused it.
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from support.campaign import Facts, Project
from support.campaign_input_cases import FILES, BadInput, bad_input_cases
from support.campaign_input_cases_review import prepare_review_inputs, review_input_cases

__all__ = ["run_bad_inputs"]

Outcome = tuple[str, bool, str]


def _check(p: Project, case: BadInput) -> tuple[bool, str]:
    for name, data in case.files.items():
        (p.root / name).write_bytes(data)
    before, tree = p.fingerprint(), _tree(p)
    result = p.cli(*case.args, env=case.env)
    after, written = p.fingerprint(), _tree(p)
    for name in case.files:
        (p.root / name).unlink()
    if "Traceback" in result.err + result.out:
        frames = [line.strip() for line in result.err.splitlines() if line.strip().startswith("File ")]
        where = frames[-1] if frames else "?"
        return False, f"exit {result.code} with a traceback: {result.err.strip().splitlines()[-1]} ({where})"
    if result.code not in case.codes:
        return False, f"exit {result.code}, expected {sorted(case.codes)}: {result.describe()}"
    if "error:" not in result.err.lower():
        return False, f"no 'error:' on stderr: {result.describe()}"
    if case.field and f"{case.field}: " not in result.err:  # as handle_errors prints it: <field>: <problem>
        return False, f"stderr does not name the field {case.field!r}: {result.describe()}"
    if after != before:
        changed = sorted(set(after["files"].items()) ^ set(before["files"].items()))
        return False, f"the store changed: head {before['head']} -> {after['head']}; files {changed[:4]}"
    if written != tree:
        changed = sorted(set(written.items()) ^ set(tree.items()))
        return False, f"files outside the store changed: {changed[:4]}"
    return True, f"exit {result.code}: {result.err.strip().splitlines()[-1][:160]}"


def _tree(p: Project) -> dict[str, tuple[int, int]]:
    """Every file of the project outside the store (export folders included): size and mtime."""
    files = {}
    for path in p.root.rglob("*"):
        rel = path.relative_to(p.root)
        if rel.parts[0] != ".reviewtrail" and path.is_file():
            stat = path.stat()
            files[str(rel)] = (stat.st_size, stat.st_mtime_ns)
    return files


def _verified(p: Project) -> tuple[bool, str]:
    result, doc = p.verify()
    return result.code == 0, f"verify afterwards: {result.describe() if not doc else doc.get('problems')}"


def _group(template: Project, work: Path, n: int, cases: list[BadInput]) -> list[Outcome]:
    work = work / f"bad-{uuid.uuid4().hex[:12]}"
    work.mkdir()
    p = template.clone(work / f"bad-{n}")
    for name, data in FILES.items():
        (p.root / name).write_bytes(data)
    outcomes = [(case.name, *_check(p, case)) for case in cases]
    ok, why = _verified(p)
    if ok:
        return outcomes
    replayed = []  # find the case that left the store unverifiable
    for k, case in enumerate(cases):
        q = template.clone(work / f"bad-{n}-{k}")
        for name, data in FILES.items():
            (q.root / name).write_bytes(data)
        clean, detail = _check(q, case)
        intact, why = _verified(q)
        replayed.append((case.name, clean and intact, detail if not clean else why))
    return replayed


def run_bad_inputs(template: Project, f: Facts, work: Path, only: str | None = None) -> list[Outcome]:
    """Every case (or the one named ``only``); the human-review cases run on their own base."""
    review, rf = prepare_review_inputs(template, work)
    jobs = [(template, group) for group in bad_input_cases(f)]
    jobs += [(review, group) for group in review_input_cases(rf)]
    if only is not None:
        jobs = [(base, [case for case in group if case.name == only]) for base, group in jobs]
        jobs = [(base, group) for base, group in jobs if group]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = pool.map(lambda item: _group(item[1][0], work, item[0], item[1][1]), enumerate(jobs))
        return [outcome for group in results for outcome in group]
