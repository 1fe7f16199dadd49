"""Host-session evidence for native host reviewers (``--backend copilot-native``).

A native reviewer (Copilot CLI's ``rubber-duck`` subagent) runs inside the host, so its
identity cannot come from the caller: it comes from an evidence artifact
(``aris.copilot-native.evidence/v1``, written by the reference ``copilot_native_evidence.py
verify``) that binds the review to the host's own session event log. Validation re-reads that
log and accepts the artifact only when every check below holds; only validated evidence counts
as host-validated identity (``identity_validated``, model sources ``host-session-event``).

1. The artifact is a regular file (not a symlink) owned by the current user, a JSON object with
   ``schema`` ``aris.copilot-native.evidence/v1``, ``status`` ``verified``,
   ``independence_verified`` true and ``agent_name`` ``rubber-duck``.
2. Its session log (``session_events``) is a regular file of the current user, at most 256 MiB,
   of JSON object lines; the first ``event_prefix_bytes`` bytes still hash to
   ``event_prefix_sha256`` (events appended later are allowed).
3. The log's one ``session.start`` names the artifact's ``session_id`` and ``cwd``.
4. Within the prefix, the challenge marker call is one root ``tool.execution_start`` and one
   successful root ``tool.execution_complete`` (in that order) of ``challenge_tool_call_id``,
   whose result holds the binding marker and whose model is ``executor_model``.
5. Within the prefix, the review is exactly one nonce-bound root ``rubber-duck`` invocation, one
   ``subagent.started``, one ``subagent.completed`` (both of agent ``rubber-duck``, agent id the
   tool call id) and one successful ``tool.execution_complete`` of ``tool_call_id``, in that
   order after the challenge, with no ``subagent.failed``.
6. The host-reported models match the artifact's: the invocation's model is ``executor_model``,
   the subagent's is ``reviewer_model``, neither changes within the lifecycle.
7. The two models are of known, different families (the rules' table), as the artifact's family
   fields and ``family_relation`` ``different`` say, with sources ``host-session-event``.
8. ``response_path`` is a regular file whose bytes are the host tool result's text, with
   ``response_sha256``; ``evidence_id`` is the hash of the bound fields.

A log or response changed after binding is an :class:`IntegrityError`; anything else that
fails is an :class:`InvalidInputError` (field ``native_evidence``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewtrail.errors import IntegrityError, InvalidInputError
from reviewtrail.tracing.native._native_events import Lifecycle, find_lifecycle
from reviewtrail.tracing.rules._families import UNKNOWN, model_family

__all__ = ["EVIDENCE_SCHEMA", "NativeEvidence", "bound_verdict", "validate_native_evidence"]

EVIDENCE_SCHEMA = "aris.copilot-native.evidence/v1"
CHALLENGE_SCHEMA = "aris.copilot-native.challenge/v1"
MAX_EVENT_LOG_BYTES = 256 * 1024 * 1024
FIELD = "native_evidence"


@dataclass(frozen=True)
class NativeEvidence:
    """Validated host-session evidence of one native review."""

    evidence_id: str
    path: Path
    executor_model: str
    reviewer_model: str
    response: bytes


def _fail(message: str) -> InvalidInputError:
    return InvalidInputError(message, field=FIELD)


def _regular_file(path: Path) -> None:
    try:
        info = path.lstat()
    except FileNotFoundError as exc:
        raise _fail(f"{path} does not exist") from exc
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        raise _fail(f"{path} must be a regular file, not a symlink or folder")
    if info.st_uid != os.getuid():
        raise _fail(f"{path} is owned by another user")


def _text(doc: dict[str, Any], key: str) -> str:
    value = doc.get(key)
    if not isinstance(value, str) or not value:
        raise _fail(f"the evidence has no {key}")
    return value


def _load(path: Path) -> dict[str, Any]:
    _regular_file(path)
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _fail(f"{path} is not a JSON document") from exc
    if not isinstance(value, dict):
        raise _fail(f"{path} is not a JSON object")
    return value


def _read_log(path: Path) -> bytes:
    _regular_file(path)
    if path.stat().st_size > MAX_EVENT_LOG_BYTES:
        raise _fail(f"the session event log {path} is larger than {MAX_EVENT_LOG_BYTES} bytes")
    return path.read_bytes()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def evidence_identity(doc: dict[str, Any]) -> str:
    keys = ("session_id", "challenge_event_id", "tool_call_id", "executor_model", "reviewer_model")
    fields = {k: doc.get(k) for k in (*keys, "response_sha256", "event_prefix_sha256")}
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return f"cne_{_sha256(canonical)[:32]}"


def _check_header(doc: dict[str, Any]) -> None:
    if doc.get("schema") != EVIDENCE_SCHEMA:
        raise _fail(f"the evidence schema is {doc.get('schema')!r}, not {EVIDENCE_SCHEMA}")
    if doc.get("status") != "verified" or doc.get("independence_verified") is not True:
        raise _fail("the evidence is not verified (status and independence_verified)")
    if doc.get("agent_name") != "rubber-duck":
        raise _fail("the evidence's agent is not rubber-duck")


def _check_prefix(doc: dict[str, Any], raw: bytes) -> bytes:
    length = doc.get("event_prefix_bytes")
    if not isinstance(length, int) or isinstance(length, bool) or not 0 < length <= len(raw):
        raise _fail("the evidence's event_prefix_bytes is not within its session log")
    prefix = raw[:length]
    if _sha256(prefix) != _text(doc, "event_prefix_sha256"):
        raise IntegrityError("the session event log prefix was modified after the evidence was bound", field=FIELD)
    return prefix


def _check_models(doc: dict[str, Any], life: Lifecycle) -> tuple[str, str]:
    executor, reviewer = _text(doc, "executor_model"), _text(doc, "reviewer_model")
    if life.executor_model != executor or life.reviewer_model != reviewer:
        raise _fail("the evidence's model ids differ from the host lifecycle events")
    ef, rf = model_family(executor), model_family(reviewer)
    if UNKNOWN in (ef, rf) or ef == rf:
        raise _fail(f"the evidence does not establish a known cross-family pair ({ef}, {rf})")
    if doc.get("executor_family") != ef or doc.get("reviewer_family") != rf:
        raise _fail("the evidence's family fields do not follow from its model ids")
    if doc.get("family_relation") != "different":
        raise _fail("the evidence's family relation is not 'different'")
    sources = (doc.get("executor_model_source"), doc.get("reviewer_model_source"))
    if sources != ("host-session-event", "host-session-event"):
        raise _fail("the evidence's model sources are not host session events")
    return executor, reviewer


def _check_response(doc: dict[str, Any], life: Lifecycle) -> bytes:
    path = Path(_text(doc, "response_path"))
    _regular_file(path)
    data = path.read_bytes()
    if data != life.response.encode("utf-8") or _sha256(data) != doc.get("response_sha256"):
        raise IntegrityError(f"the response artifact {path} does not match the host tool result", field=FIELD)
    return data


def validate_native_evidence(path: str | Path) -> NativeEvidence:
    """Revalidate an evidence artifact against its session log (the checks in this module's docstring)."""
    where = Path(path).absolute()
    doc = _load(where)
    _check_header(doc)
    log = Path(_text(doc, "session_events"))
    prefix = _check_prefix(doc, _read_log(log))
    try:
        life = find_lifecycle(doc, prefix, marker_schema=CHALLENGE_SCHEMA)
    except ValueError as exc:
        raise _fail(str(exc)) from exc
    executor, reviewer = _check_models(doc, life)
    response = _check_response(doc, life)
    if evidence_identity(doc) != doc.get("evidence_id"):
        raise _fail("the evidence id does not match its bound fields")
    return NativeEvidence(
        evidence_id=str(doc["evidence_id"]),
        path=where.resolve(),
        executor_model=executor,
        reviewer_model=reviewer,
        response=response,
    )


_VERDICT = re.compile(r"(?im)^\s*(?:[-*]\s*)?verdict:\s*(ready|almost|not\s+ready)\s*$")


def bound_verdict(response: bytes) -> str | None:
    """The verdict of a native response when it holds exactly one anchored ``Verdict:`` line."""
    found = _VERDICT.findall(response.decode("utf-8", errors="replace"))
    return re.sub(r"\s+", " ", found[0].lower()) if len(found) == 1 else None
