"""Decoding and checking one record payload: the msgspec payload model against pydantic.

payload_decode
    A ``trace.review-call@1`` payload as a save writes it in full mode (two CAS references, two
    file digests, an event digest, a ten-key meta document) checked the way the ledger checks an
    appended payload: its JSON form (``json.dumps``) decoded and validated by the record type's
    model (``ReviewCallRecord.check_payload``: one cached msgspec decoder), against the baseline
    of the same work done as the ledger did it before the model was a msgspec model: ``json.dumps``
    then pydantic ``model_validate_json(strict=True)`` of the same model written with pydantic
    (the model as it stood, copied below). A second line times the JSON bytes alone (what a read
    of a stored record decodes): msgspec ``Decoder.decode`` against pydantic
    ``model_validate_json``. Median of 5 runs of 20,000 payloads (2,000 with --quick), alternating.
    No target: the figure is reported (ratio > 1: ours is faster).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Annotated, Any

from _util import Config, Result, measure

HEX = "0123456789abcdef" * 4
REF = {"pool": "agent-state", "digest": "sha256:" + HEX, "size": 4096, "mediaType": "text/markdown"}
DIGEST = {"sha256": HEX, "size": 812}
PAYLOAD: dict[str, Any] = {
    "skill": "auto-review-loop",
    "run_id": "2026-01-02_run01",
    "trace_path": ".aris/traces/auto-review-loop/2026-01-02_run01/",
    "meta": {
        "call_number": 1,
        "purpose": "round-1-review",
        "backend": "grok",
        "executor": "codex",
        "verdict": "ready",
        "status": "ok",
        "review_completed": True,
        "duration_ms": 1234,
        "score": 0.5,
        "files_referenced": ["a.py", "b.md"],
    },
    "prompt": REF,
    "response": REF,
    "files": {"001-round-1-review.meta.json": DIGEST, "run.meta.json": DIGEST},
    "event": DIGEST,
    "recovered": False,
    "save": HEX[:32],
}


def _pydantic_model() -> Any:
    """``ReviewCallRecord`` as a pydantic model, as it stood before it was a msgspec model."""
    from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
    from pydantic_core import PydanticCustomError

    from reviewtrail.cas import Pool, parse_digest
    from reviewtrail.cas._address import DEFAULT_MEDIA_TYPE, check_media_type

    def strictly(kind: type) -> BeforeValidator:  # an int is not a bool, a bool not an int
        def check(value: Any) -> Any:
            if isinstance(value, kind) and (kind is bool or not isinstance(value, bool)):
                return value
            raise PydanticCustomError("strict", f"must be {kind.__name__}")

        return BeforeValidator(check)

    IS_INT = strictly(int)
    StrictBool = Annotated[bool, strictly(bool)]

    class CasRef(BaseModel):
        model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)
        pool: Pool
        digest: str
        size: Annotated[int, Field(ge=0), IS_INT]
        media_type: str = Field(default=DEFAULT_MEDIA_TYPE, alias="mediaType")

        @field_validator("digest")
        @classmethod
        def _digest(cls, v: str) -> str:
            return parse_digest(v, field="digest")

        @field_validator("media_type")
        @classmethod
        def _media(cls, v: str) -> str:
            return check_media_type(v)

    class FileDigest(BaseModel):
        model_config = ConfigDict(frozen=True, extra="forbid")
        sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
        size: Annotated[int, Field(ge=0), IS_INT]

    class ReviewCallRecord(BaseModel):
        model_config = ConfigDict(frozen=True, populate_by_name=True, extra="forbid", ser_json_inf_nan="constants")
        skill: str
        run_id: str
        trace_path: str
        meta: dict[str, Any]
        prompt: CasRef | None = None
        response: CasRef | None = None
        files: dict[str, FileDigest] | None = None
        event: FileDigest | None = None
        recovered: StrictBool | None = None
        save: Annotated[str, Field(pattern=r"^[0-9a-f]{32}$")] | None = None
        origin: Annotated[str, Field(pattern=r"^[0-9a-f]{32}$")] | None = None

    return ReviewCallRecord


def _loop(count: int, one: Callable[[], object]) -> Callable[[int], float]:
    def rep(_: int) -> float:
        start = time.perf_counter()
        for _ in range(count):
            one()
        return time.perf_counter() - start

    return rep


def bench_decode(cfg: Config) -> Result:
    from reviewtrail._struct import _decoder
    from reviewtrail.tracing.custody._call_record import ReviewCallRecord

    count = 2_000 if cfg.quick else 20_000
    reps = cfg.rep_count(5, 5)
    old = _pydantic_model()
    text = json.dumps(PAYLOAD).encode()
    decoder = _decoder(ReviewCallRecord)
    old.model_validate_json(text, strict=True)  # built before timing, as the catalog's cached model

    def ours() -> None:
        ReviewCallRecord.check_payload("trace.review-call@1", PAYLOAD)

    def theirs() -> None:
        old.model_validate_json(json.dumps(PAYLOAD, allow_nan=False), strict=True)

    append = measure(reps, _loop(count, ours), _loop(count, theirs))
    read = measure(
        reps,
        _loop(count, lambda: decoder.decode(text)),
        _loop(count, lambda: old.model_validate_json(text, strict=True)),
    )
    per = 1e6 / count
    return Result(
        "payload_decode",
        "REPORT",
        ours=f"{append.ours_median * per:.2f} us/payload",
        baseline=f"{append.baseline_median * per:.2f} us (json.dumps + pydantic model_validate_json, strict)",
        ratio=append.ratio,
        target="report",
        notes=[
            f"from JSON bytes alone: msgspec {read.ours_median * per:.2f} us, "
            f"pydantic model_validate_json {read.baseline_median * per:.2f} us (ratio {read.ratio:.2f})",
            f"median of {reps} runs of {count} trace.review-call@1 payloads ({len(text)} bytes of JSON)",
        ],
    )
