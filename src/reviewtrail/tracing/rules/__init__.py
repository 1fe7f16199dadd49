"""The pure rules of reviewer calls, no I/O: model families, reviewer identity and assurance,
the skill's positive gate, and which run a call joins.
"""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.tracing.rules._assurance import SENTINELS as SENTINELS
    from reviewtrail.tracing.rules._assurance import SUCCESS_STATUSES as SUCCESS_STATUSES
    from reviewtrail.tracing.rules._assurance import Assurance as Assurance
    from reviewtrail.tracing.rules._assurance import Identity as Identity
    from reviewtrail.tracing.rules._assurance import acceptance_status as acceptance_status
    from reviewtrail.tracing.rules._assurance import assess as assess
    from reviewtrail.tracing.rules._assurance import declared_mismatches as declared_mismatches
    from reviewtrail.tracing.rules._assurance import effective_reviewer as effective_reviewer
    from reviewtrail.tracing.rules._assurance import independence_verified as independence_verified
    from reviewtrail.tracing.rules._assurance import normalize_reported as normalize_reported
    from reviewtrail.tracing.rules._assurance import review_independence as review_independence
    from reviewtrail.tracing.rules._families import FAMILIES as FAMILIES
    from reviewtrail.tracing.rules._families import UNKNOWN as UNKNOWN
    from reviewtrail.tracing.rules._families import model_family as model_family
    from reviewtrail.tracing.rules._gate import AUTO_REVIEW_LOOP_MIN_SCORE as AUTO_REVIEW_LOOP_MIN_SCORE
    from reviewtrail.tracing.rules._gate import AUTO_REVIEW_LOOP_VERDICTS as AUTO_REVIEW_LOOP_VERDICTS
    from reviewtrail.tracing.rules._gate import GateOutcome as GateOutcome
    from reviewtrail.tracing.rules._gate import positive_gate as positive_gate
else:
    __getattr__, __dir__ = _face.lazy(__name__)
