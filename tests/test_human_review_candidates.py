"""One rule finds a candidate as it stands (human_review/reads/_candidates.py): the read ``resolve_item``
makes (``run_candidate`` and its digest) gives the same facts, response and digest, or none, whatever
was amended, over the live ledger and over a page preloaded in bulk."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewtrail.human_review.campaigns import correct_output, correct_run, reclassify
from reviewtrail.human_review.reads._bulk_resolve import Preloaded
from reviewtrail.human_review.reads._resolve import _candidate as model_candidate
from reviewtrail.human_review.records import RECEIPT, RESPONSE, RUN
from reviewtrail.ledger import Envelope
from reviewtrail.store import Store
from support.human_review import add_item, add_prompt, add_run, new_store

OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(
            ["correct-output", "correct-model", "fail", "reclassify-run", "reclassify-output", "reclassify-receipt"]
        ),
        st.integers(0, 3),
        st.sampled_from(["private", "sensitive"]),
    ),
    max_size=6,
)


def _part(store: Store, run_id: str, type_: str) -> Envelope:
    return [e for e in store.ledger.read(subject=run_id) if e.type == type_][-1]


def _amend(store: Store, op: str, run_id: str, level: str) -> None:
    """One amendment; one the library refuses (nothing stricter, nothing changed) is left out."""
    from reviewtrail.errors import InvalidInputError

    try:
        if op == "correct-output":
            correct_output(store, _part(store, run_id, RESPONSE).id, f"Corrected reply {level} ✓")
        elif op == "correct-model":
            correct_run(store, run_id, agent={"model": f"model-{level}"})
        elif op == "fail":
            correct_run(store, run_id, status="failed", error="timed out")
        else:
            kind = {"reclassify-run": RUN, "reclassify-output": RESPONSE, "reclassify-receipt": RECEIPT}[op]
            reclassify(store, _part(store, run_id, kind).id, level, reason="test")
    except InvalidInputError:
        pass


def _assert_one_rule(store: Store, runs: list[str], items: list[str]) -> int:
    """The live and the preloaded read agree on every run; the number of runs that are candidates."""
    ledger = store.ledger
    found = 0
    with ledger.snapshot():
        page = Preloaded(ledger, items, ledger.rows_in("hr_items", "item_id", items))
        for run_id in runs:
            live = model_candidate(ledger, run_id)
            assert model_candidate(page, run_id) == live, run_id
            found += live is not None
    return found


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=OPERATIONS)
def test_the_live_and_the_preloaded_read_find_the_same_candidate(
    tmp_path_factory: pytest.TempPathFactory, operations: list[tuple[str, int, str]]
) -> None:
    store = new_store(tmp_path_factory.mktemp("candidates"))
    try:
        prompt = add_prompt(store, text="Une cliente écrit : « où est ma commande ? » 🚚")
        runs = [add_run(store, prompt, a) for a in ("agent-a", "agent-b")]
        other = add_prompt(store)
        runs += [add_run(store, other, "agent-a", response="Réponse ✓"), add_run(store, other, "agent-b")]
        items = [add_item(store, prompt, runs[0], runs[1]).item_id, add_item(store, other, runs[2], runs[3]).item_id]
        assert _assert_one_rule(store, runs, items) == 4
        for op, index, level in operations:
            _amend(store, op, runs[index], level)
        failed = {runs[i] for op, i, _ in operations if op == "fail"}
        assert _assert_one_rule(store, runs, items) == 4 - len(failed)
    finally:
        store.close()
