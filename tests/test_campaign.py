"""The hostile campaign of issue 8, in a loop: attacks, kills and bad inputs against a real project.

One populated project (every query table has rows, trace files and events exist) is built once
and copied per case. Every case runs the real ``reviewtrail`` executable as a subprocess.

* An **attack** damages the copy as a hostile user with file access would; ``verify`` must exit 4.
* A **kill** SIGKILLs a writing command at some point; ``verify --repair`` then ``verify`` must exit 0.
* A **bad input** must exit with a documented code, say ``error:``, print no traceback, and leave
  the store as it was (same files, same head) with ``verify`` still exiting 0.

Each family prints one line of figures (shown in CI logs) and fails naming every case that failed.
Cases that fail because of a known, reported bug are listed in ``KNOWN_BUGS`` and checked again
one by one as strict xfails, so fixing one makes that test fail until it is removed from the list.
"""

from __future__ import annotations

import os
import random
import shutil
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import need
from support.campaign import Attack, Facts, Project, Uncaught, populate
from support.campaign_attacks import attack_cases
from support.campaign_gates import GATE_CASES, gate_answers, run_gate_case, sweep_attack
from support.campaign_inputs import run_bad_inputs
from support.campaign_kills import KillCase, kill_cases, prepare_kills

pytestmark = pytest.mark.slow

SEED = int(os.environ.get("REVIEWTRAIL_CAMPAIGN_SEED", "8"))

# name -> the reported bug that makes the case fail today. Each is checked as a strict xfail of its
# own (test_known_bug), so fixing it fails that test until its entry is removed. Empty: every case
# of the campaign passes.
KNOWN_BUGS: dict[str, str] = {}


@dataclass(frozen=True)
class Campaign:
    template: Project
    facts: Facts
    other: Project  # a second, unrelated store
    work: Path


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Campaign:
    from reviewtrail.provenance.sandbox._bwrap import bwrap_available

    need(bwrap_available(), "bubblewrap (bwrap) is not installed")
    base = tmp_path_factory.mktemp("campaign")
    template, facts = populate(base / "template")
    other = Project(base / "other")
    other.root.mkdir()
    assert other.cli("init").code == 0
    assert other.cli("ledger", "append", "--type", "other.note@1", "--actor", "x", "--privacy", "private").code == 0
    return Campaign(template, facts, other, base)


Outcome = tuple[str, bool, str]
_SEEN: dict[str, Outcome] = {}  # outcomes of this session's family runs, reused by test_known_bug


def _tally(label: str, outcomes: list[Outcome], capsys: pytest.CaptureFixture[str]) -> list[str]:
    """Print the family's figures (all cases, known bugs included); return the unexpected failures."""
    tried = len(outcomes)
    passed = sum(1 for _, ok, _ in outcomes if ok)
    figures = {
        "attacks": f"attacks tried {tried} / caught {passed}",
        "gates": f"gate attacks tried {tried} / refused or answered from the chain {passed}",
        "gate sweep": f"attacks through the gates {tried} / refused or answered as untouched {passed}",
        "kills": f"kills {tried} / problems left {tried - passed}",
        "bad inputs": f"bad inputs {tried} / clean errors {passed}",
    }[label]
    _SEEN.update({outcome[0]: outcome for outcome in outcomes})
    failed = [(name, detail) for name, ok, detail in outcomes if not ok]
    with capsys.disabled():
        print(f"\n{figures}")
        for name, detail in failed:
            known = " (known bug, a strict xfail below)" if name in KNOWN_BUGS else ""
            print(f"  failed{known}: {name}: {detail[:600]}")
    return [f"{name}: {detail}" for name, detail in failed if name not in KNOWN_BUGS]


# --- attacks -------------------------------------------------------------------------------------
def run_attack(c: Campaign, name: str, damage: Attack) -> Outcome:
    project = c.template.clone(c.work / f"attack-{uuid.uuid4().hex[:12]}")
    try:
        extra = damage(project, c.facts, c.other) or []
    except Uncaught as exc:
        return name, False, str(exc)
    result, doc = project.verify(*extra)
    found = doc.get("problems") or [doc.get("error")]
    if "Traceback" in result.err + result.out:
        return name, False, f"verify exit {result.code} with a traceback: {_last_frame(result.err)}"
    if result.code == 0:
        return name, False, "verify exit 0 (intact), expected 4"
    if result.code != 4:
        return name, False, f"verify exit {result.code}, expected 4: {result.describe()}"
    return name, True, str(found[0])[:200]


def _last_frame(err: str) -> str:
    lines = err.strip().splitlines()
    frames = [line.strip() for line in lines if line.strip().startswith("File ")]
    return f"{lines[-1] if lines else '?'} ({frames[-1] if frames else '?'})"


def _control(c: Campaign) -> None:
    """An untouched copy verifies: so an attack counts as caught for what it did, not for a broken verify."""
    result, _ = c.template.clone(c.work / f"control-{uuid.uuid4().hex[:12]}").verify()
    assert result.code == 0, f"an untouched copy of the project does not verify: {result.describe()}"


def test_attacks_are_all_caught(campaign: Campaign, capsys: pytest.CaptureFixture[str]) -> None:
    _control(campaign)
    cases = attack_cases(campaign.template, campaign.facts)
    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(lambda item: run_attack(campaign, *item), cases.items()))
    unexpected = _tally("attacks", outcomes, capsys)
    assert not unexpected, "attacks verify did not catch:\n" + "\n".join(unexpected)


# --- gates ---------------------------------------------------------------------------------------
def test_gates_refuse_what_verify_rejects(campaign: Campaign, capsys: pytest.CaptureFixture[str]) -> None:
    """Damage verify reports must never reach an export, a decision, the queue, coverage or an
    artifact's versions: each gate refuses it (exit 4) or answers exactly as the untouched copy."""
    cases = list(GATE_CASES.items())
    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(
            pool.map(lambda item: run_gate_case(campaign.template, campaign.facts, campaign.work, *item), cases)
        )
    unexpected = _tally("gates", outcomes, capsys)
    assert not unexpected, "gates that served damaged data:\n" + "\n".join(unexpected)


def test_no_gate_serves_what_an_attack_made(campaign: Campaign, capsys: pytest.CaptureFixture[str]) -> None:
    """Every attack of the campaign (each one verify catches) also goes through export, queue,
    coverage and artifact show: none may exit 0 with anything but the untouched copy's answer."""
    reference = gate_answers(campaign.template.clone(campaign.work / f"ref-{uuid.uuid4().hex[:12]}"), campaign.facts)

    def attack(item: tuple[str, Any]) -> Outcome:
        name, damage = item
        project = campaign.template.clone(campaign.work / f"sweep-{uuid.uuid4().hex[:12]}")
        try:
            damage(project, campaign.facts, campaign.other)
        except Uncaught as exc:
            return name, False, str(exc)
        why = sweep_attack(project, campaign.facts, reference)
        shutil.rmtree(project.root, ignore_errors=True)
        return name, why is None, why or "every gate refused or answered as the untouched copy"

    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(attack, attack_cases(campaign.template, campaign.facts).items()))
    unexpected = _tally("gate sweep", outcomes, capsys)
    assert not unexpected, "gates that served what an attack made:\n" + "\n".join(unexpected)


# --- kills ---------------------------------------------------------------------------------------
def _kills(campaign: Campaign) -> dict[str, KillCase]:
    prepare_kills(campaign.template, campaign.work)
    return kill_cases(random.Random(SEED))


def test_kills_leave_nothing_repair_cannot_fix(campaign: Campaign, capsys: pytest.CaptureFixture[str]) -> None:
    cases = _kills(campaign)
    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(lambda case: case(campaign.template, campaign.facts, campaign.work), cases.values()))
    unexpected = _tally("kills", outcomes, capsys)
    landed = sum(1 for _, _, detail in outcomes if detail.startswith("killed"))
    with capsys.disabled():
        print(f"  ({landed} of the {len(outcomes)} kills landed while the command was running)")
    assert not unexpected, "kills that left problems:\n" + "\n".join(unexpected)


# --- bad inputs ----------------------------------------------------------------------------------
def test_bad_inputs_are_clean_errors(campaign: Campaign, capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = run_bad_inputs(campaign.template, campaign.facts, campaign.work)
    unexpected = _tally("bad inputs", outcomes, capsys)
    assert not unexpected, "bad inputs without a clean error:\n" + "\n".join(unexpected)


# --- known bugs, one strict xfail each -----------------------------------------------------------
if KNOWN_BUGS:  # no empty parameter set (it would be a skip)

    @pytest.mark.parametrize(
        "name",
        [
            pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=reason, raises=AssertionError), id=name)
            for name, reason in KNOWN_BUGS.items()
        ],
    )
    def test_known_bug(campaign: Campaign, name: str) -> None:
        if name in _SEEN:  # the family test ran this case in this session already
            outcome = _SEEN[name]
            assert outcome[1], outcome[2]
            return
        _control(campaign)
        attacks = attack_cases(campaign.template, campaign.facts)
        if name in attacks:
            outcome = run_attack(campaign, name, attacks[name])
        elif name in (kills := _kills(campaign)):
            outcome = kills[name](campaign.template, campaign.facts, campaign.work)
        else:
            [outcome] = run_bad_inputs(campaign.template, campaign.facts, campaign.work, only=name)
        assert outcome[1], outcome[2]
