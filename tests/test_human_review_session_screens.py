"""The review session's screens: cleared between cards, provenance revealed on a screen of its own
(or at the end, or never), a status line (card k of N, the campaign's coverage, whether the last
decision will be exported), "use for training" kept as last set, and undo recording a superseding
decision after a confirmation. The state machine alone, the command driven by piped keys, and a
terminal through a pseudo-terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import init_cli_store, open_cli_store, run_cli
from reviewtrail.human_review.campaigns import campaign_settings
from reviewtrail.human_review.records import DECISION
from reviewtrail.human_review.session import ReviewSession, SessionProgress
from test_human_review_session import (
    SECRET_AGENT,
    _read_until,
    blinded_items,
    busy_cores,  # noqa: F401 (a fixture)
    card,
    press_all,
    result,
    secrets,
)

REVIEWER = ("--reviewer", "rev-1")
CLEAR = b"\x1b[H\x1b[2J\x1b[3J"


def decisions(project: Path) -> list[dict[str, Any]]:
    """Every decision recorded, in order: its payload and its record id (``decisionId``)."""
    with open_cli_store(project) as store:
        return [{**env.payload_value, "decisionId": env.id} for env in list(store.ledger.read(type=DECISION))]


def session(keys: str, *args: str) -> tuple[int, str, str]:
    return run_cli("review", "session", "camp", *REVIEWER, *args, input=keys)


# ---------------------------------------------------------------- the state machine


def decide_shown(session: ReviewSession, keys: str, decision_id: str) -> None:
    [action] = press_all(session, keys)
    decided = result(action)
    session.decided(type(decided)(**{**decided.__dict__, "decision_id": decision_id}))


def test_use_for_training_stays_as_last_set_on_the_next_cards() -> None:
    session = ReviewSession()
    session.start()
    session.show(card("i1"), "s1")
    press_all(session, "y")
    [first] = press_all(session, "t")
    assert first.decision is not None and first.decision.use_for_training
    session.decided(result(first))
    [fetch] = press_all(session, " ")
    assert fetch.kind == "fetch"
    session.show(card("i2"), "s2")
    assert session.draft.use_for_training
    press_all(session, "ry\n")  # y in the picker picks (or is refused), never toggles
    press_all(session, "y")
    [second] = press_all(session, "t")
    assert second.decision is not None and not second.decision.use_for_training
    session.decided(result(second))
    press_all(session, " ")
    session.show(card("i3"), "s3")
    assert not session.draft.use_for_training


def test_k_of_n_counts_cards_served_and_the_open_items_left() -> None:
    session = ReviewSession(reveal="never")
    session.start()
    session.show(card("i1", valid=False), "s1", SessionProgress(items=5, open=4))
    assert session.counts == (1, 4)
    press_all(session, "s")  # passed over: it stays open
    session.show(card("i2"), "s2", SessionProgress(items=5, open=4))
    assert session.counts == (2, 4)
    [action] = press_all(session, "t")
    follow = session.decided(result(action))
    assert follow is not None and follow.kind == "fetch"  # never revealed: straight on
    session.show(card("i3"), "s3", SessionProgress(items=5, open=3))
    assert session.counts == (3, 4)


def test_undo_revisits_the_last_decided_card_and_supersedes_after_a_confirmation() -> None:
    session = ReviewSession()
    session.start()
    session.show(card("i1"), "s1")
    decide_shown(session, "t", "dec-1")
    press_all(session, " ")
    session.show(card("i2"), "s2")
    press_all(session, "y")  # the card left keeps what was set on it
    [back] = press_all(session, "z")
    assert (back.kind, back.item_id) == ("card", "i1")
    session.show(card("i1"), "s-again")
    assert session.revising is not None and session.revising.decision_id == "dec-1"
    assert session.counts[0] == 2  # a revisited card is not counted again
    assert press_all(session, "b2") == [] and session.mode == "confirm"
    assert press_all(session, "n") == [] and session.mode == "card"  # back, nothing recorded
    assert press_all(session, "a1") == [] and session.mode == "confirm"
    [submit] = press_all(session, "y")
    assert submit.kind == "submit" and submit.item_id == "i1" and submit.submission_id == "s-again"
    assert submit.decision is not None
    assert (submit.decision.disposition, submit.decision.preferred, submit.decision.supersedes) == (
        "prefer",
        "A",
        "dec-1",
    )
    session.decided(result(submit))
    assert session.mode == "revealed"
    assert press_all(session, " ") == []  # back to the card left: no fetch
    assert session.card is not None and session.card.item_id == "i2" and session.submission_id == "s2"
    assert session.draft.use_for_training and session.revising is None


def test_x_leaves_the_card_being_revised_recording_nothing() -> None:
    session = ReviewSession()
    session.start()
    session.show(card("i1"), "s1")
    decide_shown(session, "u", "dec-1")
    [back] = press_all(session, "z")  # from the reveal: the decision just recorded
    assert (back.kind, back.item_id) == ("card", "i1")
    session.show(card("i1"), "s-again")
    [fetch] = press_all(session, "x")
    assert fetch.kind == "fetch" and session.revising is None and len(session.recorded) == 1


def test_z_before_any_decision_says_so() -> None:
    session = ReviewSession()
    session.start()
    session.show(card("i1"), "s1")
    assert press_all(session, "z") == []
    assert session.message is not None and "nothing to undo" in session.message


def test_a_card_decided_elsewhere_can_only_be_passed_over_and_is_not_counted_as_invalid() -> None:
    session = ReviewSession()
    session.start()
    session.show(card("i1"), "s1")
    press_all(session, "t")
    session.refused("supersedes", "item i1 already has an active decision d9 (skip, by reviewer rev-2)")
    assert session.card is not None and not session.card.valid
    assert press_all(session, "t") == []
    [fetch] = press_all(session, "s")
    assert fetch.kind == "fetch" and session.passed == []


@pytest.mark.parametrize("reveal", ["end", "never"])
def test_without_reveal_after_a_decision_goes_straight_on(reveal: str) -> None:
    session = ReviewSession(reveal=reveal)  # type: ignore[arg-type]
    session.start()
    session.show(card("i1"), "s1")
    [action] = press_all(session, "t")
    follow = session.decided(result(action))
    assert follow is not None and follow.kind == "fetch" and session.mode == "waiting"


# ---------------------------------------------------------------- the command, piped keys


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return init_cli_store(tmp_path, monkeypatch)


def training_on(project: Path) -> None:
    with open_cli_store(project) as store:
        campaign_settings(store, "camp", 1, training=True)


def test_status_line_counts_cards_and_coverage_and_says_what_the_last_decision_is_good_for(project: Path) -> None:
    blinded_items(project, 3)
    training_on(project)
    code, out, err = session("y\nb\n2\n\nt\n\n\nq\n")
    assert code == 0, err
    assert "card 1 of 3 · campaign: 0 of 3 items decided · use for training: no" in out
    assert "card 2 of 3 · campaign: 1 of 3 items decided · use for training: yes" in out
    assert "card 3 of 3 · campaign: 2 of 3 items decided" in out
    [first, second] = decisions(project)
    assert f"last decision (prefer, {first['decisionId']}): export-eligible" in out
    assert f"last decision (tie, {second['decisionId']}): evaluation-only: a tie decision is never" in out


def test_a_prefer_in_a_campaign_without_training_is_shown_evaluation_only_with_why(project: Path) -> None:
    blinded_items(project, 2)
    code, out, err = session("y\na\n1\n\nq\n")
    assert code == 0, err
    assert "evaluation-only: not externally eligible: training is disabled for the campaign" in out


def test_reveal_never_shows_no_provenance_at_all(project: Path) -> None:
    items = blinded_items(project, 2)
    code, out, err = session("t\nb\n1\n", "--reveal", "never")
    assert code == 0, err
    assert [d["disposition"] for d in decisions(project)] == ["tie", "prefer"]
    assert [s for s in secrets(items) if s in out] == []
    assert "session: 2 decision(s) recorded" in out


def test_reveal_end_lists_every_reveal_after_the_summary(project: Path) -> None:
    items = blinded_items(project, 2)
    code, out, err = session("t\nb\n1\n", "--reveal", "end")
    assert code == 0, err
    during, _, after = out.partition("session: 2 decision(s) recorded")
    assert after, out
    assert [s for s in secrets(items) if s in during] == []
    for item in items:
        assert item.item_id in after
        assert all(c.run_id in after for c in item.candidates)
    assert SECRET_AGENT["model"] in after and "agent-zq7-one" in after


def test_an_unknown_reveal_mode_is_refused_naming_the_option(project: Path) -> None:
    blinded_items(project, 1)
    code, _, err = session("q\n", "--reveal", "sometimes")
    assert code == 2 and "reveal" in err


def test_undo_records_a_superseding_decision_shown_by_review_history(project: Path) -> None:
    items = blinded_items(project, 2)
    code, out, err = session("t\n\nz\nb\n2\ny\n\nq\n", "--reveal", "after")
    assert code == 0, err
    assert "revising decision" in out
    first, second = decisions(project)
    assert first["itemId"] == second["itemId"] and first["itemId"] in {i.item_id for i in items}
    assert second["supersedes"] == first["decisionId"] and second["disposition"] == "prefer"
    code, out, err = run_cli("review", "history", first["itemId"], "--json")
    assert code == 0, err
    history = json.loads(out)
    assert history["active"]["decisionId"] == second["decisionId"]
    by_id = {d["decisionId"]: d for d in history["decisions"]}
    assert by_id[second["decisionId"]]["supersedes"] == first["decisionId"]
    assert not by_id[first["decisionId"]]["active"]


def test_undo_cancelled_with_n_records_nothing_more(project: Path) -> None:
    blinded_items(project, 2)
    code, _, err = session("t\n\nz\nb\n2\nn\nx\nq\n")
    assert code == 0, err
    assert [d["disposition"] for d in decisions(project)] == ["tie"]


# ---------------------------------------------------------------- a terminal


def _screens(seen: bytes) -> list[bytes]:
    """What the terminal received, split at each clear (screen and scrollback)."""
    return seen.split(CLEAR)


def _spawn(master_slave: tuple[int, int], *args: str) -> subprocess.Popen[bytes]:
    _, slave = master_slave
    env = {**os.environ, "TERM": "xterm", "NO_COLOR": "1", "COLUMNS": "200", "LINES": "60"}
    return subprocess.Popen(
        [sys.executable, "-m", "reviewtrail", "review", "session", "camp", *REVIEWER, *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
    )


@pytest.mark.slow
@pytest.mark.usefixtures("busy_cores")
def test_on_a_terminal_no_card_after_a_reveal_holds_provenance_and_undo_supersedes(project: Path) -> None:
    import pty

    items = blinded_items(project, 3)
    pair = pty.openpty()
    master = pair[0]
    proc = _spawn(pair)
    seen = bytearray()

    def key(k: bytes, wanted: bytes) -> None:
        os.write(master, k)
        _read_until(master, wanted, seen)

    try:
        _read_until(master, b"card 1 of 3", seen)
        _read_until(master, b"q quit", seen)
        key(b"b", b"1 slight")
        key(b"2", b"press any key")
        key(b" ", b"card 2 of 3")
        _read_until(master, b"q quit", seen)
        key(b"t", b"press any key")
        key(b" ", b"card 3 of 3")
        _read_until(master, b"q quit", seen)
        key(b"z", b"revising decision")
        _read_until(master, b"q quit", seen)
        key(b"a", b"1 slight")
        key(b"1", b"y records it")
        key(b"y", b"press any key")
        key(b" ", b"card 3 of 3")
        _read_until(master, b"q quit", seen)
        key(b"q", b"session: 3 decision(s)")
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
        os.close(pair[1])
    hidden = secrets(items)
    screens = _screens(bytes(seen))
    cards = [s.decode(errors="replace") for s in screens if b"Reply " in s]
    reveals = [s.decode(errors="replace") for s in screens if b"press any key" in s]
    assert len(cards) == 5 and len(reveals) == 3
    for screen in cards:  # everything received since each card's clear, up to the next clear
        assert [s for s in hidden if s in screen] == [], screen
    for screen in reveals:
        assert SECRET_AGENT["model"] in screen and "agent-zq7-one" in screen
        assert "Reply " not in screen
    first, second, third = decisions(project)
    assert third["itemId"] == second["itemId"] and third["supersedes"] == second["decisionId"]
    assert (third["disposition"], third["strength"]) == ("prefer", "slight")
    assert "card 2 of 3" in cards[1] and "campaign: 1 of 3 items decided" in cards[1]
    assert "campaign: 2 of 3 items decided" in cards[2]
    assert first["itemId"] != second["itemId"]


def test_screens_split_at_each_clear() -> None:
    assert _screens(b"a" + CLEAR + b"b" + CLEAR) == [b"a", b"b", b""]
