"""Reviewer identity and assurance: pure functions, no I/O.

- The effective reviewer model is the reported one (source ``backend-reported``, or
  ``host-session-event`` when validated host-session evidence reported it) when
  reported and not a sentinel; else the requested one (source ``requested``);
  else none (source ``unavailable``). A sentinel or missing report is stored as null.
- ``review_independence`` compares the executor's and the effective reviewer's
  families: ``cross-family``, ``same-family``, or ``unknown`` when either is unknown.
- ``acceptance_status`` is ``accepted`` only when every condition holds; otherwise
  ``provisional``. ``independence_verified`` needs validated identity evidence.
  The compatibility Copilot drive mode (backend ``copilot``) is always ``provisional``.
- Family and independence labels a caller declares are claims: they never enter these
  rules; :func:`declared_mismatches` names the ones the rules contradict.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from reviewtrail.tracing.rules._families import UNKNOWN, model_family

__all__ = [
    "NATIVE_BACKEND",
    "SENTINELS",
    "SUCCESS_STATUSES",
    "Assurance",
    "Identity",
    "acceptance_status",
    "assess",
    "declared_mismatches",
    "effective_reviewer",
    "independence_verified",
    "is_sentinel",
    "normalize_reported",
    "review_independence",
]

SENTINELS = frozenset({"unknown", "unavailable", "none", "null", ""})
SUCCESS_STATUSES = frozenset({"ok", "fallback_used", "success", "completed"})
ModelSource = Literal["backend-reported", "host-session-event", "requested", "unavailable"]
# Backends whose reviews stay provisional whatever else holds: the compatibility Copilot drive mode.
PROVISIONAL_BACKENDS = frozenset({"copilot"})
# The native host backend: its calls take their identities from host-session evidence (``_native_bind``).
NATIVE_BACKEND = "copilot-native"
REPORTED_SOURCES = frozenset({"backend-reported", "host-session-event"})
Independence = Literal["cross-family", "same-family", "unknown"]
Acceptance = Literal["accepted", "provisional"]


def is_sentinel(value: str | None) -> bool:
    return value is None or value.strip().lower() in SENTINELS


def normalize_reported(reported: str | None) -> str | None:
    """The reported model as stored: ``None`` for a missing report or a sentinel."""
    return None if is_sentinel(reported) else (reported or "").strip()


def effective_reviewer(
    requested: str | None, reported: str | None, *, host_validated: bool = False
) -> tuple[str | None, ModelSource]:
    real = normalize_reported(reported)
    if real is not None:
        return real, "host-session-event" if host_validated else "backend-reported"
    if not is_sentinel(requested):
        return (requested or "").strip(), "requested"
    return None, "unavailable"


def review_independence(executor_model: str | None, reviewer_model: str | None) -> Independence:
    a, b = model_family(executor_model), model_family(reviewer_model)
    if UNKNOWN in (a, b):
        return "unknown"
    return "same-family" if a == b else "cross-family"


def acceptance_status(
    *,
    status: str,
    review_completed: bool,
    review_scope_complete: bool,
    review_positive: bool,
    independence: str,
    reviewer_model_source: str,
    identity_validated: bool,
    reviewer_kind: str = "model",
    backend: str | None = None,
) -> Acceptance:
    """``accepted`` only when every condition holds; anything else stays ``provisional``.

    A deterministic verifier never yields ``accepted``: it cannot stand in for a
    semantic model review. Nor does the compatibility Copilot drive mode (backend
    ``copilot``), whatever else holds.
    """
    conditions = (
        status.strip().lower() in SUCCESS_STATUSES,
        review_completed is True,
        review_scope_complete is True,
        review_positive is True,
        independence == "cross-family",
        reviewer_model_source in REPORTED_SOURCES or identity_validated is True,
        reviewer_kind == "model",
        (backend or "").strip().lower() not in PROVISIONAL_BACKENDS,
    )
    return "accepted" if all(conditions) else "provisional"


def independence_verified(independence: str, identity_validated: bool) -> bool:
    """True only with validated identity evidence of a cross-family pair; a family relation alone never suffices."""
    return identity_validated is True and independence == "cross-family"


class Identity(msgspec.Struct, frozen=True):
    requested_reviewer_model: str | None
    reported_reviewer_model: str | None
    reviewer_model: str | None
    reviewer_model_source: ModelSource
    model_family: str
    executor_family: str


class Assurance(msgspec.Struct, frozen=True):
    identity: Identity
    review_independence: Independence
    acceptance_status: Acceptance
    independence_verified: bool


def assess(
    *,
    executor_model: str | None,
    requested_reviewer_model: str | None,
    reported_reviewer_model: str | None,
    status: str,
    review_completed: bool,
    review_scope_complete: bool,
    review_positive: bool,
    identity_validated: bool = False,
    reviewer_kind: str = "model",
    backend: str | None = None,
) -> Assurance:
    """Every identity and assurance label of one call, from the caller's facts.

    ``identity_validated`` means validated host-session evidence reported the reviewer
    (and executor) model; the reviewer's source is then ``host-session-event``.
    """
    reviewer, source = effective_reviewer(
        requested_reviewer_model, reported_reviewer_model, host_validated=identity_validated
    )
    independence = review_independence(executor_model, reviewer)
    requested = None if is_sentinel(requested_reviewer_model) else (requested_reviewer_model or "").strip()
    identity = Identity(
        requested_reviewer_model=requested,
        reported_reviewer_model=normalize_reported(reported_reviewer_model),
        reviewer_model=reviewer,
        reviewer_model_source=source,
        model_family=model_family(reviewer),
        executor_family=model_family(executor_model),
    )
    return Assurance(
        identity=identity,
        review_independence=independence,
        acceptance_status=acceptance_status(
            status=status,
            review_completed=review_completed,
            review_scope_complete=review_scope_complete,
            review_positive=review_positive,
            independence=independence,
            reviewer_model_source=source,
            identity_validated=identity_validated,
            reviewer_kind=reviewer_kind,
            backend=backend,
        ),
        independence_verified=independence_verified(independence, identity_validated),
    )


def _reference_independence(a: Assurance) -> str:
    """The reference helper's tri-state ``independence_verified``: ``true``, ``false`` or ``unverified``."""
    if a.independence_verified:
        return "true"
    return "false" if a.review_independence == "same-family" else "unverified"


def declared_mismatches(
    a: Assurance,
    *,
    executor_family: str | None = None,
    reviewer_family: str | None = None,
    independence_verified: str | None = None,
) -> list[str]:
    """The declared labels (caller claims) that differ from what the rules derived, by field name.

    Families compare case-insensitively with the derived ones; a declared independence compares
    with the reference helper's tri-state value (``true``, ``false`` or ``unverified``).
    """
    claims = (
        ("executor_family", executor_family, a.identity.executor_family),
        ("reviewer_family", reviewer_family, a.identity.model_family),
        ("independence_verified", independence_verified, _reference_independence(a)),
    )
    return [name for name, claim, derived in claims if claim is not None and claim.strip().lower() != derived]
