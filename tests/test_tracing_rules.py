"""Identity and assurance rules, model families, trace modes: pure functions, exhaustively."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.errors import InvalidInputError
from reviewtrail.tracing.files import inline_mode, resolve_mode
from reviewtrail.tracing.files._layout import check_name
from reviewtrail.tracing.rules import (
    FAMILIES,
    SENTINELS,
    SUCCESS_STATUSES,
    acceptance_status,
    assess,
    effective_reviewer,
    independence_verified,
    model_family,
    normalize_reported,
    review_independence,
)


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("gpt-6-astra", "openai"),
        ("GPT-4o", "openai"),
        ("o3-mini", "openai"),
        ("gpt-oss-120b", "openai"),
        ("claude-opus-4-1", "anthropic"),
        ("Claude Sonnet 4.5", "anthropic"),
        ("gemini-2.5-pro", "google"),
        ("gemma-3-27b", "google"),
        ("deepseek-chat", "deepseek"),
        ("grok-4", "xai"),
        ("kimi-k2-instruct", "moonshot"),
        ("qwen2.5-72b-instruct", "qwen"),
        ("qwq-32b", "qwen"),
        ("glm-4.6", "zhipu"),
        ("MiniMax-M2", "minimax"),
        ("mimo-7b-rl", "xiaomi"),
        ("doubao-1.5-pro", "bytedance"),
        ("llama-3.3-70b", "meta"),
        ("mistral-large-2411", "mistral"),
        ("codestral-2501", "mistral"),
        # route prefixes never decide, the model name does
        ("openrouter/anthropic/claude-3.5-sonnet", "anthropic"),
        ("ollama/qwen2.5:7b", "qwen"),
        ("bedrock/meta.llama3-70b-instruct", "meta"),
        ("azure/gpt-4o", "openai"),
        ("openrouter/ollama/mistral", "mistral"),
        # several families: unknown
        ("deepseek-r1-distill-llama-70b", "unknown"),
        ("deepseek-r1-distill-qwen-32b", "unknown"),
        ("openrouter/meta-llama/llama-3-70b", "meta"),
        # none: unknown
        ("", "unknown"),
        ("my-custom-model", "unknown"),
        ("codex", "openai"),  # a host name that stands for one vendor's models
        ("azure/", "unknown"),
        # word boundaries: a token inside a word does not count
        ("metallica-7b", "unknown"),
        ("megpt", "unknown"),
        ("grokking-model", "unknown"),
    ],
)
def test_model_family(name: str, family: str) -> None:
    assert model_family(name) == family


def test_every_family_is_in_the_table() -> None:
    assert set(FAMILIES) == {
        "openai", "anthropic", "google", "deepseek", "xai", "moonshot", "qwen",
        "zhipu", "minimax", "xiaomi", "bytedance", "meta", "mistral",
    }  # fmt: skip


@given(st.sampled_from(sorted(FAMILIES)), st.sampled_from(["openrouter/", "ollama/", "bedrock/", "azure/", ""]))
def test_a_family_token_with_any_route_prefix_is_that_family(family: str, route: str) -> None:
    token = FAMILIES[family][-1]
    assert model_family(f"{route}{token}-7b") == family
    assert model_family(f"{route}{token.upper()}-7b") == family


@pytest.mark.parametrize("sentinel", ["unknown", "UNAVAILABLE", "None", "null", "", "  ", None, " Unknown "])
def test_sentinels_are_stored_as_null_and_never_replaced_by_the_request(sentinel: str | None) -> None:
    assert normalize_reported(sentinel) is None
    assert effective_reviewer("grok-4", sentinel) == ("grok-4", "requested")
    assert effective_reviewer(None, sentinel) == (None, "unavailable")
    a = assess(
        executor_model="gpt-5",
        requested_reviewer_model="grok-4",
        reported_reviewer_model=sentinel,
        status="ok",
        review_completed=True,
        review_scope_complete=True,
        review_positive=True,
    )
    assert a.identity.reported_reviewer_model is None
    assert a.identity.reviewer_model_source == "requested"
    assert a.acceptance_status == "provisional", "a requested-only identity cannot grant acceptance"


def test_reported_model_wins() -> None:
    assert effective_reviewer("grok-4", "grok-4-0709") == ("grok-4-0709", "backend-reported")
    assert effective_reviewer(None, "claude-opus-4") == ("claude-opus-4", "backend-reported")
    assert set(SENTINELS) == {"unknown", "unavailable", "none", "null", ""}


@pytest.mark.parametrize(
    ("executor", "reviewer", "expected"),
    [
        ("gpt-5", "claude-opus-4", "cross-family"),
        ("gpt-5", "o3", "same-family"),
        ("gpt-5", None, "unknown"),
        (None, "claude-opus-4", "unknown"),
        ("gpt-5", "deepseek-r1-distill-llama-70b", "unknown"),
    ],
)
def test_review_independence(executor: str | None, reviewer: str | None, expected: str) -> None:
    assert review_independence(executor, reviewer) == expected


STATUSES = ["ok", "fallback_used", "success", "completed", "OK", "error", "timeout", "partial"]
INDEPENDENCE = ["cross-family", "same-family", "unknown"]
SOURCES = ["backend-reported", "requested", "unavailable"]


def test_acceptance_truth_table_is_exhaustive() -> None:
    """Every combination: accepted exactly when all conditions hold."""
    count_accepted = 0
    for status, done, scope, positive, independence, source, validated, kind in itertools.product(
        STATUSES,
        [True, False],
        [True, False],
        [True, False],
        INDEPENDENCE,
        SOURCES,
        [True, False],
        ["model", "deterministic"],
    ):
        result = acceptance_status(
            status=status,
            review_completed=done,
            review_scope_complete=scope,
            review_positive=positive,
            independence=independence,
            reviewer_model_source=source,
            identity_validated=validated,
            reviewer_kind=kind,
        )
        expected = (
            status.lower() in SUCCESS_STATUSES
            and done
            and scope
            and positive
            and independence == "cross-family"
            and (source == "backend-reported" or validated)
            and kind == "model"
        )
        assert result == ("accepted" if expected else "provisional"), (
            status,
            done,
            scope,
            positive,
            independence,
            source,
            validated,
            kind,
        )
        count_accepted += expected
    assert count_accepted > 0


@given(
    executor=st.sampled_from(["gpt-5", "claude-opus-4", "grok-4", "deepseek-r1-distill-llama-70b", None, "x"]),
    requested=st.sampled_from(["gpt-5", "claude-opus-4", "grok-4", None, "unknown", ""]),
    reported=st.sampled_from(["gpt-5", "claude-opus-4", "grok-4", None, "unknown", "null", "NONE"]),
    status=st.sampled_from([*STATUSES, "weird"]),
    done=st.booleans(),
    scope=st.booleans(),
    positive=st.booleans(),
    validated=st.booleans(),
    kind=st.sampled_from(["model", "deterministic"]),
)
def test_no_combination_yields_accepted_unless_all_conditions_hold(
    executor: str | None,
    requested: str | None,
    reported: str | None,
    status: str,
    done: bool,
    scope: bool,
    positive: bool,
    validated: bool,
    kind: str,
) -> None:
    a = assess(
        executor_model=executor,
        requested_reviewer_model=requested,
        reported_reviewer_model=reported,
        status=status,
        review_completed=done,
        review_scope_complete=scope,
        review_positive=positive,
        identity_validated=validated,
        reviewer_kind=kind,
    )
    if a.acceptance_status == "accepted":
        assert status.lower() in SUCCESS_STATUSES
        assert done and scope and positive and kind == "model"
        assert a.review_independence == "cross-family"
        assert model_family(executor) != model_family(a.identity.reviewer_model)
        assert a.identity.reviewer_model_source == "backend-reported" or validated
    if a.independence_verified:
        assert validated and a.review_independence == "cross-family"
    # the requested name never leaks into the reported field
    assert a.identity.reported_reviewer_model in (None, reported)


def test_independence_verified_needs_identity_evidence() -> None:
    assert independence_verified("cross-family", False) is False
    assert independence_verified("cross-family", True) is True
    assert independence_verified("same-family", True) is False
    assert independence_verified("unknown", True) is False


def test_deterministic_verifier_cannot_stand_in_for_a_model_review() -> None:
    a = assess(
        executor_model="gpt-5",
        requested_reviewer_model=None,
        reported_reviewer_model="claude-opus-4",
        status="ok",
        review_completed=True,
        review_scope_complete=True,
        review_positive=True,
        reviewer_kind="deterministic",
    )
    assert a.acceptance_status == "provisional"


@pytest.mark.parametrize(
    ("explicit", "env", "args", "expected"),
    [
        (None, None, None, "full"),
        ("meta", None, None, "meta"),
        (None, "off", None, "off"),
        (None, None, "review this\n--- trace: meta\n", "meta"),
        ("full", None, "--- trace: off", "off"),  # the most private choice wins
        ("full", "meta", None, "meta"),
        ("off", "full", "--- trace: full", "off"),
        (None, None, "  ---  trace:   OFF  ", "off"),
        (None, None, "paper.tex --- trace: off", "off"),  # a directive after other arguments counts
        (None, None, "--- trace: off\n--- trace: full", "off"),  # several: the most private wins
    ],
)
def test_trace_mode_resolution(explicit: str | None, env: str | None, args: str | None, expected: str) -> None:
    environ = {"ARIS_TRACE_MODE": env} if env else {}
    assert resolve_mode(explicit, skill_args=args, env=environ) == expected


def test_bad_trace_modes_are_named() -> None:
    with pytest.raises(InvalidInputError) as err:
        resolve_mode("verbose", env={})
    assert err.value.field == "trace_mode"
    with pytest.raises(InvalidInputError) as err:
        resolve_mode(None, env={"ARIS_TRACE_MODE": "loud"})
    assert err.value.field == "ARIS_TRACE_MODE"
    with pytest.raises(InvalidInputError):
        inline_mode("--- trace: everything")


@pytest.mark.parametrize("bad", ["../x", "a/b", "..", "", "a b", "x\n", "a\\b", "é", "a" * 129, ".hidden"])
def test_unsafe_names_are_rejected(bad: str) -> None:
    with pytest.raises(InvalidInputError):
        check_name(bad, "skill")


@given(st.text(max_size=20))
def test_names_are_simple(text: str) -> None:
    ok = 0 < len(text) <= 128 and all(c.isascii() and (c.isalnum() or c in "-_") for c in text)
    if ok:
        assert check_name(text, "skill") == text
    else:
        with pytest.raises(InvalidInputError):
            check_name(text, "skill")
