"""A list of a review prompt that holds a value twice is refused naming that list as the field, so
a campaign file's refusal says ``line N: candidateAgentIds`` (docs/human-review.md, "Campaign files")."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.test_human_review_records import prompt_wire

from reviewtrail._struct import parse
from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.campaigns import parse_campaign_file
from reviewtrail.human_review.records import ReviewPrompt

CRITERION = prompt_wire()["criterion"]
CASES = [
    (prompt_wire(candidateAgentIds=["agent-a", "agent-a"]), ("candidateAgentIds",)),
    (prompt_wire(criterion=dict(CRITERION, allowedReasonCodes=["x", "x"])), ("criterion", "allowedReasonCodes")),
    (prompt_wire(criterion=dict(CRITERION, allowedResponseTags=["y", "y"])), ("criterion", "allowedResponseTags")),
]


@pytest.mark.parametrize(("wire", "loc"), CASES)
def test_a_value_twice_is_refused_at_its_list(wire: dict[str, Any], loc: tuple[str, ...]) -> None:
    with pytest.raises(InvalidInputError) as err:
        parse(ReviewPrompt, wire, field="payload")
    assert err.value.field == ".".join(loc) and "twice" in str(err.value)


@pytest.mark.parametrize(("wire", "loc"), CASES)
def test_a_campaign_file_names_the_list_and_its_line(wire: dict[str, Any], loc: tuple[str, ...]) -> None:
    text = (
        json.dumps({**prompt_wire(), "privacy": "public-source"})
        + "\n"
        + json.dumps({**wire, "privacy": "public-source"})
    )
    with pytest.raises(InvalidInputError) as err:
        parse_campaign_file(text + "\n", "jsonl")
    assert err.value.field == "line 2: " + ".".join(loc)
