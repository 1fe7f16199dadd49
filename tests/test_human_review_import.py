"""Campaign files and campaigns on a store: JSONL and YAML import, line-numbered refusals, whole-file
atomicity, idempotent re-import, campaign settings and the campaign list (docs/human-review.md,
"Campaign files")."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import init_cli_store, open_cli_store, run_cli
from reviewtrail.app import init_store
from reviewtrail.config import Settings
from reviewtrail.errors import ConflictError, InvalidInputError
from reviewtrail.human_review.campaigns import import_campaign, list_campaigns, parse_campaign_file
from reviewtrail.human_review.records import PROMPT, PROMPT_MAX_CHARS, new_prompt_record


def entry(n: int = 1, **changes: Any) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "campaign": {"id": "canary", "version": 1, "label": "Canary"},
        "scenarioFamily": "refusals",
        "prompt": f"Explain result {n}.",
        "evidence": "Table 1 shows 3.2.",
        "criterion": {
            "id": "helpful",
            "version": 1,
            "label": "Helpfulness",
            "instructions": "Prefer the answer that uses the evidence.",
            "allowedReasonCodes": ["unsupported"],
            "allowedResponseTags": ["verbose"],
        },
        "candidateAgentIds": ["agent-a", "agent-b"],
        "externalExportEligible": False,
        "privacy": "public-source",
    }
    wire.update(changes)
    return wire


def jsonl(entries: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(e) + "\n" for e in entries)


def head_id(project: Path) -> str | None:
    with open_cli_store(project) as store:
        head = store.ledger.head()
    return head.id if head else None


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return init_cli_store(tmp_path, monkeypatch)


def test_jsonl_round_trip(project: Path) -> None:
    (project / "c.jsonl").write_text(jsonl([entry(1), entry(2, scenarioFamily="numbers", privacy="private")]))
    code, out, err = run_cli("campaign", "import", "c.jsonl", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["imported"] == 2 and doc["alreadyPresent"] == 0
    with open_cli_store(project) as store:
        records = list(store.ledger.read(type=PROMPT))
    assert [r.payload_value["prompt"] for r in records] == ["Explain result 1.", "Explain result 2."]
    assert [r.privacy for r in records] == ["public-source", "private"]
    assert "privacy" not in records[0].payload_value
    assert records[0].subject == "canary"


def test_yaml_round_trip(project: Path) -> None:
    (project / "c.yaml").write_text(yaml.safe_dump([entry(1), entry(2, privacy="sensitive")], sort_keys=False))
    code, out, err = run_cli("campaign", "import", "c.yaml", "--json")
    assert code == 0, err
    assert json.loads(out)["imported"] == 2
    with open_cli_store(project) as store:
        records = list(store.ledger.read(type=PROMPT))
    assert [r.privacy for r in records] == ["public-source", "sensitive"]
    assert records[1].payload_value["criterion"]["allowedReasonCodes"] == ["unsupported"]


def test_bad_jsonl_entry_names_its_line_and_field_and_changes_nothing(project: Path) -> None:
    before = head_id(project)
    bad = entry(3)
    bad["criterion"] = {**bad["criterion"], "id": "has space"}
    text = "\n" + jsonl([entry(1), entry(2)]) + "\n" + jsonl([bad])  # entry 3 is on line 5
    (project / "c.jsonl").write_text(text)
    code, _, err = run_cli("campaign", "import", "c.jsonl")
    assert code == 2
    assert "line 5: criterion.id" in err and "entry 3" in err
    assert head_id(project) == before


def test_bad_yaml_entry_names_its_line_and_field(project: Path) -> None:
    text = yaml.safe_dump([entry(1), entry(2, privacy="secret")], sort_keys=False)
    (project / "c.yml").write_text(text)
    privacy_line = next(i for i, line in enumerate(text.splitlines(), start=1) if "secret" in line)
    before = head_id(project)
    code, _, err = run_cli("campaign", "import", "c.yml")
    assert code == 2
    assert f"line {privacy_line}: privacy" in err and "entry 2" in err
    assert head_id(project) == before


def test_yaml_entry_line_for_a_missing_field() -> None:
    text = yaml.safe_dump([entry(1), {k: v for k, v in entry(2).items() if k != "prompt"}], sort_keys=False)
    second = [i for i, line in enumerate(text.splitlines(), start=1) if line.startswith("- ")][1]
    with pytest.raises(InvalidInputError) as info:
        parse_campaign_file(text, "yaml")
    assert info.value.field == f"line {second}: prompt"


@pytest.mark.parametrize(
    "text",
    ["{not json\n", '{"campaign": 1}\n', "[1, 2]\n", '"just a string"\n'],
)
def test_malformed_jsonl_changes_nothing(project: Path, text: str) -> None:
    (project / "c.jsonl").write_text(jsonl([entry(1)]) + text)
    before = head_id(project)
    code, _, err = run_cli("campaign", "import", "c.jsonl")
    assert code == 2 and "line 2" in err
    assert head_id(project) == before


@pytest.mark.parametrize("text", ["- [unclosed\n", "campaign: 1\n", "- 1\n", ""])
def test_malformed_yaml_changes_nothing(project: Path, text: str) -> None:
    (project / "c.yaml").write_text(text)
    before = head_id(project)
    code, _, err = run_cli("campaign", "import", "c.yaml")
    assert code == 2 and "error:" in err
    assert head_id(project) == before


def test_second_import_appends_nothing(project: Path) -> None:
    (project / "c.jsonl").write_text(jsonl([entry(1), entry(2)]))
    assert run_cli("campaign", "import", "c.jsonl")[0] == 0
    before = head_id(project)
    code, out, err = run_cli("campaign", "import", "c.jsonl", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["imported"] == 0 and doc["alreadyPresent"] == 2
    assert head_id(project) == before
    # a changed privacy is another prompt
    (project / "d.jsonl").write_text(jsonl([entry(1), entry(2, privacy="private")]))
    doc = json.loads(run_cli("campaign", "import", "d.jsonl", "--json")[1])
    assert (doc["imported"], doc["alreadyPresent"]) == (1, 1)


def test_same_entry_twice_in_one_file_is_recorded_once(project: Path) -> None:
    (project / "c.jsonl").write_text(jsonl([entry(1), entry(1)]))
    doc = json.loads(run_cli("campaign", "import", "c.jsonl", "--json")[1])
    assert (doc["imported"], doc["alreadyPresent"]) == (1, 1)


def test_external_export_on_a_private_prompt_is_refused(project: Path) -> None:
    (project / "c.jsonl").write_text(jsonl([entry(1), entry(2, externalExportEligible=True, privacy="private")]))
    before = head_id(project)
    code, _, err = run_cli("campaign", "import", "c.jsonl")
    assert code == 2
    assert "line 2: externalExportEligible" in err and "entry 2" in err
    assert head_id(project) == before
    (project / "ok.jsonl").write_text(jsonl([entry(1, externalExportEligible=True)]))
    assert run_cli("campaign", "import", "ok.jsonl")[0] == 0


def test_settings_default_false_and_toggle(project: Path) -> None:
    code, out, err = run_cli("campaign", "settings", "canary", "--version", "1", "--json")
    assert code == 0, err
    assert json.loads(out)["trainingEnabled"] is False and json.loads(out)["recordId"] is None
    on = json.loads(run_cli("campaign", "settings", "canary", "--version", "1", "--training", "--json")[1])
    assert on["trainingEnabled"] is True and on["changed"] is True
    again = json.loads(run_cli("campaign", "settings", "canary", "--version", "1", "--training", "--json")[1])
    assert again["changed"] is False and again["recordId"] == on["recordId"]
    shown = json.loads(run_cli("campaign", "settings", "canary", "--version", "1", "--json")[1])
    assert shown["trainingEnabled"] is True
    off = json.loads(run_cli("campaign", "settings", "canary", "--version", "1", "--no-training", "--json")[1])
    assert off["trainingEnabled"] is False and off["changed"] is True
    with open_cli_store(project) as store:
        assert store.ledger.get(off["recordId"]).supersedes == on["recordId"]
    other = json.loads(run_cli("campaign", "settings", "canary", "--version", "2", "--json")[1])
    assert other["trainingEnabled"] is False


def test_settings_bad_campaign_id_names_the_field(project: Path) -> None:
    code, _, err = run_cli("campaign", "settings", "has space", "--version", "1", "--training")
    assert code == 2 and "campaignId" in err
    code, _, err = run_cli("campaign", "settings", "canary", "--version", "0", "--training")
    assert code == 2 and "version" in err


def test_ls_counts_per_family_and_training(project: Path) -> None:
    other = {"id": "beta", "version": 2, "label": "Beta"}
    entries = [entry(1), entry(2), entry(3, scenarioFamily="numbers"), entry(4, campaign=other)]
    (project / "c.jsonl").write_text(jsonl(entries))
    assert run_cli("campaign", "import", "c.jsonl")[0] == 0
    assert run_cli("campaign", "settings", "beta", "--version", "2", "--training")[0] == 0
    code, out, err = run_cli("campaign", "ls", "--json")
    assert code == 0, err
    assert json.loads(out) == [
        {
            "campaignId": "beta",
            "version": 2,
            "label": "Beta",
            "prompts": 1,
            "promptsByFamily": {"refusals": 1},
            "trainingEnabled": True,
        },
        {
            "campaignId": "canary",
            "version": 1,
            "label": "Canary",
            "prompts": 3,
            "promptsByFamily": {"numbers": 1, "refusals": 2},
            "trainingEnabled": False,
        },
    ]
    code, out, _ = run_cli("campaign", "ls")
    assert code == 0 and "canary" in out and "numbers: 1" in out


_families = st.sampled_from(["refusals", "numbers", "citations"])
_campaigns = st.sampled_from([("canary", 1), ("canary", 2), ("beta", 1)])
_privacy = st.sampled_from(["public-source", "private", "sensitive"])
_entries = st.lists(
    st.tuples(_campaigns, _families, st.integers(0, 5), _privacy),
    min_size=1,
    max_size=12,
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(specs=_entries, as_yaml=st.booleans())
def test_import_then_ls_counts_match(specs: list[tuple[tuple[str, int], str, int, str]], as_yaml: bool) -> None:
    entries = [
        entry(n, campaign={"id": cid, "version": v, "label": cid.title()}, scenarioFamily=fam, privacy=priv)
        for (cid, v), fam, n, priv in specs
    ]
    text = yaml.safe_dump(entries, sort_keys=False) if as_yaml else jsonl(entries)
    distinct = {json.dumps(e, sort_keys=True): e for e in entries}.values()
    expected: dict[tuple[str, int], dict[str, int]] = {}
    for e in distinct:
        counts = expected.setdefault((e["campaign"]["id"], e["campaign"]["version"]), {})
        counts[e["scenarioFamily"]] = counts.get(e["scenarioFamily"], 0) + 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        with init_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}")) as store:
            first = import_campaign(store, text, fmt="yaml" if as_yaml else "jsonl")
            again = import_campaign(store, text, fmt="yaml" if as_yaml else "jsonl")
            found = {(c.campaign_id, c.version): c.prompts_by_family for c in list_campaigns(store)}
    assert len(first.imported) == len(distinct) and len(first.already_present) == len(entries) - len(distinct)
    assert again.imported == [] and len(again.already_present) == len(entries)
    assert found == expected


def test_yaml_aliases_are_refused() -> None:
    text = "- &e {prompt: x}\n- *e\n"
    with pytest.raises(InvalidInputError) as info:
        parse_campaign_file(text, "yaml")
    assert info.value.field == "line 1: file"  # the anchored node's line
    assert "aliases" in str(info.value)
    # ... and says what to do instead
    assert "write each value out in full" in str(info.value) and "JSONL" in str(info.value)


@pytest.mark.parametrize("fmt", ["jsonl", "yaml"])
def test_deep_nesting_is_refused_as_input(fmt: str) -> None:
    text = "[" * 100_000 + "]" * 100_000 + "\n"
    with pytest.raises(InvalidInputError):
        parse_campaign_file(text, "jsonl" if fmt == "jsonl" else "yaml")


def test_bounds_are_enforced_with_the_line(project: Path) -> None:
    long = entry(2, prompt="x" * (PROMPT_MAX_CHARS + 1))
    (project / "c.jsonl").write_text(jsonl([entry(1), long]))
    code, _, err = run_cli("campaign", "import", "c.jsonl")
    assert code == 2 and "line 2: prompt" in err
    ok = entry(2, prompt="x" * PROMPT_MAX_CHARS)
    (project / "d.jsonl").write_text(jsonl([ok]))
    assert run_cli("campaign", "import", "d.jsonl")[0] == 0


def test_a_second_record_of_the_same_prompt_is_a_conflict(project: Path) -> None:
    [parsed] = parse_campaign_file(jsonl([entry(1)]), "jsonl")
    with open_cli_store(project) as store:
        store.append([new_prompt_record(parsed.prompt, parsed.privacy)])
        before = store.ledger.head()
        with pytest.raises(ConflictError):
            store.append([new_prompt_record(parsed.prompt, parsed.privacy)])
        assert store.ledger.head() == before


def test_missing_file_is_invalid_input(project: Path) -> None:
    code, _, err = run_cli("campaign", "import", "nope.yaml")
    assert code == 2 and "file" in err


_texts = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)


@settings(max_examples=40, deadline=None)
@given(
    prompts=st.lists(_texts, min_size=1, max_size=6),
    bad=st.integers(0, 5),
    field=st.sampled_from(["privacy", "scenarioFamily", "candidateAgentIds", "criterion"]),
)
def test_parser_names_the_line_of_the_bad_entry_in_both_formats(prompts: list[str], bad: int, field: str) -> None:
    entries = [entry(i, prompt=p) for i, p in enumerate(prompts)]
    good_jsonl = parse_campaign_file(jsonl(entries), "jsonl")
    good_yaml = parse_campaign_file(yaml.safe_dump(entries, sort_keys=False), "yaml")
    assert [e.prompt for e in good_jsonl] == [e.prompt for e in good_yaml]
    assert [e.line for e in good_jsonl] == list(range(1, len(entries) + 1))
    bad %= len(entries)
    broken = [dict(e) for e in entries]
    broken[bad][field] = None
    with pytest.raises(InvalidInputError) as info:
        parse_campaign_file(jsonl(broken), "jsonl")
    assert info.value.field is not None and info.value.field.startswith(f"line {bad + 1}: {field}")
    text = yaml.safe_dump(broken, sort_keys=False)
    starts = [e.line for e in good_yaml]
    with pytest.raises(InvalidInputError) as info:
        parse_campaign_file(text, "yaml")
    line = int(str(info.value.field).split(":")[0].removeprefix("line "))
    end = starts[bad + 1] if bad + 1 < len(starts) else len(text.splitlines()) + 1
    assert starts[bad] <= line < end and str(info.value.field).endswith(field)
