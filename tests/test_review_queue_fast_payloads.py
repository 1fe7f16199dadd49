"""The review queue reads stored payloads as plain JSON (``human_review.reads._plain_records``): each plain
check must accept a payload only when its pydantic model accepts it, reading the same values, and
a payload the plain check leaves must be read (or refused, with the same error) by the model.
Held to each other here on payloads generated around valid ones: values of every kind, bounds,
patterns (a final newline, a lone surrogate), missing, extra and Python-named fields."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from reviewtrail.human_review import CandidateFacts, CandidateRun, ReviewItem, ReviewPrompt, ReviewResponse
from reviewtrail.human_review.reads import _plain_records as plain
from reviewtrail.human_review.reads._resolve import candidate_facts

DIGEST = "sha256:" + "ab" * 32

PROMPT: dict[str, Any] = {
    "campaign": {"id": "camp", "version": 1, "label": "A campaign"},
    "scenarioFamily": "refunds",
    "prompt": "A customer asks. Reply.",
    "evidence": "Policy: refunds within 30 days.",
    "criterion": {
        "id": "policy-faithful",
        "version": 1,
        "label": "Faithful",
        "instructions": "Prefer the faithful reply.",
        "allowedReasonCodes": ["wrong-policy", "unsupported"],
        "allowedResponseTags": ["verbose"],
    },
    "candidateAgentIds": ["agent-a", "agent-b"],
    "externalExportEligible": True,
}
ITEM: dict[str, Any] = {
    "itemId": "4d2b8e61-0c5f-5a7e-9b13-6f0e2a9c7d44",
    "campaign": {"id": "camp", "version": 1},
    "promptEventId": "01a2338e-fb84-7a96-a0f6-f6e2ec4787a1",
    "criterion": {"id": "policy-faithful", "version": 1},
    "candidates": [
        {"runId": "run-a", "outputEventId": "out-a", "digest": DIGEST},
        {"runId": "run-b", "outputEventId": "out-b", "digest": DIGEST},
    ],
    "displayOrder": ["run-b", "run-a"],
}
FLAGGED_ITEM: dict[str, Any] = {
    **ITEM,
    "selfIdentification": [
        {"runId": "run-a", "named": ["own-model", "other-agent"]},
        {"runId": "run-b", "named": ["own-adapter"]},
    ],
}
RUN: dict[str, Any] = {
    "runId": "run-a",
    "campaign": {"id": "camp", "version": 1},
    "triggerEventId": "01a2338e-fb84-7a96-a0f6-f6e2ec4787a1",
    "agent": {
        "id": "agent-a",
        "model": "model a",
        "provider": "openai",
        "executionAdapter": "chat-completions@1",
        "learnedAdapter": None,
        "catalogGeneration": "gen-1",
    },
    "status": "completed",
    "origin": "local",
    "startedAt": "2026-11-30T10:00:00Z",
    "endedAt": "2026-11-30T10:00:01Z",
    "promptHash": DIGEST,
    "promptManifestId": None,
    "trace": None,
    "retryOf": None,
    "error": None,
    "outputProblem": None,
}
RESPONSE: dict[str, Any] = {"response": "Refunds are possible within 30 days."}

STRINGS = [
    "",
    "a",
    "a\n",
    "\na",
    "a b",
    "A-b.c:d@e/f_9",
    "-a",
    "é",
    "a\ud800",
    "x" * 64,
    "x" * 65,
    "x" * 200,
    "x" * 201,
    "x" * 2000,
    "x" * 2001,
    "x" * 4096,
    "x" * 4097,
    DIGEST,
    DIGEST + "\n",
    DIGEST.upper(),
    "sha256:" + "a" * 63,
    "completed",
    "failed",
    "local",
    "imported",
    "wrong-policy",
    "Wrong",
    "run-a",
    "run-b",
    "run-c",
    "agent-a",
    "own-model",
    "other-agent",
    "own-name",
]
TEXT = st.one_of(st.sampled_from(STRINGS), st.text(max_size=4))
VALUE = st.one_of(
    TEXT,
    st.integers(-1, 3),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(TEXT, max_size=3),
    st.dictionaries(st.sampled_from(["id", "version", "label", "x"]), st.one_of(TEXT, st.integers(0, 2)), max_size=3),
)
PYTHON_NAMES = {
    "scenarioFamily": "scenario_family",
    "candidateAgentIds": "candidate_agent_ids",
    "externalExportEligible": "external_export_eligible",
    "allowedReasonCodes": "allowed_reason_codes",
    "itemId": "item_id",
    "promptEventId": "prompt_event_id",
    "displayOrder": "display_order",
    "runId": "run_id",
    "outputEventId": "output_event_id",
    "triggerEventId": "trigger_event_id",
    "executionAdapter": "execution_adapter",
    "learnedAdapter": "learned_adapter",
    "startedAt": "started_at",
    "promptHash": "prompt_hash",
    "retryOf": "retry_of",
    "selfIdentification": "self_identification",
}


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``value`` (keys and list positions)."""
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, inner in value.items():
            out += _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            out += _paths(inner, (*prefix, i))
    return out


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any]) -> Any:
    """``base`` with one to three changes: a value replaced, a field removed, added or given by
    its Python name, a list entry repeated."""
    payload = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(payload)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        *parent_path, last = path
        parent: Any = payload
        for step in parent_path:
            parent = parent[step]
        how = draw(st.sampled_from(["replace", "replace", "replace", "remove", "add", "rename", "repeat"]))
        if how == "replace":
            parent[last] = draw(VALUE)
        elif how == "remove" and isinstance(parent, dict):
            del parent[last]
        elif how == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "label", "id", "evidence", "error", "origin"]))] = draw(VALUE)
        elif how == "rename" and isinstance(parent, dict) and last in PYTHON_NAMES:
            parent[PYTHON_NAMES[last]] = parent.pop(last)
        elif how == "repeat" and isinstance(parent[last], list) and parent[last]:
            parent[last].append(parent[last][0])
    return payload


def _agrees(given_value: Any, read: Any) -> bool:
    """The plain reader's value (``given_value``, defaults left out) is what the model read."""
    if isinstance(read, dict):
        if not isinstance(given_value, dict) or not set(given_value) <= set(read):
            return False
        return all(_agrees(given_value[k], v) if k in given_value else _default(v) for k, v in read.items())
    if isinstance(read, list):
        return (
            isinstance(given_value, list)
            and len(given_value) == len(read)
            and all(_agrees(a, b) for a, b in zip(given_value, read, strict=True))
        )
    return type(given_value) is type(read) and given_value == read


def _default(value: Any) -> bool:
    """A value a model gives a field left out: its default."""
    return any(type(value) is type(d) and value == d for d in (None, [], False, "local"))


def _refusal(exc: ValidationError) -> tuple[str, Any]:
    """How a payload was refused: the message shown, and each error (model, place, kind, input)."""
    return str(exc), exc.errors(include_url=False, include_context=False)


def _model_reads(model: type[BaseModel], value: Any) -> tuple[str, Any]:
    try:
        return "read", model.model_validate(value).model_dump(mode="json", by_alias=True)
    except ValidationError as exc:
        return "refused", _refusal(exc)


def _plain_reads(reader: Callable[[Any], Any], value: Any) -> tuple[str, Any]:
    try:
        return "read", reader(value)
    except ValidationError as exc:
        return "refused", _refusal(exc)


IDS = ["prompt", "item", "flagged-item", "run", "response"]
CASES = [
    (ReviewPrompt, PROMPT, plain.is_review_prompt, plain.review_prompt),
    (ReviewItem, ITEM, plain.is_review_item, plain.review_item),
    (ReviewItem, FLAGGED_ITEM, plain.is_review_item, plain.review_item),
    (CandidateRun, RUN, plain.is_candidate_run, plain.candidate_run),
    (ReviewResponse, RESPONSE, plain.is_review_response, lambda v: {"response": plain.review_response(v)}),
]


@pytest.mark.parametrize(("model", "base", "check", "reader"), CASES, ids=IDS)
def test_a_valid_stored_payload_is_read_without_its_model(
    model: type[BaseModel], base: dict[str, Any], check: Callable[[Any], bool], reader: Callable[[Any], Any]
) -> None:
    stored = model.model_validate(base).model_dump(mode="json", by_alias=True)
    assert check(stored) and check(base)
    assert reader(stored) == stored


@pytest.mark.parametrize(("model", "base", "check", "reader"), CASES, ids=IDS)
@given(data=st.data())
def test_the_plain_reader_and_the_model_agree(
    model: type[BaseModel],
    base: dict[str, Any],
    check: Callable[[Any], bool],
    reader: Callable[[Any], Any],
    data: st.DataObject,
) -> None:
    payload = data.draw(st.one_of(mutated(base), VALUE))
    by_model = _model_reads(model, payload)
    by_plain = _plain_reads(reader, payload)
    assert by_plain[0] == by_model[0], (payload, by_model)
    if by_model[0] == "refused":
        assert by_plain[1] == by_model[1]
        assert not check(payload)
    else:
        assert _agrees(by_plain[1], by_model[1]), (payload, by_plain, by_model)


RUNS = [
    RUN,
    {**RUN, "agent": {**RUN["agent"], "learnedAdapter": "lora-1", "model": "modèle ✓"}},
    {**RUN, "status": "failed", "error": "timed out", "origin": "imported"},
]


@given(data=st.data())
def test_candidate_facts_read_plain_agree_with_the_model(data: st.DataObject) -> None:
    run = CandidateRun.model_validate(data.draw(st.sampled_from(RUNS)))
    wire_run = run.model_dump(mode="json", by_alias=True)
    facts: dict[str, Any] = {
        "output_event_id": data.draw(st.one_of(TEXT, st.just(1))),
        "output_payload_hash": data.draw(TEXT),
        "context_manifest": data.draw(st.one_of(st.just({"runId": "run-a", "inputs": []}), VALUE)),
        "run_privacy": data.draw(st.sampled_from(["public-source", "private", "sensitive"])),
        "output_privacy": data.draw(st.sampled_from(["public-source", "private", "sensitive", "secret", 3])),
    }
    try:
        expected: tuple[str, Any] = (
            "read",
            candidate_facts(run, wire_run, **facts).model_dump(mode="json", by_alias=True),
        )
    except ValidationError as exc:
        expected = ("refused", _refusal(exc))
    try:
        got: tuple[str, Any] = ("read", plain.candidate_wire(wire_run, wire_run, **facts))
    except ValidationError as exc:
        got = ("refused", _refusal(exc))
    assert got == expected
    if expected[0] == "read":
        assert CandidateFacts.model_validate(got[1]).model_dump(mode="json", by_alias=True) == got[1]
