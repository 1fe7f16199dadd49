"""A prompt's short label (docs/human-review.md, "Prompt labels"): the rule, held by properties, and
every campaign command that names a prompt, an item, a run or a decision of one shows its first
words; ``--json`` carries them as ``promptLabel`` beside the full ids, and no export file does."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import init_cli_store, open_cli_store, run_wide
from reviewtrail.human_review.campaigns import correct_output
from reviewtrail.human_review.reads import resolve_item
from reviewtrail.human_review.rules import DecisionInput, prompt_label
from reviewtrail.human_review.rules._labels import BLANK_LABEL, ELLIPSIS, LABEL_LIMIT
from reviewtrail.human_review.session import decide
from support.human_review import prompt_entry

REMOVED = {"Cc", "Cf", "Cs", "Co", "Cn"}


def collapsed_text(text: str) -> str:
    """``text`` with its control and format characters removed and each run of whitespace made
    one space, without leading or trailing space: what a label is a prefix of."""
    visible = ("".join(ch for ch in word if unicodedata.category(ch) not in REMOVED) for word in text.split())
    return " ".join(w for w in visible if w)


# --- the rule ---------------------------------------------------------------------------------

WORDS = st.text(
    alphabet=st.one_of(
        st.sampled_from("ab xyz\t\n\r\x0b\x0c\x1c\x85\u2028\u2029\u00a0\u3000\x00\x1b\u200b\u202e\u2066…[]:é日本🙂"),
        st.characters(),
    ),
    max_size=120,
)


@settings(max_examples=600, deadline=None)
@given(text=WORDS, limit=st.integers(min_value=2, max_value=60))
@example(text="x" * 100, limit=40)
@example(text="one two", limit=4)
@example(text="\x00 \u200b\t", limit=40)
def test_a_label_is_a_bounded_clean_prefix_of_the_collapsed_text(text: str, limit: int) -> None:
    label = prompt_label(text, limit)
    flat = collapsed_text(text)
    assert label and len(label) <= limit
    assert not any(unicodedata.category(ch) in REMOVED for ch in label)
    assert not any(ch.isspace() and ch != " " for ch in label)
    assert label == label.strip(" ") and "  " not in label
    if not flat:
        assert label == BLANK_LABEL[: limit - 1] + ELLIPSIS if len(BLANK_LABEL) > limit else label == BLANK_LABEL
    elif len(flat) <= limit:
        assert label == flat
    else:
        head = label.removesuffix(ELLIPSIS)
        assert label.endswith(ELLIPSIS) and head and flat.startswith(head)
        rest = flat[len(head) :]
        if " " in flat[: limit - 1]:  # a word boundary fits: the cut falls there, keeping every word that fits
            assert rest.startswith(" ")
            following = rest[1:].split(" ", 1)[0]
            assert len(head) + 1 + len(following) > limit - 1
        else:  # one word longer than the limit: cut inside it
            assert head == flat[: limit - 1]
    assert prompt_label(label, limit) == label  # idempotent


@settings(max_examples=300, deadline=None)
@given(text=WORDS)
def test_the_collapsed_text_keeps_every_visible_character_in_order(text: str) -> None:
    flat = collapsed_text(text)
    assert not any(ch.isspace() and ch != " " for ch in flat) and "  " not in flat and flat == flat.strip(" ")
    kept = [ch for ch in text if not ch.isspace() and unicodedata.category(ch) not in REMOVED]
    assert flat.replace(" ", "") == "".join(kept)


def test_known_labels() -> None:
    text = "Summarise  the refund\tpolicy for a customer who paid twice in March."
    assert prompt_label(text) == "Summarise the refund policy for a…"
    assert prompt_label("Short prompt.") == "Short prompt."
    assert prompt_label("y" * 50) == "y" * (LABEL_LIMIT - 1) + ELLIPSIS
    assert prompt_label("Clear\x1b[2J the\u202e screen\x00 now") == "Clear[2J the screen now"
    assert prompt_label("\u200b\x00 \n") == BLANK_LABEL
    assert prompt_label("one two three", limit=9) == "one two…"
    with pytest.raises(ValueError):
        prompt_label("text", limit=1)


# --- the commands -------------------------------------------------------------------------------

AGENTS = """
agents:
  - id: agent-a
    model: model-a
    provider: openai
    executionAdapter: chat-completions@1
    catalogGeneration: gen-1
    backend: {kind: scripted, template: "First answer: {prompt}"}
  - id: agent-b
    model: model-b
    provider: anthropic
    executionAdapter: messages@1
    catalogGeneration: gen-1
    backend: {kind: scripted, template: "Second answer: {prompt}"}
"""

REFUND = "Summarise the refund policy for a customer who paid twice in March and asks why."
REFUND_LABEL = "Summarise the refund policy for a…"
# Words a table could read as markup or an emoji code, and control characters: shown as words.
GREETING = "Translate [/b] :smile: the\x1b greeting\tinto French."
GREETING_LABEL = "Translate [/b] :smile: the greeting…"


def write_campaign(path: Path, texts: list[str], family: str = "refunds") -> None:
    lines = [prompt_entry(text=t, family=family, agents=("agent-a", "agent-b")) for t in texts]
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return init_cli_store(tmp_path, monkeypatch)


def ok(*args: str) -> str:
    code, out, err = run_wide(*args)
    assert code == 0, err
    return out


def test_import_lists_what_it_imported_by_label_family_and_short_id(project: Path) -> None:
    write_campaign(project / "c.jsonl", [REFUND, GREETING])
    out = ok("campaign", "import", "c.jsonl")
    assert REFUND_LABEL in out and GREETING_LABEL in out
    doc = json.loads(ok("campaign", "import", "c.jsonl", "--json"))
    assert [p["promptLabel"] for p in doc["prompts"]] == [REFUND_LABEL, GREETING_LABEL]
    shorts = [p["recordId"][-8:] for p in doc["prompts"]]
    assert len(set(shorts)) == 2  # prompts imported together still have distinct short ids
    for p, short in zip(doc["prompts"], shorts, strict=True):
        assert short in out and p["recordId"] not in out  # the table shows the short id, --json the whole one
    assert "already present" in ok("campaign", "import", "c.jsonl")


def test_import_of_many_prompts_lists_the_first_fifty_and_says_how_many_more(project: Path) -> None:
    write_campaign(project / "c.jsonl", [f"Prompt number {n} about billing." for n in range(1, 56)])
    out = ok("campaign", "import", "c.jsonl")
    assert "Prompt number 50 about billing." in out and "Prompt number 51 about" not in out
    assert "… and 5 more" in out and "55 prompt(s) imported" in out


def test_run_and_materialize_name_each_prompt_by_its_first_words(project: Path) -> None:
    write_campaign(project / "c.jsonl", [REFUND, GREETING])
    ok("campaign", "import", "c.jsonl")
    (project / "agents.yaml").write_text(AGENTS)
    out = ok("campaign", "run", "camp", "--version", "1", "--agents", "agents.yaml", "--no-progress")
    assert "Candidate runs" in out and REFUND_LABEL in out and GREETING_LABEL in out
    doc = json.loads(ok("campaign", "run", "camp", "--version", "1", "--agents", "agents.yaml", "--json"))
    labels = {r["promptEventId"]: r["promptLabel"] for r in doc["runs"]}
    assert sorted(labels.values()) == sorted([REFUND_LABEL, GREETING_LABEL])
    out = ok("campaign", "materialize", "camp", "--version", "1")
    assert REFUND_LABEL in out and GREETING_LABEL in out
    for prompt_id in labels:
        assert prompt_id[-8:] in out and prompt_id not in out
    doc = json.loads(ok("campaign", "materialize", "camp", "--version", "1", "--json"))
    assert {p["promptEventId"]: p["promptLabel"] for p in doc["prompts"]} == labels


def test_import_runs_names_each_run_s_prompt(project: Path) -> None:
    from test_human_review_import_runs import jsonl, run_line

    write_campaign(project / "c.jsonl", [REFUND, GREETING])
    ok("campaign", "import", "c.jsonl")
    with open_cli_store(project) as store:
        ids = [row["record_id"] for row in sorted(store.ledger.rows("hr_prompts"), key=lambda r: r["seq"])]
        refund, greeting = (store.ledger.get(i) for i in ids)
    (project / "runs.jsonl").write_text(jsonl(run_line(refund, "agent-a"), run_line(greeting, "agent-b")))
    doc = json.loads(ok("campaign", "import-runs", "runs.jsonl", "--json"))
    assert [(r["triggerEventId"], r["promptLabel"]) for r in doc["runs"]] == [
        (refund.id, REFUND_LABEL),
        (greeting.id, GREETING_LABEL),
    ]
    out = ok("campaign", "import-runs", "runs.jsonl")
    lines = out.splitlines()
    for run, label in ((doc["runs"][0], REFUND_LABEL), (doc["runs"][1], GREETING_LABEL)):
        assert any(run["runId"] in line and label in line for line in lines), out


def test_export_and_coverage_name_the_prompt_of_what_they_leave_out(project: Path) -> None:
    write_campaign(project / "c.jsonl", [REFUND, GREETING])
    ok("campaign", "import", "c.jsonl")
    (project / "agents.yaml").write_text(AGENTS)
    ok("campaign", "run", "camp", "--version", "1", "--agents", "agents.yaml", "--no-progress")
    doc = json.loads(ok("campaign", "materialize", "camp", "--version", "1", "--json"))
    item_of = {p["promptLabel"]: p["created"][0] for p in doc["prompts"]}
    with open_cli_store(project) as store:
        decide(store, item_of[REFUND_LABEL], DecisionInput(disposition="skip"), reviewer="rev-test")
        broken = resolve_item(store.ledger, item_of[GREETING_LABEL]).item.candidates[0].output_event_id
        correct_output(store, broken, "A corrected answer.")

    out = ok("review", "export", "camp", "--version", "1", "--out", "data")
    left = [line for line in out.splitlines() if item_of[REFUND_LABEL] in line]
    assert left and REFUND_LABEL in left[0] and "skip" in left[0]
    report = json.loads(ok("review", "export", "camp", "--version", "1", "--out", "data", "--json"))
    assert {(e["itemId"], e["promptLabel"]) for e in report["excluded"]} == {
        (item_of[REFUND_LABEL], REFUND_LABEL),
        (item_of[GREETING_LABEL], GREETING_LABEL),
    }
    for written in (project / "data").iterdir():
        assert "promptLabel" not in written.read_text(encoding="utf-8"), written.name

    out = ok("campaign", "coverage", "camp", "--version", "1")
    [line] = [line for line in out.splitlines() if line.startswith("invalid item")]
    assert item_of[GREETING_LABEL] in line and f'prompt "{GREETING_LABEL}"' in line
    cov = json.loads(ok("campaign", "coverage", "camp", "--version", "1", "--json"))
    [bad] = cov["overall"]["items"]["invalidItems"]
    assert (bad["itemId"], bad["promptLabel"]) == (item_of[GREETING_LABEL], GREETING_LABEL)
