"""Who decided: the reviewer id a decision records as its actor (docs/human-review.md, "Reviewer
identity"). Pure rules, no I/O.

A reviewer id is a pseudonym chosen by the team (``rev-07``, ``alice``, ``ann@lab``): 1 to 128
characters, letters, digits and ``. _ - @ + :``, starting and ending with a letter or digit. It is
the decision record's actor, so ``review history`` and ``campaign coverage`` tell reviewers apart;
no export ever holds it. The package's own actor (``reviewtrail.human-review``), which decisions
recorded before reviewer ids carry, is not a reviewer id.
"""

from __future__ import annotations

import re

from reviewtrail.errors import ConfigError, InvalidInputError
from reviewtrail.human_review.records._record_names import ACTOR

__all__ = ["REVIEWER_ID_HELP", "UNNAMED_REVIEWER", "check_reviewer_id", "reviewer_label"]

_REVIEWER_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._@+:-]{0,126}[A-Za-z0-9])?")

#: How to give a reviewer id, as a missing one's error says.
REVIEWER_ID_HELP = (
    "pass --reviewer ID, or set REVIEWTRAIL_REVIEWER_ID, or set reviewer_id in your user configuration "
    "(~/.config/reviewtrail/config.toml, or $XDG_CONFIG_HOME/reviewtrail/config.toml)"
)

#: How decisions recorded before reviewer ids (whose actor is the package's own) are shown.
UNNAMED_REVIEWER = "(not recorded)"


def check_reviewer_id(value: str | None) -> str:
    """``value`` as a reviewer id. Missing (None or blank) is a :class:`ConfigError` (exit 5) that
    says how to set one: there is never a shared default. A malformed one is refused naming
    ``reviewer`` (exit 2)."""
    if value is None or not value.strip():
        raise ConfigError(f"no reviewer id: every decision records who made it; {REVIEWER_ID_HELP}", field="reviewer")
    if value == ACTOR:
        raise InvalidInputError(f"{ACTOR!r} is reviewtrail's own actor, not a reviewer id", field="reviewer")
    if _REVIEWER_ID.fullmatch(value) is None:
        raise InvalidInputError(
            f"{value!r} is not a reviewer id: 1 to 128 letters, digits and . _ - @ + :, starting and ending "
            "with a letter or digit",
            field="reviewer",
        )
    return value


def reviewer_label(actor: str | None) -> str:
    """The reviewer a decision record names, as shown: its actor, or :data:`UNNAMED_REVIEWER` for a
    decision recorded before reviewer ids."""
    return UNNAMED_REVIEWER if not actor or actor == ACTOR else actor
