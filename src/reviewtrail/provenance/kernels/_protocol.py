"""What a kernel host and its clients say to each other, as plain values (no I/O).

A kernel host (:mod:`._host`) keeps one :class:`~._session_kernel.SessionKernel` of one
session alive between ``reviewtrail run --kernel NAME`` commands. Each connection to its Unix
socket carries one request, a JSON object on one line (``op``: ``run``, ``ping`` or ``stop``),
and gets one answer, a JSON object: ``{"ok": true, ...}``, ``{"ok": false, "error": {type, field,
message, exitCode}}``, or ``{"ok": false, "retry": true}`` when the host is stopping and a new
one must be started.

A kernel is started with the settings of its first run (:class:`KernelSettings`); a later run
that asks for others is refused, naming the first option that differs
(:func:`settings_difference`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reviewtrail import errors
from reviewtrail.errors import InvalidInputError, ReviewtrailError
from reviewtrail.provenance.sandbox._limits import ResourceLimits, format_size

__all__ = [
    "DEFAULT_IDLE_MINUTES",
    "MAX_REQUEST",
    "KernelSettings",
    "check_idle_minutes",
    "check_kernel_name",
    "decode_message",
    "encode_message",
    "error_from_json",
    "error_to_json",
    "settings_difference",
]

DEFAULT_IDLE_MINUTES = 30.0
MAX_REQUEST = 64 << 20  # a request line: the code (at most 16 MiB as a file) JSON-escaped, and the settings
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def check_kernel_name(name: str) -> str:
    """A kernel's NAME: 1 to 64 letters, digits, ``.``, ``_``, ``-``, starting with a letter or digit."""
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise InvalidInputError(
            f"{name!r} is not a kernel name (1 to 64 letters, digits, '.', '_' or '-', starting with a letter or "
            "digit)",
            field="kernel",
        )
    return name


def check_idle_minutes(minutes: float) -> float:
    if isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or not math.isfinite(minutes) or minutes <= 0:
        raise InvalidInputError(f"{minutes!r} is not a number of minutes > 0", field="idle_minutes")
    return float(minutes)


@dataclass(frozen=True)
class KernelSettings:
    """What a kernel is started with: the same for every run it evaluates."""

    lang: str
    env: Mapping[str, str] = field(default_factory=dict)
    network: str = "none"
    allowlist: tuple[str, ...] = ()
    resolve: Mapping[str, str] = field(default_factory=dict)
    limits: ResourceLimits = field(default_factory=ResourceLimits)

    def to_json(self) -> dict[str, Any]:
        return {
            "lang": self.lang,
            "env": dict(self.env),
            "network": self.network,
            "allowlist": list(self.allowlist),
            "resolve": dict(self.resolve),
            "limits": {**self.limits.to_json(), "weak": self.limits.weak},
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> KernelSettings:
        limits = doc.get("limits") or {}
        return cls(
            lang=str(doc["lang"]),
            env={str(k): str(v) for k, v in (doc.get("env") or {}).items()},
            network=str(doc.get("network", "none")),
            allowlist=tuple(str(h) for h in doc.get("allowlist") or ()),
            resolve={str(k): str(v) for k, v in (doc.get("resolve") or {}).items()},
            limits=ResourceLimits(
                max_memory=limits["maxMemory"],
                max_procs=limits["maxProcs"],
                max_file_size=limits["maxFileSize"],
                max_output=limits["maxOutput"],
                weak=bool(limits.get("weak", False)),
            ),
        )


def _listed(values: tuple[str, ...] | Mapping[str, str]) -> str:
    if isinstance(values, Mapping):
        values = tuple(f"{k}={v}" for k, v in sorted(values.items()))
    return ", ".join(values) or "none"


def settings_difference(started: KernelSettings, asked: KernelSettings) -> tuple[str, str] | None:
    """The first option ``asked`` gives otherwise than the kernel was started with, as (option,
    what the kernel has and what was asked), or None when they are the same. ``--env`` values are
    never shown (they may be secrets)."""
    a, b = started.limits, asked.limits
    checks: list[tuple[str, bool, str, str]] = [
        ("--lang", started.lang == asked.lang, started.lang, asked.lang),
        ("--env", dict(started.env) == dict(asked.env), _listed(tuple(sorted(started.env))), "other variables"),
        ("--network", started.network == asked.network, started.network, asked.network),
        ("--allow", sorted(started.allowlist) == sorted(asked.allowlist), _listed(started.allowlist),
         _listed(asked.allowlist)),
        ("--allow-resolve", dict(started.resolve) == dict(asked.resolve), _listed(started.resolve),
         _listed(asked.resolve)),
        ("--max-memory", a.max_memory == b.max_memory, format_size(a.max_memory), format_size(b.max_memory)),
        ("--max-procs", a.max_procs == b.max_procs, str(a.max_procs), str(b.max_procs)),
        ("--max-file-size", a.max_file_size == b.max_file_size, format_size(a.max_file_size),
         format_size(b.max_file_size)),
        ("--max-output", a.max_output == b.max_output, format_size(a.max_output), format_size(b.max_output)),
        ("--weak-limits", a.weak == b.weak, "given" if a.weak else "not given", "given" if b.weak else "not given"),
    ]  # fmt: skip
    for option, same, theirs, ours in checks:
        if not same:
            if option == "--env":
                return option, f"it was started with --env {theirs} (values not shown), this run asks for {ours}"
            return option, f"it was started with {option} {theirs}, this run asks for {ours}"
    return None


# --- messages ------------------------------------------------------------------------------------
def encode_message(doc: Mapping[str, Any]) -> bytes:
    """One request or answer: compact JSON on one line."""
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def decode_message(data: bytes) -> dict[str, Any]:
    """A request or answer read back; a message that is not a JSON object is invalid input."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidInputError(f"not a kernel message: {exc}", field="kernel") from None
    if not isinstance(doc, dict):
        raise InvalidInputError("not a kernel message: not a JSON object", field="kernel")
    return doc


def error_to_json(exc: ReviewtrailError) -> dict[str, Any]:
    """The error as a client re-raises it: its type, field, message (without the field) and exit code."""
    text = str(exc)
    message = text[len(exc.field) + 2 :] if exc.field and text.startswith(f"{exc.field}: ") else text
    return {"type": type(exc).__name__, "field": exc.field, "message": message, "exitCode": exc.exit_code}


def error_from_json(doc: Mapping[str, Any]) -> ReviewtrailError:
    """The host's error, as the same class (from :mod:`reviewtrail.errors`) with the same exit code."""
    kind = getattr(errors, str(doc.get("type")), None)
    cls = kind if isinstance(kind, type) and issubclass(kind, ReviewtrailError) else ReviewtrailError
    field_name = doc.get("field")
    message = str(doc.get("message", "the kernel host failed"))
    exc = cls(message, field=field_name if isinstance(field_name, str) else None)
    code = doc.get("exitCode")
    if isinstance(code, int) and not isinstance(code, bool) and code != exc.exit_code:
        exc.exit_code = code
    return exc
