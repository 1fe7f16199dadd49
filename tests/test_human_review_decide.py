"""Recording decisions on review items: refusals name their field and append nothing,
resubmissions are idempotent, supersession and races leave exactly one active decision."""

from __future__ import annotations

import multiprocessing
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewtrail.errors import ConflictError, InvalidInputError, NotFoundError, ReviewtrailError
from reviewtrail.human_review.reads import active_decision, item_decisions, resolve_item
from reviewtrail.human_review.records import RESPONSE, ReviewItem, ReviewResponse
from reviewtrail.human_review.rules import DecisionInput
from reviewtrail.human_review.session import decide, history
from reviewtrail.ledger import new_record
from reviewtrail.store import Store
from support.human_review import add_item, add_prompt, add_run, campaign_with_items, new_store


def head_seq(store: Store) -> int:
    head = store.ledger.head()
    return head.seq if head is not None else 0


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = new_store(tmp_path)
    yield s  # type: ignore[misc]
    s.close()


@pytest.fixture
def item(store: Store) -> ReviewItem:
    [made] = campaign_with_items(store, 1)
    return made


PREFER_A = {"disposition": "prefer", "preferred": "A", "strength": "slight"}


def test_a_position_is_recorded_as_the_run_shown_there(store: Store, item: ReviewItem) -> None:
    previous: dict[str, str] = {}
    for position, index in (("A", 0), ("B", 1)):
        result = decide(
            store,
            item.item_id,
            {"disposition": "prefer", "preferred": position, "strength": "strong", **previous},
            reviewer="rev-1",
        )
        recorded = store.ledger.get(result.decision_id).payload_value
        assert recorded["preferred"] == item.display_order[index]
        assert result.active and not result.resubmitted
        previous = {"supersedes": result.decision_id}


def test_a_run_id_may_name_the_preferred_candidate(store: Store, item: ReviewItem) -> None:
    run = item.display_order[1]
    result = decide(store, item.item_id, DecisionInput("prefer", preferred=run, strength="slight"), reviewer="rev-1")
    assert store.ledger.get(result.decision_id).payload_value["preferred"] == run


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"disposition": "vote"}, "disposition"),
        ({"disposition": "prefer", "preferred": "A"}, "strength"),
        ({"disposition": "prefer", "preferred": "C", "strength": "slight"}, "preferred"),
        ({"disposition": "prefer", "strength": "slight"}, "preferred"),
        ({"disposition": "prefer", "preferred": "A", "strength": "huge"}, "strength"),
        ({"disposition": "tie", "strength": "slight"}, "strength"),
        ({"disposition": "tie", "preferred": "A"}, "preferred"),
        ({"disposition": "correct"}, "replacement"),
        ({"disposition": "skip", "replacement": "Better answer."}, "replacement"),
        ({"disposition": "tie", "reasonCodes": ["not-allowed"]}, "reasonCodes"),
        ({"disposition": "tie", "reasonCodes": ["wrong-policy", "wrong-policy"]}, "reasonCodes"),
        ({"disposition": "tie", "responseTags": ["verbose", "verbose", "verbose"]}, "responseTags"),
        ({"disposition": "tie", "confidence": 1.5}, "confidence"),
        ({"disposition": "tie", "note": "x" * 2001}, "note"),
        ({"disposition": "tie", "colour": "red"}, "colour"),
        ({"disposition": "tie", "itemId": "another-item"}, "itemId"),
        ({"disposition": "tie", "supersedes": "no-such-decision"}, "supersedes"),
        ({"disposition": "tie", "submissionId": "has space"}, "submissionId"),
    ],
)
def test_each_refusal_names_its_field_and_appends_nothing(
    store: Store, item: ReviewItem, payload: dict[str, Any], field: str
) -> None:
    before = head_seq(store)
    with pytest.raises(InvalidInputError) as info:
        decide(store, item.item_id, payload, reviewer="rev-1")
    assert info.value.field == field
    assert head_seq(store) == before


def test_superseding_a_decision_of_another_item_is_refused(store: Store) -> None:
    first, second = campaign_with_items(store, 2)
    other = decide(store, second.item_id, {"disposition": "skip"}, reviewer="rev-1")
    before = head_seq(store)
    with pytest.raises(InvalidInputError) as info:
        decide(store, first.item_id, {"disposition": "tie", "supersedes": other.decision_id}, reviewer="rev-1")
    assert info.value.field == "supersedes"
    assert head_seq(store) == before


def test_superseding_a_record_that_is_not_a_decision_is_refused(store: Store, item: ReviewItem) -> None:
    before = head_seq(store)
    with pytest.raises(InvalidInputError) as info:
        decide(
            store,
            item.item_id,
            {"disposition": "tie", "supersedes": item.candidates[0].output_event_id},
            reviewer="rev-1",
        )
    assert info.value.field == "supersedes"
    assert head_seq(store) == before


def test_an_unknown_item_is_not_found(store: Store) -> None:
    before = head_seq(store)
    with pytest.raises(NotFoundError) as info:
        decide(store, "no-such-item", {"disposition": "skip"}, reviewer="rev-1")
    assert info.value.field == "item"
    assert head_seq(store) == before


def test_two_different_submission_ids_in_one_call_are_refused(store: Store, item: ReviewItem) -> None:
    with pytest.raises(InvalidInputError) as info:
        decide(
            store, item.item_id, {"disposition": "skip", "submissionId": "s-1"}, submission_id="s-2", reviewer="rev-1"
        )
    assert info.value.field == "submissionId"


def test_the_decision_takes_the_privacy_of_the_items_chain(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        [item] = campaign_with_items(store, 1, privacy="private")
        result = decide(store, item.item_id, {"disposition": "skip"}, reviewer="rev-1")
        assert result.privacy == "private"
        again = {"disposition": "skip", "supersedes": result.decision_id}
        stricter = decide(store, item.item_id, again, privacy="sensitive", reviewer="rev-1")
        assert stricter.privacy == "sensitive"
        before = head_seq(store)
        again = {"disposition": "skip", "supersedes": stricter.decision_id}
        for level, field in (("public-source", "privacy"), ("secret", "privacy")):
            with pytest.raises(InvalidInputError) as info:
                decide(store, item.item_id, again, privacy=level, reviewer="rev-1")  # type: ignore[arg-type]
            assert info.value.field == field
        assert head_seq(store) == before


def test_a_resubmission_returns_the_first_result_and_appends_nothing(store: Store, item: ReviewItem) -> None:
    first = decide(store, item.item_id, PREFER_A, submission_id="sub-1", reviewer="rev-1")
    before = head_seq(store)
    again = decide(store, item.item_id, {"disposition": "skip"}, submission_id="sub-1", reviewer="rev-1")
    assert head_seq(store) == before
    assert again.resubmitted and not first.resubmitted
    assert (again.decision_id, again.disposition, again.seq) == (first.decision_id, "prefer", first.seq)


def test_a_submission_id_recorded_for_another_item_is_a_conflict(store: Store) -> None:
    first, second = campaign_with_items(store, 2)
    decide(store, first.item_id, {"disposition": "skip"}, submission_id="sub-1", reviewer="rev-1")
    before = head_seq(store)
    with pytest.raises(ConflictError) as info:
        decide(store, second.item_id, {"disposition": "skip"}, submission_id="sub-1", reviewer="rev-1")
    assert info.value.field == "submissionId"
    assert head_seq(store) == before


def test_without_a_submission_id_each_call_gets_a_random_one(store: Store, item: ReviewItem) -> None:
    a = decide(store, item.item_id, {"disposition": "skip"}, reviewer="rev-1")
    b = decide(store, item.item_id, {"disposition": "skip", "supersedes": a.decision_id}, reviewer="rev-1")
    assert a.submission_id != b.submission_id and a.decision_id != b.decision_id


def test_supersession_makes_the_new_decision_active_and_counts_what_it_replaced(store: Store, item: ReviewItem) -> None:
    first = decide(store, item.item_id, PREFER_A, reviewer="rev-1")
    second = decide(store, item.item_id, {"disposition": "tie", "supersedes": first.decision_id}, reviewer="rev-1")
    third = decide(
        store, item.item_id, {"disposition": "underdetermined", "supersedes": second.decision_id}, reviewer="rev-1"
    )
    assert (first.superseded, second.superseded, third.superseded) == (0, 1, 2)
    assert third.active
    found = history(store, item.item_id)
    assert found.active is not None and found.active.decision_id == third.decision_id
    assert found.superseded == 2
    assert [d.active for d in found.decisions] == [False, False, True]
    # The earlier result, read again, is no longer active.
    assert not decide(store, item.item_id, PREFER_A, submission_id=first.submission_id, reviewer="rev-1").active


def test_provenance_is_revealed_in_the_result_once_recorded(store: Store, item: ReviewItem) -> None:
    result = decide(store, item.item_id, PREFER_A, reviewer="rev-1")
    assert [p.position for p in result.provenance] == ["A", "B"]
    assert [p.run_id for p in result.provenance] == item.display_order
    assert {p.agent_id for p in result.provenance} == {"agent-a", "agent-b"}
    assert result.to_json()["provenance"][0]["model"].startswith("model-agent-")


def correct_output(store: Store, item: ReviewItem, text: str = "A corrected answer.") -> None:
    """Append a correction of the first candidate's output record (same type, superseding it)."""
    output = store.ledger.get(item.candidates[0].output_event_id)
    assert output.type == RESPONSE
    store.append(
        [
            new_record(
                ReviewResponse(response=text),
                actor="corrector",
                privacy=output.privacy,
                subject=output.subject,
                supersedes=output.id,
            )
        ]
    )


def test_an_item_whose_output_was_corrected_is_refused_without_naming_runs(store: Store, item: ReviewItem) -> None:
    correct_output(store, item)
    assert not resolve_item(store.ledger, item.item_id).valid
    before = head_seq(store)
    with pytest.raises(ConflictError) as info:
        decide(store, item.item_id, PREFER_A, reviewer="rev-1")
    assert info.value.field == "item"
    assert head_seq(store) == before
    message = str(info.value)
    for candidate in item.candidates:
        assert candidate.run_id not in message
        assert candidate.output_event_id not in message
    assert "candidate A" in message or "candidate B" in message


# --- concurrency ---------------------------------------------------------------------------


def _race_decide(args: tuple[str, str, str, int]) -> str:
    """Decide as reviewer rev-N, superseding the active decision as last read; when another
    reviewer's decision is recorded meanwhile (refused, exit 6), read again and retry."""
    root, url, item_id, n = args
    from reviewtrail.app import open_store
    from reviewtrail.config import Settings

    with open_store(Settings(store=Path(root), database_url=url)) as store:
        for _ in range(200):
            facts = history(store, item_id)
            payload: dict[str, Any] = {"disposition": "prefer" if n % 2 else "tie"}
            if n % 2:
                payload |= {"preferred": "AB"[n % 4 // 2], "strength": "slight"}
            if facts.active is not None:
                payload["supersedes"] = facts.active.decision_id
            try:
                return decide(store, item_id, payload, reviewer=f"rev-{n}").decision_id
            except ConflictError as exc:
                assert exc.field == "supersedes" and exc.exit_code == 6, (exc.field, str(exc))
        raise AssertionError("never recorded")


def _race_once(args: tuple[str, str, str, int]) -> tuple[str, str, str]:
    """Decide once as reviewer rev-N, superseding what ``args`` names ("" for nothing): the
    recorded decision's id, or the refusal's field and message."""
    root, url, item_id, n = args[:4]
    supersedes = args[4] if len(args) > 4 else ""  # type: ignore[misc]
    from reviewtrail.app import open_store
    from reviewtrail.config import Settings

    payload: dict[str, Any] = {"disposition": "tie"}
    if supersedes:
        payload["supersedes"] = supersedes
    with open_store(Settings(store=Path(root), database_url=url)) as store:
        try:
            return "recorded", decide(store, item_id, payload, reviewer=f"rev-{n}").decision_id, ""
        except ConflictError as exc:
            return "refused", str(exc.field), str(exc)


def _race_resubmit(args: tuple[str, str, str, int]) -> tuple[str, bool]:
    root, url, item_id, n = args
    from reviewtrail.app import open_store
    from reviewtrail.config import Settings

    with open_store(Settings(store=Path(root), database_url=url)) as store:
        result = decide(
            store,
            item_id,
            {"disposition": "skip", "note": f"try {n}"},
            submission_id="one-submission",
            reviewer="rev-1",
        )
        return result.decision_id, result.resubmitted


def _race(fn: Any, tmp_path: Path, item: ReviewItem, url: str | None = None, *extra: str) -> list[Any]:
    url = url or f"sqlite:///{tmp_path / 'ledger.sqlite'}"
    args = [(str(tmp_path / "store"), url, item.item_id, n, *extra) for n in range(20)]
    with multiprocessing.get_context("spawn").Pool(20) as pool:
        return pool.map(fn, args)


def _one_recorded_nineteen_told(store: Store, item: ReviewItem, outcomes: list[tuple[str, str, str]]) -> str:
    """Exactly one outcome recorded; the 19 others refused on ``supersedes``, naming it and its reviewer."""
    recorded = [value for kind, value, _ in outcomes if kind == "recorded"]
    assert len(recorded) == 1, outcomes
    [winner] = recorded
    refusals = [(value, message) for kind, value, message in outcomes if kind == "refused"]
    assert len(refusals) == 19
    who = next(d.reviewer for d in history(store, item.item_id).decisions if d.decision_id == winner)
    for field, message in refusals:
        assert field == "supersedes"
        assert winner in message and f"by reviewer {who}" in message
    return winner


@pytest.mark.slow
def test_twenty_processes_deciding_an_open_item_record_one_and_tell_the_others(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        first, second = campaign_with_items(store, 2)
        before = head_seq(store)
    outcomes = _race(_race_once, tmp_path, first)
    with new_store(tmp_path) as store:
        winner = _one_recorded_nineteen_told(store, first, outcomes)
        assert head_seq(store) == before + 1
        active = history(store, first.item_id).active
        assert active is not None and active.decision_id == winner
        # With the active decision named: again one is recorded and the others are told.
        outcomes = _race(_race_once, tmp_path, first, None, winner)
    with new_store(tmp_path) as store:
        successor = _one_recorded_nineteen_told(store, first, outcomes)
        found = history(store, first.item_id)
        assert found.active is not None and found.active.decision_id == successor
        assert [d.decision_id for d in found.decisions] == [winner, successor]
        assert found.superseded == 1
        assert history(store, second.item_id).active is None


@pytest.mark.slow
def test_twenty_processes_deciding_and_superseding_leave_exactly_one_active_decision(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        [item] = campaign_with_items(store, 1)
    recorded = _race(_race_decide, tmp_path, item)
    with new_store(tmp_path) as store:
        resolved = resolve_item(store.ledger, item.item_id)
        facts = item_decisions(store.ledger, resolved.item, resolved.prompt)
        assert sorted(f.decision_id for f in facts) == sorted(recorded)
        found = history(store, item.item_id)
        actives = [d for d in found.decisions if d.active]
        assert len(actives) == 1
        chosen = active_decision(facts, item.item_id)
        assert chosen is not None and chosen.decision.decision_id == actives[0].decision_id
        assert actives[0].seq == max(f.seq for f in facts)
        assert found.superseded == 19
        # One chain: the first supersedes nothing, each later one the decision before it.
        links = [d.supersedes for d in found.decisions]
        assert links == [None, *(d.decision_id for d in found.decisions[:-1])]
        assert {d.reviewer for d in found.decisions} == {f"rev-{n}" for n in range(20)}


@pytest.mark.slow
def test_twenty_processes_resubmitting_one_submission_append_one_record(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        [item] = campaign_with_items(store, 1)
        before = head_seq(store)
    results = _race(_race_resubmit, tmp_path, item)
    with new_store(tmp_path) as store:
        assert head_seq(store) == before + 1
        assert len({decision for decision, _ in results}) == 1
        assert sum(not again for _, again in results) == 1
        assert store.ledger.count("hr_decisions", item_id=item.item_id) == 1


@pytest.mark.slow
def test_on_postgresql_races_leave_one_active_decision_and_one_record_per_submission(
    tmp_path: Path, pg_url: str
) -> None:
    with new_store(tmp_path, pg_url) as store:
        first, second = campaign_with_items(store, 2)
    recorded = _race(_race_decide, tmp_path, first, pg_url)
    resubmitted = _race(_race_resubmit, tmp_path, second, pg_url)
    with new_store(tmp_path, pg_url) as store:
        found = history(store, first.item_id)
        assert sorted(d.decision_id for d in found.decisions) == sorted(recorded)
        assert [d.seq for d in found.decisions if d.active] == [max(d.seq for d in found.decisions)]
        assert found.superseded == 19
        assert [d.supersedes for d in found.decisions] == [None, *(d.decision_id for d in found.decisions[:-1])]
        assert len({decision for decision, _ in resubmitted}) == 1
        assert store.ledger.count("hr_decisions", item_id=second.item_id) == 1


# --- property: any interleaving ------------------------------------------------------------

OPS = st.lists(
    st.tuples(
        st.integers(0, 2),  # which item
        st.sampled_from(["new", "supersede-active", "supersede-oldest", "resubmit"]),
        st.sampled_from(["prefer", "tie", "skip", "underdetermined"]),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS)
def test_exactly_one_active_decision_per_decided_item_and_it_is_the_latest(ops: list[tuple[int, str, str]]) -> None:
    with tempfile.TemporaryDirectory() as tmp, new_store(Path(tmp)) as store:
        items = campaign_with_items(store, 3)
        recorded: dict[str, list[tuple[int, str]]] = {}  # item -> [(seq, decision id)]
        skips: set[str] = set()  # the skip decisions
        submissions: list[tuple[str, str]] = []
        for which, how, disposition in ops:
            item_id = items[which].item_id
            mine = recorded.get(item_id, [])
            payload: dict[str, Any] = {"disposition": disposition}
            if disposition == "prefer":
                payload |= {"preferred": "A", "strength": "slight"}
            if how == "supersede-active" and mine:
                payload["supersedes"] = mine[-1][1]
            if how == "supersede-oldest" and mine:
                payload["supersedes"] = mine[0][1]
            if how == "resubmit" and submissions:
                old_item, sid = submissions[-1]
                try:
                    again = decide(store, item_id, payload, submission_id=sid, reviewer="rev-1")
                except ReviewtrailError:
                    assert old_item != item_id
                    continue
                assert again.resubmitted and old_item == item_id
                continue
            skipped = bool(mine) and mine[-1][1] in skips
            if mine and payload.get("supersedes") != mine[-1][1] and not (skipped and "supersedes" not in payload):
                # Not naming the active decision: refused, naming it; nothing appended (an active
                # skip is superseded by a decision that names nothing).
                before = head_seq(store)
                with pytest.raises(ConflictError) as info:
                    decide(store, item_id, payload, reviewer="rev-1")
                assert info.value.field == "supersedes" and mine[-1][1] in str(info.value)
                assert head_seq(store) == before
                continue
            if disposition == "skip" and mine and not skipped:
                # A skip never replaces a judgment (the item was revealed once judged): refused.
                before = head_seq(store)
                with pytest.raises(InvalidInputError) as refused:
                    decide(store, item_id, payload, reviewer="rev-1")
                assert refused.value.field == "disposition" and head_seq(store) == before
                continue
            result = decide(store, item_id, payload, reviewer="rev-1")
            assert (result.superseded_skip is not None) == skipped
            if disposition == "skip":
                skips.add(result.decision_id)
            recorded.setdefault(item_id, []).append((result.seq, result.decision_id))
            submissions.append((item_id, result.submission_id))
        for made in items:
            found = history(store, made.item_id)
            actives = [d for d in found.decisions if d.active]
            if made.item_id not in recorded:
                assert actives == [] and found.active is None
                continue
            assert len(actives) == 1
            assert actives[0].decision_id == max(recorded[made.item_id])[1]
            assert found.superseded == len(recorded[made.item_id]) - 1


def test_a_decision_on_one_prompts_item_leaves_its_other_items_open(store: Store) -> None:
    prompt = add_prompt(store, agents=("agent-a", "agent-b", "agent-c"))
    runs = [add_run(store, prompt, agent) for agent in ("agent-a", "agent-b", "agent-c")]
    first = add_item(store, prompt, runs[0], runs[1])
    second = add_item(store, prompt, runs[1], runs[2])
    decide(store, first.item_id, {"disposition": "skip"}, reviewer="rev-1")
    assert history(store, second.item_id).active is None


def test_a_resubmission_that_loses_the_race_returns_the_first_record(
    store: Store, item: ReviewItem, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The submission id is recorded by another process between the check and the append: the
    append fails on hr_submissions, and the first record is returned."""
    import reviewtrail.human_review.session._decide as module

    first = decide(store, item.item_id, PREFER_A, submission_id="raced", reviewer="rev-1")
    real = module._recorded
    calls: list[str] = []

    def not_yet_seen(ledger: Any, records: Any, submission_id: str, item_id: str) -> Any:
        calls.append(submission_id)
        return None if len(calls) == 1 else real(ledger, records, submission_id, item_id)

    monkeypatch.setattr(module, "_recorded", not_yet_seen)
    before = head_seq(store)
    again = decide(store, item.item_id, {"disposition": "skip"}, submission_id="raced", reviewer="rev-1")
    assert len(calls) == 2
    assert again.resubmitted and again.decision_id == first.decision_id
    assert head_seq(store) == before
