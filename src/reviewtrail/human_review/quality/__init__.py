"""Campaign quality, for the campaign's owner: coverage per scenario family, agreement between
reviewers, position bias and Bradley–Terry standings, counted by pure functions over facts read
from one consistent state of a store (docs/human-review.md, "Coverage" and "Campaign quality")."""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.human_review.quality._coverage import Coverage as Coverage
    from reviewtrail.human_review.quality._coverage import FamilyCoverage as FamilyCoverage
    from reviewtrail.human_review.quality._coverage import ItemCoverageFacts as ItemCoverageFacts
    from reviewtrail.human_review.quality._coverage import PromptCoverageFacts as PromptCoverageFacts
    from reviewtrail.human_review.quality._coverage import coverage_of as coverage_of
    from reviewtrail.human_review.quality._coverage_read import campaign_coverage as campaign_coverage
    from reviewtrail.human_review.quality._coverage_read import campaign_standings as campaign_standings
    from reviewtrail.human_review.quality._coverage_read import read_manifest as read_manifest
    from reviewtrail.human_review.quality._judgment_agreement import JudgmentAgreement as JudgmentAgreement
    from reviewtrail.human_review.quality._judgment_agreement import JudgmentPair as JudgmentPair
    from reviewtrail.human_review.quality._judgment_agreement import cohen_kappa as cohen_kappa
    from reviewtrail.human_review.quality._judgment_agreement import judgment_agreement as judgment_agreement
    from reviewtrail.human_review.quality._position_bias import BiasShare as BiasShare
    from reviewtrail.human_review.quality._position_bias import PositionBias as PositionBias
    from reviewtrail.human_review.quality._position_bias import position_bias as position_bias
    from reviewtrail.human_review.quality._position_bias import wilson_interval as wilson_interval
    from reviewtrail.human_review.quality._standings import STANDINGS_MAX_ROUNDS as STANDINGS_MAX_ROUNDS
    from reviewtrail.human_review.quality._standings import STANDINGS_PRIOR as STANDINGS_PRIOR
    from reviewtrail.human_review.quality._standings import STANDINGS_ROUNDS as STANDINGS_ROUNDS
    from reviewtrail.human_review.quality._standings import AgentStanding as AgentStanding
    from reviewtrail.human_review.quality._standings import Comparison as Comparison
    from reviewtrail.human_review.quality._standings import Standings as Standings
    from reviewtrail.human_review.quality._standings import fit_standings as fit_standings
else:
    __getattr__, __dir__ = _face.lazy(__name__)
