"""``trace.review-call@1`` records read back as the calls they describe. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reviewtrail.errors import InvalidInputError
from reviewtrail.tracing.files._layout import RUN_ID, check_name

__all__ = ["RecordedCall", "parse_record"]


@dataclass(frozen=True)
class RecordedCall:
    """What one record says was written for one call."""

    record_id: str
    seq: int
    skill: str
    run_id: str
    number: int
    purpose: str
    meta: dict[str, Any]
    # (sha256, size) by file name; None in records written before file digests were stored
    files: dict[str, tuple[str, int]] | None
    event: tuple[str, int] | None
    prompt_sha256: str | None = None  # from the prompt's CAS reference (full mode)
    response_sha256: str | None = None
    save: str | None = None  # the token of the save that wrote it (records since saves record their start)
    origin: str | None = None  # the id of the project folder that saved it (records since records name it)

    @property
    def stem(self) -> str:
        return f"{self.number:03d}-{self.purpose}"

    @property
    def run_key(self) -> tuple[str, str]:
        return (self.skill, self.run_id)

    @property
    def call_key(self) -> tuple[str, str, int, str]:
        return (self.skill, self.run_id, self.number, self.purpose)

    @property
    def label(self) -> str:
        return f"ledger record {self.record_id} (seq {self.seq})"

    @property
    def trace_path(self) -> str:
        return f".aris/traces/{self.skill}/{self.run_id}/"

    def expected_names(self) -> list[str]:
        """The files this record vouches for, by name in the run folder."""
        if self.files is not None:
            return sorted(self.files)
        names = [f"{self.stem}.request.json", f"{self.stem}.meta.json"]
        if self.response_sha256 is not None or (self.meta.get("response_sha256") and self.mode == "full"):
            names.append(f"{self.stem}.response.md")
        return sorted(names)

    @property
    def mode(self) -> str:
        value = self.meta.get("trace_mode", "full")
        return value if isinstance(value, str) else "full"


def _digest(value: Any, where: str) -> tuple[str, int]:
    if (
        not isinstance(value, dict)
        or set(value) != {"sha256", "size"}
        or not isinstance(value["sha256"], str)
        or len(value["sha256"]) != 64
        or not isinstance(value["size"], int)
        or isinstance(value["size"], bool)
    ):
        raise ValueError(f"{where} is not {{sha256, size}}")
    return value["sha256"], value["size"]


def _ref_sha(value: Any) -> str | None:
    if isinstance(value, dict) and isinstance(value.get("digest"), str):
        algo, _, hexdigest = value["digest"].partition(":")
        return hexdigest if algo == "sha256" else None
    return None


def parse_record(record_id: str, seq: int, payload: Any) -> RecordedCall | str:
    """The call a record describes, or a problem line when the payload cannot name one."""
    label = f"ledger record {record_id} (seq {seq})"
    try:
        if not isinstance(payload, dict):
            raise ValueError("payload is not an object")
        skill = check_name(payload.get("skill"), "skill")
        run_id = payload.get("run_id")
        if not isinstance(run_id, str) or RUN_ID.fullmatch(run_id) is None:
            raise ValueError(f"run_id {run_id!r} is not a run id")
        meta = payload.get("meta")
        if not isinstance(meta, dict):
            raise ValueError("meta is not an object")
        number = meta.get("call_number")
        if not isinstance(number, int) or isinstance(number, bool) or number < 0:
            raise ValueError(f"meta.call_number {number!r} is not a call number")
        purpose = check_name(meta.get("purpose"), "meta.purpose")
        files = None
        if "files" in payload:
            raw = payload["files"]
            if not isinstance(raw, dict):
                raise ValueError("files is not an object")
            files = {}
            for name, value in raw.items():
                if not isinstance(name, str) or "/" in name or name in ("", ".", ".."):
                    raise ValueError(f"files holds {name!r}, not a file name")
                files[name] = _digest(value, f"files[{name!r}]")
        event = _digest(payload["event"], "event") if "event" in payload else None
    except (ValueError, InvalidInputError) as exc:
        return f"{label}: cannot be compared with the trace files: {exc}"
    return RecordedCall(
        record_id,
        seq,
        skill,
        run_id,
        number,
        purpose,
        meta,
        files,
        event,
        prompt_sha256=_ref_sha(payload.get("prompt")),
        response_sha256=_ref_sha(payload.get("response")),
        save=payload["save"] if isinstance(payload.get("save"), str) else None,
        origin=payload["origin"] if isinstance(payload.get("origin"), str) else None,
    )
