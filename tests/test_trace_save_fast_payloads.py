"""The trace record payloads checked with plain Python (``tracing/custody/_payload_checks.py``) never
accept what their payload models refuse: on generated payloads (valid ones, and ones broken in
one place), a payload the plain check accepts validates against its model as the ledger validates
it (``validate_with``: the JSON form, strictly). The payloads a save writes are accepted."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.cas import MemoryCas
from reviewtrail.ledger import NewRecord
from reviewtrail.ledger.records._types import validate_with
from reviewtrail.tracing.custody._call_record import RECORD_TYPES
from reviewtrail.tracing.custody._ledger_link import SAVE_BEGUN_TYPE, TRACE_RECORD_TYPE, append_save_begun
from reviewtrail.tracing.custody._payload_checks import CHECKS, accepts

MODELS = {m.record_type: m for m in RECORD_TYPES}
HEX = "0123456789abcdef" * 4
TOKEN = HEX[:32]
REF = {"pool": "agent-state", "digest": "sha256:" + HEX, "size": 12, "mediaType": "text/markdown"}
DIGEST = {"sha256": HEX, "size": 3}

ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([2**53, -(2**53), 2**64, 1.5, float("nan"), float("inf"), -0.0]),
    st.sampled_from(["", "x", HEX, HEX.upper(), TOKEN, TOKEN + "0", "sha256:" + HEX, "\ud800", "é", "text/plain"]),
    st.sampled_from([(), (1,), [], [1, "a"], {}, {"a": 1}, {1: "a"}, {"k": {1, 2}}, b"x", {"a": float("nan")}]),
    st.text(max_size=6),
)


def _deep(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"d": value}
    return value


# A trace record with every field, as a save in full mode writes it (meta shortened).
FULL_CALL: dict[str, Any] = {
    "skill": "bench",
    "run_id": "2026-01-02_run01",
    "trace_path": ".aris/traces/bench/2026-01-02_run01/",
    "meta": {
        "call_number": 1,
        "purpose": "round",
        "verdict": "ready",
        "review_completed": True,
        "duration_ms": 12,
        "score": 0.5,
        "error": None,
        "files_referenced": ["a.py", "b.md"],
        "nested": {"x": [1, {"y": None}], "deep": _deep(40)},
    },
    "prompt": REF,
    "response": REF,
    "files": {"001-round.meta.json": DIGEST, "run.meta.json": DIGEST},
    "event": DIGEST,
    "recovered": True,
    "save": TOKEN,
}
OPTIONAL = ("prompt", "response", "files", "event", "recovered", "save")


def _valid_call(draw: st.DrawFn) -> dict[str, Any]:
    payload = copy.deepcopy(FULL_CALL)
    for name in OPTIONAL:
        if draw(st.booleans()):
            del payload[name]
    return payload


# Where a generated payload is broken: a path of keys into it (created when missing).
PLACES = [
    ("skill",), ("run_id",), ("trace_path",), ("meta",), ("meta", "call_number"), ("meta", "nested"),
    ("meta", "nested", "x"), ("prompt",), ("prompt", "pool"), ("prompt", "digest"), ("prompt", "size"),
    ("prompt", "mediaType"), ("prompt", "media_type"), ("prompt", "extra"), ("response",), ("files",),
    ("files", "run.meta.json"), ("files", "run.meta.json", "sha256"), ("files", "run.meta.json", "size"),
    ("event",), ("event", "size"), ("event", "extra"), ("recovered",), ("save",), ("extra",),
    ("purpose",),
]  # fmt: skip


@st.composite
def payloads(draw: st.DrawFn) -> tuple[str, Any]:
    record_type = draw(st.sampled_from(sorted(CHECKS)))
    if record_type == TRACE_RECORD_TYPE:
        payload: Any = _valid_call(draw)
    else:
        payload = {"save": TOKEN, "skill": "bench", "purpose": "round"}
    for _ in range(draw(st.integers(0, 2))):
        if draw(st.integers(0, 9)) == 0:
            payload = draw(ODD)  # not an object at all
            break
        *parents, last = draw(st.sampled_from(PLACES))
        here = payload
        for key in parents:
            if type(here) is not dict:
                break
            here = here.setdefault(key, {})
        else:
            if type(here) is dict:
                if draw(st.integers(0, 4)) == 0:
                    here.pop(last, None)
                else:
                    here[last] = draw(ODD)
    return record_type, payload


def _model_accepts(record_type: str, payload: Any) -> bool:
    try:
        validate_with(MODELS[record_type], record_type, payload)
    except Exception:  # any refusal: InvalidInputError, or a value json cannot write
        return False
    return True


@given(payloads())
def test_a_payload_the_plain_check_accepts_is_one_the_model_accepts(case: tuple[str, Any]) -> None:
    record_type, payload = case
    before = repr(payload)
    if accepts(record_type, payload):
        assert _model_accepts(record_type, payload), payload
    assert repr(payload) == before  # the check changes nothing


def test_the_payloads_a_save_writes_are_accepted() -> None:
    class Recorder:
        """A store that keeps the records appended to it."""

        def __init__(self) -> None:
            self.cas = MemoryCas()
            self.records: list[NewRecord] = []

        def append(self, records: list[NewRecord]) -> list[Any]:
            self.records += records
            return []

    store = Recorder()
    append_save_begun(store, save=TOKEN, skill="bench", purpose="round", actor="codex")  # type: ignore[arg-type]
    [begun] = store.records
    assert accepts(SAVE_BEGUN_TYPE, begun.payload) and _model_accepts(SAVE_BEGUN_TYPE, begun.payload)
    call = copy.deepcopy(FULL_CALL)
    call["prompt"] = store.cas.put(b"prompt", pool="agent-state", media_type="text/plain").to_json()
    assert accepts(TRACE_RECORD_TYPE, call) and _model_accepts(TRACE_RECORD_TYPE, call)
    for name in OPTIONAL:
        del call[name]
        assert accepts(TRACE_RECORD_TYPE, call), name
    assert not accepts("trace.other@1", call) and not accepts(TRACE_RECORD_TYPE, [call])
