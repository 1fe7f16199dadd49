"""Pure rules of privacy and training eligibility: the privacy join and the three separate facts
of a decision, each with its reason (docs/human-review.md, "Privacy and eligibility")."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import msgspec

from reviewtrail.errors import InvalidInputError
from reviewtrail.human_review.records._record_names import PRIVACY_ORDER
from reviewtrail.human_review.records._records import CampaignSettings, ReviewDecision, ReviewPrompt
from reviewtrail.human_review.rules._decision_rules import ActiveDecision
from reviewtrail.ledger import Privacy

__all__ = [
    "TRAINING_DISPOSITIONS",
    "TRAINING_OFF_WHEN_DECIDED",
    "ChainPrivacy",
    "Eligibility",
    "decision_exists",
    "externally_eligible",
    "privacy_join",
    "quality_eligible",
    "training_enabled",
]

#: The only dispositions that can become training examples.
TRAINING_DISPOSITIONS = ("prefer", "correct")
#: The code of a decision left out because the campaign's training was disabled when it was
#: recorded (a canary decision): it stays evaluation-only whatever the settings later say.
TRAINING_OFF_WHEN_DECIDED = "training-off-when-decided"
_OFF_WHEN_DECIDED = (
    "training was disabled for the campaign when the decision was recorded: it stays evaluation-only "
    "(a decision recorded after training was enabled can become a training example)"
)

_RANKS: dict[str, int] = {level: rank for rank, level in enumerate(PRIVACY_ORDER)}


def privacy_join(levels: Iterable[str]) -> Privacy:
    """The strictest of ``levels``: nothing joined with a stricter level is more open than it.
    An empty join or an unknown level is refused rather than taken as public."""
    given = list(levels)
    try:
        return PRIVACY_ORDER[max(map(_RANKS.__getitem__, given))]
    except (KeyError, TypeError):  # a level that is none of them (or not even a string)
        level = next(level for level in given if not (isinstance(level, str) and level in _RANKS))
        raise InvalidInputError(f"{level!r} is not a privacy level", field="privacy") from None
    except ValueError:  # max() of nothing
        raise InvalidInputError("no privacy level to join", field="privacy") from None


class ChainPrivacy(msgspec.Struct, frozen=True):
    """The envelope privacy of every record an export example rests on."""

    prompt: Privacy
    item: Privacy
    run_a: Privacy
    run_b: Privacy
    output_a: Privacy
    output_b: Privacy
    decision: Privacy

    def join(self) -> Privacy:
        return privacy_join(
            (self.prompt, self.item, self.run_a, self.run_b, self.output_a, self.output_b, self.decision)
        )

    def not_public(self) -> list[str]:
        return [name for name in self.__struct_fields__ if getattr(self, name) != "public-source"]


def training_enabled(
    settings: Iterable[tuple[int, CampaignSettings]], campaign_id: str, version: int, *, before: int | None = None
) -> bool:
    """Whether the campaign's training is enabled: its latest settings record (by seq) says so.
    No settings record means disabled (evaluation only). With ``before``, the settings in force
    when the record at that seq was appended: only settings records before it count."""
    latest = max(
        (
            (seq, s)
            for seq, s in settings
            if s.campaign_id == campaign_id and s.version == version and (before is None or seq < before)
        ),
        key=lambda pair: pair[0],
        default=None,
    )
    return latest is not None and latest[1].training_enabled


class Eligibility(NamedTuple):
    """One fact about a decision and why it holds or not."""

    eligible: bool
    reason: str

    @property
    def code(self) -> str:
        """The code an export leaves a decision out under when this fact fails:
        :data:`TRAINING_OFF_WHEN_DECIDED` for a decision recorded while training was disabled,
        ``eligibility`` for every other reason."""
        return TRAINING_OFF_WHEN_DECIDED if self.reason == _OFF_WHEN_DECIDED else "eligibility"


def decision_exists(active: ActiveDecision | None) -> Eligibility:
    """Fact 1: the item has an active human decision (any disposition, ``skip`` included)."""
    if active is None:
        return Eligibility(False, "no decision")
    fact = active.decision
    return Eligibility(True, f"decision {fact.decision_id} ({fact.decision.disposition}) is active")


def quality_eligible(decision: ReviewDecision, *, training_enabled: bool, enabled_when_decided: bool) -> Eligibility:
    """Fact 2: a ``prefer`` or ``correct`` marked for training, in a campaign whose training is
    enabled now (``training_enabled``) and was enabled by the settings in force when the decision
    was recorded (``enabled_when_decided``). Otherwise the decision is evaluation-only: what a
    reviewer was told when deciding may only get stricter later, never more open (a decision
    recorded while training was disabled, the canary, stays out even once training is enabled)."""
    if decision.disposition not in TRAINING_DISPOSITIONS:
        return Eligibility(False, f"a {decision.disposition} decision is never a training example")
    if not decision.use_for_training:
        return Eligibility(False, "the decision is not marked for training (useForTraining is false)")
    if not training_enabled:
        return Eligibility(False, "training is disabled for the campaign: the decision is evaluation-only")
    if not enabled_when_decided:
        return Eligibility(False, _OFF_WHEN_DECIDED)
    return Eligibility(True, f"a {decision.disposition} marked for training in a training-enabled campaign")


def externally_eligible(
    decision: ReviewDecision,
    *,
    training_enabled: bool,
    prompt: ReviewPrompt,
    privacy: ChainPrivacy,
    enabled_when_decided: bool,
) -> Eligibility:
    """Fact 3: quality-eligible, the prompt preauthorized with ``externalExportEligible``, and
    the privacy join over prompt, item, both runs, both outputs and the decision is
    ``public-source``. Nothing declassifies: one stricter record keeps the example private."""
    quality = quality_eligible(decision, training_enabled=training_enabled, enabled_when_decided=enabled_when_decided)
    if not quality.eligible:
        return quality
    if not prompt.external_export_eligible:
        return Eligibility(False, "the prompt is not preauthorized for external export")
    joined = privacy.join()
    if joined != "public-source":
        return Eligibility(False, f"the privacy join is {joined} ({', '.join(privacy.not_public())} not public-source)")
    return Eligibility(True, "preauthorized prompt and every record public-source")
