"""Evidence origins as ``reviewtrail evidence add`` names them, and reply claims recorded
against an artifact version."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.app import init_store
from reviewtrail.config import Settings
from reviewtrail.errors import InvalidInputError, NotFoundError
from reviewtrail.evidence import EvidenceRequest, get_evidence, record_evidence, record_reply_claims
from reviewtrail.evidence._origin_request import quote_hash
from reviewtrail.provenance.artifacts import upload_artifact
from reviewtrail.store import Store

ORIGINS = ("run", "artifact", "paper", "mcp", "remote_job", "user_input")


@given(st.sets(st.sampled_from(ORIGINS)))
def test_exactly_one_origin(chosen: set[str]) -> None:
    values: dict[str, object] = {name: (Path("f") if name == "user_input" else "x") for name in chosen}
    if len(chosen) == 1:
        assert EvidenceRequest(**values)  # type: ignore[arg-type]
        return
    with pytest.raises(InvalidInputError) as caught:
        EvidenceRequest(**values)  # type: ignore[arg-type]
    assert caught.value.field == "origin" and "--run, --artifact, --paper" in str(caught.value)


def test_quote_hash() -> None:
    assert quote_hash(None) is None and quote_hash("") is None
    assert quote_hash("é") == "sha256:" + hashlib.sha256("é".encode()).hexdigest()
    assert quote_hash("a") == "sha256:ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    root = tmp_path / "store"
    with init_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}")) as s:
        yield s


def _origin(store: Store, evidence_id: str) -> dict[str, object]:
    return get_evidence(store, evidence_id).payload_json()["origin"]  # type: ignore[no-any-return]


def test_a_paper_keeps_only_its_quote_hash(store: Store) -> None:
    evidence_id, created = record_evidence(store, EvidenceRequest(paper="doi:10.1/x", page=3, quote="a"))
    assert created
    origin = _origin(store, evidence_id)
    assert origin["quoteHash"] == quote_hash("a") and origin["page"] == 3 and "a" not in origin.values()
    assert record_evidence(store, EvidenceRequest(paper="doi:10.1/x", page=3, quote="a")) == (evidence_id, False)


def test_an_mcp_record_is_server_type_and_id(store: Store) -> None:
    evidence_id, _ = record_evidence(store, EvidenceRequest(mcp="zotero/item/ABC/1", scope="abstract"))
    origin = _origin(store, evidence_id)
    assert (origin["server"], origin["recordType"], origin["recordId"]) == ("zotero", "item", "ABC/1")
    assert origin["contentScope"] == "abstract"
    for bad in ("zotero/item", "zotero//x", "/item/x"):
        with pytest.raises(InvalidInputError) as caught:
            record_evidence(store, EvidenceRequest(mcp=bad))
        assert caught.value.field == "mcp"


def test_a_user_input_is_stored_in_the_cas(store: Store, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_bytes(b"notes")
    evidence_id, _ = record_evidence(store, EvidenceRequest(user_input=tmp_path / "notes.txt", label="mine"))
    content = _origin(store, evidence_id)["content"]
    assert isinstance(content, dict) and store.cas.read(str(content["digest"])) == b"notes"


def test_an_artifact_origin_names_the_version(store: Store, tmp_path: Path) -> None:
    (tmp_path / "r.md").write_text("report")
    upload_artifact(store, name="r.md", file=tmp_path / "r.md", project_id="p")
    evidence_id, _ = record_evidence(store, EvidenceRequest(artifact="r.md", project_id="p"))
    origin = _origin(store, evidence_id)
    assert (origin["kind"], origin["name"], origin["version"]) == ("artifact", "r.md", 1)
    with pytest.raises(NotFoundError):
        record_evidence(store, EvidenceRequest(artifact="r.md@2", project_id="p"))


def test_reply_claims_against_an_artifact_version(store: Store, tmp_path: Path) -> None:
    evidence_id, _ = record_evidence(store, EvidenceRequest(remote_job="job-1"))
    reply = "It helps [ev1]."
    (tmp_path / "r.md").write_text("other text")
    upload_artifact(store, name="r.md", file=tmp_path / "r.md")
    result = record_reply_claims(store, reply, turn_id="t1", aliases={"ev1": evidence_id}, artifact="r.md@1")
    assert [c.citations[0].resolved for c in result.claims] == [True]
    with pytest.raises(NotFoundError):
        record_reply_claims(store, reply, artifact="missing.md")
