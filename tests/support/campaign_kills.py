"""The campaign's kills: SIGKILL a writing command at some point, then ``verify --repair`` and ``verify``.

A kill leaves a problem when the repair crashes (a traceback, or an exit other than 0 or 4) or
when the ``verify`` after it does not exit 0. Kill points are either a file appearing (the
process is stopped with SIGSTOP the moment it does, then killed) or a short delay drawn from a
seeded random generator (``REVIEWTRAIL_CAMPAIGN_SEED``), so a failing point can be replayed.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from support.campaign import SKILL, Facts, Project

__all__ = ["KillCase", "kill_cases", "prepare_kills"]

Outcome = tuple[str, bool, str]
KillCase = Callable[[Project, Facts, Path], Outcome]
BIG = 24 * 1024 * 1024


def _kill(proc: subprocess.Popen[bytes]) -> str:
    """SIGSTOP then SIGKILL; says whether the process was still running (the kill landed)."""
    if proc.poll() is not None:
        proc.communicate()
        return f"finished first (exit {proc.returncode})"
    os.kill(proc.pid, signal.SIGSTOP)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    return "killed"


def _until(ready: Callable[[], bool], proc: subprocess.Popen[bytes], limit: float = 60.0) -> bool:
    deadline = time.monotonic() + limit
    while not ready():
        if proc.poll() is not None or time.monotonic() > deadline:
            return False
    return True


def _settle(name: str, p: Project, how: str) -> Outcome:
    repaired, doc = p.verify("--repair")
    if "Traceback" in repaired.err + repaired.out or repaired.code not in (0, 4):
        return name, False, f"{how}; verify --repair crashed: {repaired.describe()}"
    final, doc = p.verify()
    if final.code != 0 or "Traceback" in final.err:
        problems = doc.get("problems") or [doc.get("error") or final.err.strip()[-300:]]
        return name, False, f"{how}; after --repair ({doc.get('repairs')}) verify exit {final.code}: {problems[:3]}"
    return name, True, how


def _processes_with(marker: str) -> bool:
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path("/proc", pid, "cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


# --- reviewtrail run -------------------------------------------------------------------------------
def kill_run(delay: float, after_file: bool, *network: str) -> tuple[str, KillCase]:
    when = f"{delay:.2f}s after its file appeared" if after_file else f"{delay:.2f}s after start"
    name = f"run killed {when}" + (f" ({' '.join(network)})" if network else "")

    def case(template: Project, f: Facts, work: Path) -> Outcome:
        p = template.clone(work / f"kill-run-{uuid.uuid4().hex[:8]}")
        marker = f"rt-campaign-{uuid.uuid4().hex}"
        code = (
            "open('made.txt', 'w').write('partial')\nimport subprocess, sys\n"
            f"subprocess.run([sys.executable, '-c', 'import time; time.sleep(60)', '{marker}'])"
        )
        made = p.store / "workspaces" / f.session / "made.txt"
        proc = p.popen("run", "--session", f.session, *network, "-c", code)
        if after_file and not _until(made.exists, proc):
            return name, False, f"the run never wrote its file: {proc.communicate()}"
        time.sleep(delay)
        how = _kill(proc)
        deadline = time.monotonic() + 30
        while _processes_with(marker):
            if time.monotonic() > deadline:
                return name, False, "the sandboxed code outlived the killed recorder"
            time.sleep(0.05)
        outcome = _settle(name, p, how)
        if outcome[1] and made.exists():  # a later declare must show the file's lineage or warn
            declared = p.cli("artifact", "declare", "made.txt", "--session", f.session, "--path", "made.txt", "--json")
            lineage = p.cli("provenance", "made.txt", "--format", "json")
            if declared.code != 0:
                return name, False, f"{how}; declaring the file afterwards: {declared.describe()}"
            if not (declared.json().get("warnings") or '"execution_run"' in lineage.out):
                return name, False, f"{how}; the file was declared with no lineage and no warning: {lineage.out[:300]}"
        return outcome

    return name, case


# --- trace save ------------------------------------------------------------------------------------
def kill_trace(point: str, delay: float = 0.0) -> tuple[str, KillCase]:
    name = f"trace save killed when {point}" if point != "delay" else f"trace save killed {delay:.2f}s after start"

    def case(template: Project, f: Facts, work: Path) -> Outcome:
        p = template.clone(work / f"kill-trace-{uuid.uuid4().hex[:8]}")
        (p.root / "big.md").write_bytes(b"review text line\n" * (BIG // 17))
        skill = "campaign-fresh" if point == "its new run folder appears" else SKILL
        proc = p.popen(
            "trace", "save", "--skill", skill, "--purpose", "round-3-review", "--executor", "codex",
            "--backend", "claude", "--prompt", "Please review.", "--response-file", "big.md",
            "--project-dir", str(p.root),
        )  # fmt: skip
        folder = p.root / ".aris" / "traces" / skill
        ready: dict[str, Callable[[], bool]] = {
            "its new run folder appears": lambda: folder.exists() and any(folder.iterdir()),
            "its request file appears": lambda: any(folder.glob("*/*-round-3-review.request.json")),
            "its response file appears": lambda: any(folder.glob("*/*-round-3-review.response.md")),
            "its meta file appears": lambda: any(folder.glob("*/*-round-3-review.meta.json")),
        }
        if point in ready:
            _until(ready[point], proc)
        else:
            time.sleep(delay)
        how = _kill(proc)
        outcome = _settle(name, p, how)
        if outcome[1]:  # a later save in the same skill must work and leave the store intact
            again = p.cli(
                "trace", "save", "--skill", skill, "--purpose", "round-4-review", "--executor", "codex",
                "--backend", "claude", "--prompt", "again", "--response", "ok", "--project-dir", str(p.root),
            )  # fmt: skip
            verified, doc = p.verify()
            if again.code != 0 or verified.code != 0:
                return name, False, f"{how}; the next save: {again.describe()}; then verify: {doc.get('problems')}"
        return outcome

    return name, case


# --- session rm ------------------------------------------------------------------------------------
def _entries(folder: Path) -> int:
    """How many entries ``folder`` holds; 0 once it is gone (a removal may finish between polls)."""
    try:
        return len(os.listdir(folder))
    except FileNotFoundError:
        return 0


def kill_session_rm(point: str, resume_by_rerun: bool, delay: float = 0.0) -> tuple[str, KillCase]:
    """Points: ``delay`` (mostly before the deletion is recorded), ``recorded`` (the head grew, the
    workspace is still whole), ``half removed`` (some of the workspace's folders are gone)."""
    when = f"{delay:.2f}s after start" if point == "delay" else f"when {point}"
    name = f"session rm killed {when}, then {'re-run' if resume_by_rerun else 'repaired'}"

    def case(template: Project, f: Facts, work: Path) -> Outcome:
        p = Project(work / "session-rm-base").clone(work / f"kill-rm-{uuid.uuid4().hex[:8]}")
        session = json.loads((p.root / "big-session.json").read_text())["sessionId"]
        workspace = p.store / "workspaces" / session
        head = p.head_seq() or 0
        proc = p.popen("session", "rm", session)
        if point == "recorded":
            _until(lambda: (p.head_seq() or 0) > head, proc)
        elif point == "half removed":
            _until(lambda: _entries(workspace) < FOLDERS // 2, proc)
        else:
            time.sleep(delay)
        how = _kill(proc)
        if not resume_by_rerun:
            return _settle(name, p, how)
        again = p.cli("session", "rm", session)
        if again.code not in (0, 6) or (again.code == 6 and workspace.exists()) or "Traceback" in again.err:
            return name, False, f"{how}; session rm again: {again.describe()}"
        verified, doc = p.verify()
        if verified.code != 0:
            return name, False, f"{how}; session rm again, then verify: {doc.get('problems')}"
        return name, True, how

    return name, case


FOLDERS = 40


def prepare_kills(template: Project, work: Path) -> None:
    """Once, before the kills: a copy of the template with a session of 4000 files to remove, and the
    bases of the human-review kills."""
    base = work / "session-rm-base"
    if not base.exists():
        _many_files(template.clone(work / "session-rm-build")).root.rename(base)
    from support.campaign_kills_review import prepare_review_kills  # it imports this module

    prepare_review_kills(template, work)


def _many_files(p: Project) -> Project:
    made = p.cli("session", "new", "--json")
    session = made.json()["sessionId"]
    code = (
        f"import os\nfor d in range({FOLDERS}):\n os.makedirs(f'd{{d}}')\n"
        " for i in range(100):\n  open(f'd{d}/f{i}', 'w').write('x')"
    )
    ran = p.cli("run", "--session", session, "-c", code)
    assert ran.code == 0, ran.describe()
    (p.root / "big-session.json").write_text(made.out)
    return p


# --- ledger append / cas put -----------------------------------------------------------------------
def kill_write(command: str, point: str, delay: float = 0.0) -> tuple[str, KillCase]:
    """Points: ``delay``, or for ``cas put`` and ``artifact upload`` ``its temporary file appears`` in ingest/."""
    name = f"{command} of a large input killed " + (
        f"{delay:.2f}s after start" if point == "delay" else f"when {point}"
    )

    def case(template: Project, f: Facts, work: Path) -> Outcome:
        p = template.clone(work / f"kill-write-{uuid.uuid4().hex[:8]}")
        if command == "cas put":
            (p.root / "big.bin").write_bytes(os.urandom(BIG * 2))
            proc = p.popen("cas", "put", "big.bin")
        elif command == "artifact upload":
            (p.root / "big.bin").write_bytes(os.urandom(BIG * 2))
            proc = p.popen("artifact", "upload", "big.bin", "big.bin")
        else:
            (p.root / "big.json").write_text(json.dumps({"blob": "y" * BIG, "n": 1}))
            proc = p.popen("ledger", "append", "--type", "eval.big@1", "--actor", "a", "--privacy", "private",
                           "--payload", "@big.json")  # fmt: skip
        ingest = p.store / "versioning" / "data" / "ingest"
        if point == "its temporary file appears":
            _until(lambda: any(ingest.iterdir()), proc)
        else:
            time.sleep(delay)
        return _settle(name, p, _kill(proc))

    return name, case


# --- init ----------------------------------------------------------------------------------------
def kill_init(point: str) -> tuple[str, KillCase]:
    """A killed init is completed by running init again (verify before that reports no store)."""
    name = f"init killed when {point}, then init again"

    def case(template: Project, f: Facts, work: Path) -> Outcome:
        p = Project(work / f"kill-init-{uuid.uuid4().hex[:8]}")
        p.root.mkdir()
        ready = {
            "its first pool appears": lambda: (p.store / "versioning").exists(),
            "its ledger file appears": lambda: p.db.exists(),
        }[point]
        proc = p.popen("init")
        _until(ready, proc)
        how = _kill(proc)
        again = p.cli("init")
        if again.code != 0:
            return name, False, f"{how}; init again: {again.describe()}"
        return _settle(name, p, how)

    return name, case


# --- verify --repair ------------------------------------------------------------------------------
def kill_repair(delay: float) -> tuple[str, KillCase]:
    """The repair is a writer too: killed while it rebuilds query tables, the next repair completes it."""
    name = f"verify --repair killed {delay:.2f}s after start"

    def case(template: Project, f: Facts, work: Path) -> Outcome:
        p = template.clone(work / f"kill-repair-{uuid.uuid4().hex[:8]}")
        with p.connect() as conn:
            for table in ("rt_p_cas_refs", "rt_p_prov_runs", "rt_p_ev_claims"):
                conn.execute(f"DELETE FROM {table}")
        proc = p.popen("verify", "--repair", "--project-dir", str(p.root))
        time.sleep(delay)
        return _settle(name, p, _kill(proc))

    return name, case


def kill_cases(rng: random.Random) -> dict[str, KillCase]:
    """The kills by name; delays come from ``rng`` (seeded, so a failing case can be replayed)."""

    def d(lo: float, hi: float) -> float:
        return round(rng.uniform(lo, hi), 2)

    cases = [kill_run(d(0.0, 0.3), after_file=True) for _ in range(2)]
    cases += [kill_run(d(0.2, 1.2), after_file=False)]
    cases += [kill_run(d(0.0, 0.3), True, "--network", "allowlist", "--allow", "example.com")]
    for point in ("its new run folder appears", "its request file appears", "its response file appears",
                  "its meta file appears"):  # fmt: skip
        cases.append(kill_trace(point))
    cases += [kill_trace("delay", d(0.3, 0.8))]
    cases += [
        kill_session_rm("delay", resume_by_rerun=False, delay=d(0.2, 0.5)),
        kill_session_rm("recorded", resume_by_rerun=True),
        kill_session_rm("half removed", resume_by_rerun=False),
        kill_session_rm("half removed", resume_by_rerun=True),
    ]
    cases += [kill_write("ledger append", "delay", delay=d(0.3, 0.8)) for _ in range(2)]
    cases += [kill_write("cas put", "its temporary file appears"), kill_write("cas put", "delay", delay=d(0.3, 0.7))]
    cases += [kill_write("artifact upload", "its temporary file appears")]
    cases += [kill_init("its ledger file appears")]
    cases += [kill_repair(d(0.3, 0.7)) for _ in range(2)]
    from support.campaign_kills_review import review_kill_cases  # it imports this module

    cases += review_kill_cases(d)
    named: dict[str, KillCase] = {}
    for name, case in cases:
        named[name if name not in named else f"{name} (again)"] = case
    return named
