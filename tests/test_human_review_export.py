"""Export of human review decisions: the v4 training-example row built from an allowlist, its
JSON Schema, the TRL and OpenAI preference adapters and the dataset manifest
(docs/human-review.md, "Export")."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from reviewtrail._struct import parse
from reviewtrail.errors import ConflictError, InvalidInputError
from reviewtrail.human_review.export import (
    append_to_manifest,
    dataset_manifest,
    file_entry,
    jsonl_bytes,
    to_openai_preference,
    to_trl_preference,
    write_export,
)
from reviewtrail.human_review.records import DISPOSITIONS, ReviewDecision, ReviewItem, ReviewPrompt
from reviewtrail.human_review.rules import (
    TRAINING_EXAMPLE_V4,
    CandidateFacts,
    ChainPrivacy,
    ExampleFacts,
    candidate_digest,
    example_facts,
    item_id,
    training_example_v4,
)

PUBLIC = ChainPrivacy(*(["public-source"] * 7))
HEAD = "ab" * 32
# Ids and notes are upper-case; every exportable text is lower-case: an id found in a row is a leak.
ids = st.text("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", min_size=10, max_size=24).map(lambda s: "Z" + s)
secrets = st.text("ABCDEFGHJKLMNPQRSTUVWXYZ ", min_size=8, max_size=40).map(lambda s: "SECRET" + s)
texts = st.text("abcdefghijklmnopqrstuvwxyz .,", min_size=1, max_size=60).filter(lambda s: s.strip() != "")
reason_codes = st.lists(st.sampled_from(["clear", "wrong"]), max_size=2, unique=True)
response_tags = st.lists(st.sampled_from(["terse", "kind"]), max_size=2, unique=True)


def schema() -> dict[str, Any]:
    path = resources.files("reviewtrail").joinpath("schemas", "export", "training-example.v4.schema.json")
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


VALIDATOR = Draft202012Validator(schema())


def make_prompt(campaign: str = "camp-1", *, evidence: str | None = "the facts", eligible: bool = True) -> ReviewPrompt:
    return parse(
        ReviewPrompt,
        {
            "campaign": {"id": campaign, "version": 2, "label": "canary"},
            "scenarioFamily": "refusals",
            "prompt": "explain the rule.",
            "evidence": evidence,
            "criterion": {
                "id": "helpful",
                "version": 1,
                "label": "helpful",
                "instructions": "prefer the clearer.",
                "allowedReasonCodes": ["clear", "wrong"],
                "allowedResponseTags": ["terse", "kind"],
            },
            "candidateAgentIds": ["agent-a", "agent-b"],
            "externalExportEligible": eligible,
        },
        field="payload",
    )


def make_facts(run: str, output: str, secret: str = "SECRETVALUE", model: str = "model-x") -> CandidateFacts:
    return parse(
        CandidateFacts,
        {
            "runId": run,
            "run": {"status": "completed", "token": secret, "actor": secret + "ACTOR"},
            "outputEventId": output,
            "outputPayloadHash": "cd" * 32,
            "contextManifest": {"cookie": secret + "COOKIE", "signature": secret + "SIG"},
            "model": model,
            "provider": "prov",
            "promptHash": "ef" * 32,
            "executionAdapter": "exec-1",
            "learnedAdapter": None,
            "catalogGeneration": "gen-7",
            "runPrivacy": "public-source",
            "outputPrivacy": "public-source",
        },
        field="payload",
    )


def make_case(
    disposition: str,
    *,
    runs: tuple[str, str] = ("RUNA0000000", "RUNB0000000"),
    outputs: tuple[str, str] = ("OUTA0000000", "OUTB0000000"),
    prompt_event: str = "PROMPTEVT000",
    submission: str = "SUBMISSION0",
    supersedes: str | None = None,
    note: str | None = "SECRET NOTE",
    preferred: int = 1,
    secret: str = "SECRETVALUE",
    evidence: str | None = "the facts",
    **decision: Any,
) -> tuple[ReviewPrompt, ReviewItem, ReviewDecision, dict[str, tuple[CandidateFacts, str]]]:
    run_a, run_b = sorted(runs)
    out_a, out_b = outputs
    fa, fb = make_facts(run_a, out_a, secret, "model-a"), make_facts(run_b, out_b, secret, "model-b")
    iid = item_id(prompt_event, "helpful", 1, run_a, run_b)
    item = parse(
        ReviewItem,
        {
            "itemId": iid,
            "campaign": {"id": "camp-1", "version": 2},
            "promptEventId": prompt_event,
            "criterion": {"id": "helpful", "version": 1},
            "candidates": [
                {"runId": run_a, "outputEventId": out_a, "digest": candidate_digest(fa)},
                {"runId": run_b, "outputEventId": out_b, "digest": candidate_digest(fb)},
            ],
            "displayOrder": [run_b, run_a],
        },
        field="payload",
    )
    wire: dict[str, Any] = {
        "itemId": iid,
        "disposition": disposition,
        "submissionId": submission,
        "useForTraining": True,
        "note": note,
        "supersedes": supersedes,
    }
    if disposition == "prefer":
        wire |= {"preferred": (run_a, run_b)[preferred], "strength": "strong"}
    if disposition == "correct":
        wire |= {"replacement": "the corrected answer."}
    wire |= decision
    candidates = {run_a: (fa, "answer from a."), run_b: (fb, "answer from b.")}
    return make_prompt(evidence=evidence), item, parse(ReviewDecision, wire, field="payload"), candidates


def facts_of(disposition: str, *, active: bool = True, privacy: ChainPrivacy = PUBLIC, **kw: Any) -> ExampleFacts:
    prompt, item, decision, candidates = make_case(disposition, **kw)
    return example_facts(
        prompt,
        item,
        decision,
        candidates,
        active=active,
        training_enabled=True,
        privacy=privacy,
        enabled_when_decided=True,
    )


# --- the v4 row --------------------------------------------------------------------------------


def test_a_prefer_row_chooses_the_preferred_candidate_and_rejects_the_other() -> None:
    row = training_example_v4(facts_of("prefer", preferred=1, confidence=0.75, reasonCodes=["clear"]))
    VALIDATOR.validate(row)
    assert row["schemaVersion"] == TRAINING_EXAMPLE_V4
    assert row["campaign"] == {"id": "camp-1", "version": 2}
    assert (row["prompt"], row["evidence"]) == ("explain the rule.", "the facts")
    assert row["criterion"] == {"id": "helpful", "version": 1, "label": "helpful"}
    assert row["judgment"] == {
        "disposition": "prefer",
        "strength": "strong",
        "confidence": 0.75,
        "reasonCodes": ["clear"],
        "responseTags": [],
    }
    assert row["chosen"]["response"] == "answer from b."
    assert row["chosen"]["provenance"] == {
        "model": {"id": "model-b", "provider": "prov"},
        "executionAdapter": "exec-1",
        "learnedAdapter": None,
        "catalogGeneration": "gen-7",
    }
    assert [r["response"] for r in row["rejected"]] == ["answer from a."]
    assert row["rejected"][0]["provenance"]["model"]["id"] == "model-a"
    assert row["chosen"]["trajectory"] == [] and row["rejected"][0]["trajectory"] == []


def test_a_correct_row_chooses_the_replacement_and_rejects_both_candidates() -> None:
    row = training_example_v4(facts_of("correct", evidence=None))
    VALIDATOR.validate(row)
    assert row["chosen"] == {
        "response": "the corrected answer.",
        "origin": "correction",
        "provenance": None,
        "trajectory": [],
    }
    assert [r["response"] for r in row["rejected"]] == ["answer from a.", "answer from b."]
    assert "strength" not in row["judgment"]


def test_a_prompt_without_evidence_gives_a_row_without_evidence() -> None:
    prompt, item, decision, candidates = make_case("prefer")
    bare = msgspec.structs.replace(prompt, **{"evidence": None})
    row = training_example_v4(
        example_facts(
            bare,
            item,
            decision,
            candidates,
            active=True,
            training_enabled=True,
            privacy=PUBLIC,
            enabled_when_decided=True,
        )
    )
    VALIDATOR.validate(row)
    assert "evidence" not in row


@pytest.mark.parametrize("disposition", [d for d in DISPOSITIONS if d not in ("prefer", "correct")])
def test_ties_underdetermined_malformed_and_skips_never_become_examples(disposition: str) -> None:
    with pytest.raises(InvalidInputError) as err:
        training_example_v4(facts_of(disposition))
    assert err.value.field == "disposition"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"active": False}, "decision"),
        ({"privacy": ChainPrivacy(*(["public-source"] * 6), "private")}, "eligibility"),
        ({"useForTraining": False}, "eligibility"),
    ],
)
def test_an_inactive_or_not_externally_eligible_decision_is_refused(change: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInputError) as err:
        training_example_v4(facts_of("prefer", **change))
    assert err.value.field == field


def test_a_prompt_not_preauthorized_or_a_disabled_campaign_is_refused() -> None:
    prompt, item, decision, candidates = make_case("prefer")
    closed = msgspec.structs.replace(prompt, **{"external_export_eligible": False})
    for p, enabled in ((closed, True), (prompt, False)):
        facts = example_facts(
            p,
            item,
            decision,
            candidates,
            active=True,
            training_enabled=enabled,
            privacy=PUBLIC,
            enabled_when_decided=True,
        )
        with pytest.raises(InvalidInputError) as err:
            training_example_v4(facts)
        assert err.value.field == "eligibility"


def test_an_item_whose_digest_no_longer_holds_or_a_missing_candidate_is_refused() -> None:
    prompt, item, decision, candidates = make_case("prefer")
    run_a = item.run_ids()[0]
    changed = dict(candidates)
    changed[run_a] = (msgspec.structs.replace(candidates[run_a][0], **{"model": "model-z"}), "answer from a.")
    missing = {k: v for k, v in candidates.items() if k != run_a}
    for current in (changed, missing):
        facts = example_facts(
            prompt,
            item,
            decision,
            current,
            active=True,
            training_enabled=True,
            privacy=PUBLIC,
            enabled_when_decided=True,
        )
        with pytest.raises(InvalidInputError) as err:
            training_example_v4(facts)
        assert err.value.field == "item"


def test_a_decision_that_does_not_fit_its_item_is_refused() -> None:
    prompt, item, decision, candidates = make_case("prefer")
    other = msgspec.structs.replace(decision, **{"preferred": "ZNOTACANDIDATE"})
    with pytest.raises(InvalidInputError) as err:
        example_facts(
            prompt,
            item,
            other,
            candidates,
            active=True,
            training_enabled=True,
            privacy=PUBLIC,
            enabled_when_decided=True,
        )
    assert err.value.field == "preferred"


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    disposition=st.sampled_from(["prefer", "correct"]),
    run_ids=st.lists(ids, min_size=2, max_size=2, unique=True),
    outputs=st.lists(ids, min_size=2, max_size=2, unique=True),
    prompt_event=ids,
    submission=ids,
    supersedes=st.none() | ids,
    note=st.none() | secrets,
    secret=secrets,
    preferred=st.integers(0, 1),
    confidence=st.none() | st.floats(0, 1),
    reasons=reason_codes,
    tags=response_tags,
    prompt_text=texts,
    evidence=st.none() | texts,
)
def test_no_id_note_or_payload_secret_of_the_inputs_appears_in_a_row(
    disposition: str,
    run_ids: list[str],
    outputs: list[str],
    prompt_event: str,
    submission: str,
    supersedes: str | None,
    note: str | None,
    secret: str,
    preferred: int,
    confidence: float | None,
    reasons: list[str],
    tags: list[str],
    prompt_text: str,
    evidence: str | None,
) -> None:
    prompt, item, decision, candidates = make_case(
        disposition,
        runs=(run_ids[0], run_ids[1]),
        outputs=(outputs[0], outputs[1]),
        prompt_event=prompt_event,
        submission=submission,
        supersedes=supersedes,
        note=note,
        preferred=preferred,
        secret=secret,
        confidence=confidence,
        reasonCodes=reasons,
        responseTags=tags,
    )
    prompt = msgspec.structs.replace(prompt, **{"prompt": prompt_text, "evidence": evidence})
    facts = example_facts(
        prompt,
        item,
        decision,
        candidates,
        active=True,
        training_enabled=True,
        privacy=PUBLIC,
        enabled_when_decided=True,
    )
    row = training_example_v4(facts)
    VALIDATOR.validate(row)
    serialized = json.dumps(row, ensure_ascii=False) + jsonl_bytes([row]).decode("utf-8")
    forbidden = [*run_ids, *outputs, prompt_event, submission, item.item_id, secret]
    forbidden += [c.digest for c in item.candidates]
    forbidden += [v for v in (supersedes, note) if v is not None]
    assert [value for value in forbidden if value in serialized] == []
    assert row["prompt"] == prompt_text and row.get("evidence") == evidence


def test_the_scan_catches_an_id_that_does_leak() -> None:
    """The leak scan above can fail: an id placed into a row is found."""
    row = training_example_v4(facts_of("prefer"))
    row["judgment"]["reasonCodes"] = ["SUBMISSION0"]
    assert "SUBMISSION0" in json.dumps(row)
    assert not VALIDATOR.is_valid(row)


@pytest.mark.parametrize(
    "mutate",
    [
        lambda r: r.update(note="SECRET"),
        lambda r: r.update(submissionId="S1"),
        lambda r: r["chosen"].update(runId="R1"),
        lambda r: r["chosen"].update(trajectory=[{"chunk": 1}]),
        lambda r: r["judgment"].update(disposition="tie"),
        lambda r: r.update(rejected=[]),
        lambda r: r["campaign"].update(label="x"),
    ],
)
def test_the_schema_refuses_extra_fields_trajectories_and_other_dispositions(mutate: Any) -> None:
    row = training_example_v4(facts_of("prefer"))
    mutate(row)
    assert not VALIDATOR.is_valid(row)


def test_the_schema_ties_the_number_of_rejected_responses_to_the_disposition() -> None:
    prefer = training_example_v4(facts_of("prefer"))
    prefer["rejected"] = prefer["rejected"] * 2
    correct = training_example_v4(facts_of("correct"))
    correct["rejected"] = correct["rejected"][:1]
    assert not VALIDATOR.is_valid(prefer)
    assert not VALIDATOR.is_valid(correct)


def test_package_data_lists_the_export_schemas() -> None:
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"schemas/export/*.json"' in text


# --- adapters ----------------------------------------------------------------------------------


def rows() -> list[dict[str, Any]]:
    return [training_example_v4(facts_of("prefer")), training_example_v4(facts_of("correct"))]


def test_trl_gives_one_plain_row_per_rejected_response() -> None:
    assert to_trl_preference(rows()) == [
        {"prompt": "explain the rule.", "chosen": "answer from b.", "rejected": "answer from a."},
        {"prompt": "explain the rule.", "chosen": "the corrected answer.", "rejected": "answer from a."},
        {"prompt": "explain the rule.", "chosen": "the corrected answer.", "rejected": "answer from b."},
    ]


def test_openai_lines_have_input_messages_and_one_assistant_message_each_side() -> None:
    lines = to_openai_preference(rows())
    assert len(lines) == 3
    assert lines[0] == {
        "input": {"messages": [{"role": "user", "content": "explain the rule."}]},
        "preferred_output": [{"role": "assistant", "content": "answer from b."}],
        "non_preferred_output": [{"role": "assistant", "content": "answer from a."}],
    }
    assert {line["non_preferred_output"][0]["content"] for line in lines[1:]} == {"answer from a.", "answer from b."}


@pytest.mark.parametrize("disposition", ["tie", "underdetermined", "malformed", "skip", None])
def test_adapters_refuse_rows_that_are_not_preferences(disposition: str | None) -> None:
    row = training_example_v4(facts_of("prefer"))
    row["judgment"]["disposition"] = disposition
    for adapter in (to_trl_preference, to_openai_preference):
        with pytest.raises(InvalidInputError) as err:
            adapter([row])
        assert err.value.field == "disposition"


def test_adapters_refuse_another_schema_version() -> None:
    row = training_example_v4(facts_of("prefer")) | {"schemaVersion": "thoughtstream.training-example.v3"}
    with pytest.raises(InvalidInputError) as err:
        to_trl_preference([row])
    assert err.value.field == "schemaVersion"


def test_hugging_face_datasets_loads_the_trl_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    from datasets import load_dataset

    manifest = write_export(
        tmp_path / "out", to_trl_preference(rows()), name="trl.jsonl", ledger_head=HEAD, schema_version="trl.preference"
    )
    assert manifest["files"][0]["rows"] == 3
    loaded = load_dataset(
        "json", data_files=str(tmp_path / "out" / "trl.jsonl"), split="train", cache_dir=str(tmp_path / "cache")
    )
    assert sorted(loaded.column_names) == ["chosen", "prompt", "rejected"]
    assert loaded.num_rows == 3
    assert loaded[2] == {"prompt": "explain the rule.", "chosen": "the corrected answer.", "rejected": "answer from b."}


# --- manifest ----------------------------------------------------------------------------------

V3_ENTRY = {
    "name": "examples.v3.jsonl",
    "schemaVersion": "thoughtstream.training-example.v3",
    "rows": 4,
    "bytes": 812,
    "sha256": "12" * 32,
    "ledgerHead": "34" * 32,
    "legacyField": {"kept": True},
}


def test_a_manifest_lists_schema_version_rows_bytes_sha256_and_ledger_head() -> None:
    data = jsonl_bytes(rows())
    manifest = dataset_manifest([file_entry("a.jsonl", TRAINING_EXAMPLE_V4, data)], ledger_head=HEAD)
    import hashlib

    assert manifest == {
        "manifestVersion": 1,
        "files": [
            {
                "name": "a.jsonl",
                "schemaVersion": TRAINING_EXAMPLE_V4,
                "rows": 2,
                "bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
                "ledgerHead": HEAD,
            }
        ],
    }


#: The manifest bytes ``write_export`` gives for a known file: its keys in this order, two-space
#: indents, a final newline (a known answer, written out by hand).
KNOWN_MANIFEST = """{
  "manifestVersion": 1,
  "files": [
    {
      "name": "a.jsonl",
      "schemaVersion": "thoughtstream.training-example.v4",
      "rows": 2,
      "bytes": 24,
      "sha256": "c3352c40ea5563ba94e909b19d8c17eab3e74262623d120ca44a3b4b0455488c",
      "ledgerHead": "%s",
      "ledgerHeadSeq": 7
    }
  ]
}
""" % ("ab" * 32)


def test_the_manifest_written_is_a_known_answer(tmp_path: Path) -> None:
    write_export(tmp_path, [{"b": 1, "a": "x"}, {"a": 2}], name="a.jsonl", ledger_head=HEAD, ledger_head_seq=7)
    assert (tmp_path / "a.jsonl").read_bytes() == b'{"a":"x","b":1}\n{"a":2}\n'
    assert (tmp_path / "manifest.json").read_text(encoding="utf-8") == KNOWN_MANIFEST
    data = (tmp_path / "a.jsonl").read_bytes()
    entry = {**file_entry("a.jsonl", TRAINING_EXAMPLE_V4, data), "ledgerHead": HEAD, "ledgerHeadSeq": 7}
    assert list(entry.items()) == list(json.loads(KNOWN_MANIFEST)["files"][0].items()), "the same keys, in order"


@pytest.mark.parametrize("head", ["", "AB" * 32, "ab" * 31, "sha256:" + "ab" * 32])
def test_a_manifest_needs_a_ledger_head_hash(head: str) -> None:
    with pytest.raises(InvalidInputError) as err:
        dataset_manifest([], ledger_head=head)
    assert err.value.field == "ledgerHead"


@pytest.mark.parametrize("name", ["../x.jsonl", "a/b.jsonl", "", ".hidden", "manifest.json"])
def test_a_file_name_is_a_plain_name(name: str) -> None:
    with pytest.raises(InvalidInputError) as err:
        file_entry(name, TRAINING_EXAMPLE_V4, b"")
    assert err.value.field == "name"


def test_appending_a_v4_file_carries_v3_entries_verbatim() -> None:
    existing = {"manifestVersion": 1, "files": [dict(V3_ENTRY)], "note": "kept"}
    before = json.dumps(existing, sort_keys=True)
    new = dataset_manifest([file_entry("b.jsonl", TRAINING_EXAMPLE_V4, jsonl_bytes(rows()))], ledger_head=HEAD)
    merged = append_to_manifest(existing, new)
    assert merged["files"][0] == V3_ENTRY
    assert merged["files"][1]["name"] == "b.jsonl" and merged["note"] == "kept"
    assert json.dumps(existing, sort_keys=True) == before
    with pytest.raises(ConflictError):
        append_to_manifest(merged, new)


def test_write_export_writes_the_file_and_appends_to_the_manifest(tmp_path: Path) -> None:
    (tmp_path / "examples.v3.jsonl").write_bytes(b'{"v": 3}\n' * 4)
    (tmp_path / "manifest.json").write_text(json.dumps({"manifestVersion": 1, "files": [V3_ENTRY]}), encoding="utf-8")
    v3_bytes = (tmp_path / "examples.v3.jsonl").read_bytes()
    manifest = write_export(tmp_path, rows(), name="examples.v4.jsonl", ledger_head=HEAD)
    assert json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8")) == manifest
    assert manifest["files"][0] == V3_ENTRY and (tmp_path / "examples.v3.jsonl").read_bytes() == v3_bytes
    written = (tmp_path / "examples.v4.jsonl").read_bytes()
    assert manifest["files"][1] == {**file_entry("examples.v4.jsonl", TRAINING_EXAMPLE_V4, written), "ledgerHead": HEAD}
    assert [json.loads(line) for line in written.splitlines()] == rows()
    for line in written.splitlines():
        VALIDATOR.validate(json.loads(line))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["examples.v3.jsonl", "examples.v4.jsonl", "manifest.json"]
    with pytest.raises(ConflictError):
        write_export(tmp_path, rows(), name="examples.v4.jsonl", ledger_head=HEAD)
    assert (tmp_path / "examples.v4.jsonl").read_bytes() == written


def test_a_bad_existing_manifest_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(InvalidInputError):
        write_export(tmp_path, rows(), name="x.jsonl", ledger_head=HEAD)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json"]


def test_the_exportable_facts_are_an_explicit_allowlist() -> None:
    """Adding a field to what an example may hold is a visible decision: no id, note or digest."""
    assert list(ExampleFacts.__struct_fields__) == [
        "campaign_id",
        "campaign_version",
        "prompt",
        "evidence",
        "criterion_id",
        "criterion_version",
        "criterion_label",
        "disposition",
        "strength",
        "confidence",
        "reason_codes",
        "response_tags",
        "preferred",
        "replacement",
        "candidates",
        "active",
        "eligibility",
        "problems",
    ]


@settings(max_examples=80)
@given(
    disposition=st.sampled_from(DISPOSITIONS),
    active=st.booleans(),
    use_for_training=st.booleans(),
    enabled=st.booleans(),
    preauthorized=st.booleans(),
    chain=st.lists(st.sampled_from(["public-source", "private", "sensitive"]), min_size=7, max_size=7),
)
def test_only_an_active_externally_eligible_prefer_or_correct_becomes_a_row(
    disposition: str, active: bool, use_for_training: bool, enabled: bool, preauthorized: bool, chain: list[str]
) -> None:
    prompt, item, decision, candidates = make_case(disposition, useForTraining=use_for_training)
    prompt = msgspec.structs.replace(prompt, **{"external_export_eligible": preauthorized})
    privacy = ChainPrivacy(*chain)
    facts = example_facts(
        prompt,
        item,
        decision,
        candidates,
        active=active,
        training_enabled=enabled,
        privacy=privacy,
        enabled_when_decided=True,
    )
    expected = (
        disposition in ("prefer", "correct")
        and active
        and use_for_training
        and enabled
        and preauthorized
        and set(chain) == {"public-source"}
    )
    if expected:
        VALIDATOR.validate(training_example_v4(facts))
    else:
        with pytest.raises(InvalidInputError):
            training_example_v4(facts)
