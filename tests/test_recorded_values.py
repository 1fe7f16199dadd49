"""One recorded-value wrapper (a payload model and its envelope), finding codes as one literal
type, and a lineage graph that says with a field when it was cut."""

from __future__ import annotations

import ast
import re
import typing
from pathlib import Path

import pytest

import reviewtrail
from reviewtrail._struct import PayloadStruct, decode
from reviewtrail.ledger import MemoryLedger, NewRecord, Recorded, new_record
from reviewtrail.models import Invocation
from reviewtrail.provenance.artifacts import LineageGraph, VersionInfo
from reviewtrail.provenance.runs import RunOutcome
from reviewtrail.reviewer import FINDING_CODES, FindingCode, ReviewFinding, ReviewOutcome
from reviewtrail.reviewer._records import ArtifactReviewRun

SRC = Path(reviewtrail.__file__).parent


def _dataclasses_holding_an_envelope() -> list[str]:
    """Classes in src with a class-level field annotated ``Envelope`` (the wrapper's own included)."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and ast.unparse(item.annotation) == "Envelope":
                    found.append(f"{path.relative_to(SRC)}:{node.name}.{ast.unparse(item.target)}")
    return found


def test_only_the_generic_wrapper_holds_a_payload_and_its_envelope() -> None:
    # ``Current`` is no payload wrapper: it is where a record's corrections lead in the chain (the
    # envelope in force, of whatever type), read to follow amendments. Every other class that wants
    # a payload with its envelope holds a ``Recorded``. ``CandidateParts`` is no payload wrapper
    # either: it holds the envelopes in force that a candidate rests on, no payload read from them.
    assert _dataclasses_holding_an_envelope() == [
        "human_review/reads/_candidates.py:CandidateParts.run",
        "human_review/reads/_candidates.py:CandidateParts.output",
        "human_review/reads/_candidates.py:CandidateParts.receipt",
        "human_review/reads/_chains.py:Current.content",
        "ledger/records/_recorded.py:Recorded.envelope",
    ]


@pytest.mark.parametrize("cls", [RunOutcome, VersionInfo, ReviewOutcome])
def test_the_domain_results_are_recorded_values(cls: type) -> None:
    assert issubclass(cls, Recorded)


def test_a_recorded_value_decodes_its_payload_bytes_once_into_its_model() -> None:
    """The payload's bytes go straight into the model: no generic JSON value is built first
    (and encoded again for the model)."""

    payload = {"runId": "r1", "versionRecordId": "v1", "decision": "accept"}
    ledger = MemoryLedger()
    [env] = ledger.append([NewRecord(type="test.plain@1", actor="a", privacy="private", payload=payload)])
    fresh = env.replace()  # an envelope as read back: nothing parsed yet
    assert "payload_value" not in fresh.__dict__
    recorded = Recorded.of(_Plain, fresh)
    assert recorded.record == _Plain(run_id="r1", version_record_id="v1", decision="accept")
    assert "payload_value" not in fresh.__dict__, "the payload was parsed into a generic value first"


class _Plain(PayloadStruct, frozen=True, kw_only=True, rename="camel"):
    run_id: str
    version_record_id: str
    decision: str


def test_an_invocation_holds_its_two_records_as_recorded_values() -> None:
    hints = typing.get_type_hints(Invocation)
    assert typing.get_origin(hints["prompt_manifest"]) is Recorded
    assert typing.get_origin(hints["model_usage"]) is Recorded


def test_a_recorded_value_reads_its_payload_and_reports_its_record_id() -> None:
    run = decode(
        ArtifactReviewRun,
        {
            "reviewRunId": "r1",
            "artifactId": "a",
            "projectId": "p",
            "name": "n",
            "version": 1,
            "versionRecordId": "v",
            "tier": "quick",
            "trigger": "cli",
            "checks": [],
            "findings": [],
            "decision": "SKIPPED",
            "summary": "",
            "contentDigest": "sha256:" + "0" * 64,
            "startedAt": "2026-01-01T00:00:00Z",
            "endedAt": "2026-01-01T00:00:00Z",
        },
        field="payload",
    )
    [env] = MemoryLedger().append([new_record(run, actor="a", privacy="private")])
    recorded = Recorded.of(ArtifactReviewRun, env)
    assert recorded.record == run and recorded.envelope is env and recorded.id == env.id
    assert recorded.to_json() == {**run.payload_json(), "recordId": env.id}
    outcome = ReviewOutcome(run, env)
    assert outcome.run is run and outcome.to_json() == recorded.to_json()


def test_a_recorded_value_refuses_a_payload_its_model_does_not_accept() -> None:
    [env] = MemoryLedger().append([NewRecord.make(type="x.y@1", actor="a", privacy="private", payload={"a": 1})])
    with pytest.raises(ValueError, match=r"^payload\.a: Extra inputs are not permitted$"):
        Recorded.of(ArtifactReviewRun, env)


# --- finding codes --------------------------------------------------------------------------


CODE = re.compile(r"(CITATION|ADVICE|COMPUTATION|ARTIFACT|FULL_TEXT|REVIEW|LLM)(_[A-Z0-9]+)+")


def _emitted_codes() -> set[str]:
    """Every finding-code string literal in the reviewer's modules (``__all__`` lists and the
    record type's name left out)."""
    codes = set()
    for path in (SRC / "reviewer").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        listed = {
            id(c)
            for node in tree.body
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
            for c in ast.walk(node.value)
        }
        for node in ast.walk(tree):
            is_text = isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in listed
            if is_text and CODE.fullmatch(node.value):
                codes.add(node.value)
    return codes


def test_the_finding_code_type_lists_every_code_the_reviewer_emits() -> None:
    assert set(typing.get_args(FindingCode)) == FINDING_CODES
    emitted = _emitted_codes()
    assert len(emitted) >= 20
    assert emitted == FINDING_CODES


def test_new_findings_take_only_listed_codes() -> None:
    finding = ReviewFinding.new("COMPUTATION_UNBACKED", "error", "computation", "no run")
    assert finding.code == "COMPUTATION_UNBACKED"
    with pytest.raises(ValueError, match="COMPUTATION_UNBACKD"):
        ReviewFinding.new("COMPUTATION_UNBACKD", "error", "computation", "no run")  # type: ignore[arg-type]


def test_recorded_findings_with_other_codes_still_load() -> None:
    """Records written with codes this version no longer emits, and an LLM reviewer's own codes."""
    old = ReviewFinding.read({"code": "CITATION_OLD_RULE", "severity": "error", "message": "m", "check": "c"})
    assert old.code == "CITATION_OLD_RULE"


# --- lineage truncation ---------------------------------------------------------------------


def test_a_lineage_graph_says_it_was_truncated_with_a_field() -> None:
    graph = LineageGraph(root="r")
    assert graph.truncated is False and graph.to_json()["truncated"] is False
    graph.truncated = True
    assert graph.to_json()["truncated"] is True
