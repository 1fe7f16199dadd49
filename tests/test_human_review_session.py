"""The interactive review session: its state machine (keys in, actions out, provenance only once a
decision is recorded), the review session command driven by piped keys on a real store, and the
single-key terminal path through a pseudo-terminal."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import init_cli_store, open_cli_store, run_cli
from reviewtrail.errors import NotFoundError
from reviewtrail.human_review.records import RESPONSE, ReviewItem, ReviewResponse, queue_key
from reviewtrail.human_review.session import (
    CandidateProvenance,
    DecisionResult,
    QueueCandidate,
    QueueCard,
    ReviewSession,
    SessionAction,
    next_open_card,
)
from reviewtrail.ledger import new_record
from support.human_review import add_item, add_prompt, add_run, new_store

SECRET_AGENT = {
    "model": "model-zq7-secret",
    "provider": "provider-zq7",
    "executionAdapter": "exec-adapter-zq7@1",
    "learnedAdapter": "lora-zq7",
    "catalogGeneration": "catalog-gen-zq7",
}
AGENTS = ("agent-zq7-one", "agent-zq7-two")
RECORDED = "recorded "  # how the session announces a recorded decision

# ---------------------------------------------------------------- the state machine, no store


def card(item_id: str, *, valid: bool = True, reasons: tuple[str, ...] = ("r1", "r2", "r3")) -> QueueCard:
    return QueueCard(
        item_id=item_id,
        campaign_id="camp",
        campaign_version=1,
        scenario_family="fam",
        prompt="the prompt",
        evidence=None,
        criterion={
            "id": "crit",
            "version": 1,
            "label": "Crit",
            "instructions": "Judge.",
            "allowedReasonCodes": list(reasons),
            "allowedResponseTags": ["t1", "t2", "t3"],
        },
        candidates=(QueueCandidate("A", None if not valid else "ra"), QueueCandidate("B", None if not valid else "rb")),
        valid=valid,
        problems=() if valid else ("candidate A: the output changed",),
        decided=False,
    )


def result(action: SessionAction) -> DecisionResult:
    assert action.item_id is not None and action.decision is not None and action.submission_id is not None
    provenance = tuple(
        CandidateProvenance(p, f"run-secret-{p}", f"agent-secret-{p}", "m", "p", "e", None, "c") for p in "AB"
    )
    return DecisionResult(
        decision_id="dec-1",
        seq=1,
        item_id=action.item_id,
        prompt_label="A customer asks",
        submission_id=action.submission_id,
        reviewer="rev-1",
        disposition=action.decision.disposition,
        active=True,
        superseded=0,
        resubmitted=False,
        privacy="public-source",
        provenance=provenance,
    )


def started(*cards: QueueCard) -> ReviewSession:
    session = ReviewSession()
    action = session.start()
    assert action.kind == "fetch"
    session.show(cards[0] if cards else None, "sub-1")
    return session


def press_all(session: ReviewSession, keys: str) -> list[SessionAction]:
    actions = []
    for key in keys:
        action = session.press(key)
        if action is not None:
            actions.append(action)
    return actions


def test_b_then_2_submits_a_strong_preference_for_the_candidate_shown_as_b() -> None:
    session = started(card("i1"))
    assert press_all(session, "b") == []
    assert session.mode == "strength"
    [action] = press_all(session, "2")
    assert action.kind == "submit" and action.item_id == "i1" and action.submission_id == "sub-1"
    assert action.decision is not None
    assert (action.decision.disposition, action.decision.preferred, action.decision.strength) == (
        "prefer",
        "B",
        "strong",
    )
    assert session.result is None  # nothing revealed until the driver reports the decision recorded
    session.decided(result(action))
    assert session.mode == "revealed" and session.result is not None


def test_x_goes_back_from_the_strength_and_nothing_is_submitted() -> None:
    session = started(card("i1"))
    assert press_all(session, "ax") == []
    assert session.mode == "card"


@pytest.mark.parametrize(
    ("key", "disposition"), [("t", "tie"), ("u", "underdetermined"), ("m", "malformed"), ("s", "skip")]
)
def test_single_key_dispositions(key: str, disposition: str) -> None:
    [action] = press_all(started(card("i1")), key)
    assert action.decision is not None and action.decision.disposition == disposition
    assert action.decision.preferred is None and action.decision.strength is None


def test_toggles_are_carried_by_the_decision() -> None:
    session = started(card("i1"))
    press_all(session, "yr13\ng2\n")
    assert session.press("f") is None and session.wants == "line"
    session.enter("0.25")
    session.press("n")
    session.enter("looked twice")
    [action] = press_all(session, "t")
    d = action.decision
    assert d is not None
    assert (d.use_for_training, d.reason_codes, d.response_tags, d.confidence, d.note) == (
        True,
        ("r1", "r3"),
        ("t2",),
        0.25,
        "looked twice",
    )


def test_a_third_reason_is_refused_and_a_picked_one_unpicks() -> None:
    session = started(card("i1"))
    press_all(session, "r123")
    assert session.draft.reason_codes == ("r1", "r2")
    assert session.message is not None and "at most 2" in session.message
    press_all(session, "13\n")
    assert session.draft.reason_codes == ("r2", "r3")


@pytest.mark.parametrize("text", ["1.5", "-0.1", "nan", "high"])
def test_a_confidence_outside_0_to_1_is_refused_and_kept_unset(text: str) -> None:
    session = started(card("i1"))
    session.press("f")
    session.enter(text)
    assert session.draft.confidence is None and session.message is not None and session.mode == "card"


def test_correct_submits_the_replacement_and_an_empty_one_records_nothing() -> None:
    session = started(card("i1"))
    session.press("c")
    assert session.wants == "text"
    assert session.enter("") is None and session.mode == "card"
    session.press("c")
    action = session.enter("line one\nline two")
    assert action is not None and action.decision is not None
    assert (action.decision.disposition, action.decision.replacement) == ("correct", "line one\nline two")


def test_a_refusal_keeps_the_card_and_a_retry_reuses_its_submission_id() -> None:
    session = started(card("i1"))
    [first] = press_all(session, "t")
    session.refused("note", "too long")
    assert session.mode == "card" and session.message == "refused: note: too long"
    [again] = press_all(session, "u")
    assert again.submission_id == first.submission_id == "sub-1"


def test_a_refusal_naming_the_item_makes_the_card_invalid() -> None:
    session = started(card("i1"))
    press_all(session, "t")
    session.refused("item", "candidate B: the output changed")
    assert session.card is not None and not session.card.valid
    assert press_all(session, "t") == []


def test_an_invalid_card_only_passes_over_recording_nothing() -> None:
    session = started(card("i1", valid=False))
    assert press_all(session, "abtucmyrgfn12") == []
    [action] = press_all(session, "s")
    assert action.kind == "fetch" and action.seen == frozenset({"i1"})
    assert session.passed == ["i1"]


def test_after_the_reveal_any_key_asks_for_the_next_card_past_the_ones_seen() -> None:
    session = started(card("i1"))
    [submit] = press_all(session, "t")
    session.decided(result(submit))
    [action] = press_all(session, " ")
    assert action.kind == "fetch" and "i1" in action.seen
    session.show(None, "sub-2")
    assert session.mode == "done"


def test_q_quits_from_the_card_the_strength_and_a_picker() -> None:
    for keys in ("q", "aq", "rq", "gq"):
        session = started(card("i1"))
        actions = press_all(session, keys)
        assert [a.kind for a in actions] == ["quit"], keys


KEYS = [*"abtcumsyrgfnq?x12345.z ", "\n", "\x1b", "<text>"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(KEYS), max_size=80),
    st.lists(st.booleans(), min_size=1, max_size=8),
    st.lists(st.sampled_from(["", "0.5", "x", "a\nb"]), min_size=1),
    st.integers(min_value=0, max_value=4),
    st.sampled_from(["after", "end", "never"]),
)
def test_any_key_sequence_supersedes_only_through_undo_and_reveals_only_after_a_decision(
    keys: list[str], valid: list[bool], texts: list[str], refusals: int, reveal: str
) -> None:
    cards = {f"i{n}": card(f"i{n}", valid=ok) for n, ok in enumerate(valid)}
    session = ReviewSession(reveal=reveal)  # type: ignore[arg-type]
    latest: dict[str, str] = {}  # item -> its latest decision id
    submissions: dict[str, str] = {}  # submission id -> item
    fetched: list[str] = []
    to_refuse = refusals

    def carry(action: SessionAction | None) -> None:
        nonlocal to_refuse
        if action is None or action.kind == "quit":
            return
        if action.kind == "fetch":
            nxt = next((c for i, c in cards.items() if i not in action.seen and i not in latest), None)
            session.show(nxt, f"sub-{len(submissions)}-{len(fetched)}")
            if nxt is not None:
                fetched.append(nxt.item_id)
            return
        if action.kind == "card":
            assert action.item_id in latest  # only a decided card is revisited
            session.show(cards[action.item_id], f"sub-again-{len(submissions)}-{len(fetched)}")
            return
        assert session.card is not None and session.card.valid and action.item_id == session.card.item_id
        assert action.decision is not None and action.submission_id is not None
        assert submissions.setdefault(action.submission_id, action.item_id) == action.item_id
        # A second decision on an item always names the latest one (after a confirmation).
        assert action.decision.supersedes == latest.get(action.item_id)
        assert session.result is None  # nothing is revealed before the decision returns
        if to_refuse:
            to_refuse -= 1
            session.refused("field", "refused")
            return
        decided = result(action)
        decided = DecisionResult(**{**decided.__dict__, "decision_id": f"dec-{len(submissions)}-{action.item_id}"})
        latest[action.item_id] = decided.decision_id
        carry(session.decided(decided))

    carry(session.start())
    for i, key in enumerate(keys):
        if session.mode in ("done", "quit"):
            break
        if session.wants in ("line", "text"):
            carry(session.enter(texts[i % len(texts)]))
        elif key != "<text>":
            carry(session.press(key))
        if session.mode != "revealed":
            assert session.result is None
        else:
            assert reveal == "after" and session.result is not None
            assert session.result.decision_id == latest[session.result.item_id]
    assert len(fetched) == len(set(fetched))  # no card is fetched twice


# ---------------------------------------------------------------- the command, on a real store


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return init_cli_store(tmp_path, monkeypatch)


def queued(items: list[ReviewItem]) -> list[ReviewItem]:
    """``items`` of one family in the order a session serves them: the queue's shuffled order."""
    return sorted(items, key=lambda item: queue_key(item.item_id))


def blinded_items(project: Path, n: int, **entry: Any) -> list[ReviewItem]:
    """Items whose candidates carry distinctive provenance and responses free of it."""
    store = open_cli_store(project)
    try:
        items = []
        for k in range(n):
            prompt = add_prompt(store, agents=AGENTS, **entry)
            runs = [
                add_run(store, prompt, agent, response=f"Reply {k}.{i}: refunds are possible.", **SECRET_AGENT)
                for i, agent in enumerate(AGENTS)
            ]
            items.append(add_item(store, prompt, *runs))
        return items
    finally:
        store.close()


def secrets(items: list[ReviewItem]) -> set[str]:
    values = set(SECRET_AGENT.values()) | set(AGENTS)
    for item in items:
        values |= {c.run_id for c in item.candidates} | {c.output_event_id for c in item.candidates}
    return values


def decisions(project: Path) -> list[dict[str, Any]]:
    store = open_cli_store(project)
    try:
        rows = sorted(store.ledger.rows("hr_decisions"), key=lambda r: r["seq"])
        return [store.ledger.get(r["record_id"]).payload_value for r in rows]
    finally:
        store.close()


REVIEWER = ("--reviewer", "rev-1")


def session(keys: str, *args: str) -> tuple[int, str, str]:
    return run_cli("review", "session", "camp", *REVIEWER, *args, input=keys)


def before_first_decision(out: str) -> str:
    return out.split(RECORDED, 1)[0]


def test_prefer_b_strong_records_the_run_shown_as_b_and_reveals_only_afterwards(project: Path) -> None:
    items = blinded_items(project, 2)
    code, out, err = session("b\n2\nq\n")
    assert code == 0, err
    [decision] = decisions(project)
    item = queued(items)[0]
    k = items.index(item)
    assert decision["itemId"] == item.item_id
    assert (decision["disposition"], decision["preferred"], decision["strength"]) == (
        "prefer",
        item.display_order[1],
        "strong",
    )
    blind = before_first_decision(out)
    assert f"Reply {k}.0" in blind and f"Reply {k}.1" in blind
    assert [s for s in secrets(items) if s in blind] == []
    revealed = out.split(RECORDED, 1)[1]
    assert item.display_order[1] in revealed and "agent-zq7-one" in revealed
    assert "session: 1 decision(s) recorded (prefer 1)" in out


def test_tie_then_skip_record_one_decision_each_on_successive_cards(project: Path) -> None:
    items = queued(blinded_items(project, 3))
    code, out, err = session("t\n\ns\n\nq\n")
    assert code == 0, err
    got = [(d["itemId"], d["disposition"]) for d in decisions(project)]
    assert got == [(items[0].item_id, "tie"), (items[1].item_id, "skip")]
    assert "(skip 1, tie 1)" in out


def test_correct_reads_multi_line_text_up_to_a_single_dot(project: Path) -> None:
    blinded_items(project, 1)
    code, _, err = session("c\nFirst line.\n\nThird line.\n.\nq\n")
    assert code == 0, err
    [decision] = decisions(project)
    assert (decision["disposition"], decision["replacement"]) == ("correct", "First line.\n\nThird line.")


def test_toggles_set_training_reasons_tags_confidence_and_note(project: Path) -> None:
    blinded_items(project, 1)
    code, _, err = session("y\nr\n2\n\ng\n1\n\nf\n0.75\nn\nchecked the policy\na\n1\n")
    assert code == 0, err
    [d] = decisions(project)
    assert d["useForTraining"] is True and d["reasonCodes"] == ["unsupported"] and d["responseTags"] == ["verbose"]
    assert (d["confidence"], d["note"], d["strength"]) == (0.75, "checked the policy", "slight")


def test_quitting_mid_card_appends_nothing(project: Path) -> None:
    blinded_items(project, 1)
    for keys in ("y\nb\nq\n", "c\nhalf a reply\n", "r\n1\nq\n", "b\n"):
        code, out, err = session(keys)
        assert code == 0, err
        assert "session: 0 decision(s) recorded" in out
    assert decisions(project) == []


def test_a_refused_decision_is_shown_with_its_field_and_the_card_stays(project: Path) -> None:
    blinded_items(project, 1)
    code, out, err = session("n\n" + "x" * 2_001 + "\nt\nn\n\nt\nq\n")
    assert code == 0, err
    assert "refused: note:" in out
    assert [d["disposition"] for d in decisions(project)] == ["tie"]


def test_an_invalid_item_is_shown_invalid_and_can_only_be_passed_over(project: Path) -> None:
    items = queued(blinded_items(project, 2))
    store = open_cli_store(project)
    try:
        output = store.ledger.get(items[0].candidates[0].output_event_id)
        assert output.type == RESPONSE
        correction = ReviewResponse(response="A corrected reply.")
        store.append(
            [new_record(correction, actor="t", privacy=output.privacy, subject=output.subject, supersedes=output.id)]
        )
    finally:
        store.close()
    code, out, err = session("t\nb\n1\ns\nt\nq\n")
    assert code == 0, err
    assert "INVALID" in out and "it can only be passed over" in out
    assert [(d["itemId"], d["disposition"]) for d in decisions(project)] == [(items[1].item_id, "tie")]
    assert "1 invalid item(s) passed over" in out
    assert [s for s in secrets(items) if s in before_first_decision(out)] == []


def test_an_unknown_campaign_is_not_found(project: Path) -> None:
    code, _, err = run_cli("review", "session", "nope", input="q\n")
    assert code == 3 and "campaign" in err


def test_next_open_card_pages_past_the_items_seen(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    try:
        prompts = [add_prompt(store) for _ in range(4)]
        items = [add_item(store, p, add_run(store, p, "agent-a"), add_run(store, p, "agent-b")) for p in prompts]
        ids = sorted((i.item_id for i in items), key=queue_key)  # the queue's order
        first = next_open_card(store, "camp")
        assert first is not None and first.item_id == ids[0]
        later = next_open_card(store, "camp", seen=set(ids[:3]))
        assert later is not None and later.item_id == ids[3]
        assert next_open_card(store, "camp", seen=set(ids)) is None
        with pytest.raises(NotFoundError):
            next_open_card(store, "other")
    finally:
        store.close()


# ---------------------------------------------------------------- the terminal path, single keys


@pytest.fixture
def busy_cores() -> Any:
    """Every core kept busy by a spinning process while the test runs: the terminal tests must
    hold on a loaded machine (keys and Ctrl-C acted on however late the session is scheduled)."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(max(2, os.cpu_count() or 1))]
    try:
        yield hogs
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def test_a_ctrl_c_is_raised_at_the_next_read_wherever_it_landed() -> None:
    import pty
    import signal
    import tty

    from reviewtrail.cli.review._session_input import TerminalKeys, _interrupt_pipe

    # Ctrl-C as on a terminal: a suite started as a background job inherits SIGINT ignored.
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    master, slave = pty.openpty()
    tty.setcbreak(slave)  # single keys, as the session reads them
    try:
        with _interrupt_pipe() as interrupts:
            keys = TerminalKeys(slave, interrupts)
            os.write(master, b"a")
            assert keys.key() == "a"
            os.kill(os.getpid(), signal.SIGINT)  # lands while nothing reads: only noted
            os.write(master, b"b")
            with pytest.raises(KeyboardInterrupt):
                keys.key()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the earlier handler is back
    finally:
        signal.signal(signal.SIGINT, inherited)
        os.close(master)
        os.close(slave)


def _read_until(fd: int, wanted: bytes, seen: bytearray, limit: float = 60.0) -> None:
    """Read the pseudo-terminal into ``seen`` until ``wanted`` appears (bounded: fails after
    ``limit`` seconds without it)."""
    import time

    deadline = time.monotonic() + limit
    while wanted not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"{wanted!r} never appeared; got {bytes(seen)[-2000:]!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                chunk = b""
            assert chunk, f"the session ended before {wanted!r}; got {bytes(seen)[-2000:]!r}"
            seen += chunk


@pytest.mark.slow
def test_single_keys_work_without_enter_on_a_terminal_and_its_settings_are_restored(
    project: Path, busy_cores: Any
) -> None:
    import pty

    made = blinded_items(project, 2)
    items = queued(made)
    master, slave = pty.openpty()
    before = termios.tcgetattr(slave)
    env = {**os.environ, "TERM": "dumb", "NO_COLOR": "1", "COLUMNS": "200"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "reviewtrail", "review", "session", "camp", *REVIEWER],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
    )
    seen = bytearray()
    try:
        _read_until(master, b"q quit", seen)
        os.write(master, b"b")
        _read_until(master, b"1 slight", seen)
        os.write(master, b"2")
        _read_until(master, b"press any key", seen)
        os.write(master, b" ")
        _read_until(master, f"Reply {made.index(items[1])}.0".encode(), seen)
        _read_until(master, b"q quit", seen)
        os.write(master, b"q")
        _read_until(master, b"session: 1 decision(s)", seen)
        assert proc.wait(timeout=60) == 0
        after = termios.tcgetattr(slave)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
        os.close(slave)
    assert after[3] & termios.ICANON and after[3] & termios.ECHO
    assert after[3] == before[3]
    [d] = decisions(project)
    assert (d["itemId"], d["preferred"], d["strength"]) == (items[0].item_id, items[0].display_order[1], "strong")
    assert [s for s in secrets(items) if s in bytes(seen).split(RECORDED.encode(), 1)[0].decode()] == []


def test_json_prints_the_summary_on_stdout_and_draws_the_cards_on_stderr(project: Path) -> None:
    import json

    made = blinded_items(project, 2)
    items = queued(made)
    code, out, err = session("t\n\nq\n", "--json")
    assert code == 0, err
    [decision] = decisions(project)
    summary = json.loads(out)
    assert decision["disposition"] == "tie"
    assert summary["passedOver"] == []
    [entry] = summary["decisions"]
    assert (entry["itemId"], entry["disposition"], entry["resubmitted"]) == (items[0].item_id, "tie", False)
    shown = f"Reply {made.index(items[0])}.0"
    assert entry["decisionId"] and shown in err and shown not in out


def _take_terminal() -> None:
    import fcntl

    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


@pytest.mark.slow
def test_ctrl_c_on_a_terminal_restores_its_settings_and_records_nothing(project: Path, busy_cores: Any) -> None:
    import pty

    blinded_items(project, 1)
    master, slave = pty.openpty()
    before = termios.tcgetattr(slave)
    env = {**os.environ, "TERM": "dumb", "NO_COLOR": "1", "COLUMNS": "200"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "reviewtrail", "review", "session", "camp", *REVIEWER],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
        start_new_session=True,
        preexec_fn=_take_terminal,  # the pseudo-terminal becomes the session's controlling terminal
    )
    seen = bytearray()
    try:
        _read_until(master, b"q quit", seen)
        os.write(master, b"a")
        _read_until(master, b"1 slight", seen)
        os.write(master, b"\x03")  # the terminal turns it into SIGINT for the session
        _read_until(master, b"session: 0 decision(s)", seen)
        assert proc.wait(timeout=60) == 130
        after = termios.tcgetattr(slave)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
        os.close(slave)
    assert after[3] == before[3]
    assert decisions(project) == []
