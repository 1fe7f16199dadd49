"""Provenance chips ``[evN]``, ``[evidenceN]``, ``[artifactN]``: extraction, alias maps, review findings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import init_cli_store, need
from conftest import run_wide as _cli
from reviewtrail.app import init_store
from reviewtrail.config import ReviewerSettings, Settings
from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger import new_record
from reviewtrail.store import Store
from reviewtrail.verify import verify_store

QUICK = ReviewerSettings(tier="quick")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REVIEWTRAIL_REVIEWER", raising=False)
    root = tmp_path / "store"
    s = init_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}"))
    yield s  # type: ignore[misc]
    s.close()


def _upload(store: Store, tmp_path: Path, text: str, name: str = "report.md") -> None:
    from reviewtrail.provenance.artifacts import upload_artifact

    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    upload_artifact(store, name=name, file=path)


def _codes(store: Store, name: str = "report.md") -> list[str]:
    from reviewtrail.reviewer import review_artifact

    return [f.code for f in review_artifact(store, name, settings=QUICK).run.findings]


# --- extraction --------------------------------------------------------------------------------------


def test_chips_are_citations_in_any_case() -> None:
    from reviewtrail.evidence import extract_claims

    [claim] = extract_claims("Rose by 5% [EV1], [evidence2] and [Artifact3]; not [ev] or [ev1a] or [ev:x].")
    chips = [c for c in claim.citations if c.alias is not None]
    assert [(c.alias, c.raw) for c in chips] == [("ev1", "[EV1]"), ("evidence2", "[evidence2]"),
                                                 ("artifact3", "[Artifact3]")]  # fmt: skip
    assert [c.raw for c in claim.citations] == ["[EV1]", "[evidence2]", "[Artifact3]", "[ev:x]"]
    assert claim.numeric


def test_a_chip_alone_makes_a_claim_and_code_hides_it() -> None:
    from reviewtrail.evidence import extract_claims

    claims = extract_claims("Accuracy was high [ev1].\n\nIn code `[ev2]` only.\n```\n[ev3]\n```\n")
    assert [(c.text, [x.raw for x in c.citations]) for c in claims] == [("Accuracy was high [ev1].", ["[ev1]"])]


def test_a_chip_after_a_sentence_end_stays_with_that_sentence() -> None:
    from reviewtrail.evidence import extract_claims

    claims = extract_claims("Accuracy was 0.91. [ev1] Next one.")
    assert [c.text for c in claims] == ["Accuracy was 0.91. [ev1]"]


def test_chip_aliases_are_unique_and_lower_case() -> None:
    # sciencediscovery: "extracts unique case-insensitive Evidence aliases" and "[evidenceN] alongside [evN]"
    from reviewtrail.evidence import chip_aliases

    assert chip_aliases("Claim [ev1], repeated [EV1], and another source [ev2].") == ["ev1", "ev2"]
    assert chip_aliases("Claim [evidence1], legacy [ev2], mixed [EV3].") == ["evidence1", "ev2", "ev3"]
    assert chip_aliases("Data [artifact1] and `[ev9]`.") == ["artifact1"]


@given(st.sampled_from(["ev", "evidence", "artifact"]), st.integers(0, 10**6), st.booleans())
def test_every_chip_spelling_is_found(family: str, number: int, upper: bool) -> None:
    from reviewtrail.evidence import chip_aliases, extract_claims

    raw = f"[{family.upper() if upper else family}{number}]"
    assert chip_aliases(f"Some text {raw} here.") == [f"{family}{number}"]
    [claim] = extract_claims(f"Some text {raw} here.")
    assert [c.raw for c in claim.citations] == [raw]


# --- alias maps --------------------------------------------------------------------------------------


def test_parse_aliases_names_the_bad_field() -> None:
    from reviewtrail.evidence import parse_aliases

    assert parse_aliases({"EV1": "ev-abc", "artifact2": "ev-def"}) == {"ev1": "ev-abc", "artifact2": "ev-def"}
    for doc, field in [
        (["ev1"], "aliases"),
        ({"ref1": "ev-a"}, "aliases.ref1"),
        ({"ev1": ""}, "aliases.ev1"),
        ({"ev1": 3}, "aliases.ev1"),
        ({"ev1": "a b"}, "aliases.ev1"),
        ({"ev1": "ev-a", "EV1": "ev-b"}, "aliases.EV1"),
    ]:
        with pytest.raises(InvalidInputError) as err:
            parse_aliases(doc)
        assert err.value.field == field, doc


def test_record_claims_resolves_chips_and_records_the_alias_map(store: Store) -> None:
    from reviewtrail.evidence import add_evidence, alias_maps_for, record_claims

    evidence_id, _ = add_evidence(store, {"kind": "paper", "paperId": "doi:10.1/x"})
    reply = "The effect was large [ev1]. Another [ev2]. A third [ev3]."
    recorded = record_claims(store, reply, turn_id="t1", aliases={"ev1": evidence_id, "ev2": "ev-nothing"})
    one, two, three = (c.citations[0] for c in recorded.claims)
    assert (one.alias, one.evidence_id, one.resolved, one.target) == (
        "ev1",
        evidence_id,
        True,
        f"evidence:{evidence_id}",
    )
    assert (two.evidence_id, two.resolved, two.target) == ("ev-nothing", False, None)
    assert (three.evidence_id, three.resolved) == (None, False)
    assert [raw for _, raw in recorded.unresolved] == ["[ev2]", "[ev3]"]
    assert recorded.alias_map is not None and recorded.alias_map.turn_id == "t1"
    digest = recorded.claims[0].source["digest"]  # type: ignore[index]
    assert alias_maps_for(store, digest=digest) == {"ev1": [evidence_id], "ev2": ["ev-nothing"]}
    assert verify_store(store).ok
    doc = recorded.to_json()
    assert doc["aliasMap"]["aliases"] == {"ev1": evidence_id, "ev2": "ev-nothing"}


def test_an_alias_map_is_recorded_even_without_claims(store: Store) -> None:
    from reviewtrail.evidence import alias_maps_for, record_alias_map

    env = record_alias_map(store, {"ev1": "ev-a"}, turn_id="t2")
    assert env.type == "evidence.alias-map@1"
    assert alias_maps_for(store, turn_id="t2") == {"ev1": ["ev-a"]}


# --- review ------------------------------------------------------------------------------------------


def test_review_reports_a_chip_without_a_mapping(store: Store, tmp_path: Path) -> None:
    # sciencediscovery: "reports an Artifact alias without a persisted Evidence mapping"
    _upload(store, tmp_path, "Claim [ev1].\n")
    codes = _codes(store)
    assert codes.count("CITATION_EVIDENCE_ALIAS_UNRESOLVED") == 1 and "CITATION_UNRESOLVED" not in codes


def test_review_distinguishes_missing_evidence_and_a_broken_chain(store: Store, tmp_path: Path) -> None:
    # sciencediscovery: "distinguishes missing Evidence nodes and broken Paper links"
    from reviewtrail.evidence import EvidenceItem, record_alias_map
    from reviewtrail.provenance.artifacts import get_version

    broken = EvidenceItem.read({"evidenceId": "ev-broken", "origin": {"kind": "execution", "runId": "r-x"}})
    store.append([new_record(broken, actor="test", privacy="private")])
    text = "Claim [ev1], repeated [EV1], and another source [ev2].\n"
    _upload(store, tmp_path, text)
    info = get_version(store, "report.md")
    record_alias_map(store, {"ev1": "ev-never-recorded", "ev2": "ev-broken"}, artifact=info)
    codes = _codes(store)
    assert [c for c in codes if c.startswith("CITATION_EVIDENCE")] == [
        "CITATION_EVIDENCE_NODE_MISSING",
        "CITATION_EVIDENCE_CHAIN_BROKEN",
    ]


def test_review_passes_chips_mapped_to_intact_evidence(store: Store, tmp_path: Path) -> None:
    # sciencediscovery: "passes Evidence nodes linked to Papers"
    from reviewtrail.evidence import add_evidence, record_claims

    evidence_id, _ = add_evidence(store, {"kind": "paper", "paperId": "doi:10.1/x"})
    text = "Claim [ev1].\n"
    record_claims(store, text, turn_id="t1", aliases={"ev1": evidence_id})  # bound by content: the same bytes
    _upload(store, tmp_path, text)
    assert _codes(store) == []


def test_conflicting_alias_maps_are_reported(store: Store, tmp_path: Path) -> None:
    from reviewtrail.evidence import add_evidence, record_alias_map
    from reviewtrail.provenance.artifacts import get_version

    a, _ = add_evidence(store, {"kind": "paper", "paperId": "doi:10.1/a"})
    b, _ = add_evidence(store, {"kind": "paper", "paperId": "doi:10.1/b"})
    _upload(store, tmp_path, "Claim [ev1].\n")
    info = get_version(store, "report.md")
    record_alias_map(store, {"ev1": a}, artifact=info)
    record_alias_map(store, {"ev1": b}, artifact=info)
    assert _codes(store) == ["CITATION_EVIDENCE_ALIAS_AMBIGUOUS"]


def test_a_map_for_another_version_does_not_apply(store: Store, tmp_path: Path) -> None:
    from reviewtrail.evidence import add_evidence, record_alias_map
    from reviewtrail.provenance.artifacts import get_version

    a, _ = add_evidence(store, {"kind": "paper", "paperId": "doi:10.1/a"})
    _upload(store, tmp_path, "Claim [ev1].\n")
    record_alias_map(store, {"ev1": a}, artifact=get_version(store, "report.md"))
    _upload(store, tmp_path, "Claim [ev1] again.\n")
    assert _codes(store) == ["CITATION_EVIDENCE_ALIAS_UNRESOLVED"]


def test_a_chip_mapped_to_execution_evidence_backs_a_number(store: Store, tmp_path: Path) -> None:
    need(shutil.which("bwrap") is not None, "bubblewrap (bwrap) is not installed")
    from reviewtrail.evidence import add_evidence, record_alias_map
    from reviewtrail.provenance.artifacts import declare_artifact, get_version
    from reviewtrail.provenance.runs import create_session, run_code

    session = create_session(store)
    code = "open('report.md', 'w').write('TP53 mutation frequency was 39.7% [ev1].\\n')"
    run = run_code(store, session_id=session.session_id, code=code, lang="python")
    info = declare_artifact(store, session_id=session.session_id, name="report.md", path="report.md")
    evidence_id, _ = add_evidence(store, {"kind": "execution", "runId": run.envelope.id})
    assert "COMPUTATION_UNBACKED" in _codes(store)
    record_alias_map(store, {"ev1": evidence_id}, artifact=get_version(store, "report.md", info.version.version))
    assert _codes(store) == [], "sciencediscovery: accepts a numeric claim with a local Evidence mapping"


# --- CLI ---------------------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return init_cli_store(tmp_path, monkeypatch, "REVIEWTRAIL_PROJECT", "REVIEWTRAIL_REVIEWER")


def test_cli_claims_extract_with_aliases(project: Path) -> None:
    code, out, _ = _cli("evidence", "add", "--paper", "doi:10.1/x", "--json")
    evidence_id = json.loads(out)["evidenceId"]
    (project / "reply.md").write_text("It helps [ev1]. It hurts [EV2].\n")
    (project / "aliases.json").write_text(json.dumps({"ev1": evidence_id}))
    code, out, err = _cli("claims", "extract", "reply.md", "--turn", "t1", "--aliases", "aliases.json", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert [c["citations"][0]["resolved"] for c in doc["claims"]] == [True, False]
    assert doc["claims"][0]["citations"][0]["evidenceId"] == evidence_id
    assert doc["aliasMap"]["aliases"] == {"ev1": evidence_id} and doc["aliasMap"]["turnId"] == "t1"
    assert doc["unresolved"] == [{"claimId": doc["claims"][1]["claimId"], "citation": "[EV2]"}]
    code, out, _ = _cli("claims", "extract", "reply.md", "--aliases", "aliases.json")
    assert code == 0 and "1 unresolved" in out


def test_cli_artifact_binding_reaches_the_review(project: Path) -> None:
    (project / "r.md").write_text("Claim [ev1].\n")
    assert _cli("artifact", "upload", "r.md", "r.md")[0] == 0
    (project / "other.md").write_text("Unrelated text [ev1].\n")
    (project / "aliases.json").write_text(json.dumps({"ev1": "ev-none"}))
    code, _, err = _cli("claims", "extract", "other.md", "--aliases", "aliases.json", "--artifact", "r.md@1")
    assert code == 0, err
    code, out, err = _cli("review", "run", "r.md", "--json", env={"REVIEWTRAIL_REVIEWER": "quick"})
    assert code == 0, err
    assert [f["code"] for f in json.loads(out)["findings"]] == ["CITATION_EVIDENCE_NODE_MISSING"]


@pytest.mark.parametrize(
    ("content", "field"),
    [("not json", "aliases"), ("[1]", "aliases"), ('{"x1": "ev-a"}', "aliases.x1"), ('{"ev1": ""}', "aliases.ev1")],
)
def test_cli_refuses_a_bad_aliases_file(project: Path, content: str, field: str) -> None:
    (project / "reply.md").write_text("It helps [ev1].\n")
    (project / "aliases.json").write_text(content)
    code, _, err = _cli("claims", "extract", "reply.md", "--aliases", "aliases.json")
    assert code == 2 and f"error: {field}:" in err
    code, _, err = _cli("claims", "extract", "reply.md", "--aliases", "missing.json")
    assert code == 2 and "error: aliases:" in err


_ALIASES = st.builds(lambda f, n: f"{f}{n}", st.sampled_from(["ev", "EV", "Evidence", "artifact"]), st.integers(0, 999))
_IDS = st.text(st.characters(blacklist_categories=("Zs", "Cc", "Zl", "Zp")), min_size=1, max_size=20).filter(
    lambda s: not any(c.isspace() for c in s)
)


@given(st.dictionaries(_ALIASES, _IDS, max_size=6))
def test_parse_aliases_keeps_every_mapping_lower_cased(doc: dict[str, str]) -> None:
    from reviewtrail.evidence import parse_aliases

    lowered = [k.lower() for k in doc]
    if len(set(lowered)) < len(lowered):
        with pytest.raises(InvalidInputError):
            parse_aliases(doc)
        return
    assert parse_aliases(doc) == {k.lower(): v for k, v in doc.items()}


@given(st.text(max_size=12))
def test_parse_aliases_refuses_what_is_not_a_chip(key: str) -> None:
    import re

    from reviewtrail.evidence import parse_aliases

    if re.fullmatch(r"(?i:ev|evidence|artifact)[0-9]+", key):
        return
    with pytest.raises(InvalidInputError) as err:
        parse_aliases({key: "ev-a"})
    assert err.value.field == f"aliases.{key}"
