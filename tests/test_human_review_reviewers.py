"""Reviewers are people: every decision records who made it (never a shared default), history and
coverage tell reviewers apart and count how often they agreed, no export holds a reviewer id, and
the key that keeps one chain of decisions per item rebuilds a store recorded before it."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import run_cli, run_wide, use_store
from reviewtrail._struct import parse
from reviewtrail.audit import AuditOptions, audit
from reviewtrail.errors import ConfigError, ConflictError, InvalidInputError
from reviewtrail.human_review.campaigns import campaign_settings
from reviewtrail.human_review.export import export_campaign
from reviewtrail.human_review.quality import campaign_coverage
from reviewtrail.human_review.quality._agreement import ReviewerDecision, agreement, reviewer_tallies, verdict
from reviewtrail.human_review.records import ReviewItem, new_decision_record
from reviewtrail.human_review.records._record_names import ACTOR
from reviewtrail.human_review.records._records import ReviewDecision
from reviewtrail.human_review.rules import REVIEWER_ID_HELP, check_reviewer_id, reviewer_label
from reviewtrail.human_review.session import decide, history
from reviewtrail.store import Store
from support.human_review import campaign_with_items, new_store

_ID_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
valid_ids = st.builds(
    lambda first, middle, last: first + middle + last,
    st.sampled_from(_ID_CHARS),
    st.text(_ID_CHARS + "._@+:-", max_size=60),
    st.sampled_from(_ID_CHARS),
)


# --- the rule ------------------------------------------------------------------------------------


@given(valid_ids)
def test_a_pseudonym_of_letters_digits_and_name_punctuation_is_a_reviewer_id(value: str) -> None:
    assert check_reviewer_id(value) == value
    assert reviewer_label(value) == value


@given(
    st.one_of(
        valid_ids.map(lambda v: v + " x"),  # a space
        valid_ids.map(lambda v: "-" + v),  # starts with punctuation
        valid_ids.map(lambda v: v + "."),  # ends with punctuation
        valid_ids.map(lambda v: v + "\u00e9"),  # not ASCII
        st.text(_ID_CHARS, min_size=129, max_size=140),  # too long
    )
)
def test_anything_else_is_refused_naming_reviewer(value: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        check_reviewer_id(value)
    assert info.value.field == "reviewer" and info.value.exit_code == 2


@pytest.mark.parametrize("missing", [None, "", "   "])
def test_a_missing_reviewer_id_is_exit_5_saying_how_to_set_one(missing: str | None) -> None:
    with pytest.raises(ConfigError) as info:
        check_reviewer_id(missing)
    assert info.value.exit_code == 5 and info.value.field == "reviewer"
    assert REVIEWER_ID_HELP in str(info.value)


def test_the_packages_own_actor_is_not_a_reviewer_id_and_shows_as_not_recorded() -> None:
    with pytest.raises(InvalidInputError):
        check_reviewer_id(ACTOR)
    assert reviewer_label(ACTOR) == reviewer_label(None) == "(not recorded)"


# --- the library ---------------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = new_store(tmp_path)
    yield s  # type: ignore[misc]
    s.close()


def _head(store: Store) -> int:
    head = store.ledger.head()
    return head.seq if head is not None else 0


def test_decide_records_the_reviewer_as_the_actor_and_refuses_without_one(store: Store) -> None:
    [item] = campaign_with_items(store, 1)
    before = _head(store)
    with pytest.raises(ConfigError):
        decide(store, item.item_id, {"disposition": "tie"}, reviewer=None)
    assert _head(store) == before
    result = decide(store, item.item_id, {"disposition": "tie"}, reviewer="ann")
    assert store.ledger.get(result.decision_id).actor == "ann"
    assert result.reviewer == "ann" and result.to_json()["reviewer"] == "ann"


def test_a_second_decision_without_supersedes_is_refused_naming_the_active_one_and_its_reviewer(
    store: Store,
) -> None:
    [item] = campaign_with_items(store, 1)
    first = decide(store, item.item_id, {"disposition": "tie"}, reviewer="ann")
    before = _head(store)
    for payload in ({"disposition": "skip"}, {"disposition": "skip", "supersedes": first.decision_id + "x"}):
        with pytest.raises((ConflictError, InvalidInputError)):
            decide(store, item.item_id, payload, reviewer="bob")
    with pytest.raises(ConflictError) as info:
        decide(store, item.item_id, {"disposition": "skip"}, reviewer="bob")
    assert info.value.exit_code == 6 and info.value.field == "supersedes"
    assert first.decision_id in str(info.value) and "by reviewer ann" in str(info.value)
    assert _head(store) == before
    second = decide(
        store, item.item_id, {"disposition": "underdetermined", "supersedes": first.decision_id}, reviewer="bob"
    )
    # Superseding the decision that is no longer active is refused too, naming the active one.
    with pytest.raises(ConflictError) as info:
        decide(store, item.item_id, {"disposition": "tie", "supersedes": first.decision_id}, reviewer="cy")
    assert second.decision_id in str(info.value) and "by reviewer bob" in str(info.value)
    found = history(store, item.item_id)
    assert [(d.reviewer, d.active) for d in found.decisions] == [("ann", False), ("bob", True)]


def _decide_as(args: tuple[str, str, str, str]) -> tuple[str, str]:
    root, url, item_id, reviewer = args
    from reviewtrail.app import open_store
    from reviewtrail.config import Settings

    with open_store(Settings(store=Path(root), database_url=url)) as store:
        payload = {"disposition": "prefer", "preferred": "A", "strength": "slight"}
        return reviewer, decide(store, item_id, payload, reviewer=reviewer).decision_id


@pytest.mark.slow
def test_two_reviewers_deciding_in_parallel_are_told_apart_by_history_and_coverage(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        items = campaign_with_items(store, 8)
    url = f"sqlite:///{tmp_path / 'ledger.sqlite'}"
    jobs = [(str(tmp_path / "store"), url, item.item_id, "ann" if n % 2 else "bob") for n, item in enumerate(items)]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        made = pool.map(_decide_as, jobs)
    with new_store(tmp_path) as store:
        for (reviewer, decision_id), item in zip(made, items, strict=True):
            [entry] = history(store, item.item_id).decisions
            assert (entry.reviewer, entry.decision_id) == (reviewer, decision_id)
        # bob re-judges two of ann's items: agrees on one, disagrees on the other.
        ann_items = [(item, d) for (who, d), item in zip(made, items, strict=True) if who == "ann"]
        (same, first), (other, second) = ann_items[:2]
        decide(store, same.item_id, {"disposition": "prefer", "preferred": "A", "strength": "strong",
                                     "supersedes": first}, reviewer="bob")  # fmt: skip
        decide(store, other.item_id, {"disposition": "tie", "supersedes": second}, reviewer="bob")
        coverage = campaign_coverage(store, "camp", 1).to_json()
    assert {r["reviewer"]: (r["recorded"], r["active"]) for r in coverage["reviewers"]} == {
        "ann": (4, 2),
        "bob": (6, 6),
    }
    agreed = coverage["quality"]["agreement"]
    assert (agreed["items"], agreed["pairs"], agreed["agreed"], agreed["rate"]) == (2, 2, 1, 0.5)
    assert agreed["byReviewerPair"] == [{"reviewers": ["ann", "bob"], "pairs": 2, "agreed": 1}]
    bias = coverage["quality"]["positionBias"]
    assert {r["reviewer"] for r in bias["reviewers"]} == {"ann", "bob"}


def test_no_export_file_holds_a_reviewer_id(store: Store, tmp_path: Path) -> None:
    items = campaign_with_items(store, 3)
    campaign_settings(store, "camp", 1, training=True)
    for n, item in enumerate(items):
        payload = {"disposition": "prefer", "preferred": "AB"[n % 2], "strength": "strong", "useForTraining": True}
        decide(store, item.item_id, payload, reviewer=f"REVIEWER-SECRET-{n}")
    report = export_campaign(store, "camp", 1, tmp_path / "out")
    assert report.exported == 3, report.to_json()
    written = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert len(written) >= 4  # three example files and the manifest
    for path in written:
        assert b"REVIEWER-SECRET" not in path.read_bytes(), path.name


# --- agreement, pure --------------------------------------------------------------------------------


def _d(
    reviewer: str | None, seq: int, v: str | None, *, counted: bool = True, active: bool = False
) -> ReviewerDecision:
    return ReviewerDecision(reviewer, seq, counted, active, v)


def test_agreement_compares_each_named_reviewers_latest_verdict_once_per_pair() -> None:
    items = [
        # ann changed her mind (her latest counts), bob agrees with it, cy disagrees: 3 pairs, 1 agreed
        [_d("ann", 1, "prefer:r1"), _d("ann", 2, "tie"), _d("bob", 3, "tie"), _d("cy", 4, "prefer:r2", active=True)],
        # a skip has no verdict, an unnamed reviewer and an uncounted decision are left out
        [_d("ann", 5, "tie"), _d("bob", 6, None), _d(None, 7, "tie"), _d("cy", 8, "tie", counted=False)],
        [_d("ann", 9, "malformed"), _d("bob", 10, "malformed", active=True)],
    ]
    found = agreement(items)
    assert (found.items, found.pairs, found.agreed) == (2, 4, 2)
    assert found.by_pair == {("ann", "bob"): [2, 2], ("ann", "cy"): [1, 0], ("bob", "cy"): [1, 0]}
    tallies = reviewer_tallies(items)
    assert {k: (t.recorded, t.active) for k, t in tallies.items()} == {
        "": (1, 0),
        "ann": (4, 0),
        "bob": (3, 1),
        "cy": (2, 1),
    }
    assert agreement([]).rate is None


def test_a_verdict_compares_the_preferred_run_not_the_strength() -> None:
    assert verdict("prefer", "r1") == verdict("prefer", "r1") != verdict("prefer", "r2")
    assert verdict("skip", None) is None
    assert {verdict(d, None) for d in ("tie", "correct", "underdetermined", "malformed")} == {
        "tie",
        "correct",
        "underdetermined",
        "malformed",
    }


# --- a store recorded before the rule --------------------------------------------------------------


def _edit(path: Path, sql: str, *params: Any) -> None:
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute(sql, params)
    finally:
        conn.close()


def test_two_first_decisions_recorded_before_the_rule_rebuild_keeping_the_first(tmp_path: Path) -> None:
    """A chain that holds two decisions superseding nothing on one item (recorded before the
    key existed; made here by deleting the first's key row) rebuilds keeping the first, and
    verifies; with the key row gone, the second is refused as a silent replacement would be."""
    db = tmp_path / "ledger.sqlite"
    with new_store(tmp_path) as store:
        [item] = campaign_with_items(store, 1)
        first = decide(store, item.item_id, {"disposition": "tie"}, reviewer="ann")
        _edit(db, "DELETE FROM rt_p_hr_decision_links WHERE record_id = ?", first.decision_id)
        assert any("hr_decision_links" in p for p in audit(store, AuditOptions()).problems)
        payload = parse(
            ReviewDecision, {"itemId": item.item_id, "disposition": "skip", "submissionId": "old"}, field="payload"
        )
        [second] = store.append([new_decision_record(payload, "public-source", actor=ACTOR)])
        problems = audit(store, AuditOptions()).problems
        assert any("hr_decision_links" in p and "edited" in p for p in problems), problems
        store.ledger.rebuild_projections()
        assert audit(store, AuditOptions()).problems == []
        [row] = store.ledger.rows("hr_decision_links", item_id=item.item_id)
        assert row["record_id"] == first.decision_id
        # The later one is the item's active decision (the seed's rule); history names no reviewer for it.
        found = history(store, item.item_id)
        assert found.active is not None and found.active.decision_id == second.id
        assert found.active.reviewer == "(not recorded)"
        # A new decision must supersede it.
        with pytest.raises(ConflictError) as info:
            decide(store, item.item_id, {"disposition": "tie", "supersedes": first.decision_id}, reviewer="bob")
        assert second.id in str(info.value)
        third = decide(store, item.item_id, {"disposition": "tie", "supersedes": second.id}, reviewer="bob")
        assert history(store, item.item_id).active.decision_id == third.decision_id  # type: ignore[union-attr]


def test_a_deleted_key_row_is_reported_by_verify(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        [item] = campaign_with_items(store, 1)
        decide(store, item.item_id, {"disposition": "tie"}, reviewer="ann")
        _edit(tmp_path / "ledger.sqlite", "DELETE FROM rt_p_hr_decision_links")
        report = audit(store, AuditOptions())
        assert any("hr_decision_links" in p and "missing" in p and item.item_id in p for p in report.problems)


# --- the command line ------------------------------------------------------------------------------


def _cli_item(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ReviewItem:
    use_store(tmp_path, monkeypatch)
    code, _, err = run_cli("init")
    assert code == 0, err
    from reviewtrail.app import open_store

    with open_store() as store:
        [item] = campaign_with_items(store, 1)
    return item


def test_review_decide_without_a_reviewer_id_is_exit_5_with_the_fix_and_records_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    item = _cli_item(tmp_path, monkeypatch)
    monkeypatch.delenv("REVIEWTRAIL_REVIEWER_ID")
    code, out, err = run_wide("review", "decide", item.item_id, "--tie")
    assert code == 5, (out, err)
    assert "--reviewer" in err and "REVIEWTRAIL_REVIEWER_ID" in err and "config.toml" in err
    code, out, err = run_wide("review", "decide", item.item_id, "--tie", "--reviewer", "")
    assert code == 5
    code, out, err = run_wide("review", "history", item.item_id, "--json")
    assert code == 0 and json.loads(out)["decisions"] == []
    code, out, err = run_wide("review", "session", "camp", input="q\n")
    assert code == 5 and "REVIEWTRAIL_REVIEWER_ID" in err


def test_the_reviewer_comes_from_the_option_then_the_environment_then_the_users_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    item = _cli_item(tmp_path, monkeypatch)
    monkeypatch.delenv("REVIEWTRAIL_REVIEWER_ID")
    user = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user))
    (user / "reviewtrail").mkdir(parents=True)
    (user / "reviewtrail" / "config.toml").write_text('reviewer_id = "from-file"\n')
    code, out, err = run_wide("review", "decide", item.item_id, "--tie", "--json")
    assert code == 0, err
    first = json.loads(out)
    assert first["reviewer"] == "from-file"
    monkeypatch.setenv("REVIEWTRAIL_REVIEWER_ID", "from-env")
    code, out, err = run_wide(
        "review", "decide", item.item_id, "--underdetermined", "--supersedes", first["decisionId"], "--json"
    )
    assert code == 0, err
    second = json.loads(out)
    assert second["reviewer"] == "from-env"
    code, out, err = run_wide(
        "review", "decide", item.item_id, "--tie", "--supersedes", second["decisionId"], "--reviewer", "from-option"
    )
    assert code == 0, err
    assert "by from-option" in out
    code, out, err = run_wide("review", "history", item.item_id)
    assert code == 0
    for who in ("from-file", "from-env", "from-option"):
        assert who in out
    # A second decision that names nothing is exit 6, naming the active one and its reviewer.
    code, out, err = run_wide("review", "decide", item.item_id, "--tie")
    assert code == 6 and "by reviewer from-option" in err and "--supersedes" in err


def test_a_projects_shared_file_cannot_say_who_decides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    item = _cli_item(tmp_path, monkeypatch)
    (tmp_path / "reviewtrail.toml").write_text('reviewer_id = "everyone"\n')
    code, _, err = run_wide("review", "decide", item.item_id, "--tie")
    assert code == 5 and "reviewer_id" in err and "user configuration" in err


def test_a_users_file_with_an_unknown_key_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    item = _cli_item(tmp_path, monkeypatch)
    monkeypatch.delenv("REVIEWTRAIL_REVIEWER_ID")
    user = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user))
    (user / "reviewtrail").mkdir(parents=True)
    (user / "reviewtrail" / "config.toml").write_text('reviewer = "typo"\n')
    code, _, err = run_wide("review", "decide", item.item_id, "--tie")
    assert code == 5 and "unknown key(s) reviewer" in err and "config.toml" in err


def test_from_a_checkpoint_a_key_claimed_before_it_keeps_its_first_row() -> None:
    """verify --since: a record after the checkpoint giving a key a record before it claimed (a
    chain recorded before the key) is not an edit in a table whose first row stays; in a table
    whose later row replaces the earlier, the same stored row is reported as edited."""
    from reviewtrail.ledger import ProjectionTable
    from reviewtrail.verify import diff_table

    columns = (("item_id", "text"), ("follows", "text"), ("record_id", "text"))
    before = ("item-1", "", "first", 3)  # claimed at seq 3, before the checkpoint at seq 5
    after = ("item-1", "", "second", 7)  # given again at seq 7

    def problems(on_conflict: Any) -> list[str]:
        spec = ProjectionTable("links", columns, key=("item_id", "follows"), on_conflict=on_conflict)
        found = diff_table(spec, iter([]), iter([after]), after_seq=5, lookup=lambda key: before)
        return found.problems

    assert problems("first") == []
    assert any("edited" in p for p in problems("update"))
    # A stored row that names a record after the checkpoint is still compared.
    spec = ProjectionTable("links", columns, key=("item_id", "follows"), on_conflict="first")
    forged = ("item-1", "", "forged", 6)
    assert diff_table(spec, iter([]), iter([after]), after_seq=5, lookup=lambda key: forged).problems


def test_decide_and_history_name_the_prompt_by_its_first_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_store(tmp_path, monkeypatch)
    assert run_cli("init")[0] == 0
    from reviewtrail.app import open_store

    with open_store() as store:
        [item] = campaign_with_items(store, 1, text="Refund after forty days without a receipt, the customer asks")
    code, out, err = run_wide("review", "history", item.item_id)
    assert code == 0, err
    assert "prompt: Refund after forty days without a…" in out
    code, out, err = run_wide("review", "decide", item.item_id, "--tie")
    assert code == 0, err
    assert f"on item {item.item_id} (Refund after forty days without a…)" in out
    code, out, err = run_wide("review", "history", item.item_id, "--json")
    assert json.loads(out)["promptLabel"] == "Refund after forty days without a…"
