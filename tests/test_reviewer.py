"""Claims, evidence and the Reviewer Specialist on a real store, with real sandbox runs."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from conftest import need
from reviewtrail.app import init_store
from reviewtrail.config import ReviewerSettings, Settings, TraceSettings
from reviewtrail.errors import ConfigError, InvalidInputError, NotFoundError
from reviewtrail.evidence import (
    add_evidence,
    claims_for,
    full_text_retrieved,
    get_evidence,
    link_evidence,
    links_of,
    record_claims,
    record_pdf_extraction,
)
from reviewtrail.provenance.artifacts import declare_artifact, get_version, versions_of
from reviewtrail.provenance.runs import create_session, run_code
from reviewtrail.reviewer import get_review, review_artifact, review_checkpoint, summarize
from reviewtrail.reviewer._records import SUMMARY_LIMIT, ReviewFinding
from reviewtrail.store import Store
from reviewtrail.verify import verify_store
from support.pdf import minimal_pdf

QUICK = ReviewerSettings(tier="quick")
OFF = ReviewerSettings(tier="off")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    need(shutil.which("bwrap") is not None, "bubblewrap (bwrap) is not installed")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REVIEWTRAIL_REVIEWER", raising=False)
    root = tmp_path / "store"
    s = init_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}"))
    yield s  # type: ignore[misc]
    s.close()


def _report(store: Store, text: str, name: str = "report.md") -> tuple[str, str]:
    """A computing run writes a draft of ``name``; a second run rewrites it as ``text``, where {run}
    stands for the computing run's id (which is therefore in the artifact's lineage); then it is declared."""
    session = create_session(store)
    draft = f"open({name!r}, 'w').write('accuracy 0.91')"
    first = run_code(store, session_id=session.session_id, code=draft, lang="python")
    body = text.replace("{run}", first.envelope.id)
    code = f"open({name!r}, 'w').write({body!r})"
    writer = run_code(store, session_id=session.session_id, code=code, lang="python")
    declare_artifact(store, session_id=session.session_id, name=name, path=name)
    return first.envelope.id, writer.envelope.id


def test_claims_are_recorded_and_unresolved_citations_reported(store: Store) -> None:
    run_id, _ = _report(store, "x")
    reply = f"Accuracy reached 0.91 [run:{run_id}]. It was trained for 3 epochs [run:does-not-exist].\n\nNo claim here."
    recorded = record_claims(store, reply, turn_id="t1", review_run_id="rr1")
    assert len(recorded.claims) == 2 and all(c.numeric for c in recorded.claims)
    assert recorded.claims[0].citations[0].resolved and recorded.claims[0].citations[0].target == f"execution:{run_id}"
    assert recorded.unresolved == [(recorded.claims[1].claim_id, "[run:does-not-exist]")]
    assert [c.claim_id for c in claims_for(store, turn_id="t1")] == [c.claim_id for c in recorded.claims]
    assert store.cas.read(recorded.claims[0].source["digest"]).decode() == reply  # type: ignore[index]


def test_evidence_is_deduplicated_checked_and_linked(store: Store) -> None:
    run_id, _ = _report(store, "x")
    a, created = add_evidence(store, {"kind": "execution", "runId": run_id})
    b, again = add_evidence(store, {"kind": "execution", "runId": run_id})
    assert a == b and created and not again
    with pytest.raises(NotFoundError):
        add_evidence(store, {"kind": "execution", "runId": "missing"})
    with pytest.raises(InvalidInputError):
        add_evidence(store, {"kind": "telepathy"})
    with pytest.raises(InvalidInputError):
        add_evidence(store, {"kind": "mcp-record", "server": "pubmed", "recordType": "article", "recordId": "1",
                             "contentScope": "everything"})  # fmt: skip
    with pytest.raises(InvalidInputError) as err:
        add_evidence(store, {"kind": "paper", "paperId": "doi:10.1/x", "fullTextRetrieved": True})
    assert err.value.field == "origin.fullTextRetrieved"
    [claim] = record_claims(store, f"The score is 0.91 [run:{run_id}].").claims
    link_evidence(store, claim.claim_id, a, "supports")
    [(link, item)] = links_of(store, claim.claim_id)
    assert link.relation == "supports" and item.origin.kind == "execution"
    with pytest.raises(InvalidInputError):
        link_evidence(store, claim.claim_id, a, "maybe")  # type: ignore[arg-type]


def test_reads_decode_each_payload_once_into_its_model(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claims, evidence, links, artifact versions and reviews are read from their payload bytes
    straight into their models: none is parsed, encoded again and then decoded."""
    from reviewtrail import _struct
    from reviewtrail.evidence import get_claim
    from reviewtrail.provenance.artifacts import list_artifacts

    run_id, _ = _report(store, "Accuracy is 0.91 [run:{run}].\n")
    evidence_id, _ = add_evidence(store, {"kind": "execution", "runId": run_id})
    [claim] = record_claims(store, f"The score is 0.91 [run:{run_id}].", turn_id="t9").claims
    link_evidence(store, claim.claim_id, evidence_id, "supports")
    review = review_artifact(store, "report.md", settings=QUICK)

    def encoded_again(value: object) -> bytes:
        raise AssertionError(f"a parsed value was encoded again to be decoded: {str(value)[:80]}")

    monkeypatch.setattr(_struct, "_encode", encoded_again)
    assert [c.claim_id for c in claims_for(store, turn_id="t9")] == [claim.claim_id]
    assert get_claim(store, claim.claim_id) == claim
    [(link, item)] = links_of(store, claim.claim_id)
    assert link.evidence_id == evidence_id and item.origin.kind == "execution"
    assert [v.record.name for v in list_artifacts(store)] == ["report.md"]
    assert [v.record.version for v in versions_of(store, "report.md")] == [1]
    assert [r.record.review_run_id for r in get_review(store, "report.md")] == [review.run.review_run_id]


def test_full_text_only_after_a_successful_pdf_extraction(store: Store) -> None:
    evidence_id, _ = add_evidence(store, {"kind": "paper", "paperId": "doi:10.1/x", "page": 3})
    assert get_evidence(store, evidence_id).origin.full_text_retrieved is False  # type: ignore[union-attr]
    failed = record_pdf_extraction(store, "doi:10.1/x", b"not a pdf")
    assert failed.status == "failed" and not full_text_retrieved(store, "doi:10.1/x")
    ok = record_pdf_extraction(store, "doi:10.1/x", minimal_pdf("The full text of the paper"))
    assert ok.status == "succeeded" and full_text_retrieved(store, "doi:10.1/x")
    assert ok.text is not None and store.cas.read(ok.text).decode().strip() == "The full text of the paper"
    other, _ = add_evidence(store, {"kind": "paper", "paperId": "doi:10.1/x", "page": 4, "fullTextRetrieved": True})
    assert get_evidence(store, other).origin.full_text_retrieved is True  # type: ignore[union-attr]


def test_the_reviewer_is_off_unless_enabled(store: Store) -> None:
    _report(store, "Plain text.")
    with pytest.raises(ConfigError):
        review_artifact(store, "report.md", settings=OFF)
    assert review_checkpoint(store, "report.md", settings=OFF) is None
    assert store.ledger.rows("rv_runs") == []


def test_quick_review_accepts_backed_numbers(store: Store) -> None:
    _report(store, "# Results\n\nAccuracy is 0.91 on the test set [run:{run}].\n")
    before = versions_of(store, "report.md")
    outcome = review_artifact(store, "report.md", settings=QUICK, trigger="cli")
    assert outcome.run.decision == "ACCEPT_AND_PROCEED", outcome.run.findings
    assert {c.check: c.status for c in outcome.run.checks} == {"citation": "skipped", "computation": "passed"}
    assert versions_of(store, "report.md") == before, "a review never changes the artifact"
    [shown] = get_review(store, "report.md")
    assert shown.run.review_run_id == outcome.run.review_run_id and len(shown.run.summary) <= SUMMARY_LIMIT
    assert verify_store(store).ok


def test_quick_review_flags_unbacked_failed_and_foreign_numbers(store: Store) -> None:
    other = create_session(store)
    foreign = run_code(store, session_id=other.session_id, code="print(1)", lang="python").envelope.id
    failed = run_code(store, session_id=other.session_id, code="raise SystemExit(2)", lang="python").envelope.id
    text = (
        "Accuracy is 0.91 [run:{run}].\n\n"
        f"Recall is 0.75 [run:{failed}].\n\n"
        f"Precision is 0.66 [run:{foreign}].\n\n"
        "F1 is 0.70 [doi:10.1000/none].\n"
    )
    _report(store, text)
    outcome = review_artifact(store, "report.md", settings=QUICK)
    codes = sorted(f.code for f in outcome.run.findings)
    assert outcome.run.decision == "REVISE_AND_RETRY"
    assert "COMPUTATION_RUN_FAILED" in codes
    assert "COMPUTATION_OUTPUT_NOT_IN_LINEAGE" in codes
    assert "COMPUTATION_UNBACKED" in codes and "CITATION_UNRESOLVED" in codes
    assert codes.count("COMPUTATION_UNBACKED") == 1, "the backed claim is not flagged"


def test_quick_review_runs_the_citation_check(store: Store) -> None:
    _report(store, "Transformers scale well [1].\n\nSee also prior work [2].\n")
    outcome = review_artifact(store, "report.md", settings=QUICK)
    assert outcome.run.decision == "REVISE_AND_RETRY"
    assert "CITATION_REFERENCE_MISSING" in {f.code for f in outcome.run.findings}


def test_a_full_text_claim_without_extraction_is_flagged(store: Store) -> None:
    add_evidence(store, {"kind": "paper", "paperId": "doi:10.5/p"})
    _report(store, "We read the full text of the study [doi:10.5/p].\n")
    outcome = review_artifact(store, "report.md", settings=QUICK)
    assert "FULL_TEXT_NOT_RETRIEVED" in {f.code for f in outcome.run.findings}
    record_pdf_extraction(store, "doi:10.5/p", minimal_pdf("study text"))
    again = review_artifact(store, "report.md", settings=QUICK)
    assert "FULL_TEXT_NOT_RETRIEVED" not in {f.code for f in again.run.findings}


def test_smart_review_uses_a_traced_llm_call(store: Store, tmp_path: Path) -> None:
    from reviewtrail.models import ScriptedBackend
    from reviewtrail.tracing.files import iter_runs, verify_traces

    _report(store, "Accuracy is 0.91 [run:{run}].\n")
    answer = json.dumps({"verdict": "revise", "findings": [{"code": "unclear-metric", "severity": "warning",
                                                             "message": "say which split"}]})  # fmt: skip
    backend = ScriptedBackend([answer])
    outcome = review_artifact(store, "report.md", tier="smart", settings=OFF, backend=backend, project_dir=tmp_path)
    assert [c.check for c in outcome.run.checks] == ["citation", "computation", "smart"]
    assert "UNCLEAR_METRIC" in {f.code for f in outcome.run.findings}
    assert outcome.run.decision == "ACCEPT_AND_PROCEED"
    [manifest_id] = outcome.run.prompt_manifest_ids
    assert store.ledger.get(manifest_id).type == "provenance.prompt-manifest@1"
    [run] = list(iter_runs(tmp_path, "reviewer-specialist"))
    meta = run.calls[0].meta
    assert meta is not None and meta["reviewer_model_source"] in ("backend-reported", "requested")
    assert meta["acceptance_status"] == "provisional", "no known executor family: never accepted"
    assert verify_traces(tmp_path)[1] == []
    # The trace carries the call's real timing, the same as its prompt manifest.
    manifest = store.ledger.get(manifest_id).payload_value
    started = datetime.fromisoformat(manifest["startedAt"].replace("Z", "+00:00"))
    ended = datetime.fromisoformat(manifest["endedAt"].replace("Z", "+00:00"))
    assert meta["duration_ms"] == int((ended - started).total_seconds() * 1000)
    stamped = datetime.fromisoformat(run.calls[0].request["timestamp"])  # written to the millisecond
    assert stamped == started.replace(microsecond=started.microsecond // 1000 * 1000)


def test_summary_is_bounded() -> None:
    findings = [ReviewFinding(code=f"CODE_{i}", severity="error", check="x", message="m" * 200) for i in range(50)]
    text = summarize("a", 1, "quick", "REVISE_AND_RETRY", findings)
    assert len(text) <= SUMMARY_LIMIT and text.startswith("Review of a@1 (quick): REVISE_AND_RETRY; 50 error(s)")


def test_unknown_artifact(store: Store) -> None:
    with pytest.raises(NotFoundError):
        review_artifact(store, "nope", settings=QUICK)
    _ = get_version


def test_smart_review_respects_trace_mode_and_never_accepts_a_stand_in(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewtrail.models import ScriptedBackend
    from reviewtrail.tracing.files import iter_runs

    _report(store, "Accuracy is 0.91 [run:{run}].\n")
    ready = json.dumps({"verdict": "ready", "findings": []})
    for mode in ("meta", "off"):
        with pytest.raises(ConfigError):
            review_artifact(
                store, "report.md", tier="smart", settings=OFF, trace=TraceSettings(mode=mode),
                backend=ScriptedBackend([ready]),
            )  # fmt: skip
    assert store.ledger.rows("rv_runs") == [] and not store.ledger.tail(1, type="provenance.prompt-manifest")
    executor = ReviewerSettings(tier="off", executor_model="gpt-5")
    backend = ScriptedBackend([ready, json.dumps({"verdict": "revise", "findings": []})], model="claude-sonnet-4")
    review_artifact(store, "report.md", tier="smart", settings=executor, backend=backend, project_dir=tmp_path)
    # an unchanged version would reuse the first review: force a second model call
    review_artifact(store, "report.md", tier="smart", settings=executor, backend=backend, project_dir=tmp_path,
                    force=True)  # fmt: skip
    metas = [c.meta for r in iter_runs(tmp_path, "reviewer-specialist") for c in r.calls]
    assert [m["review_positive"] for m in metas if m] == [True, False], "a 'revise' verdict is never positive"
    assert all(m and m["reviewer_kind"] == "deterministic" and m["acceptance_status"] == "provisional" for m in metas)


def test_second_read_regressions(store: Store, tmp_path: Path) -> None:
    from reviewtrail.models import ScriptedBackend
    from reviewtrail.provenance.artifacts import upload_artifact
    from reviewtrail.reviewer._llm import _parse

    # an unreadable LLM answer makes the tier inconclusive; prose with braces before the JSON is fine
    _report(store, "Accuracy is 0.91 [run:{run}].\n")
    outcome = review_artifact(store, "report.md", tier="smart", settings=OFF,
                              backend=ScriptedBackend(["I cannot comply."]), project_dir=tmp_path)  # fmt: skip
    assert {c.check: c.status for c in outcome.run.checks}["smart"] == "inconclusive"
    verdict, found, parsed = _parse('About {x}: {"verdict": "revise", "findings": [{"code": "WRONG_NUMBER", '
                                    '"severity": "error", "message": "m"}]}', "smart")  # fmt: skip
    assert parsed and verdict == "revise" and [f.code for f in found] == ["WRONG_NUMBER"]

    # [ev:ID] pointing at execution evidence backs a number
    run_id, _ = _report(store, "draft", name="ev.md")
    evidence_id, _ = add_evidence(store, {"kind": "execution", "runId": run_id})
    session = create_session(store)
    run_code(store, session_id=session.session_id, code=f"open('e.md','w').write('Acc is 0.91 [ev:{evidence_id}].')",
             lang="python")  # fmt: skip
    declare_artifact(store, session_id=session.session_id, name="e.md", path="e.md")
    codes = {f.code for f in review_artifact(store, "e.md", settings=QUICK).run.findings}
    assert "COMPUTATION_UNBACKED" not in codes and "CITATION_UNRESOLVED" not in codes

    # text that cannot be read is inconclusive, not skipped
    latin = tmp_path / "latin.md"
    latin.write_bytes(b"Caf\xe9 accuracy is 0.99 [run:x].\n")
    upload_artifact(store, name="latin.md", file=latin, media_type="text/markdown")
    checks = {c.check: c.status for c in review_artifact(store, "latin.md", settings=QUICK).run.checks}
    assert checks == {"citation": "inconclusive", "computation": "inconclusive"}

    # a broken PDF is a failed extraction, never a crash
    assert record_pdf_extraction(store, "doi:10.9/broken", b"%PDF-1.4\n1 0 obj << /Pages 9 0 R >>").status == "failed"

    # paper ids: DOIs compare case-insensitively
    a, _ = add_evidence(store, {"kind": "paper", "paperId": "DOI:10.5/ABC"})
    b, created = add_evidence(store, {"kind": "paper", "paperId": "doi:10.5/abc"})
    assert a == b and not created


def test_mcp_and_artifact_evidence_resolve_and_stay_in_their_project(store: Store, tmp_path: Path) -> None:
    from reviewtrail.evidence import resolve_citation
    from reviewtrail.provenance.artifacts import upload_artifact

    add_evidence(store, {"kind": "mcp-record", "server": "pubmed", "recordType": "article", "recordId": "PMID9",
                         "contentScope": "abstract", "paperId": "doi:10.9/zz"})  # fmt: skip
    assert resolve_citation(store, "mcp", "PMID9") is not None
    assert resolve_citation(store, "mcp", "pubmed/article/PMID9") is not None
    assert resolve_citation(store, "doi", "10.9/ZZ") is not None
    f = tmp_path / "a.md"
    f.write_text("x")
    a = upload_artifact(store, name="a.md", file=f, project_id="A")
    b = upload_artifact(store, name="a.md", file=f, project_id="B")
    forged = {"kind": "artifact", "artifactId": a.version.artifact_id, "name": "other.md", "version": 1,
              "content": {"anything": "x"}}  # fmt: skip
    ev_a, _ = add_evidence(store, forged)
    assert get_evidence(store, ev_a).origin.name == "a.md"  # type: ignore[union-attr]
    ev_b, _ = add_evidence(store, {**forged, "artifactId": b.version.artifact_id})
    assert ev_a != ev_b


def test_links_are_recorded_once_and_a_checkpoint_is_a_no_op_when_off(store: Store) -> None:
    run_id, _ = _report(store, "Accuracy is 0.91 [run:{run}].\n")
    evidence_id, _ = add_evidence(store, {"kind": "execution", "runId": run_id})
    [claim] = record_claims(store, f"The score is 0.91 [run:{run_id}].").claims
    first = link_evidence(store, claim.claim_id, evidence_id, "supports")
    again = link_evidence(store, claim.claim_id, evidence_id, "supports")
    assert first.id == again.id and len(links_of(store, claim.claim_id)) == 1
    assert review_checkpoint(store, "report.md", settings=OFF, tier="quick") is None
    assert review_checkpoint(store, "report.md", settings=QUICK) is not None
