"""JSONL is split at ``\\n`` only: text holding U+2028, U+2029, U+0085 (which Python's
``splitlines`` breaks at), emoji and CJK, written raw as ``json.dumps(..., ensure_ascii=False)``
writes it, imports and comes out of review and export unchanged, byte for byte."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from reviewtrail._struct import parse
from reviewtrail.human_review.campaigns import campaign_settings, import_campaign
from reviewtrail.human_review.campaigns._campaign_file import jsonl_lines, parse_campaign_file
from reviewtrail.human_review.export import export_campaign
from reviewtrail.human_review.records import ReviewDecision, new_decision_record
from reviewtrail.human_review.session import review_queue
from support.human_review import add_item, add_run, new_store, prompt_entry

ODD = "a\u2028b\u2029c\u0085d\x1ce\x1df\x1eg\x0bh\x0ci"  # every break splitlines knows but \n and \r
PROMPT = f"Kunde fragt: 退款政策是什么？ {ODD} 🎉👩‍💻"
EVIDENCE = f"Policy 方針 {ODD}: refunds within 30 days ✅"
RESPONSE_A = f"Yes — 30 days. {ODD} 🙂"
RESPONSE_B = f"No refunds. 不可以 {ODD}"


def test_raw_line_separators_survive_import_review_and_export(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    try:
        entries = [prompt_entry(text=PROMPT, evidence=EVIDENCE), prompt_entry(text=f"second {ODD}")]
        text = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries)
        assert "\u2028" in text and "\x85" in text  # written raw, as a user's tools write it
        result = import_campaign(store, text, name="campaign.jsonl")
        assert len(result.imported) == 2
        prompt = store.ledger.get(result.imported[0].record_id)
        assert prompt.payload_value["prompt"] == PROMPT and prompt.payload_value["evidence"] == EVIDENCE
        item = add_item(
            store,
            prompt,
            add_run(store, prompt, "agent-a", response=RESPONSE_A),
            add_run(store, prompt, "agent-b", response=RESPONSE_B),
        )
        [card] = review_queue(store, "camp", 1, limit=5)
        shown = json.dumps(card.to_json(), ensure_ascii=False)
        for part in (PROMPT, EVIDENCE, RESPONSE_A, RESPONSE_B):
            assert json.dumps(part, ensure_ascii=False) in shown
        campaign_settings(store, "camp", 1, training=True)
        wire = {
            "itemId": item.item_id,
            "disposition": "prefer",
            "preferred": item.run_ids()[0],
            "strength": "strong",
            "submissionId": f"s-{uuid.uuid4().hex}",
            "useForTraining": True,
        }
        store.append(
            [new_decision_record(parse(ReviewDecision, wire, field="payload"), "public-source", actor="reviewer-1")]
        )
        export_campaign(store, "camp", 1, tmp_path / "out")
    finally:
        store.close()
    data = (tmp_path / "out" / "camp-v1-1.training-example.v4.jsonl").read_bytes()
    # Written raw (RFC 8785 escapes only the characters below U+0020, as JSON must).
    assert "退款政策是什么？ a\u2028b\u2029c\u0085d".encode() in data and "🎉👩\u200d💻".encode() in data
    rows = [json.loads(line) for _, line in jsonl_lines(data.decode("utf-8")) if line]
    assert len(rows) == 1
    row_text = json.dumps(rows[0], ensure_ascii=False)
    for part in (PROMPT, EVIDENCE, RESPONSE_A, RESPONSE_B):  # the same strings, character for character
        assert json.dumps(part, ensure_ascii=False) in row_text


def test_a_campaign_file_with_crlf_line_ends_and_blank_lines_imports() -> None:
    entries = [prompt_entry(text=f"p{n} {ODD}") for n in range(3)]
    text = "\r\n".join(json.dumps(e, ensure_ascii=False) for e in entries) + "\r\n\r\n  \n"
    parsed = parse_campaign_file(text, "jsonl")
    assert [e.prompt.prompt for e in parsed] == [f"p{n} {ODD}" for n in range(3)]
    assert [e.line for e in parsed] == [1, 2, 3]


@given(st.lists(st.text(), min_size=1, max_size=5))
def test_jsonl_lines_give_back_every_value_written_raw(values: list[str]) -> None:
    text = "\n".join(json.dumps({"v": v}, ensure_ascii=False) for v in values) + "\n"
    read = [json.loads(line)["v"] for _, line in jsonl_lines(text) if line]
    assert read == values
