"""The pure rules of human review over its records: which decision of an item is active, what a
frozen item binds, which runs may be paired, privacy and training eligibility, reviewer ids, prompt
labels and the training-example row of one decision (docs/human-review.md, "Rules"). Nothing here
reads a store."""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.human_review.rules._decision_rules import ActiveDecision as ActiveDecision
    from reviewtrail.human_review.rules._decision_rules import DecisionFact as DecisionFact
    from reviewtrail.human_review.rules._decision_rules import DecisionInput as DecisionInput
    from reviewtrail.human_review.rules._decision_rules import Refusal as Refusal
    from reviewtrail.human_review.rules._decision_rules import active_decisions as active_decisions
    from reviewtrail.human_review.rules._decision_rules import check_decision as check_decision
    from reviewtrail.human_review.rules._decision_rules import first_submission as first_submission
    from reviewtrail.human_review.rules._eligibility import TRAINING_DISPOSITIONS as TRAINING_DISPOSITIONS
    from reviewtrail.human_review.rules._eligibility import ChainPrivacy as ChainPrivacy
    from reviewtrail.human_review.rules._eligibility import Eligibility as Eligibility
    from reviewtrail.human_review.rules._eligibility import decision_exists as decision_exists
    from reviewtrail.human_review.rules._eligibility import externally_eligible as externally_eligible
    from reviewtrail.human_review.rules._eligibility import privacy_join as privacy_join
    from reviewtrail.human_review.rules._eligibility import quality_eligible as quality_eligible
    from reviewtrail.human_review.rules._eligibility import training_enabled as training_enabled
    from reviewtrail.human_review.rules._export_rows import TRAINING_EXAMPLE_V4 as TRAINING_EXAMPLE_V4
    from reviewtrail.human_review.rules._export_rows import ExampleCandidate as ExampleCandidate
    from reviewtrail.human_review.rules._export_rows import ExampleFacts as ExampleFacts
    from reviewtrail.human_review.rules._export_rows import example_facts as example_facts
    from reviewtrail.human_review.rules._export_rows import example_refusal as example_refusal
    from reviewtrail.human_review.rules._export_rows import training_example_v4 as training_example_v4
    from reviewtrail.human_review.rules._frozen import DIGEST_VERSION as DIGEST_VERSION
    from reviewtrail.human_review.rules._frozen import POSITIONS as POSITIONS
    from reviewtrail.human_review.rules._item_rules import ITEM_NAMESPACE as ITEM_NAMESPACE
    from reviewtrail.human_review.rules._item_rules import CandidateFacts as CandidateFacts
    from reviewtrail.human_review.rules._item_rules import candidate_digest as candidate_digest
    from reviewtrail.human_review.rules._item_rules import display_order as display_order
    from reviewtrail.human_review.rules._item_rules import displayed_runs as displayed_runs
    from reviewtrail.human_review.rules._item_rules import item_id as item_id
    from reviewtrail.human_review.rules._item_rules import item_problems as item_problems
    from reviewtrail.human_review.rules._labels import prompt_label as prompt_label
    from reviewtrail.human_review.rules._queue_rules import DecisionMark as DecisionMark
    from reviewtrail.human_review.rules._queue_rules import in_queue_of as in_queue_of
    from reviewtrail.human_review.rules._queue_rules import item_state as item_state
    from reviewtrail.human_review.rules._queue_rules import queue_order as queue_order
    from reviewtrail.human_review.rules._reviewers import REVIEWER_ID_HELP as REVIEWER_ID_HELP
    from reviewtrail.human_review.rules._reviewers import check_reviewer_id as check_reviewer_id
    from reviewtrail.human_review.rules._reviewers import reviewer_label as reviewer_label
    from reviewtrail.human_review.rules._run_rules import EXCLUSION_CODES as EXCLUSION_CODES
    from reviewtrail.human_review.rules._run_rules import Exclusion as Exclusion
    from reviewtrail.human_review.rules._run_rules import PromptRef as PromptRef
    from reviewtrail.human_review.rules._run_rules import RunFacts as RunFacts
    from reviewtrail.human_review.rules._run_rules import pairable_runs as pairable_runs
    from reviewtrail.human_review.rules._run_rules import receipt_exclusions as receipt_exclusions
    from reviewtrail.human_review.rules._run_rules import run_exclusions as run_exclusions
    from reviewtrail.human_review.rules._second_judgments import SecondJudgmentFact as SecondJudgmentFact
    from reviewtrail.human_review.rules._second_judgments import (
        selected_for_second_judgment as selected_for_second_judgment,
    )
    from reviewtrail.human_review.rules._second_judgments import selection_point as selection_point
else:
    __getattr__, __dir__ = _face.lazy(__name__)
