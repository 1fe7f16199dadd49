"""Human review's stored payloads read as plain JSON, with no payload model: the review queue's
read path (docs/human-review.md, "The queue and history").

Every check here accepts a payload only when its payload model (:mod:`._records`,
:mod:`._run_records`, :class:`~._item_rules.CandidateFacts`) would accept it as it stands, in its
wire form: the same fields (wire names), kinds, bounds, patterns and cross-field rules, and the
value read is the one the model would hold. Anything else (a value the model would refuse, or one
it would read differently, such as a field given by its Python name) goes to the model itself,
which refuses it with its own error, exactly as a read through the model does, or gives the value
it reads. So reading a payload here or through its model gives the same value or the same error;
tests/test_review_queue_fast_payloads.py holds the two to each other on generated payloads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from functools import cache
from typing import Any

from reviewtrail.canonical import encodable_text
from reviewtrail.cas import DIGEST_PATTERN
from reviewtrail.human_review.records._record_names import (
    CODE_PATTERN,
    ERROR_MAX_CHARS,
    EVIDENCE_MAX_CHARS,
    IDENT_PATTERN,
    INSTRUCTIONS_MAX_CHARS,
    LABEL_MAX_CHARS,
    MAX_ALLOWLIST,
    MAX_CANDIDATE_AGENTS,
    PRIVACY_ORDER,
    PROMPT_MAX_CHARS,
    RESPONSE_MAX_CHARS,
)
from reviewtrail.human_review.records._self_identification import NAMED
from reviewtrail.ledger import Privacy

__all__ = [
    "candidate_run",
    "candidate_wire",
    "is_candidate_run",
    "is_candidate_wire",
    "is_review_item",
    "is_review_prompt",
    "is_review_response",
    "review_item",
    "review_prompt",
    "review_response",
]

_NAME_MAX = 200  # an identifier, an agent's model or provider
_CODE_MAX = 64  # a reason code or response tag
_TIMESTAMP_MAX = 64


@cache
def _matcher(pattern: str) -> Callable[[str], Any]:
    """``pattern``'s whole-string matcher, built on first use. The models' patterns are anchored
    (``^...$``) and pydantic's ``$`` is the end of the text; ``fullmatch`` is the same (Python's
    ``$`` would also match before a final newline)."""
    return re.compile(pattern.removeprefix("^").removesuffix("$")).fullmatch


def _text(value: Any, most: int, least: int = 1) -> bool:
    return encodable_text(value) and least <= len(value) <= most


def _ident(value: Any) -> bool:
    return _text(value, _NAME_MAX) and _matcher(IDENT_PATTERN)(value) is not None


def _opt_ident(value: Any) -> bool:
    return value is None or _ident(value)


def _code(value: Any) -> bool:
    return _text(value, _CODE_MAX) and _matcher(CODE_PATTERN)(value) is not None


def _digest(value: Any) -> bool:
    return type(value) is str and _matcher(DIGEST_PATTERN)(value) is not None


def _version(value: Any) -> bool:
    return type(value) is int and value >= 1


def _fields(value: Any, required: Collection[str], optional: Collection[str] = ()) -> bool:
    """A mapping with every ``required`` wire name and no name beyond ``optional``."""
    if type(value) is not dict:
        return False
    keys = value.keys()
    return all(k in keys for k in required) and all(k in required or k in optional for k in keys)


def _list(value: Any, check: Callable[[Any], bool], most: int, least: int = 0, *, unique: bool = False) -> bool:
    return (
        type(value) is list
        and least <= len(value) <= most
        and all(check(v) for v in value)
        and (not unique or len(set(value)) == len(value))
    )


def _by_model(module: str, name: str, value: Any) -> dict[str, Any]:
    """``value`` read by its payload model: refused with the model's own error, or the value the
    model reads (wire names)."""
    import importlib

    model = getattr(importlib.import_module(f"reviewtrail.human_review.{module}"), name)
    dumped: dict[str, Any] = model.model_validate(value).model_dump(mode="json", by_alias=True)
    return dumped


# --- review prompt ------------------------------------------------------------------------------
_PROMPT = ("campaign", "scenarioFamily", "prompt", "criterion", "candidateAgentIds")
_PROMPT_OPTIONAL = ("evidence", "externalExportEligible")
_CRITERION = ("id", "version", "label", "instructions")
_CRITERION_OPTIONAL = ("allowedReasonCodes", "allowedResponseTags")


def _criterion(value: Any) -> bool:
    return (
        _fields(value, _CRITERION, _CRITERION_OPTIONAL)
        and _ident(value["id"])
        and _version(value["version"])
        and _text(value["label"], LABEL_MAX_CHARS)
        and _text(value["instructions"], INSTRUCTIONS_MAX_CHARS)
        and all(_list(value.get(k, []), _code, MAX_ALLOWLIST, unique=True) for k in _CRITERION_OPTIONAL)
    )


def is_review_prompt(value: Any) -> bool:
    """Whether ``ReviewPrompt`` takes ``value`` as it stands."""
    if not _fields(value, _PROMPT, _PROMPT_OPTIONAL):
        return False
    campaign = value["campaign"]
    evidence = value.get("evidence")
    return (
        _fields(campaign, ("id", "version", "label"))
        and _ident(campaign["id"])
        and _version(campaign["version"])
        and _text(campaign["label"], LABEL_MAX_CHARS)
        and _text(value["scenarioFamily"], LABEL_MAX_CHARS)
        and _text(value["prompt"], PROMPT_MAX_CHARS)
        and (evidence is None or _text(evidence, EVIDENCE_MAX_CHARS))
        and _criterion(value["criterion"])
        and _list(value["candidateAgentIds"], _ident, MAX_CANDIDATE_AGENTS, 2, unique=True)
        and type(value.get("externalExportEligible", False)) is bool
    )


def review_prompt(value: Any) -> dict[str, Any]:
    """A review prompt's payload as ``ReviewPrompt`` reads it (or its error)."""
    return value if is_review_prompt(value) else _by_model("records._records", "ReviewPrompt", value)


# --- review item --------------------------------------------------------------------------------
_ITEM = ("itemId", "campaign", "promptEventId", "criterion", "candidates", "displayOrder")
_ITEM_OPTIONAL = ("selfIdentification",)
_ITEM_CANDIDATE = ("runId", "outputEventId", "digest")
_SELF_IDENTIFICATION = ("runId", "named")


def _item_candidate(value: Any) -> bool:
    return (
        _fields(value, _ITEM_CANDIDATE)
        and _ident(value["runId"])
        and _ident(value["outputEventId"])
        and _digest(value["digest"])
    )


def _named(value: Any) -> bool:
    return type(value) is str and value in NAMED


def _self_identification(value: Any) -> bool:
    return (
        _fields(value, _SELF_IDENTIFICATION)
        and _ident(value["runId"])
        and _list(value["named"], _named, len(NAMED), 1, unique=True)
    )


def _ref(value: Any) -> bool:
    """A campaign or criterion named by id and version."""
    return _fields(value, ("id", "version")) and _ident(value["id"]) and _version(value["version"])


def is_review_item(value: Any) -> bool:
    """Whether ``ReviewItem`` takes ``value`` as it stands: two candidates ordered by distinct run
    ids, shown in an order that lists both, and self-identifying candidates (when listed: a null
    is left to the model) named once each, in candidate order."""
    if not (
        _fields(value, _ITEM, _ITEM_OPTIONAL)
        and _ident(value["itemId"])
        and _ref(value["campaign"])
        and _ident(value["promptEventId"])
        and _ref(value["criterion"])
        and _list(value["candidates"], _item_candidate, 2, 2)
        and _list(value["displayOrder"], _ident, 2, 2)
        and _list(value.get("selfIdentification", []), _self_identification, 2)
    ):
        return False
    runs = [c["runId"] for c in value["candidates"]]
    flagged = [f["runId"] for f in value.get("selfIdentification", [])]
    return bool(
        runs[0] < runs[1] and sorted(value["displayOrder"]) == runs and flagged == [r for r in runs if r in flagged]
    )


def review_item(value: Any) -> dict[str, Any]:
    """A review item's payload as ``ReviewItem`` reads it (or its error)."""
    return value if is_review_item(value) else _by_model("records._records", "ReviewItem", value)


# --- candidate run ------------------------------------------------------------------------------
_RUN = ("runId", "campaign", "triggerEventId", "agent", "status", "startedAt", "endedAt", "promptHash")
_RUN_OPTIONAL = ("origin", "promptManifestId", "trace", "retryOf", "error", "outputProblem")
_AGENT = ("id", "model", "provider", "executionAdapter", "catalogGeneration")


def _agent(value: Any) -> bool:
    return (
        _fields(value, _AGENT, ("learnedAdapter",))
        and _ident(value["id"])
        and _text(value["model"], _NAME_MAX)
        and _text(value["provider"], _NAME_MAX)
        and _ident(value["executionAdapter"])
        and _opt_ident(value.get("learnedAdapter"))
        and _ident(value["catalogGeneration"])
    )


def is_candidate_run(value: Any) -> bool:
    """Whether ``CandidateRun`` takes ``value`` as it stands: a failed run carries an error, a
    completed one none."""
    if not _fields(value, _RUN, _RUN_OPTIONAL):
        return False
    status, origin = value["status"], value.get("origin", "local")
    error, problem = value.get("error"), value.get("outputProblem")
    return (
        _ident(value["runId"])
        and _ref(value["campaign"])
        and _ident(value["triggerEventId"])
        and _agent(value["agent"])
        and type(status) is str
        and status in ("completed", "failed")
        and type(origin) is str
        and origin in ("local", "imported")
        and _text(value["startedAt"], _TIMESTAMP_MAX)
        and _text(value["endedAt"], _TIMESTAMP_MAX)
        and _digest(value["promptHash"])
        and _opt_ident(value.get("promptManifestId"))
        and _opt_ident(value.get("trace"))
        and _opt_ident(value.get("retryOf"))
        and (error is None or _text(error, ERROR_MAX_CHARS))
        and (problem is None or _text(problem, ERROR_MAX_CHARS))
        and (status == "failed") == (error is not None)
    )


def candidate_run(value: Any) -> dict[str, Any]:
    """A candidate run's payload as ``CandidateRun`` reads it (or its error)."""
    return value if is_candidate_run(value) else _by_model("records._run_records", "CandidateRun", value)


# --- review response ----------------------------------------------------------------------------
def is_review_response(value: Any) -> bool:
    """Whether ``ReviewResponse`` takes ``value`` as it stands."""
    return _fields(value, ("response",)) and _text(value["response"], RESPONSE_MAX_CHARS)


def review_response(value: Any) -> str:
    """The response of a review-response payload, as ``ReviewResponse`` reads it (or its error)."""
    payload = value if is_review_response(value) else _by_model("records._records", "ReviewResponse", value)
    response: str = payload["response"]
    return response


# --- candidate facts ----------------------------------------------------------------------------
_FLAT = (
    "runId",
    "outputEventId",
    "outputPayloadHash",
    "model",
    "provider",
    "promptHash",
    "executionAdapter",
    "catalogGeneration",
)


def is_candidate_wire(value: dict[str, Any]) -> bool:
    """Whether ``CandidateFacts`` takes the facts ``value`` (wire names, every field given) as
    they stand."""
    learned = value["learnedAdapter"]
    return (
        all(encodable_text(value[k]) for k in _FLAT)
        and (learned is None or encodable_text(learned))
        and _mapping(value["run"])
        and _mapping(value["contextManifest"])
        and all(type(value[k]) is str and value[k] in PRIVACY_ORDER for k in ("runPrivacy", "outputPrivacy"))
    )


def _mapping(value: Any) -> bool:
    """What ``dict[str, Any]`` takes as it stands."""
    return type(value) is dict and all(type(k) is str for k in value)


def candidate_wire(
    run: dict[str, Any],
    run_wire: Any,
    *,
    output_event_id: str,
    output_payload_hash: str,
    context_manifest: Any,
    run_privacy: Privacy,
    output_privacy: Privacy,
) -> dict[str, Any]:
    """The digested facts of one candidate (wire names), as :func:`~._resolve.candidate_facts`
    gives them (or its error): ``run`` is the run's payload as read (:func:`candidate_run`),
    ``run_wire`` as recorded."""
    agent = run["agent"]
    wire = {
        "runId": run["runId"],
        "run": run_wire,
        "outputEventId": output_event_id,
        "outputPayloadHash": output_payload_hash,
        "contextManifest": context_manifest,
        "model": agent["model"],
        "provider": agent["provider"],
        "promptHash": run["promptHash"],
        "executionAdapter": agent["executionAdapter"],
        "learnedAdapter": agent.get("learnedAdapter"),
        "catalogGeneration": agent["catalogGeneration"],
        "runPrivacy": run_privacy,
        "outputPrivacy": output_privacy,
    }
    if is_candidate_wire(wire):
        return wire
    # ``run`` is the run as its model reads it (candidate_run), so the model of the facts reads
    # ``wire`` exactly as it reads the facts the model path builds from that run: refused in its
    # own words, or the value it reads.
    from reviewtrail.human_review.rules._item_rules import CandidateFacts

    names = {field.alias or name: name for name, field in CandidateFacts.model_fields.items()}
    facts = CandidateFacts(**{names[key]: value for key, value in wire.items()})  # by name, as the model path
    dumped: dict[str, Any] = facts.model_dump(mode="json", by_alias=True)
    return dumped
