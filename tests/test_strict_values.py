"""Strict values (issue 17): a boolean is not an integer and an integer is not a boolean.

Every integer, boolean and number field of the payload models (campaign file, agents file,
decisions, campaign settings, evidence, provenance, reviewer, model-call and trace records, CAS
references) refuses ``true``/``false`` where a number is expected and ``0``/``1`` where a boolean
is, naming the field, from Python values (YAML) and from JSON alike; the files a person writes are
refused as a whole, exit 2, naming the line and the field."""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from conftest import init_cli_store, run_cli
from reviewtrail._struct import decode
from reviewtrail.cas import _refs as cas_refs
from reviewtrail.errors import InvalidInputError
from reviewtrail.evidence import _records as evidence_records
from reviewtrail.evidence._evidence import parse_origin
from reviewtrail.human_review.campaigns import _agents_file, import_runs, parse_agents_file, prompt_text_hash
from reviewtrail.human_review.campaigns._campaign_file import parse_campaign_file
from reviewtrail.human_review.records._record_names import PROMPT
from reviewtrail.models import _records as model_records
from reviewtrail.provenance.records import _records as provenance_records
from reviewtrail.reviewer import _records as reviewer_records
from reviewtrail.store import Store
from reviewtrail.tracing.custody import _call_record
from support.human_review import add_prompt, new_store, prompt_entry

MODULES = (
    _agents_file,
    evidence_records,
    provenance_records,
    reviewer_records,
    model_records,
    _call_record,
    cas_refs,
)
NOT_AN_INT = "must be an integer, not a boolean"
NOT_A_NUMBER = "must be a number, not a boolean"
NOT_A_BOOL = "must be a boolean (true or false), not an integer"


def _scalar(annotation: Any) -> type | None:
    """int, bool or float when ``annotation`` is one (optional, constrained or not), else None."""
    if typing.get_origin(annotation) is typing.Annotated:
        return _scalar(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _scalar(inner[0]) if len(inner) == 1 else None
    return annotation if annotation in (int, bool, float) else None


def _fields(model: type) -> list[tuple[str, Any]]:
    """(wire name, annotation) of each field of a pydantic or msgspec model."""
    if issubclass(model, msgspec.Struct):
        return [(f.encode_name, f.type) for f in msgspec.structs.fields(model)]
    return [(info.alias or name, info.annotation) for name, info in model.model_fields.items()]  # type: ignore[attr-defined]


def _scalar_fields() -> list[tuple[type[BaseModel], str, type]]:
    out = []
    for module in MODULES:
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, (BaseModel, msgspec.Struct))
                and value.__module__ == module.__name__
            ):
                for name, annotation in _fields(value):
                    kind = _scalar(annotation)
                    if kind is not None:
                        out.append((value, name, kind))
    return sorted(out, key=lambda f: (f[0].__name__, f[1]))


FIELDS = _scalar_fields()


def test_the_fields_are_found() -> None:
    found = {(m.__name__, f) for m, f, _ in FIELDS}
    assert {
        ("OpenAIBackendSpec", "timeout"),
        ("PaperOrigin", "page"),
        ("ExecutionRun", "exitCode"),
        ("ArtifactReviewRun", "version"),
        ("TokenUsage", "inputTokens"),
        ("CasRef", "size"),
    } <= found
    assert len(FIELDS) >= 30


def _errors(model: type[BaseModel], doc: dict[str, Any], *, as_json: bool) -> list[Any]:
    if issubclass(model, msgspec.Struct):  # one check, of the JSON form, whatever the input was
        try:
            decode(model, doc, field="$")
        except InvalidInputError as exc:
            words = str(exc).removeprefix(f"{exc.field}: ")
            kind = "strict_type" if words.startswith("must be") else "other"
            return [{"loc": tuple((exc.field or "$").split(".")[1:]), "msg": words, "type": kind}]
        return []
    try:
        if as_json:
            model.model_validate_json(json.dumps(doc), strict=True)
        else:
            model.model_validate(doc)
    except ValidationError as exc:
        return exc.errors()
    return []


def _wrong(kind: type) -> st.SearchStrategy[Any]:
    return st.sampled_from([0, 1]) if kind is bool else st.booleans()


@given(field=st.sampled_from(FIELDS), data=st.data(), as_json=st.booleans())
def test_every_number_refuses_a_boolean_and_every_boolean_a_number(
    field: tuple[type[BaseModel], str, type], data: st.DataObject, as_json: bool
) -> None:
    model, name, kind = field
    value = data.draw(_wrong(kind))
    expected = {int: NOT_AN_INT, float: NOT_A_NUMBER, bool: NOT_A_BOOL}[kind]
    errors = [e for e in _errors(model, {name: value}, as_json=as_json) if e["loc"] == (name,)]
    assert [e["msg"] for e in errors] == [expected], (model.__name__, name, value, errors)


@given(field=st.sampled_from(FIELDS), data=st.data(), as_json=st.booleans())
def test_values_of_their_own_kind_pass_the_type_check(
    field: tuple[type[BaseModel], str, type], data: st.DataObject, as_json: bool
) -> None:
    model, name, kind = field
    value: Any = data.draw(st.booleans() if kind is bool else st.integers(0, 10**6))
    if kind is float:
        value = data.draw(st.sampled_from([value, value / 7]))
    errors = [e for e in _errors(model, {name: value}, as_json=as_json) if e["loc"] == (name,)]
    assert not [e for e in errors if e["type"].startswith("strict_")], errors  # ranges may still refuse


# --- the files a person writes -----------------------------------------------------------------

CAMPAIGN_FIELDS = {
    ("campaign", "version"): int,
    ("criterion", "version"): int,
    ("externalExportEligible",): bool,
}


@given(path=st.sampled_from(sorted(CAMPAIGN_FIELDS)), data=st.data(), fmt=st.sampled_from(["jsonl", "yaml"]))
def test_a_campaign_file_names_the_field(path: tuple[str, ...], data: st.DataObject, fmt: str) -> None:
    entry = prompt_entry()
    value = data.draw(_wrong(CAMPAIGN_FIELDS[path]))
    target = entry
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    text = json.dumps(entry) + "\n" if fmt == "jsonl" else yaml.safe_dump([entry], sort_keys=False)
    with pytest.raises(InvalidInputError) as caught:
        parse_campaign_file(text, fmt)  # type: ignore[arg-type]
    assert caught.value.field is not None and caught.value.field.endswith(": " + ".".join(path))
    assert str(caught.value).endswith(NOT_A_BOOL if CAMPAIGN_FIELDS[path] is bool else NOT_AN_INT)


@pytest.mark.parametrize("name", ["campaign.yaml", "campaign.jsonl"])
def test_campaign_import_of_a_boolean_version_is_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    init_cli_store(tmp_path, monkeypatch)
    entry = prompt_entry()
    entry["campaign"]["version"] = True
    text = json.dumps(entry) + "\n" if name.endswith(".jsonl") else yaml.safe_dump([entry], sort_keys=False)
    (tmp_path / name).write_text(text)
    code, _, err = run_cli("campaign", "import", name)
    assert code == 2, err
    assert "campaign.version" in err and NOT_AN_INT in err
    code, out, _ = run_cli("ledger", "tail", "--type", PROMPT, "--json")
    assert code == 0 and json.loads(out) == []


@given(value=st.booleans(), as_yaml=st.booleans())
def test_an_agents_file_timeout_is_a_number_not_a_boolean(value: bool, as_yaml: bool) -> None:
    agent = {
        "id": "agent-a",
        "model": "m",
        "provider": "openai",
        "executionAdapter": "chat-completions@1",
        "catalogGeneration": "gen-1",
        "backend": {"kind": "openai", "apiKeyEnv": "OPENAI_API_KEY", "timeout": value},
    }
    doc = {"agents": [agent]}
    text = yaml.safe_dump(doc) if as_yaml else json.dumps(doc)
    with pytest.raises(InvalidInputError) as caught:
        parse_agents_file(text, "agents.yaml" if as_yaml else "agents.json")
    assert caught.value.field is not None and caught.value.field.endswith("agents[0].backend.timeout")
    assert str(caught.value).endswith(NOT_A_NUMBER)


@given(
    case=st.sampled_from([("paper", "page", int), ("paper", "fullTextRetrieved", bool), ("artifact", "version", int)]),
    data=st.data(),
)
def test_an_evidence_origin_names_the_field(case: tuple[str, str, type], data: st.DataObject) -> None:
    kind, name, expected = case
    docs: dict[str, dict[str, Any]] = {
        "paper": {"kind": "paper", "paperId": "doi:10.1/x"},
        "artifact": {"kind": "artifact", "artifactId": "a1", "name": "n", "version": 1, "content": {}},
    }
    doc = docs[kind]
    doc[name] = data.draw(_wrong(expected))
    with pytest.raises(InvalidInputError) as caught:
        parse_origin(doc)
    assert caught.value.field == f"origin.{kind}.{name}"
    assert str(caught.value).endswith(NOT_A_BOOL if expected is bool else NOT_AN_INT)


# --- campaign import-runs: a run's campaign version and its receipt's authority ------------------


@pytest.fixture(scope="module")
def import_store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    store = new_store(tmp_path_factory.mktemp("import"))
    prompt = add_prompt(store)
    yield store, prompt
    store.close()


def _run_line(prompt: Any) -> dict[str, Any]:
    run_id = "ext-run-1"
    return {
        "run": {
            "runId": run_id,
            "campaign": {"id": prompt.payload_value["campaign"]["id"], "version": 1},
            "triggerEventId": prompt.id,
            "agent": {
                "id": "agent-a",
                "model": "m",
                "provider": "openai",
                "executionAdapter": "chat-completions@1",
                "catalogGeneration": "gen-1",
            },
            "status": "completed",
            "startedAt": "2026-11-30T10:00:00Z",
            "endedAt": "2026-11-30T10:00:02Z",
            "promptHash": prompt_text_hash(prompt.payload_value["prompt"]),
        },
        "receipt": {
            "runId": run_id,
            "inputs": [{"eventId": prompt.id, "payloadHash": prompt.payload_hash, "inclusion": "whole"}],
            "toolEvidence": [],
            "externalActionAuthority": False,
        },
        "outputs": [{"response": "An answer."}],
        "privacy": prompt.privacy,
    }


@given(case=st.sampled_from(["run.campaign.version", "receipt.externalActionAuthority"]), data=st.data())
def test_an_import_runs_line_names_the_field(import_store: tuple[Store, Any], case: str, data: st.DataObject) -> None:
    store, prompt = import_store
    line = _run_line(prompt)
    if case == "run.campaign.version":
        line["run"]["campaign"]["version"] = data.draw(st.booleans())
    else:
        line["receipt"]["externalActionAuthority"] = data.draw(st.sampled_from([0, 1]))
    head = store.ledger.head()
    with pytest.raises(InvalidInputError) as caught:
        import_runs(store, json.dumps(line) + "\n")
    assert caught.value.field == f"line 1: {case}"
    assert str(caught.value).endswith(NOT_AN_INT if case.endswith("version") else NOT_A_BOOL)
    assert store.ledger.head() == head
