"""Resource limits of a sandboxed run: sizes, defaults, and how a hit is named.

Defaults (each overridable per run, ``reviewtrail run --max-...``):

==============  =========  ===================================================================
limit           default    enforced by
==============  =========  ===================================================================
memory          2 GiB      the run's cgroup (:mod:`._cgroup`): every page of the sandbox,
                           shared and tmpfs pages included; also ``RLIMIT_DATA`` on every sandbox
                           process and the in-sandbox supervisor, which sums the private resident
                           memory of all the sandbox's processes every 10 ms and kills them all
procs           256        the run's cgroup (``pids.max``); also the supervisor's count (its own
                           pid namespace, every 10 ms) and ``RLIMIT_NPROC`` (which the kernel does
                           not apply to root)
file-size       1 GiB      ``RLIMIT_FSIZE``: a write or truncate past it kills the writer
                           (``SIGXFSZ``); workspace files larger than it are never read into the CAS
output          10 MiB     per stream (stdout, stderr); the rest is read and dropped
time            --timeout  wall clock on the host (SIGKILL of the whole sandbox) and
                           ``RLIMIT_CPU`` = ceil(timeout) s of CPU per process
==============  =========  ===================================================================

Memory and file sizes are applied in whole KiB (rounded down, at least 1 KiB). For a bash run
without network the shell sets the rlimits itself (``ulimit``) and the supervisor starts in the
background, so it counts from a few milliseconds after the code starts.

A run that hits one is recorded with ``limitExceeded`` naming it; its status is ``failed``
(``cancelled`` for the wall-clock timeout, as before), and ``reviewtrail run`` exits 7.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from reviewtrail.errors import InvalidInputError

__all__ = [
    "DEFAULT_LIMITS",
    "LIMIT_NAMES",
    "LimitName",
    "ResourceLimits",
    "enforcement",
    "format_size",
    "limit_outcome",
    "parse_size",
    "reported_limit",
]

LimitName = Literal["memory", "procs", "file-size", "output", "time"]
LIMIT_NAMES: tuple[LimitName, ...] = ("memory", "procs", "file-size", "output", "time")

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"(\d+)\s*([KMGT]?)(?:i?B)?", re.IGNORECASE)


def parse_size(text: str | int, field: str) -> int:
    """``512M``, ``2G``, ``1GiB``, or plain bytes (``1048576``); units are powers of 1024."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        match = _SIZE.fullmatch(str(text).strip())
        if match is None:
            raise InvalidInputError(f"{text!r} is not a size (bytes, or a number with K, M, G or T)", field=field)
        value = int(match.group(1)) * _UNITS[match.group(2).upper()]
    if value <= 0:
        raise InvalidInputError("must be > 0 bytes", field=field)
    return value


def format_size(value: int) -> str:
    for unit in ("T", "G", "M", "K"):
        if value % _UNITS[unit] == 0:
            return f"{value // _UNITS[unit]}{unit}"
    return str(value)


def _positive(value: int, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InvalidInputError("must be a whole number > 0", field=field)
    return value


@dataclass(frozen=True)
class ResourceLimits:
    """What one run may use. Every field is > 0."""

    max_memory: int = 2 << 30
    max_procs: int = 256
    max_file_size: int = 1 << 30
    max_output: int = 10 << 20
    #: Accept the in-sandbox supervisor and rlimits for memory and processes where the kernel
    #: cannot enforce them from outside (no control group can be made); otherwise such a run is
    #: refused before it starts. Not a limit: not part of :meth:`to_json`.
    weak: bool = False

    def __post_init__(self) -> None:
        _positive(self.max_memory, "max_memory")
        _positive(self.max_procs, "max_procs")
        _positive(self.max_file_size, "max_file_size")
        for name in ("max_memory", "max_file_size"):  # applied in whole KiB (what ``ulimit`` takes)
            object.__setattr__(self, name, max(1024, getattr(self, name) // 1024 * 1024))
        if isinstance(self.max_output, bool) or not isinstance(self.max_output, int) or self.max_output < 0:
            raise InvalidInputError("must be a byte count >= 0", field="max_output")

    @classmethod
    def parse(
        cls,
        *,
        max_memory: str | int | None = None,
        max_procs: int | None = None,
        max_file_size: str | int | None = None,
        max_output: str | int | None = None,
        weak: bool = False,
    ) -> ResourceLimits:
        """Defaults for what is ``None``; sizes as :func:`parse_size` reads them."""
        d = DEFAULT_LIMITS
        return cls(
            max_memory=d.max_memory if max_memory is None else parse_size(max_memory, "max_memory"),
            max_procs=d.max_procs if max_procs is None else _positive(max_procs, "max_procs"),
            max_file_size=d.max_file_size if max_file_size is None else parse_size(max_file_size, "max_file_size"),
            max_output=d.max_output if max_output is None else parse_size(max_output, "max_output"),
            weak=weak,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "maxMemory": self.max_memory,
            "maxProcs": self.max_procs,
            "maxFileSize": self.max_file_size,
            "maxOutput": self.max_output,
        }


DEFAULT_LIMITS = ResourceLimits()


_LIMIT_TEXT = {
    "memory": "memory limit exceeded (--max-memory {memory})",
    "procs": "process limit exceeded (--max-procs {procs}); every process of the sandbox was killed",
    "file-size": "file size limit exceeded (--max-file-size {file_size}); the writer was killed",
    "output": "output limit exceeded (--max-output {output} per stream); the rest was dropped",
    "time": "CPU time limit exceeded ({cpu} s of CPU per process)",
}


_SIGNAL_EXITS: dict[int | None, LimitName] = {128 + 24: "time", 128 + 25: "file-size"}


def reported_limit(control: bytes) -> LimitName | None:
    """The first ``limit <name>`` line the in-sandbox supervisor wrote on its control pipe."""
    for line in control.decode("ascii", "replace").splitlines():
        word, _, name = line.partition(" ")
        for known in LIMIT_NAMES:
            if word == "limit" and name == known:
                return known
    return None


def limit_outcome(
    status: Literal["succeeded", "failed", "cancelled"],
    limit: LimitName | None,
    error: str | None,
    truncated: bool,
    limits: ResourceLimits,
    max_output: int,
    timeout: float,
    exit_code: int | None = None,
) -> tuple[Literal["succeeded", "failed", "cancelled"], LimitName | None, str | None]:
    """A run that hit a limit fails with the limit named; a wall-clock timeout stays ``cancelled``.
    Exit status 152 or 153 (128 + SIGXCPU or SIGXFSZ, as a shell reports a child killed by the
    limit) names ``time`` or ``file-size``."""
    if limit is None and exit_code in _SIGNAL_EXITS:
        limit = _SIGNAL_EXITS[exit_code]
    if limit is None and truncated:
        limit = "output"
    if limit is None or (limit == "time" and status == "cancelled"):
        return status, limit, error
    text = _LIMIT_TEXT[limit].format(
        memory=format_size(limits.max_memory),
        procs=limits.max_procs,
        file_size=format_size(limits.max_file_size),
        output=format_size(max_output) if max_output else "0",
        cpu=math.ceil(timeout),
    )
    return ("failed" if status == "succeeded" else status), limit, (f"{error}; {text}" if error else text)


def enforcement(kernel: str | None) -> dict[str, str]:
    """What enforces each limit of a run (its record's ``enforcedBy``): ``kernel`` names the
    control-group mechanism that holds memory and processes (None: there is none, and the
    in-sandbox supervisor and rlimits hold them, which the code could switch off)."""
    return {
        "memory": kernel or "supervisor+rlimit-as",
        "procs": kernel or "supervisor+rlimit-nproc",
        "file-size": "rlimit-fsize",
        "output": "host",
        "time": "host-timer+rlimit-cpu",
    }
