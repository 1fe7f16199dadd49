"""Second judgments: a campaign asks a second reviewer to judge a share of its items, chosen by a
keyed hash; the judgment is recorded for agreement, never as a decision and never exported; per
reviewer agreement (raw and Cohen's kappa) is shown by coverage (docs/human-review.md, "Second
judgments" and "Agreement")."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail._struct import parse
from reviewtrail.canonical import canonical_json
from reviewtrail.errors import ConflictError, InvalidInputError
from reviewtrail.human_review.campaigns import campaign_settings
from reviewtrail.human_review.export import export_campaign
from reviewtrail.human_review.quality import JudgmentPair, campaign_coverage, cohen_kappa, judgment_agreement
from reviewtrail.human_review.records import (
    SECOND_JUDGMENT,
    CampaignSettings,
    ReviewDecision,
    ReviewItem,
    SecondJudgment,
    new_campaign_record,
    new_second_judgment_record,
)
from reviewtrail.human_review.rules import SecondJudgmentFact, selected_for_second_judgment, selection_point
from reviewtrail.human_review.rules._second_judgments import (
    counted_second_judgments,
    waits_for_second_judgment,
)
from reviewtrail.human_review.rules._second_judgments import due_second_judgment as due_second_judgment_of
from reviewtrail.human_review.session import (
    Leases,
    decide,
    draw_card,
    history,
    pending_second_judgment,
    pending_second_judgments,
    reviewer_holder,
    second_judgments_due,
)
from reviewtrail.human_review.session._history import WITHHELD
from reviewtrail.store import Store
from support.human_review import campaign_with_items, new_store

ITEM_IDS = st.text("abcdef0123456789-", min_size=1, max_size=40)
SHARES = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


# --- the selection rule --------------------------------------------------------------------------


@given(ITEM_IDS, st.integers(1, 5), SHARES, SHARES)
def test_raising_the_share_only_adds_items(item_id: str, version: int, low: float, high: float) -> None:
    low, high = sorted((low, high))
    if selected_for_second_judgment("camp", version, item_id, low):
        assert selected_for_second_judgment("camp", version, item_id, high)


@given(ITEM_IDS, st.integers(1, 5))
def test_share_zero_selects_nothing_and_share_one_everything(item_id: str, version: int) -> None:
    assert not selected_for_second_judgment("camp", version, item_id, 0.0)
    assert not selected_for_second_judgment("camp", version, item_id, None)
    assert selected_for_second_judgment("camp", version, item_id, 1.0)
    point = selection_point("camp", version, item_id)
    assert 0.0 <= point < 1.0
    assert point == selection_point("camp", version, item_id)  # every surface computes the same


def test_the_selection_is_keyed_by_campaign_and_version_and_takes_about_the_share() -> None:
    ids = [f"item-{i}" for i in range(4000)]
    chosen = [i for i in ids if selected_for_second_judgment("camp", 1, i, 0.25)]
    assert 900 <= len(chosen) <= 1100
    other = {i for i in ids if selected_for_second_judgment("camp", 2, i, 0.25)}
    assert set(chosen) != other


def test_selection_point_known_answers() -> None:
    assert selection_point("camp", 1, "item-1") == 0.24112489526531
    assert selection_point("support-triage", 3, "3f1c0b9e") == 0.7135993626357454
    assert selected_for_second_judgment("camp", 1, "item-1", 0.25)
    assert not selected_for_second_judgment("camp", 1, "item-1", 0.24)


def test_record_known_answers() -> None:
    """The second judgment's payload bytes, and a settings record without a share is what it was."""
    wire = {"itemId": "item-1", "comparedWith": "dec-1", "disposition": "prefer", "preferred": "run-a",
            "strength": "slight", "reasonCodes": ["wrong-policy"], "submissionId": "sub-1"}  # fmt: skip
    judgment = parse(SecondJudgment, wire, field="payload")
    record = new_second_judgment_record(judgment, "private", actor="bob")
    assert (record.type, record.subject, record.supersedes) == ("human-review.second-judgment@1", "item-1", None)
    assert canonical_json(record.payload).decode() == (
        '{"comparedWith":"dec-1","confidence":null,"disposition":"prefer","itemId":"item-1","note":null,'
        '"preferred":"run-a","reasonCodes":["wrong-policy"],"replacement":null,"responseTags":[],'
        '"strength":"slight","submissionId":"sub-1"}'
    )
    settings = parse(CampaignSettings, {"campaignId": "camp", "version": 1, "trainingEnabled": True}, field="payload")
    assert (
        canonical_json(new_campaign_record(settings).payload)
        == b'{"campaignId":"camp","trainingEnabled":true,"version":1}'
    )


def test_a_second_judgment_keeps_every_judgment_field_of_the_decision_and_gives_them_back() -> None:
    """Every field (each set to a value not its default) goes from a decision to its second
    judgment and back, except ``useForTraining`` and ``supersedes``, which a judgment has not."""
    wire = {"itemId": "item-1", "disposition": "prefer", "preferred": "run-a", "strength": "strong",
            "replacement": "better.", "confidence": 0.5, "reasonCodes": ["wrong-policy"], "responseTags": ["tone"],
            "note": "n.", "useForTraining": True, "supersedes": "dec-0", "submissionId": "sub-1"}  # fmt: skip
    judged = {k: v for k, v in wire.items() if k not in ("useForTraining", "supersedes")}
    judgment = SecondJudgment.of_decision(parse(ReviewDecision, wire, field="payload"), "dec-1")
    assert judgment.payload_json() == {**judged, "comparedWith": "dec-1"}
    assert judgment.as_decision() == parse(ReviewDecision, judged, field="payload")


def test_selection_known_answer() -> None:
    """The point is SHA-256 over RFC 8785 ["reviewtrail.human-review.second-judgment.v1", id, version,
    item] read as a 64-bit fraction: pinned so every implementation selects the same items."""
    import hashlib

    expected = b'["reviewtrail.human-review.second-judgment.v1","camp",1,"item-1"]'
    value = int.from_bytes(hashlib.sha256(expected).digest()[:8], "big") / 2**64
    assert selection_point("camp", 1, "item-1") == value


# --- agreement arithmetic --------------------------------------------------------------------------

VERDICTS = st.sampled_from(["prefer:A", "prefer:B", "tie", "correct", "underdetermined", "malformed"])
RATINGS = st.lists(st.tuples(VERDICTS, VERDICTS), min_size=1, max_size=40)


def _kappa_by_hand(ratings: list[tuple[str, str]]) -> float | None:
    n = len(ratings)
    po = Fraction(sum(a == b for a, b in ratings), n)
    cats = {a for a, _ in ratings} | {b for _, b in ratings}
    pe = sum(
        (Fraction(sum(a == c for a, _ in ratings), n) * Fraction(sum(b == c for _, b in ratings), n) for c in cats),
        Fraction(0),
    )
    return None if pe == 1 else float((po - pe) / (1 - pe))


@given(RATINGS)
def test_kappa_is_cohens_and_symmetric_and_at_most_one(ratings: list[tuple[str, str]]) -> None:
    kappa = cohen_kappa(ratings)
    assert kappa == _kappa_by_hand(ratings)
    assert kappa == cohen_kappa([(b, a) for a, b in ratings])
    if kappa is not None:
        assert -1.0 <= kappa <= 1.0
        if all(a == b for a, b in ratings):
            assert kappa == 1.0


def test_kappa_known_answers() -> None:
    # 50 items: both A on 20, both B on 15, A/B 5, B/A 10 -> po 0.7, pe 0.5, kappa 0.4.
    table = [("prefer:A", "prefer:A")] * 20 + [("prefer:B", "prefer:B")] * 15
    table += [("prefer:A", "prefer:B")] * 5 + [("prefer:B", "prefer:A")] * 10
    assert cohen_kappa(table) == pytest.approx(0.4)
    assert cohen_kappa([]) is None
    assert cohen_kappa([("tie", "tie")] * 3) is None  # one verdict throughout: chance explains everything


PAIRS = st.lists(
    st.builds(
        JudgmentPair, st.sampled_from(["r1", "r2", "r3"]), st.sampled_from(["r1", "r2", "r3"]), VERDICTS, VERDICTS
    ),
    max_size=30,
)


@given(PAIRS)
def test_per_reviewer_and_per_pair_counts_add_up(pairs: list[JudgmentPair]) -> None:
    doc = judgment_agreement(pairs).to_json()
    assert doc["pairs"] == len(pairs) and doc["agreed"] == sum(p.agreed for p in pairs)
    assert sum(p["pairs"] for p in doc["byReviewerPair"]) == len(pairs)
    assert sum(p["agreed"] for p in doc["byReviewerPair"]) == doc["agreed"]
    for row in doc["byReviewer"]:
        mine = [p for p in pairs if row["reviewer"] in (p.first, p.second)]
        assert row["pairs"] == len(mine) and row["agreed"] == sum(p.agreed for p in mine)
        assert row["rate"] == row["agreed"] / row["pairs"]
    assert doc["rate"] == (doc["agreed"] / len(pairs) if pairs else None)


# --- which second judgments count -------------------------------------------------------------------


def _fact(seq: int, reviewer: str, compared: str = "d1", *, sid: str | None = None, valid: bool = True,
          disposition: str = "tie") -> SecondJudgmentFact:  # fmt: skip
    judgment = parse(
        SecondJudgment,
        {"itemId": "i", "comparedWith": compared, "disposition": disposition, "submissionId": sid or f"s{seq}"},
        field="payload",
    )
    return SecondJudgmentFact(f"r{seq}", seq, reviewer, judgment, valid)


def test_a_second_judgment_counts_once_per_other_reviewer_of_a_decision_of_the_item() -> None:
    decided_by = {"d1": "alice"}
    facts = [
        _fact(1, "alice"),  # the decision's own reviewer
        _fact(2, "bob", "d9"),  # names no decision of the item
        _fact(3, "bob", valid=False),  # fails the decision rules
        _fact(4, "bob"),
        _fact(5, "bob"),  # bob's second
        _fact(6, "carol", sid="s4"),  # a submission id already recorded
        _fact(7, "carol"),
    ]
    assert [f.seq for f in counted_second_judgments(facts, decided_by)] == [4, 7]


def test_an_item_waits_until_a_second_judgment_with_a_verdict() -> None:
    skip = _fact(1, "bob", disposition="skip")
    assert waits_for_second_judgment(True, "tie", [skip])
    assert not waits_for_second_judgment(True, "tie", [skip, _fact(2, "carol")])
    assert not waits_for_second_judgment(False, "tie", [])
    assert not waits_for_second_judgment(True, "skip", [])
    assert not waits_for_second_judgment(True, None, [])


# --- in a store ---------------------------------------------------------------------------------------


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else None
    with new_store(tmp_path, url) as opened:
        yield opened


def _campaign(store: Store, n: int = 4, share: float = 1.0) -> list[ReviewItem]:
    items = campaign_with_items(store, n)
    campaign_settings(store, "camp", 1, training=True, second_judgment_share=share)
    return items


def _prefer(run: str = "A", **more: Any) -> dict[str, Any]:
    return {"disposition": "prefer", "preferred": run, "strength": "slight", **more}


def test_the_share_is_a_setting_recorded_only_when_asked_for(store: Store) -> None:
    campaign_with_items(store, 1)
    view = campaign_settings(store, "camp", 1, training=True)
    assert view.second_judgment_share == 0.0
    assert "secondJudgmentShare" not in store.ledger.get(view.record_id or "").payload_value
    view = campaign_settings(store, "camp", 1, second_judgment_share=0.2)
    assert view.changed and view.training_enabled and view.second_judgment_share == 0.2
    assert store.ledger.get(view.record_id or "").payload_value["secondJudgmentShare"] == 0.2
    assert not campaign_settings(store, "camp", 1, second_judgment_share=0.2).changed
    with pytest.raises(InvalidInputError) as info:
        campaign_settings(store, "camp", 1, second_judgment_share=1.5)
    assert info.value.field == "secondJudgmentShare"


def test_another_reviewers_decision_on_a_selected_item_is_recorded_as_a_second_judgment(store: Store) -> None:
    item, *_ = _campaign(store)
    first = decide(store, item.item_id, _prefer("A", useForTraining=True), reviewer="alice")
    second = decide(store, item.item_id, _prefer("B", useForTraining=True), reviewer="bob")
    assert second.compared_with == first.decision_id and not second.active
    doc = second.to_json()
    assert doc["secondJudgment"] is True and doc["comparedWith"] == first.decision_id
    env = store.ledger.get(second.decision_id)
    assert env.type == SECOND_JUDGMENT and env.actor == "bob" and env.supersedes is None
    assert "useForTraining" not in env.payload_value and "supersedes" not in env.payload_value
    found = history(store, item.item_id)
    assert [d.decision_id for d in found.decisions] == [first.decision_id]  # never in the decision chain
    again = decide(store, item.item_id, _prefer("B"), reviewer="bob", submission_id=second.submission_id)
    assert again.resubmitted and again.decision_id == second.decision_id


def test_export_is_byte_identical_with_and_without_second_judgments(store: Store, tmp_path: Path) -> None:
    items = _campaign(store)
    for item in items:
        decide(store, item.item_id, _prefer("A", useForTraining=True), reviewer="alice")
    export_campaign(store, "camp", 1, tmp_path / "before")
    for item in items:
        decide(store, item.item_id, _prefer("B"), reviewer="bob")
    export_campaign(store, "camp", 1, tmp_path / "after")
    files = sorted(p.name for p in (tmp_path / "before").iterdir() if p.suffix == ".jsonl")
    assert files and files == sorted(p.name for p in (tmp_path / "after").iterdir() if p.suffix == ".jsonl")
    for name in files:
        assert (tmp_path / "before" / name).read_bytes() == (tmp_path / "after" / name).read_bytes()
    assert len((tmp_path / "after" / files[0]).read_text().splitlines()) == len(items)


def test_an_item_not_selected_keeps_todays_conflict(store: Store) -> None:
    item, *_ = _campaign(store, share=0.0)
    decide(store, item.item_id, _prefer("A"), reviewer="alice")
    with pytest.raises(ConflictError) as info:
        decide(store, item.item_id, _prefer("B"), reviewer="bob")
    assert info.value.field == "supersedes"
    with pytest.raises(InvalidInputError) as asked:
        decide(store, item.item_id, _prefer("B"), reviewer="bob", second=True)
    assert asked.value.field == "second" and "not selected" in str(asked.value)


def test_the_second_judge_is_another_reviewer(store: Store) -> None:
    item, *_ = _campaign(store)
    decide(store, item.item_id, _prefer("A"), reviewer="alice")
    with pytest.raises(InvalidInputError) as info:
        decide(store, item.item_id, _prefer("B"), reviewer="alice", second=True)
    assert info.value.field == "reviewer"
    with pytest.raises(ConflictError) as today:
        decide(store, item.item_id, _prefer("B"), reviewer="alice")
    assert today.value.field == "supersedes"


def test_one_second_judgment_per_item_then_todays_conflict(store: Store) -> None:
    item, *_ = _campaign(store)
    decide(store, item.item_id, _prefer("A"), reviewer="alice")
    decide(store, item.item_id, {"disposition": "tie"}, reviewer="bob")
    for who in ("bob", "carol"):
        with pytest.raises(ConflictError):
            decide(store, item.item_id, {"disposition": "tie"}, reviewer=who)
        with pytest.raises(ConflictError) as info:
            decide(store, item.item_id, {"disposition": "tie"}, reviewer=who, second=True)
        assert info.value.field == "second"


def test_a_second_judgment_is_checked_by_the_decision_rules(store: Store) -> None:
    item, *_ = _campaign(store)
    decide(store, item.item_id, _prefer("A"), reviewer="alice")
    with pytest.raises(InvalidInputError) as info:
        decide(store, item.item_id, {"disposition": "prefer", "preferred": "A"}, reviewer="bob")
    assert info.value.field == "strength"
    with pytest.raises(InvalidInputError) as training:
        decide(store, item.item_id, _prefer("A", useForTraining=True), reviewer="bob", second=True)
    assert training.value.field == "useForTraining"
    assert not store.ledger.records_about([item.item_id], type=SECOND_JUDGMENT)


def test_due_and_pending(store: Store) -> None:
    items = _campaign(store, 5)
    ids = [i.item_id for i in items]
    assert second_judgments_due(store, "camp", 1, "bob") == []
    for item in items[:3]:
        decide(store, item.item_id, _prefer("A"), reviewer="alice")
    decide(store, items[3].item_id, {"disposition": "skip"}, reviewer="alice")  # a skip is no judgment
    assert second_judgments_due(store, "camp", 1, "bob") == ids[:3]
    assert second_judgments_due(store, "camp", 1, "bob", limit=2) == ids[:2]
    assert second_judgments_due(store, "camp", 1, "alice") == []
    assert pending_second_judgments(store.ledger, ids) == frozenset(ids[:3])
    passed = decide(store, ids[0], {"disposition": "skip"}, reviewer="bob")  # bob passes: still waiting for others
    assert passed.compared_with is not None  # the item is open: nothing revealed, each position says when
    assert [(p.position, p.run_id, p.agent_id, p.withheld) for p in passed.provenance] == [
        (position, None, None, "revealed when this item is decided") for position in ("A", "B")
    ]
    assert pending_second_judgment(store.ledger, ids[0])
    assert second_judgments_due(store, "camp", 1, "bob") == ids[1:3]
    assert second_judgments_due(store, "camp", 1, "carol") == ids[:3]
    decide(store, ids[0], {"disposition": "tie"}, reviewer="carol")
    assert not pending_second_judgment(store.ledger, ids[0])
    assert second_judgments_due(store, "camp", 1, "carol") == ids[1:3]
    with pytest.raises(InvalidInputError) as info:
        second_judgments_due(store, "camp", 1, "bob", limit=0)
    assert info.value.field == "limit"


def test_coverage_gives_agreement_per_reviewer_and_pair(store: Store) -> None:
    items = _campaign(store, 4)
    for item in items:
        decide(store, item.item_id, _prefer("A"), reviewer="alice")
    verdicts = [_prefer("A"), _prefer("A"), _prefer("B"), {"disposition": "tie"}]
    for item, verdict in zip(items, verdicts, strict=True):
        decide(store, item.item_id, verdict, reviewer="bob")
    doc = campaign_coverage(store, "camp", 1).to_json()["secondJudgments"]
    assert (doc["share"], doc["selected"], doc["waiting"]) == (1.0, 4, 0)
    assert (doc["pairs"], doc["agreed"], doc["rate"]) == (4, 2, 0.5)
    assert doc["kappa"] == 0.0  # alice always prefers A: pe = 0.5 = po
    [pair] = doc["byReviewerPair"]
    assert pair["reviewers"] == ["alice", "bob"] and (pair["pairs"], pair["agreed"]) == (4, 2)
    assert doc["byReviewer"] == [
        {"reviewer": "alice", "pairs": 4, "agreed": 2, "rate": 0.5},
        {"reviewer": "bob", "pairs": 4, "agreed": 2, "rate": 0.5},
    ]
    assert json.loads(json.dumps(doc)) == doc


REVIEWERS = st.sampled_from(["alice", "bob", "carol"])
SECONDS = st.lists(
    st.tuples(REVIEWERS, st.sampled_from(["d1", "d2"]), st.booleans(), st.sampled_from(["tie", "skip"])), max_size=5
)


@given(REVIEWERS, REVIEWERS, st.booleans(), st.sampled_from(["tie", "skip", "prefer"]), SECONDS)
def test_a_reviewer_is_due_only_what_the_rule_says(
    who: str, first: str, selected: bool, disposition: str, recorded: list[tuple[str, str, bool, str]]
) -> None:
    seconds = [_fact(i + 1, r, c, valid=v, disposition=d) for i, (r, c, v, d) in enumerate(recorded)]
    decided_by = {"d1": first, "d2": "dave"}
    due = due_second_judgment_of(who, selected=selected, active=("d1", first, disposition), seconds=seconds,
                                 decided_by=decided_by)  # fmt: skip
    counted = counted_second_judgments(seconds, decided_by)
    expected = (
        selected
        and disposition != "skip"
        and who != first
        and not any(f.reviewer == who for f in seconds)
        and not any(f.judgment.disposition != "skip" for f in counted)
    )
    assert due == ("d1" if expected else None)


def test_a_first_judgment_waiting_for_its_second_reveals_nothing_until_the_second(store: Store) -> None:
    [item] = _campaign(store, 1)
    first = decide(store, item.item_id, _prefer("A"), reviewer="alice")
    assert [(p.run_id, p.agent_id) for p in first.provenance] == [(None, None), (None, None)]
    assert all(p.withheld for p in first.provenance)
    waiting = history(store, item.item_id)
    assert all(p.run_id is None for p in waiting.provenance)  # nor on the history
    # Nor what the first judgment said: the second reviewer judges without knowing it.
    assert waiting.awaiting_second_judgment and waiting.to_json()["awaitingSecondJudgment"] is True
    assert [(d.disposition, d.preferred, d.strength) for d in waiting.decisions] == [(WITHHELD, None, None)]
    assert waiting.quality is None and waiting.external is None
    second = decide(store, item.item_id, {"disposition": "tie"}, reviewer="bob")
    assert second.compared_with == first.decision_id
    assert [p.run_id for p in second.provenance] == list(item.display_order)  # the second judgment closes it
    closed = history(store, item.item_id)
    assert [p.run_id for p in closed.provenance] == list(item.display_order)
    assert not closed.awaiting_second_judgment
    assert [(d.disposition, d.preferred, d.strength) for d in closed.decisions] == [("prefer", "A", "slight")]


def test_the_page_draws_an_item_due_a_second_judgment_for_another_reviewer_only(store: Store) -> None:
    [item] = _campaign(store, 1)
    with Leases(store) as leases:
        drawn = draw_card(store, "camp", 1, "alice", leases)
        assert drawn is not None and drawn.item_id == item.item_id  # never judged: anyone's first
        decide(store, item.item_id, _prefer("A"), reviewer="alice")
        leases.release(item.item_id, holder=reviewer_holder("alice"))
        assert draw_card(store, "camp", 1, "alice", leases) is None  # not her own decision again
        second = draw_card(store, "camp", 1, "bob", leases)
        assert second is not None and second.item_id == item.item_id and not second.decided
        shown = json.dumps(second.to_json())
        assert not any(run_id in shown for run_id in item.display_order)  # as blinded as any card
        decide(store, item.item_id, {"disposition": "tie"}, reviewer="bob")
        leases.release(item.item_id, holder=reviewer_holder("bob"))
        assert draw_card(store, "camp", 1, "bob", leases) is None
        assert draw_card(store, "camp", 1, "carol", leases) is None  # judged twice: no longer due


@pytest.mark.parametrize("first", [{"disposition": "tie"}, {"disposition": "underdetermined"}, _prefer("A")])
def test_coverage_counts_say_nothing_of_a_judgment_waiting_for_its_second(store: Store, first: dict[str, Any]) -> None:
    [item] = _campaign(store, 1)

    def decisions() -> dict[str, Any]:
        return campaign_coverage(store, "camp", 1).to_json()["overall"]["decisions"]

    before = decisions()
    decide(store, item.item_id, first, reviewer="alice")
    waiting = decisions()
    # Only that a judgment waits: not by disposition, not what it would be eligible for.
    assert waiting["byDisposition"] == before["byDisposition"]
    assert (waiting["qualityEligible"], waiting["exportable"]) == (before["qualityEligible"], before["exportable"])
    assert waiting["awaitingSecondJudgment"] == 1 and waiting["open"] == before["open"] == 1
    decide(store, item.item_id, {"disposition": "tie"}, reviewer="bob")
    judged = decisions()
    assert judged["awaitingSecondJudgment"] == 0 and judged["open"] == 0
    assert judged["byDisposition"][first["disposition"]] == before["byDisposition"][first["disposition"]] + 1


def test_a_second_judgment_is_never_more_open_than_the_chain_it_judges(store: Store) -> None:
    items = campaign_with_items(store, 1, privacy="private")
    campaign_settings(store, "camp", 1, second_judgment_share=1.0)
    [item] = items
    decide(store, item.item_id, _prefer("A"), reviewer="alice")
    with pytest.raises(InvalidInputError) as info:  # asking for a more open record is refused
        decide(store, item.item_id, {"disposition": "tie"}, reviewer="carol", privacy="public-source")
    assert info.value.field == "privacy"
    second = decide(store, item.item_id, {"disposition": "tie"}, reviewer="bob")
    assert second.compared_with is not None and second.privacy == "private"
    assert store.ledger.get(second.decision_id).privacy == "private"  # the prompt's privacy joined in
