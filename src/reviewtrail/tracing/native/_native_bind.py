"""A native host reviewer's call takes its identities from validated host-session evidence.

Rules, as the reference ``save_trace.sh`` applies them:

- ``native_evidence`` belongs to backend ``copilot-native`` only;
- a ``copilot-native`` call whose status is not ``error`` needs evidence (a failed dispatch can
  happen before any evidence exists; it is recorded without claiming any);
- the tool defaults to ``task(agent_type=rubber-duck)`` and the executor to ``copilot``;
- with evidence, the executor model, the reported reviewer model and ``model`` are the
  evidence's: a caller value that differs is refused, as is a response other than the bound one
  and a verdict other than the bound response's single ``Verdict:`` line;
- ``identity_validated`` is true exactly when validated evidence is attached.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from reviewtrail.errors import InvalidInputError
from reviewtrail.tracing.rules._assurance import NATIVE_BACKEND

if TYPE_CHECKING:
    from reviewtrail.tracing.native._native_evidence import NativeEvidence

__all__ = ["bind_native"]


class ReviewCall(Protocol):
    """The fields of a :class:`~reviewtrail.tracing.files.ReviewCall` these rules read and set."""

    native_evidence: NativeEvidence | None
    backend: str | None
    identity_validated: bool
    tool: str | None
    executor: str | None
    status: str
    executor_model: str | None
    reported_reviewer_model: str | None
    model: str | None
    response: bytes | None
    verdict: str | None


NATIVE_TOOL = "task(agent_type=rubber-duck)"
NATIVE_EXECUTOR = "copilot"


def _agree(call: ReviewCall, field: str, value: str) -> None:
    given = getattr(call, field)
    if given is not None and given.strip() and given.strip() != value:
        raise InvalidInputError(f"{given!r} disagrees with the host-session evidence ({value!r})", field=field)


def bind_native(call: ReviewCall) -> None:
    """Apply the rules in this module's docstring to ``call`` (in place)."""
    evidence = call.native_evidence
    native = (call.backend or "").strip().lower() == NATIVE_BACKEND
    if evidence is not None and not native:
        raise InvalidInputError(
            f"native evidence is valid only with backend {NATIVE_BACKEND}, not {call.backend!r}",
            field="native_evidence",
        )
    if call.identity_validated and evidence is None:
        raise InvalidInputError(
            "identity is host-validated only by validated native evidence (native_evidence)", field="identity_validated"
        )
    if not native:
        return
    call.tool = call.tool or NATIVE_TOOL
    call.executor = call.executor or NATIVE_EXECUTOR
    if evidence is None:
        if call.status.strip().lower() != "error":
            raise InvalidInputError(
                f"a successful --backend {NATIVE_BACKEND} trace requires --native-evidence", field="native_evidence"
            )
        return
    from reviewtrail.tracing.native._native_evidence import bound_verdict

    _agree(call, "executor_model", evidence.executor_model)
    _agree(call, "reported_reviewer_model", evidence.reviewer_model)
    _agree(call, "model", evidence.reviewer_model)
    if call.response is not None and call.response != evidence.response:
        raise InvalidInputError("differs from the response bound in the host-session evidence", field="response")
    bound = bound_verdict(evidence.response)
    if call.verdict is not None and bound is not None and " ".join(call.verdict.lower().split()) != bound:
        raise InvalidInputError(
            f"{call.verdict!r} differs from the verdict of the bound response ({bound!r})", field="verdict"
        )
    call.executor_model = evidence.executor_model
    call.reported_reviewer_model = evidence.reviewer_model
    call.model = evidence.reviewer_model
    call.response = evidence.response
    call.identity_validated = True
