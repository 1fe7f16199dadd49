"""Review tools: the Reviewer Specialist's latest summary, and human review's blinded queue and
decisions, exactly as ``review summary``, ``review queue`` and ``review decide``.

The queue's cards never name a run, agent, model or adapter (presentational blinding); a
decision's result reveals who produced A and B only once the decision is recorded, and only where
no open item shows the same response (the reveal gate), as the command prints it.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from reviewtrail.agents._privacy import served_cards, served_decision
from reviewtrail.agents._signature import fields_of, with_parameters
from reviewtrail.agents._toolbox import Toolbox

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["DECIDE_EXTRAS", "register_review_tools"]

Json = dict[str, Any]


def register_review_tools(server: MCPServer[Any], box: Toolbox) -> None:
    """Add ``review_summary``, ``review_queue`` and ``review_decide`` to ``server``."""

    @box.tool(server, idempotent=True)
    def review_summary(
        spec: Annotated[str, Field(description="NAME[@VERSION] of an artifact (NAME alone: its latest version).")],
        project: Annotated[str | None, Field(description="Project (default: the server's).")] = None,
    ) -> Json:
        """review_summary: the latest Reviewer Specialist review of an artifact version as a short,
        bounded text for the agent's next prompt ("context": read-only feedback), with the review run
        it came from (reviewRunId), so the next trace can cite it. A version with no review run is
        exit 3 (field review): an older version's review is never given for a newer one. As
        'reviewtrail review summary SPEC --json'."""
        from reviewtrail.reviewer import review_summary as latest

        return latest(box.store, spec, project or box.project).to_json()

    @box.tool(server, idempotent=True)
    def review_queue(
        campaign: Annotated[str | None, Field(description="Only items of this campaign.")] = None,
        version: Annotated[int | None, Field(description="Only items of this campaign version.")] = None,
        limit: Annotated[int, Field(description="At most this many cards (1 to 1,000).")] = 20,
    ) -> Json:
        """review_queue: human review cards, items with no decision first, blinded: the prompt, the
        evidence, the criterion and candidates A and B, never who produced them. An item whose runs,
        outputs or prompt changed after it was frozen is shown invalid, its responses withheld. As
        'reviewtrail review queue --json' (the cards under "cards"). A card whose privacy join is not
        public-source has its prompt, evidence and responses withheld (null, with the reason under
        "withheld"), unless the server was started with --serve-private; "withheld" counts them."""
        from reviewtrail.human_review.session import review_queue as queue

        return served_cards(queue(box.store, campaign, version, limit=limit), serve_private=box.options.serve_private)

    from reviewtrail.human_review.rules import DecisionInput

    def review_decide(**arguments: Any) -> Json:
        """review_decide: record one human-review decision on an item, as the reviewer given (else the
        reviewer id of the server's settings, REVIEWTRAIL_REVIEWER_ID): disposition prefer (with
        preferred A or B and strength slight or strong), tie, correct (with replacement, the
        response to train on), underdetermined, malformed or skip; reason_codes and response_tags
        from the criterion's allowlists. An item with an active decision is refused (exit 6, naming
        it and its reviewer) unless supersedes names it, or unless the campaign selected the item for
        a second judgment, another reviewer's judgment is active and this reviewer has not judged it
        again: then it is recorded as a second judgment, for agreement only, never exported
        ("secondJudgment": true, "comparedWith": the decision). A submission_id sent again returns
        its first result and appends nothing. The result reveals who produced A and B, now that the
        decision is recorded, except a position whose response an open item still shows: that one
        says when it is revealed ("withheld"). As 'reviewtrail review decide ITEM --json'."""
        from reviewtrail.human_review.rules import check_reviewer_id
        from reviewtrail.human_review.session import decide

        item, given, submission = arguments.pop("item"), arguments.pop("reviewer"), arguments.pop("submission_id")
        who = check_reviewer_id(given if given is not None and given.strip() else box.options.default_reviewer())
        decision = DecisionInput.of(arguments)
        doc = decide(box.store, item, decision, submission_id=submission, reviewer=who).to_json()
        return served_decision(doc, serve_private=box.options.serve_private)

    box.tool(server, writes=True)(
        with_parameters(review_decide, [*DECIDE_EXTRAS, *fields_of(DecisionInput)], returns=Json)
    )


def _param(name: str, annotation: Any, default: Any = None) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


# What ``review decide`` takes besides the decision itself (:class:`~reviewtrail.human_review.rules.DecisionInput`).
DECIDE_EXTRAS = (
    _param(
        "item",
        Annotated[str, Field(description="The review item id (from review_queue).")],
        inspect.Parameter.empty,
    ),
    _param(
        "reviewer",
        Annotated[
            str | None, Field(description="Your reviewer id, recorded as who decided (default: the server's setting).")
        ],
    ),
    _param("submission_id", Annotated[str | None, Field(description="Resubmitting an id returns its first result.")]),
)
