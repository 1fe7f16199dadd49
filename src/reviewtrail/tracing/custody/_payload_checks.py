"""The trace record payloads checked with plain Python: what the payload models of
``trace.review-call@1`` and ``trace.save-begun@1`` (:mod:`reviewtrail.tracing.custody._call_record`,
pydantic) accept, answered without them.

:func:`accepts` is True only for a payload the model accepts as the ledger validates it (its JSON
form, strictly: ``validate_with``); False leaves the payload to the model, which refuses it with
its own message or accepts what the plain rules leave to it (a ``str`` subclass, a tuple, an
integer beyond 2**53, a value nested deeper than 64 levels). So a check made here never accepts
what the model refuses, and every refusal is the model's. ``tests/test_trace_save_fast_payloads.py``
checks that on generated payloads.

:data:`CHECKS` is what the ledger's record catalog asks before it loads the models (wired in
:mod:`reviewtrail.app`): a payload checked here needs no model, so a save loads no pydantic.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from reviewtrail.canonical import encodable_text
from reviewtrail.cas import CasRef, is_hex
from reviewtrail.tracing.custody._ledger_link import SAVE_BEGUN_TYPE, TRACE_RECORD_TYPE

__all__ = ["CHECKS", "PAYLOAD_CHECKS", "accepts"]

_SAFE_INT = 2**53 - 1
_MAX_DEPTH = 64
_CALL_REQUIRED = frozenset({"skill", "run_id", "trace_path", "meta"})
_CALL_FIELDS = _CALL_REQUIRED | {"prompt", "response", "files", "event", "recovered", "save", "origin"}
_BEGUN_FIELDS = frozenset({"save", "skill", "purpose"})
_DIGEST_KEYS = frozenset({"sha256", "size"})
_HEX = frozenset("0123456789abcdef")


def _size(value: object) -> bool:
    return type(value) is int and 0 <= value <= _SAFE_INT


def _json(value: object, depth: int = 0) -> bool:
    """A JSON value of plain kinds, read back from its JSON form as itself."""
    if value is None or type(value) is bool:
        return True
    if type(value) is int:
        return -_SAFE_INT <= value <= _SAFE_INT
    if type(value) is float:
        return math.isfinite(value)
    if type(value) is str:
        return encodable_text(value)
    if depth >= _MAX_DEPTH:
        return False
    if type(value) is list:
        return all(_json(item, depth + 1) for item in value)
    if type(value) is dict:
        return all(encodable_text(k) and _json(v, depth + 1) for k, v in value.items())
    return False


def _token(value: object) -> bool:
    """A save token or a project folder's id: 32 lowercase hex digits (``SAVE_TOKEN_PATTERN``,
    ``ORIGIN_PATTERN``)."""
    return type(value) is str and len(value) == 32 and _HEX.issuperset(value)


def _digest(value: object) -> bool:
    """``{"sha256": hex, "size": n}`` (the model's ``FileDigest``)."""
    if type(value) is not dict or value.keys() != _DIGEST_KEYS:
        return False
    return type(value["sha256"]) is str and is_hex(value["sha256"]) and _size(value["size"])


def _ref(value: object) -> bool:
    """A typed CAS reference (``CasRef``) as JSON, or null."""
    if value is None:
        return True
    if type(value) is not dict or not all(encodable_text(v) for k, v in value.items() if k != "size"):
        return False
    return CasRef.plain_values(value) is not None and _size(value.get("size"))


def _review_call(payload: dict[str, Any]) -> bool:
    if not (_CALL_REQUIRED <= payload.keys() <= _CALL_FIELDS):
        return False
    if not (
        encodable_text(payload["skill"]) and encodable_text(payload["run_id"]) and encodable_text(payload["trace_path"])
    ):
        return False
    meta = payload["meta"]
    if type(meta) is not dict or not _json(meta):
        return False
    if not (_ref(payload.get("prompt")) and _ref(payload.get("response"))):
        return False
    files = payload.get("files")
    if files is not None and (
        type(files) is not dict or not all(encodable_text(k) and _digest(v) for k, v in files.items())
    ):
        return False
    event = payload.get("event")
    if event is not None and not _digest(event):
        return False
    recovered = payload.get("recovered")
    if recovered is not None and type(recovered) is not bool:
        return False
    save, origin = payload.get("save"), payload.get("origin")
    return (save is None or _token(save)) and (origin is None or _token(origin))


def _save_begun(payload: dict[str, Any]) -> bool:
    return (
        payload.keys() == _BEGUN_FIELDS
        and _token(payload["save"])
        and encodable_text(payload["skill"])
        and encodable_text(payload["purpose"])
    )


# Record type -> its plain check (the payload, an object).
CHECKS: dict[str, Callable[[dict[str, Any]], bool]] = {
    TRACE_RECORD_TYPE: _review_call,
    SAVE_BEGUN_TYPE: _save_begun,
}


def accepts(record_type: str, payload: Any) -> bool:
    """True when the payload model of ``record_type`` surely accepts ``payload`` as the ledger
    validates it; False when the model must decide (or the type is not a trace record's)."""
    check = CHECKS.get(record_type)
    return check is not None and type(payload) is dict and check(payload)


#: :data:`CHECKS` under the name the package exports.
PAYLOAD_CHECKS = CHECKS
