"""One decision input: ``review decide``, the inspector's write route and the MCP tool build the
same :class:`~reviewtrail.human_review.rules.DecisionInput` and hand it to ``decide`` typed, so each
check has one rule: exactly one disposition, a position in either case, the record's bounds,
no silent replacement, and a skip never replacing a judgment (docs/human-review.md, "Deciding")."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from conftest import run_cli
from reviewtrail.errors import ReviewtrailError
from reviewtrail.human_review import session
from reviewtrail.human_review.records import DECISION, DISPOSITIONS, ReviewItem
from reviewtrail.human_review.rules import DecisionInput
from reviewtrail.store import Store
from reviewtrail.web._capability import Capability
from reviewtrail.web._decision import parse_signed_decision
from reviewtrail.web._nonces import NonceBook
from reviewtrail.web._proxy_rules import RefusedBody, decision_body
from reviewtrail.web._write import DecisionWrites
from support.human_review import campaign_with_items
from support.mcp_agents import InProcess, env_for, error_of, ok
from support.mcp_agents import new_store as mcp_store

FLAGS = ", ".join(f"--{d}" for d in DISPOSITIONS)


@given(st.sets(st.sampled_from(DISPOSITIONS)))
def test_exactly_one_disposition_is_one_rule(given_ones: set[str]) -> None:
    given_flags = {d: d in given_ones for d in DISPOSITIONS}
    if len(given_ones) == 1:
        decision = DecisionInput.chosen(given_flags, reason_codes=["x"], note="n")
        assert decision == DecisionInput(next(iter(given_ones)), reason_codes=("x",), note="n")  # type: ignore[arg-type]
        return
    with pytest.raises(ReviewtrailError) as refused:
        DecisionInput.chosen(given_flags)
    said = ", ".join(f"--{d}" for d in DISPOSITIONS if d in given_ones) or "none"
    assert (refused.value.field, refused.value.exit_code) == ("disposition", 2)
    assert str(refused.value) == f"disposition: give exactly one of {FLAGS} (got {said})"


# --- the three surfaces over one store ------------------------------------------------------------


@dataclass
class Surfaces:
    """``review decide`` (in this process), the MCP tool and the write route's call (in this
    process, past its signature checks) over one store; each answers (exit code, field, document)."""

    store: Store
    root: Path
    mcp: InProcess
    writes: DecisionWrites

    def cli(self, item: str, reviewer: str, *flags: str) -> tuple[int, str | None, dict[str, Any]]:
        code, out, err = run_cli(
            "review", "decide", item, "--reviewer", reviewer, *flags, "--json", env=env_for(self.root)
        )
        doc = json.loads(out)
        if code == 0:
            return 0, None, doc
        assert (doc["error"]["exitCode"], f"error: {doc['error']['message']}\n") == (code, err)
        return code, doc["error"]["field"], doc["error"]

    def tool(self, item: str, reviewer: str, **arguments: Any) -> tuple[int, str | None, dict[str, Any]]:
        answer = self.mcp.call("review_decide", {"item": item, "reviewer": reviewer, **arguments})
        if not answer.is_error:
            return 0, None, ok(answer)
        error = error_of(answer)
        return error["exitCode"], error["field"], error

    def route(self, item: str, reviewer: str, **fields: Any) -> tuple[int, str | None, dict[str, Any]]:
        body = {
            "itemId": item,
            "campaignId": "camp",
            "campaignVersion": 1,
            "submissionId": secrets.token_hex(16),
            "reviewer": reviewer,
            **fields,
        }
        try:
            result, _ = self.writes._decide(parse_signed_decision(json.dumps(body).encode()))
        except ReviewtrailError as exc:
            return exc.exit_code, exc.field, {"message": str(exc)}
        return 0, None, result.to_json()

    def decide(self, surface: str, item: str, reviewer: str, disposition: str, supersedes: str | None = None) -> Any:
        if surface == "cli":
            return self.cli(item, reviewer, f"--{disposition}", *(["--supersedes", supersedes] if supersedes else []))
        given = {"disposition": disposition} | ({"supersedes": supersedes} if supersedes else {})
        return (self.tool if surface == "mcp" else self.route)(item, reviewer, **given)

    def decisions(self, item: ReviewItem) -> int:
        return len(self.store.ledger.records_about([item.item_id], type=DECISION))


@pytest.fixture
def surfaces(tmp_path: Path) -> Iterator[Surfaces]:
    store, settings = mcp_store(tmp_path)
    writes = DecisionWrites(store, Capability.from_key(os.urandom(32)), NonceBook(tmp_path / "nonces.sqlite"))
    try:
        yield Surfaces(store, tmp_path, InProcess(store, settings), writes)
    finally:
        writes.close()
        store.close()


def test_every_surface_hands_decide_the_one_typed_input(surfaces: Surfaces, monkeypatch: pytest.MonkeyPatch) -> None:
    real = session.decide
    given_payloads: list[object] = []

    def spy(store: Store, item_id: str, payload: object, **options: Any) -> Any:
        given_payloads.append(payload)
        return real(store, item_id, payload, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(session, "decide", spy)
    items = campaign_with_items(surfaces.store, 3)
    note = {"confidence": 0.5, "note": "clearer"}
    assert surfaces.cli(items[0].item_id, "rev-1", "--prefer", "b", "--strength", "strong", "--confidence", "0.5",
                        "--note", "clearer")[0] == 0  # fmt: skip
    assert (
        surfaces.tool(items[1].item_id, "rev-1", disposition="prefer", preferred="b", strength="strong", **note)[0] == 0
    )
    assert (
        surfaces.route(items[2].item_id, "rev-1", disposition="prefer", preferred="B", strength="strong", **note)[0]
        == 0
    )
    assert [type(p) for p in given_payloads] == [DecisionInput] * 3
    # Built alike; and one rule for the position: "b" and "B" alike are the run each item shows at B.
    assert len({replace(p, preferred=None) for p in given_payloads}) == 1  # type: ignore[type-var]
    for item in items:
        [env] = surfaces.store.ledger.records_about([item.item_id], type=DECISION)
        assert env.payload_value["preferred"] == item.display_order[1]


def test_a_position_in_either_case_is_the_run_shown_there_on_every_path(surfaces: Surfaces) -> None:
    items = campaign_with_items(surfaces.store, 2)
    as_wire = {"disposition": "prefer", "preferred": "b", "strength": "slight"}
    first = session.decide(surfaces.store, items[0].item_id, as_wire, reviewer="rev-1")
    second = session.decide(surfaces.store, items[1].item_id, DecisionInput("prefer", "a", "slight"), reviewer="rev-1")
    assert surfaces.store.ledger.get(first.decision_id).payload_value["preferred"] == items[0].display_order[1]
    assert surfaces.store.ledger.get(second.decision_id).payload_value["preferred"] == items[1].display_order[0]


# --- attacks: the same refusal from every surface -------------------------------------------------


def test_a_bad_disposition_gets_the_same_field_naming_refusal_everywhere(surfaces: Surfaces) -> None:
    [item] = campaign_with_items(surfaces.store, 1)
    i = item.item_id
    answers = {
        "cli, two flags": surfaces.cli(i, "rev-1", "--tie", "--skip"),
        "cli, none": surfaces.cli(i, "rev-1"),
        "mcp": surfaces.tool(i, "rev-1", disposition="export"),
        "route": surfaces.route(i, "rev-1", disposition="export"),
    }
    for name, (code, field, _) in answers.items():
        assert (code, field) == (2, "disposition"), (name, answers[name])
    named = "disposition: Input should be 'prefer', 'tie', 'correct', 'underdetermined', 'malformed' or 'skip'"
    assert all(answers[name][2]["message"].startswith(named) for name in ("mcp", "route")), answers
    with pytest.raises(RefusedBody) as at_proxy:
        body = {"itemId": i, "campaignId": "camp", "campaignVersion": 1, "submissionId": "s" * 16}
        decision_body(json.dumps(body | {"disposition": "export"}).encode(), "proxy-7f3a9c")
    assert (at_proxy.value.status, at_proxy.value.field) == (422, "disposition")
    with pytest.raises(ReviewtrailError) as in_library:
        session.decide(surfaces.store, i, DecisionInput("export"), reviewer="rev-1")  # type: ignore[arg-type]
    assert (in_library.value.exit_code, in_library.value.field) == (2, "disposition")
    assert str(in_library.value) == named
    assert surfaces.decisions(item) == 0


@pytest.mark.parametrize("surface", ["cli", "mcp", "route"])
def test_a_second_decision_never_silently_replaces_the_first(surfaces: Surfaces, surface: str) -> None:
    [item] = campaign_with_items(surfaces.store, 1)
    code, _, first = surfaces.decide(surface, item.item_id, "rev-1", "tie")
    assert code == 0, first
    for reviewer in ("rev-1", "rev-2"):  # the same reviewer or another: named, never replaced
        code, field, refused = surfaces.decide(surface, item.item_id, reviewer, "malformed")
        assert (code, field) == (6, "supersedes") and first["decisionId"] in refused["message"], refused
    assert surfaces.decisions(item) == 1
    assert session.history(surfaces.store, item.item_id).active.decision_id == first["decisionId"]  # type: ignore[union-attr]
    code, _, later = surfaces.decide(surface, item.item_id, "rev-2", "malformed", first["decisionId"])
    assert code == 0 and later["superseded"] == 1, later


@pytest.mark.parametrize("surface", ["cli", "mcp", "route"])
def test_a_skip_never_replaces_a_judgment(surfaces: Surfaces, surface: str) -> None:
    [item] = campaign_with_items(surfaces.store, 1)
    code, _, judged = surfaces.decide(surface, item.item_id, "rev-1", "tie")
    assert code == 0, judged
    code, field, refused = surfaces.decide(surface, item.item_id, "rev-1", "skip", judged["decisionId"])
    assert (code, field) == (2, "disposition") and "a skip cannot replace the judgment" in refused["message"]
    code, field, _ = surfaces.decide(surface, item.item_id, "rev-2", "skip")
    assert (code, field) == (6, "supersedes")
    assert surfaces.decisions(item) == 1
    active = session.history(surfaces.store, item.item_id).active
    assert active is not None and (active.decision_id, active.disposition) == (judged["decisionId"], "tie")
