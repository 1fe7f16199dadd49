"""Model families (the table, one known name per token, word boundaries, routes), trace
modes and the assurance labels at their edges."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from reviewtrail.errors import InvalidInputError
from reviewtrail.tracing.files._modes import MODES, inline_mode, resolve_mode
from reviewtrail.tracing.rules._assurance import (
    acceptance_status,
    assess,
    declared_mismatches,
    effective_reviewer,
    independence_verified,
    is_sentinel,
    normalize_reported,
    review_independence,
)
from reviewtrail.tracing.rules._families import FAMILIES, ROUTE_PREFIXES, UNKNOWN, family_of, model_family

TABLE = {
    "openai": ("openai", "gpt", "chatgpt", "codex", "oracle", "o1", "o3", "o4", "davinci", "text-embedding"),
    "anthropic": ("anthropic", "claude", "opus", "sonnet", "haiku"),
    "google": ("google", "gemini", "gemma", "palm", "bard", "learnlm"),
    "deepseek": ("deepseek",),
    "xai": ("xai", "x-ai", "grok"),
    "moonshot": ("moonshot", "moonshotai", "kimi"),
    "qwen": ("qwen", "qwq", "qvq", "tongyi"),
    "zhipu": ("zhipu", "zhipuai", "glm", "chatglm", "codegeex"),
    "minimax": ("minimax", "abab"),
    "xiaomi": ("xiaomi", "mimo"),
    "bytedance": ("bytedance", "volcengine", "doubao", "skylark", "seed-oss"),
    "meta": ("meta", "meta-llama", "llama", "codellama"),
    "mistral": ("mistral", "mistralai", "mixtral", "codestral", "magistral", "devstral", "pixtral", "ministral"),
}

# token -> a model (or host) name in which that token, and only that token, is found
KNOWN_NAMES = {
    "openai": "openai/whisper-1",
    "gpt": "gpt-4o-2024-08-06",
    "chatgpt": "chatgpt-4o-latest",
    "codex": "codex-mini-latest",
    "oracle": "oracle-pro",
    "o1": "o1-preview",
    "o3": "o3-mini",
    "o4": "o4-mini-high",
    "davinci": "davinci-002",
    "text-embedding": "text-embedding-3-large",
    "anthropic": "anthropic/default",
    "claude": "claude-2.1",
    "opus": "opus-4.1",
    "sonnet": "sonnet-4.5",
    "haiku": "haiku-3.5",
    "google": "google/flan-t5-xl",
    "gemini": "gemini-2.5-pro",
    "gemma": "gemma-3-27b-it",
    "palm": "palm-2-chat-bison",
    "bard": "bard",
    "learnlm": "learnlm-1.5-pro-experimental",
    "deepseek": "deepseek-v3.1",
    "xai": "xai/default",
    "x-ai": "x-ai/default",
    "grok": "grok-4-fast",
    "moonshot": "moonshot-v1-128k",
    "moonshotai": "moonshotai/default",
    "kimi": "kimi-k2-instruct",
    "qwen": "qwen3-235b-a22b",
    "qwq": "qwq-32b-preview",
    "qvq": "qvq-72b-preview",
    "tongyi": "tongyi-deepresearch-30b",
    "zhipu": "zhipu/default",
    "zhipuai": "zhipuai/default",
    "glm": "glm-4.6",
    "chatglm": "chatglm3-6b",
    "codegeex": "codegeex4-all-9b",
    "minimax": "minimax-m2",
    "abab": "abab6.5s-chat",
    "xiaomi": "xiaomi/default",
    "mimo": "mimo-7b-rl",
    "bytedance": "bytedance/ui-tars-72b",
    "volcengine": "volcengine/default",
    "doubao": "doubao-1.5-pro-32k",
    "skylark": "skylark2-pro-4k",
    "seed-oss": "seed-oss-36b-instruct",
    "meta": "meta/opt-66b",
    "meta-llama": "meta-llama",  # holds "meta" and "llama" too, all three Meta's
    "llama": "llama-3.3-70b",
    "codellama": "codellama-34b-instruct",
    "mistral": "mistral-large-2411",
    "mistralai": "mistralai/default",
    "mixtral": "mixtral-8x22b",
    "codestral": "codestral-2501",
    "magistral": "magistral-medium",
    "devstral": "devstral-small",
    "pixtral": "pixtral-12b",
    "ministral": "ministral-8b",
}


def _tokens_in(name: str) -> set[str]:
    return {
        token
        for tokens in FAMILIES.values()
        for token in tokens
        if re.search(rf"(?<![a-z0-9]){re.escape(token)}(?![a-z])", name.lower())
    }


def test_the_family_table() -> None:
    assert FAMILIES == TABLE
    assert UNKNOWN == "unknown"
    assert ROUTE_PREFIXES == ("openrouter/", "ollama/", "bedrock/", "azure/")


def test_every_token_has_one_known_name() -> None:
    assert set(KNOWN_NAMES) == {token for tokens in FAMILIES.values() for token in tokens}


@pytest.mark.parametrize(("token", "name"), sorted(KNOWN_NAMES.items()))
def test_each_token_decides_the_family_of_its_known_name(token: str, name: str) -> None:
    [family] = [f for f, tokens in FAMILIES.items() if token in tokens]
    assert model_family(name) == family
    assert model_family(name.upper()) == family
    assert model_family(f"  {name}\t") == family
    expected = {"meta", "meta-llama", "llama"} if token == "meta-llama" else {token}
    assert _tokens_in(name) == expected


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("gpt4o", "openai"),  # a digit may follow a token
        ("gpt_4", "openai"),
        ("o3", "openai"),
        ("o3a", UNKNOWN),  # a letter may not
        ("xo3", UNKNOWN),  # nor may a letter or digit precede it
        ("3o3", UNKNOWN),
        ("gpts", UNKNOWN),
        ("my-gpt", "openai"),
        ("my_gpt", "openai"),
        ("chatgpt", "openai"),
        ("glm4", "zhipu"),
        ("qwen2.5", "qwen"),
        ("claude+gpt", UNKNOWN),  # two families
        ("gpt/gpt", "openai"),  # one family, twice
        (None, UNKNOWN),
        ("", UNKNOWN),
        ("   ", UNKNOWN),
    ],
)
def test_word_boundaries(name: str | None, family: str) -> None:
    assert model_family(name) == family


@pytest.mark.parametrize("route", ROUTE_PREFIXES)
def test_a_route_alone_is_no_family_and_holds_no_token(route: str) -> None:
    assert model_family(route) == UNKNOWN
    assert model_family(route * 3) == UNKNOWN
    assert _tokens_in(route) == set()


@given(
    st.lists(st.sampled_from(ROUTE_PREFIXES), max_size=3).map("".join),
    st.sampled_from(sorted(KNOWN_NAMES.values())) | st.text(alphabet="abgilmopqtwx0123456789-/. ", max_size=12),
)
@example("openrouter/", "anthropic/claude-3.5-sonnet")
@example("ollama/", "llama3")
@example("azure/", "")
def test_routes_never_decide_the_family(routes: str, name: str) -> None:
    assert model_family(routes + name) == model_family(name) == family_of(routes + name)
    assert model_family((routes + name).upper()) == model_family(name)


# --- trace modes -------------------------------------------------------------------------


def test_modes_from_most_private() -> None:
    assert MODES == ("off", "meta", "full")


@pytest.mark.parametrize(
    ("args", "mode"),
    [
        ("--- trace: off", "off"),
        ("---trace:meta", "meta"),
        ("--- trace :\tFULL", "full"),
        ("review this\n--- trace: meta", "meta"),
        ("review this --- trace: off", "off"),
        ("\t--- trace: meta", "meta"),
        ("--- trace: full\n--- trace: off\n--- trace: meta", "off"),
        ("--- trace: full --- trace: meta", "meta"),
        ("x--- trace: off", None),  # glued to a word: not a directive
        ("-- trace: off", None),
        ("--- tracing: off", None),
        ("", None),
        (None, None),
    ],
)
def test_inline_mode(args: str | None, mode: str | None) -> None:
    assert inline_mode(args) == mode


@pytest.mark.parametrize("args", ["--- trace: loud", "--- trace: offf", "--- trace: full\n--- trace: nope"])
def test_inline_mode_names_a_bad_value(args: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        inline_mode(args)
    assert info.value.field == "skill_args"
    assert "is not a trace mode; use full, meta or off" in str(info.value)


@pytest.mark.parametrize(
    ("explicit", "env", "args", "mode"),
    [
        (None, None, None, "full"),
        ("", {"ARIS_TRACE_MODE": ""}, "", "full"),
        (" Meta ", None, None, "meta"),
        (None, {"ARIS_TRACE_MODE": "OFF"}, None, "off"),
        ("full", {"ARIS_TRACE_MODE": "meta"}, None, "meta"),
        ("off", {"ARIS_TRACE_MODE": "full"}, "--- trace: full", "off"),
        ("full", {"ARIS_TRACE_MODE": "full"}, "--- trace: meta", "meta"),
        ("full", {}, None, "full"),
        ("meta", {"OTHER": "off"}, None, "meta"),
    ],
)
def test_resolve_mode_takes_the_most_private(
    explicit: str | None, env: dict[str, str] | None, args: str | None, mode: str
) -> None:
    assert resolve_mode(explicit, skill_args=args, env=env) == mode


@pytest.mark.parametrize(
    ("explicit", "env", "field"), [("loud", None, "trace_mode"), (None, {"ARIS_TRACE_MODE": "x"}, "ARIS_TRACE_MODE")]
)
def test_resolve_mode_names_the_bad_source(explicit: str | None, env: dict[str, str] | None, field: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        resolve_mode(explicit, env=env)
    assert info.value.field == field
    value = explicit if explicit is not None else env["ARIS_TRACE_MODE"]  # type: ignore[index]
    assert str(info.value) == f"{field}: {value!r} is not a trace mode; use full, meta or off"


# --- assurance ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", [None, "", " ", "unknown", "Unavailable", " NONE ", "null"])
def test_sentinels(value: str | None) -> None:
    assert is_sentinel(value)
    assert normalize_reported(value) is None


@pytest.mark.parametrize("value", ["gpt-4o", "unknown-model", "nil", "n/a"])
def test_not_sentinels(value: str) -> None:
    assert not is_sentinel(value)
    assert normalize_reported(f" {value} ") == value


@pytest.mark.parametrize(
    ("requested", "reported", "validated", "expected"),
    [
        ("gpt-4o", " claude-opus-4 ", False, ("claude-opus-4", "backend-reported")),
        ("gpt-4o", "claude-opus-4", True, ("claude-opus-4", "host-session-event")),
        (" gpt-4o ", "unknown", False, ("gpt-4o", "requested")),
        (" gpt-4o ", None, True, ("gpt-4o", "requested")),
        ("none", None, False, (None, "unavailable")),
        (None, "", True, (None, "unavailable")),
    ],
)
def test_effective_reviewer(
    requested: str | None, reported: str | None, validated: bool, expected: tuple[str | None, str]
) -> None:
    assert effective_reviewer(requested, reported, host_validated=validated) == expected


@pytest.mark.parametrize(
    ("executor", "reviewer", "expected"),
    [
        ("gpt-4o", "claude-3", "cross-family"),
        ("gpt-4o", "o3", "same-family"),
        ("gpt-4o", None, "unknown"),
        (None, "claude-3", "unknown"),
        ("my-model", "my-model", "unknown"),
    ],
)
def test_review_independence(executor: str | None, reviewer: str | None, expected: str) -> None:
    assert review_independence(executor, reviewer) == expected


ACCEPTED = {
    "status": " OK ",
    "review_completed": True,
    "review_scope_complete": True,
    "review_positive": True,
    "independence": "cross-family",
    "reviewer_model_source": "backend-reported",
    "identity_validated": False,
    "reviewer_kind": "model",
    "backend": None,
}


@pytest.mark.parametrize("status", ["ok", "fallback_used", "success", "COMPLETED"])
@pytest.mark.parametrize("backend", [None, "", "codex", " openai "])
def test_accepted_when_everything_holds(status: str, backend: str | None) -> None:
    assert acceptance_status(**{**ACCEPTED, "status": status, "backend": backend}) == "accepted"  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "change",
    [
        {"status": "failed"},
        {"status": "okay"},
        {"review_completed": 1},
        {"review_completed": False},
        {"review_scope_complete": False},
        {"review_positive": False},
        {"independence": "same-family"},
        {"independence": "unknown"},
        {"reviewer_model_source": "requested"},
        {"reviewer_model_source": "unavailable"},
        {"reviewer_kind": "deterministic"},
        {"backend": "copilot"},
        {"backend": " Copilot "},
    ],
)
def test_provisional_when_one_condition_fails(change: dict[str, object]) -> None:
    assert acceptance_status(**{**ACCEPTED, **change}) == "provisional"  # type: ignore[arg-type]


def test_validated_identity_stands_in_for_a_reported_source() -> None:
    facts = {**ACCEPTED, "reviewer_model_source": "requested", "identity_validated": True}
    assert acceptance_status(**facts) == "accepted"  # type: ignore[arg-type]
    facts["identity_validated"] = 1
    assert acceptance_status(**facts) == "provisional"  # type: ignore[arg-type]
    assert acceptance_status(**{**ACCEPTED, "reviewer_model_source": "host-session-event"}) == "accepted"  # type: ignore[arg-type]


def test_independence_verified() -> None:
    assert independence_verified("cross-family", True)
    assert not independence_verified("cross-family", False)
    assert not independence_verified("same-family", True)
    assert not independence_verified("cross-family", 1)  # type: ignore[arg-type]


def _assess(**changes: object) -> object:
    facts: dict[str, object] = {
        "executor_model": "gpt-4o",
        "requested_reviewer_model": " claude-opus-4 ",
        "reported_reviewer_model": None,
        "status": "ok",
        "review_completed": True,
        "review_scope_complete": True,
        "review_positive": True,
    }
    return assess(**{**facts, **changes})  # type: ignore[arg-type]


def test_assess_fills_every_label() -> None:
    a = _assess(reported_reviewer_model="claude-sonnet-4", identity_validated=True)
    assert a.identity.requested_reviewer_model == "claude-opus-4"  # type: ignore[attr-defined]
    assert a.identity.reported_reviewer_model == "claude-sonnet-4"  # type: ignore[attr-defined]
    assert a.identity.reviewer_model == "claude-sonnet-4"  # type: ignore[attr-defined]
    assert a.identity.reviewer_model_source == "host-session-event"  # type: ignore[attr-defined]
    assert a.identity.model_family == "anthropic"  # type: ignore[attr-defined]
    assert a.identity.executor_family == "openai"  # type: ignore[attr-defined]
    assert a.review_independence == "cross-family"  # type: ignore[attr-defined]
    assert a.acceptance_status == "accepted"  # type: ignore[attr-defined]
    assert a.independence_verified is True  # type: ignore[attr-defined]


def test_assess_with_only_a_request_stays_provisional() -> None:
    a = _assess()
    assert a.identity.requested_reviewer_model == "claude-opus-4"  # type: ignore[attr-defined]
    assert a.identity.reported_reviewer_model is None  # type: ignore[attr-defined]
    assert a.identity.reviewer_model_source == "requested"  # type: ignore[attr-defined]
    assert a.acceptance_status == "provisional"  # type: ignore[attr-defined]
    assert a.independence_verified is False  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("changes", "status"),
    [
        ({"reported_reviewer_model": "claude-3"}, "accepted"),
        ({"reported_reviewer_model": "claude-3", "reviewer_kind": "deterministic"}, "provisional"),
        ({"reported_reviewer_model": "claude-3", "backend": "copilot"}, "provisional"),
        ({"reported_reviewer_model": "claude-3", "status": "error"}, "provisional"),
        ({"reported_reviewer_model": "claude-3", "review_completed": False}, "provisional"),
        ({"reported_reviewer_model": "claude-3", "review_scope_complete": False}, "provisional"),
        ({"reported_reviewer_model": "claude-3", "review_positive": False}, "provisional"),
        ({"reported_reviewer_model": "o3"}, "provisional"),
        ({"requested_reviewer_model": "unknown"}, "provisional"),
    ],
)
def test_assess_passes_every_fact_to_the_acceptance_rule(changes: dict[str, object], status: str) -> None:
    assert _assess(**changes).acceptance_status == status  # type: ignore[attr-defined]


def test_assess_without_any_reviewer() -> None:
    a = _assess(requested_reviewer_model="none")
    assert a.identity.requested_reviewer_model is None  # type: ignore[attr-defined]
    assert a.identity.reviewer_model is None  # type: ignore[attr-defined]
    assert a.identity.reviewer_model_source == "unavailable"  # type: ignore[attr-defined]
    assert a.identity.model_family == UNKNOWN  # type: ignore[attr-defined]
    assert a.review_independence == "unknown"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("changes", "claims", "mismatched"),
    [
        ({"identity_validated": True}, {"executor_family": " OpenAI ", "reviewer_family": "anthropic"}, []),
        ({}, {"executor_family": "anthropic", "reviewer_family": "openai"}, ["executor_family", "reviewer_family"]),
        ({"identity_validated": True}, {"independence_verified": "TRUE"}, []),
        ({"identity_validated": True}, {"independence_verified": "false"}, ["independence_verified"]),
        ({}, {"independence_verified": "unverified"}, []),
        ({}, {"independence_verified": "true"}, ["independence_verified"]),
        ({"requested_reviewer_model": "o3"}, {"independence_verified": "false"}, []),
        ({"requested_reviewer_model": "o3"}, {"independence_verified": "unverified"}, ["independence_verified"]),
        ({}, {}, []),
    ],
)
def test_declared_mismatches(changes: dict[str, object], claims: dict[str, str], mismatched: list[str]) -> None:
    assert declared_mismatches(_assess(**changes), **claims) == mismatched  # type: ignore[arg-type]


def test_acceptance_defaults_are_a_model_reviewer_and_no_backend() -> None:
    facts = {k: v for k, v in ACCEPTED.items() if k not in ("reviewer_kind", "backend")}
    assert acceptance_status(**facts) == "accepted"  # type: ignore[arg-type]


def test_assess_passes_validated_identity_to_the_acceptance_rule() -> None:
    a = _assess(identity_validated=True)
    assert a.identity.reviewer_model_source == "requested"  # type: ignore[attr-defined]
    assert a.acceptance_status == "accepted"  # type: ignore[attr-defined]
    assert a.independence_verified is True  # type: ignore[attr-defined]
