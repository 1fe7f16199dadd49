"""``reviewtrail claims | evidence | review`` end to end."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import init_cli_store, need
from conftest import run_wide as run
from contracts.store_backend import StoreBackend


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    need(shutil.which("bwrap") is not None, "bubblewrap (bwrap) is not installed")
    return init_cli_store(tmp_path, monkeypatch, "REVIEWTRAIL_PROJECT", "REVIEWTRAIL_REVIEWER")


@pytest.fixture
def backend_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_backend: StoreBackend) -> Path:
    """:func:`project` in each ``store_backend`` configuration."""
    need(shutil.which("bwrap") is not None, "bubblewrap (bwrap) is not installed")
    return init_cli_store(tmp_path, monkeypatch, "REVIEWTRAIL_PROJECT", "REVIEWTRAIL_REVIEWER", backend=store_backend)


def test_claims_evidence_review_flow(backend_project: Path, store_backend: StoreBackend) -> None:
    """Claims, evidence and a Quick review end to end, in the embedded store and on PostgreSQL with
    the objects in S3."""
    project = backend_project
    sid = run("session", "new")[1].strip()
    code, out, _ = run("run", "--session", sid, "-c", "open('r.md','w').write('acc 0.91')", "--json")
    run_id = json.loads(out)["recordId"]
    text = f"# Result\\n\\nAccuracy is 0.91 [run:{run_id}].\\n"
    assert run("run", "--session", sid, "-c", f"open('r.md','w').write('{text}')")[0] == 0
    assert run("artifact", "declare", "r.md", "--session", sid, "--path", "r.md")[0] == 0

    (project / "reply.md").write_text(f"The model scores 0.91 [run:{run_id}]. See [ev:missing] too.\n")
    code, out, _ = run("claims", "extract", "reply.md", "--turn", "t1", "--json")
    doc = json.loads(out)
    assert code == 0 and len(doc["claims"]) == 2 and doc["unresolved"][0]["citation"] == "[ev:missing]"
    claim_id = doc["claims"][0]["claimId"]
    code, out, _ = run("claims", "ls", "--turn", "t1", "--json")
    assert len(json.loads(out)) == 2
    code, out, _ = run("evidence", "add", "--run", run_id, "--json")
    evidence_id = json.loads(out)["evidenceId"]
    assert run("evidence", "add", "--run", run_id)[1].strip().endswith("(already recorded)")
    assert run("evidence", "link", claim_id, evidence_id, "--relation", "supports")[0] == 0
    code, out, _ = run("evidence", "ls", "--claim", claim_id, "--json")
    assert json.loads(out)[0]["relation"] == "supports"
    assert run("evidence", "add", "--run", run_id, "--paper", "doi:1")[0] == 2

    code, _, err = run("review", "run", "r.md")
    assert code == 5 and "off" in err
    code, out, _ = run("review", "run", "r.md", "--json", env={"REVIEWTRAIL_REVIEWER": "quick"})
    review = json.loads(out)
    assert code == 0 and review["decision"] == "ACCEPT_AND_PROCEED" and review["trigger"] == "cli"
    code, out, _ = run("review", "show", review["reviewRunId"])
    assert code == 0 and "ACCEPT_AND_PROCEED" in out
    assert run("verify")[0] == 0
    # the reply the claims came from and the reviewed bytes are where the configuration keeps objects
    store_backend.check_objects(doc["claims"][0]["source"]["digest"], review["contentDigest"])


def test_review_citations_command(project: Path) -> None:
    (project / "d.md").write_text("Scaling helps [1].\n\n## References\n\n[1] Doe. DOI: TODO\n")
    code, out, _ = run("review", "citations", "d.md", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["decision"] == "REVISE_AND_RETRY"
    assert {f["code"] for f in doc["findings"]} == {"CITATION_IDENTIFIER_MISSING"}
    (project / "plain.md").write_text("Nothing cited here.\n")
    code, out, _ = run("review", "citations", "plain.md", "--json")
    assert json.loads(out)["decision"] == "SKIPPED"
    assert run("review", "citations", "missing.md")[0] == 2


def _append_typed(type_: str, payload: str) -> None:
    from reviewtrail.app import open_store
    from reviewtrail.ledger import NewRecord

    with open_store() as store:
        store.append([NewRecord(type=type_, actor="a", privacy="private", payload=json.loads(payload))])


def test_typed_records_are_validated_strictly_even_through_ledger_append(project: Path) -> None:
    from reviewtrail.errors import InvalidInputError

    forged = '{"paperId": "doi:10.1/x", "status": "succeeded", "pages": 1, "text": null, "source": null, "error": null}'
    with pytest.raises(InvalidInputError, match="succeeded"):
        _append_typed("evidence.pdf-extraction@1", forged)
    loose = '{"paperId": "doi:2", "status": "failed", "pages": "3", "error": "x"}'
    with pytest.raises(InvalidInputError, match="pages"):
        _append_typed("evidence.pdf-extraction@1", loose)
    # the generic command never writes the project's own types at all
    base = ["ledger", "append", "--actor", "a", "--privacy", "private"]
    code, _, err = run(*base, "--type", "evidence.pdf-extraction@1", "--payload", forged)
    assert code == 2 and "reserved" in err
    code, out, _ = run("ledger", "tail", "--json", "--type", "evidence")
    assert json.loads(out) == []


def test_forged_extraction_text_must_be_a_real_cas_reference(project: Path) -> None:
    from reviewtrail.errors import InvalidInputError

    forged = '{"paperId": "doi:10.66/f", "status": "succeeded", "pages": 1, "text": {"anything": 1}, "source": null}'
    with pytest.raises(InvalidInputError, match="text"):
        _append_typed("evidence.pdf-extraction@1", forged)
    assert run("evidence", "extract-pdf", "", "missing.pdf")[0] == 2


def test_extract_pdf_of_a_file_that_is_no_pdf_records_nothing(project: Path) -> None:
    from reviewtrail.app import open_store
    from reviewtrail.config import Settings
    from reviewtrail.evidence.catalog import PDF_EXTRACTION

    def stored() -> tuple[int, int]:
        root = project / "store"
        with open_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}")) as store:
            return sum(1 for _ in store.cas.iter_objects()), len(list(store.ledger.read(type=PDF_EXTRACTION)))

    before = stored()
    for name, data in (("notes.txt", b"plain text, not a PDF\n"), ("empty.pdf", b""), ("page.html", b"<html>")):
        (project / name).write_bytes(data)
        code, out, err = run("evidence", "extract-pdf", "doi:10.1/x", name, "--json")
        assert code == 2, err
        assert "error: pdf:" in err and "not a PDF" in err
        assert json.loads(out)["error"]["field"] == "pdf"
    assert stored() == before, "nothing is stored or recorded"
    # a file that says it is a PDF but cannot be read is still a recorded failed extraction
    (project / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Pages 9 0 R >>")
    code, out, _ = run("evidence", "extract-pdf", "doi:10.1/x", "broken.pdf", "--json")
    assert code == 0 and json.loads(out)["status"] == "failed"
    assert stored()[1] == before[1] + 1


def test_review_help_describes_the_reviewer_specialist_and_human_review() -> None:
    from conftest import run_wide

    code, out, _ = run_wide("review", "--help")
    assert code == 0
    text = " ".join(out.split())
    assert "Reviewer Specialist" in text and "human pairwise review" in text
    for command in ("run", "show", "citations", "queue", "decide", "history", "session", "export"):
        assert command in text
