"""The store's, reviewer's, provenance, models' and evidence record payloads are msgspec models:
they refuse bad payloads naming the wire field and the problem in the words they always used, and
loading them loads no pydantic."""

from __future__ import annotations

import importlib
import subprocess
import sys
from typing import Any

import msgspec
import pytest

from reviewtrail import app
from reviewtrail.errors import InvalidInputError

IDENTITY = "store.identity@1"


def refusal(type_: str, payload: Any) -> str:
    with pytest.raises(InvalidInputError) as info:
        app.catalog().validate(type_, payload)
    return str(info.value)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"storeId": "", "ledgerKind": "sqlite"}, "payload.storeId: String should have at least 1 character"),
        ({"storeId": "s" * 201, "ledgerKind": "sqlite"}, "payload.storeId: String should have at most 200 characters"),
        ({"storeId": "s", "ledgerKind": "mysql"},
         "payload.ledgerKind: String should match pattern '^(sqlite|postgresql|memory)$'"),
        ({"storeId": "s"}, "payload.ledgerKind: Field required"),
        ({"store_id": "s", "ledgerKind": "sqlite"}, "payload.store_id: Extra inputs are not permitted"),
        ({"storeId": 1, "ledgerKind": "sqlite"}, "payload.storeId: Input should be a valid string"),
    ],
)  # fmt: skip
def test_a_store_identity_refusal_names_the_wire_field(payload: dict[str, Any], message: str) -> None:
    assert refusal(IDENTITY, payload) == f"{message} (record type {IDENTITY})"


def test_a_store_identity_is_accepted_under_its_wire_names() -> None:
    app.catalog().validate(IDENTITY, {"storeId": "s", "ledgerKind": "postgresql"})


SESSION = {"sessionId": "s", "projectId": "p", "workspace": "w", "createdAt": "2026-01-01T00:00:00Z"}
VERSION = {
    "artifactId": "a", "projectId": "p", "name": "n", "version": 1, "origin": "user_upload",
    "content": {}, "sessionSnapshot": None, "createdAt": "2026-01-01T00:00:00Z",
}  # fmt: skip
REVIEW = {
    "reviewRunId": "r", "artifactId": "a", "projectId": "p", "name": "n", "version": 1, "versionRecordId": "v",
    "tier": "quick", "trigger": "cli", "checks": [], "findings": [], "decision": "SKIPPED", "summary": "",
    "startedAt": "t", "endedAt": "t",
}  # fmt: skip
FINDING = {"code": "CITATION_X", "severity": "error", "message": "m", "check": "citation"}


@pytest.mark.parametrize(
    ("type_", "payload", "message"),
    [
        ("provenance.session@1", {**SESSION, "session_id": "s"}, "payload.session_id: Extra inputs are not permitted"),
        ("provenance.artifact-version@1", {**VERSION, "version": 0},
         "payload.version: Input should be greater than or equal to 1"),
        ("provenance.artifact-version@1", {**VERSION, "version": True},
         "payload.version: must be an integer, not a boolean"),
        ("provenance.artifact-version@1", {**VERSION, "origin": "x"},
         "payload.origin: Input should be 'user_upload', 'mcp_download', 'llm_declared' or 'legacy_auto'"),
        ("provenance.session-deleted@1", {"sessionId": "s", "deletedAt": "t", "workspaceRemoved": 1},
         "payload.workspaceRemoved: must be a boolean (true or false), not an integer"),
        ("reviewer.artifact-review-run@1", {**REVIEW, "summary": "s" * 1001},
         "payload.summary: String should have at most 1000 characters"),
        ("reviewer.artifact-review-run@1", {**REVIEW, "findings": [{**FINDING, "code": "x"}]},
         "payload.findings.0.code: String should match pattern '^[A-Z][A-Z0-9_]{2,63}$'"),
        ("reviewer.artifact-review-run@1", {**REVIEW, "findings": [{**FINDING, "evidence_refs": []}]},
         "payload.findings.0.evidence_refs: Extra inputs are not permitted"),
        ("reviewer.artifact-review-run@1", {**REVIEW, "checks": [{"check": "c", "status": "ok"}]},
         "payload.checks.0.status: Input should be 'passed', 'failed', 'inconclusive' or 'skipped'"),
    ],
)  # fmt: skip
def test_a_refusal_names_the_wire_field_and_the_problem(type_: str, payload: dict[str, Any], message: str) -> None:
    assert refusal(type_, payload) == f"{message} (record type {type_})"


def test_a_run_refuses_a_boolean_for_its_timeout() -> None:
    from reviewtrail.provenance.records._records import ExecutionRun

    with pytest.raises(InvalidInputError) as info:
        ExecutionRun.read({"timeoutSeconds": True})
    assert str(info.value) == "payload.timeoutSeconds: must be a number, not a boolean"


H = "a" * 64
USAGE = {
    "startedAt": "2026-01-01T00:00:00Z", "endedAt": "2026-01-01T00:00:01Z", "callType": "task", "usage": {},
    "cost": {"amount": None, "source": "unknown"}, "durationMs": 1, "manifestId": "m", "manifestHash": H,
}  # fmt: skip


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({**USAGE, "manifestHash": "x"},
         "payload.manifestHash: Value error, 'x' is not 64 lowercase hex digits (the manifest record's payloadHash)"),
        ({**USAGE, "startedAt": "2026-01-01T00:00:00"}, "payload.startedAt: Input should have timezone info"),
        ({**USAGE, "startedAt": "yesterday"}, "payload.startedAt: Input should be a valid datetime"),
        ({**USAGE, "cost": {"amount": "1", "source": "unknown"}},
         "payload.cost: Value error, amount is null exactly when source is 'unknown'"),
        ({**USAGE, "cost": {"amount": "1e3", "source": "genai-prices"}},
         "payload.cost.amount: Value error, '1e3' is not a non-negative decimal like '0.0075'"),
        ({**USAGE, "usage": {"cacheWrite5mTokens": -1}},
         "payload.usage.cacheWrite5mTokens: Input should be greater than or equal to 0"),
        ({**USAGE, "durationMs": True}, "payload.durationMs: must be an integer, not a boolean"),
        ({**{k: v for k, v in USAGE.items() if k != "durationMs"}, "duration_ms": 1},
         "payload.duration_ms: Extra inputs are not permitted"),
    ],
)  # fmt: skip
def test_a_usage_refusal_names_the_wire_field_and_the_problem(payload: dict[str, Any], message: str) -> None:
    type_ = "provenance.model-usage@1"
    assert refusal(type_, payload) == f"{message} (record type {type_})"


def test_a_usage_reads_back_to_the_payload_it_was_read_from() -> None:
    from reviewtrail.models._records import ModelInvocationUsage

    written = {**USAGE, "usage": {"inputTokens": 3, "outputTokens": None, "totalTokens": None, "cacheReadTokens": 1}}
    usage = ModelInvocationUsage.read(written)
    times = {"startedAt": "2026-01-01T00:00:00.000000Z", "endedAt": "2026-01-01T00:00:01.000000Z"}
    assert usage.payload_json() == {
        **written,
        **times,
        "cost": {"amount": None, "currency": "USD", "source": "unknown"},
    }


@pytest.mark.parametrize(
    ("type_", "payload", "message"),
    [
        ("evidence.item@1", {"evidenceId": "e", "origin": {"kind": "paper", "paperId": "x", "page": 0}},
         "payload.origin.paper.page: Input should be greater than or equal to 1"),
        ("evidence.item@1", {"evidenceId": "e", "origin": {"kind": "paper", "paperId": "x", "paper_id": "x"}},
         "payload.origin.paper.paper_id: Extra inputs are not permitted"),
        ("evidence.alias-map@1", {"aliases": {"EV1": "e"}},
         "payload.aliases.EV1.[key]: String should match pattern '^(?:ev|evidence|artifact)[0-9]+$'"),
        ("evidence.alias-map@1", {"aliases": {"ev1": "a b"}},
         "payload.aliases.ev1: String should match pattern '^\\S+$'"),
        ("evidence.alias-map@1", {"aliases": {"ev1": "e"}, "artifactId": "a"},
         "payload: Value error, artifactId and artifactVersion go together"),
        ("evidence.pdf-extraction@1", {"paperId": "p", "status": "failed"},
         "payload: Value error, a failed extraction needs its error"),
        ("evidence.link@1", {"claimId": "c", "evidenceId": "e", "relation": "refutes"},
         "payload.relation: Input should be 'supports', 'context' or 'contradicts'"),
    ],
)  # fmt: skip
def test_an_evidence_refusal_names_the_wire_field_and_the_problem(
    type_: str, payload: dict[str, Any], message: str
) -> None:
    assert refusal(type_, payload) == f"{message} (record type {type_})"


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"kind": "nope"}, "origin.kind: Input tag 'nope' found using 'kind' does not match any of the expected tags: "
                           "'mcp-record', 'paper', 'execution', 'artifact', 'remote-job', 'user-input'"),
        ({}, "origin.kind: Unable to extract tag using discriminator 'kind'"),
        ({"kind": "paper", "paperId": "x", "page": 0}, "origin.paper.page: Input should be greater than or equal to 1"),
    ],
)  # fmt: skip
def test_an_origin_refusal_names_the_kind_in_pydantics_words(doc: dict[str, Any], message: str) -> None:
    from reviewtrail.evidence import parse_origin

    with pytest.raises(InvalidInputError) as info:
        parse_origin(doc)
    assert str(info.value) == message


def test_an_origin_is_read_by_its_kind_and_keeps_its_kind_when_written() -> None:
    from reviewtrail.evidence import parse_origin
    from reviewtrail.evidence._records import PaperOrigin

    origin = parse_origin({"kind": "paper", "paperId": "doi:10.1/x"})
    assert type(origin) is PaperOrigin and origin.kind == "paper"
    assert msgspec.to_builtins(origin) == {
        "kind": "paper", "paperId": "doi:10.1/x", "page": None, "quoteHash": None, "fullTextRetrieved": False,
    }  # fmt: skip


MODELS: dict[str, tuple[str, ...]] = {
    "reviewtrail.store.identity": ("StoreIdentity",),
    "reviewtrail.reviewer._records": ("ArtifactReviewRun", "ReviewFinding", "CheckResult"),
    "reviewtrail.provenance.records._records": (
        "SessionCreated", "SessionDeleted", "ExecutionRun", "ArtifactDerivation", "ArtifactVersion",
    ),
    "reviewtrail.evidence._records": (
        "Claim", "AliasMap", "EvidenceItem", "EvidenceLink", "PdfExtraction", "ClaimCitation", "PaperOrigin",
    ),
    "reviewtrail.models": (
        "PromptManifest", "ModelInvocationUsage", "SkillRef", "TokenUsage", "HttpAttempt", "CallError", "Cost",
    ),
}  # fmt: skip
#: Packages whose record models load without pydantic.
PYDANTIC_FREE = (
    "reviewtrail.store.identity",
    "reviewtrail.provenance",
    "reviewtrail.reviewer",
    "reviewtrail.models",
    "reviewtrail.evidence",
)


@pytest.mark.parametrize("module", sorted(MODELS))
def test_the_payload_models_are_msgspec_models(module: str) -> None:
    loaded = importlib.import_module(module)
    assert [n for n in MODELS[module] if not issubclass(getattr(loaded, n), msgspec.Struct)] == []


@pytest.mark.parametrize("module", PYDANTIC_FREE)
def test_loading_a_package_and_its_record_models_loads_no_pydantic(module: str) -> None:
    code = f"import sys, {module} as m\nm.RECORD_TYPES\nassert 'pydantic' not in sys.modules, 'pydantic loaded'\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
