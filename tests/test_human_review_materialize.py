"""Materializing review items from a campaign's candidate runs: pairs only between distinct declared
agents of one trigger, exclusions reported, deterministic item ids, idempotence (also between two
processes at once), retries, and the CLI (docs/human-review.md, "Materialize")."""

from __future__ import annotations

import itertools
import json
import multiprocessing
from collections.abc import Iterable
from pathlib import Path

import pytest

from conftest import init_cli_store, open_cli_store, run_cli
from reviewtrail._struct import parse
from reviewtrail.app import open_store
from reviewtrail.config import Settings
from reviewtrail.errors import NotFoundError
from reviewtrail.human_review.campaigns import materialize
from reviewtrail.human_review.reads import prompt_ref, resolve_item
from reviewtrail.human_review.records import ITEM, ReviewItem, queue_key
from reviewtrail.human_review.rules import item_id
from reviewtrail.ledger import Envelope, NewRecord
from reviewtrail.store import Store
from support.human_review import add_item, add_prompt, add_run, new_store


def items_of(store: Store) -> list[ReviewItem]:
    return [parse(ReviewItem, e.payload_value, field="payload") for e in store.ledger.read() if e.type == ITEM]


def test_three_declared_agents_give_three_items_over_their_unordered_pairs(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        prompt = add_prompt(store, agents=("agent-a", "agent-b", "agent-c"))
        runs = {a: add_run(store, prompt, a) for a in ("agent-a", "agent-b", "agent-c")}
        report = materialize(store, "camp", 1)
        items = items_of(store)
        assert report.created == 3 and len(items) == 3
        pairs = {frozenset(i.run_ids()) for i in items}
        wanted = [("agent-a", "agent-b"), ("agent-a", "agent-c"), ("agent-b", "agent-c")]
        assert pairs == {frozenset((runs[x], runs[y])) for x, y in wanted}
        ref, _ = prompt_ref(store.ledger, prompt.id)
        for item in items:
            assert item.prompt_event_id == prompt.id
            assert item.criterion == ref.prompt.criterion.identity()
            assert item.item_id == item_id(prompt.id, "policy-faithful", 1, *item.run_ids())
            assert resolve_item(store.ledger, item.item_id).valid
        [done] = report.prompts
        assert sorted(done.created) == sorted(i.item_id for i in items)
        assert done.excluded == {} and done.agents_without_run == [] and done.no_item_reason is None


def test_items_are_recorded_in_queue_key_order_not_in_the_declared_pair_order(tmp_path: Path) -> None:
    agents = tuple(f"agent-{n}" for n in range(5))
    with new_store(tmp_path) as store:
        prompts = [add_prompt(store, agents=agents, text=f"Prompt {n}") for n in range(2)]
        runs = {(p.id, a): add_run(store, p, a) for p in prompts for a in agents}
        report = materialize(store, "camp", 1)
        recorded = [i.item_id for i in items_of(store)]  # in seq order
        declared = [  # per prompt, in the agents' declared pair order
            item_id(p.id, "policy-faithful", 1, runs[(p.id, a)], runs[(p.id, b)])
            for p in prompts
            for a, b in itertools.combinations(agents, 2)
        ]
        assert sorted(recorded) == sorted(declared) and recorded != declared
        assert recorded == sorted(declared, key=queue_key)  # nothing of who is paired with whom
        for done, prompt in zip(report.prompts, prompts, strict=True):  # the report keeps pair order
            assert done.prompt_event_id == prompt.id
            assert done.created == [d for d in declared if d in set(done.created)] and len(done.created) == 10


def test_a_failed_run_is_excluded_and_never_paired(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        prompt = add_prompt(store, agents=("agent-a", "agent-b", "agent-c"))
        a, b = add_run(store, prompt, "agent-a"), add_run(store, prompt, "agent-b")
        failed = add_run(store, prompt, "agent-c", error="the provider timed out")
        report = materialize(store, "camp", 1)
        [item] = items_of(store)
        assert set(item.run_ids()) == {a, b}
        [done] = report.prompts
        assert done.excluded[failed][0].code == "not-completed"
        assert "timed out" in done.excluded[failed][0].detail
        assert done.agents_without_run == ["agent-c"]


def test_an_undeclared_agent_is_excluded_with_its_reason(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        prompt = add_prompt(store)
        a, b = add_run(store, prompt, "agent-a"), add_run(store, prompt, "agent-b")
        stranger = add_run(store, prompt, "agent-x")
        report = materialize(store, "camp", 1)
        [item] = items_of(store)
        assert set(item.run_ids()) == {a, b}
        assert [e.code for e in report.prompts[0].excluded[stranger]] == ["undeclared-agent"]
        assert report.to_json()["prompts"][0]["excludedRuns"][stranger][0]["code"] == "undeclared-agent"


def test_two_runs_of_one_agent_are_never_paired_with_each_other(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        prompt = add_prompt(store)
        first, second = add_run(store, prompt, "agent-a"), add_run(store, prompt, "agent-a")
        report = materialize(store, "camp", 1)
        assert items_of(store) == []
        [done] = report.prompts
        assert [e.code for e in done.excluded[second]] == ["duplicate-agent"]
        assert first not in done.excluded
        assert done.agents_without_run == ["agent-b"]
        assert done.no_item_reason is not None and "two distinct declared agents" in done.no_item_reason


def test_a_prompt_without_runs_yields_no_item_and_says_why(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        prompt = add_prompt(store)
        report = materialize(store, "camp", 1)
        assert report.created == 0 and items_of(store) == []
        out = report.to_json()["prompts"][0]
        assert out["promptEventId"] == prompt.id
        assert out["agentsWithoutPairableRun"] == ["agent-a", "agent-b"]
        assert out["noItemReason"].startswith("0 pairable run(s) among the 2 declared agents")


def test_runs_are_paired_only_within_their_own_prompt(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        p1, p2 = add_prompt(store), add_prompt(store)
        a1, b2 = add_run(store, p1, "agent-a"), add_run(store, p2, "agent-b")
        report = materialize(store, "camp", 1)
        assert items_of(store) == [] and report.created == 0
        assert [p.agents_without_run for p in report.prompts] == [["agent-b"], ["agent-a"]]
        assert a1 and b2


def test_materializing_twice_appends_nothing_and_reports_the_items_present(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        prompt = add_prompt(store, agents=("agent-a", "agent-b", "agent-c"))
        for a in ("agent-a", "agent-b", "agent-c"):
            add_run(store, prompt, a)
        first = materialize(store, "camp", 1)
        head = store.ledger.head()
        again = materialize(store, "camp", 1)
        assert store.ledger.head() == head
        assert again.created == 0 and again.already_present == 3
        assert sorted(again.prompts[0].already_present) == sorted(first.prompts[0].created)


def test_only_the_named_campaign_version_is_materialized(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        for version in (1, 2):
            prompt = add_prompt(store, version=version)
            add_run(store, prompt, "agent-a")
            add_run(store, prompt, "agent-b")
        report = materialize(store, "camp", 2)
        [item] = items_of(store)
        assert report.created == 1 and item.campaign.version == 2
        with pytest.raises(NotFoundError) as err:
            materialize(store, "camp", 3)
        assert err.value.field == "campaign"


def test_a_retry_run_gets_a_new_item_and_the_old_item_stays_valid(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        prompt = add_prompt(store)
        a, b = add_run(store, prompt, "agent-a"), add_run(store, prompt, "agent-b")
        [old] = materialize(store, "camp", 1).prompts[0].created
        retry = add_run(store, prompt, "agent-b", retry_of=b, response="A better answer.")
        report = materialize(store, "camp", 1)
        [new] = report.prompts[0].created
        assert new != old
        assert set(resolve_item(store.ledger, new).item.run_ids()) == {a, retry}
        assert [e.code for e in report.prompts[0].excluded[b]] == ["replaced"]
        assert resolve_item(store.ledger, old).valid


def test_an_item_takes_the_strictest_privacy_of_its_prompt_runs_and_outputs(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        prompt = add_prompt(store)
        add_run(store, prompt, "agent-a")
        add_run(store, prompt, "agent-b", privacy="sensitive")
        [made] = materialize(store, "camp", 1).prompts[0].created
        resolved = resolve_item(store.ledger, made)
        assert resolved.item_privacy == "sensitive" and resolved.valid


def test_an_item_recorded_meanwhile_by_another_materialize_is_reported_present(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with new_store(tmp_path) as store:
        p1, p2 = add_prompt(store), add_prompt(store)
        runs = {p.id: (add_run(store, p, "agent-a"), add_run(store, p, "agent-b")) for p in (p1, p2)}
        real, raced = store.append, []

        def racing(records: Iterable[NewRecord]) -> list[Envelope]:
            if not raced:  # another writer freezes the pair of p1 between our read and our append
                raced.append(True)
                with new_store_reopened(tmp_path) as other:
                    add_item(other, p1, *runs[p1.id])
            return real(records)

        monkeypatch.setattr(store, "append", racing)
        report = materialize(store, "camp", 1)
        assert raced and report.created == 1 and report.already_present == 1
        assert len(report.prompts[0].already_present) == 1 and len(report.prompts[1].created) == 1
        ids = [i.item_id for i in items_of(store)]
        assert len(ids) == 2 and len(set(ids)) == 2


# --- two processes at once ------------------------------------------------------------------


def _materialize_in(root: str, url: str, start: multiprocessing.synchronize.Event, out: multiprocessing.Queue) -> None:  # type: ignore[name-defined]
    with open_store(Settings(store=Path(root), database_url=url)) as store:
        start.wait(30)
        report = materialize(store, "camp", 1)
        out.put((report.created, report.already_present))


@pytest.mark.slow
def test_two_processes_materializing_at_once_record_each_item_once(tmp_path: Path) -> None:
    with new_store(tmp_path) as store:
        for _ in range(6):
            prompt = add_prompt(store, agents=("agent-a", "agent-b", "agent-c"))
            for a in ("agent-a", "agent-b", "agent-c"):
                add_run(store, prompt, a)
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    url = f"sqlite:///{tmp_path / 'ledger.sqlite'}"
    workers = [ctx.Process(target=_materialize_in, args=(str(tmp_path / "store"), url, start, out)) for _ in range(2)]
    for w in workers:
        w.start()
    start.set()
    results = [out.get(timeout=120) for _ in workers]
    for w in workers:
        w.join(60)
        assert w.exitcode == 0
    assert sum(created for created, _ in results) == 18
    assert all(created + present == 18 for created, present in results)
    with new_store_reopened(tmp_path) as store:
        ids = [i.item_id for i in items_of(store)]
        assert len(ids) == 18 and len(set(ids)) == 18
        assert materialize(store, "camp", 1).created == 0


def new_store_reopened(root: Path) -> Store:
    return open_store(Settings(store=root / "store", database_url=f"sqlite:///{root / 'ledger.sqlite'}"))


# --- CLI ------------------------------------------------------------------------------------


def test_cli_materialize_round_trip_and_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = init_cli_store(tmp_path, monkeypatch)
    with open_cli_store(project) as store:
        prompt = add_prompt(store, agents=("agent-a", "agent-b", "agent-c"))
        add_run(store, prompt, "agent-a")
        add_run(store, prompt, "agent-b")
        failed = add_run(store, prompt, "agent-c", error="boom")
    code, out, err = run_cli("campaign", "materialize", "camp", "--version", "1")
    assert code == 0, err
    assert "1 item(s) created" in out and "0 already present" in out and "1 run(s) excluded" in out
    code, out, err = run_cli("campaign", "materialize", "camp", "--version", "1", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["created"] == 0 and data["alreadyPresent"] == 1 and data["excludedRuns"] == 1
    [p] = data["prompts"]
    assert p["promptEventId"] == prompt.id and p["excludedRuns"][failed][0]["code"] == "not-completed"
    assert p["agentsWithoutPairableRun"] == ["agent-c"]


def test_cli_materialize_of_an_unknown_campaign_is_not_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    init_cli_store(tmp_path, monkeypatch)
    code, _, err = run_cli("campaign", "materialize", "nope", "--version", "1")
    assert code == 3
    assert "error: campaign:" in err
