"""Limits the kernel enforces from outside a sandbox: one control group per run.

Where the host lets reviewtrail create control groups (cgroup v1 ``memory`` and ``pids``
hierarchies it can write to: root, or a delegated subtree), every run gets its own group,
created under reviewtrail's own group of each hierarchy before the sandbox starts. The sandbox's
first process joins both groups itself before it ``exec``s bubblewrap (:meth:`RunCgroup.wrap`),
so nothing of the sandbox ever runs outside them, and nothing inside can leave them: the sandbox
has its own cgroup namespace, no ``/sys``, and no capabilities.

- **memory**: ``memory.limit_in_bytes`` and ``memory.memsw.limit_in_bytes`` (when swap is
  accounted) are ``--max-memory``. The kernel charges anonymous memory, shared memory
  (``mmap(MAP_SHARED | MAP_ANONYMOUS)``) and the sandbox's tmpfs ``/tmp`` pages to the group, and
  the sandbox's own processes (bubblewrap, the supervisor) count too. The group's OOM killer is
  switched off (``memory.oom_control``): past the limit a process of the group waits instead of
  dying, the kernel signals an eventfd (``cgroup.event_control``), and the host, which reads it
  every few milliseconds, kills every process of the sandbox at once. So a run that passed its
  limit does nothing more (no shell goes on to its next command after the kernel killed one
  child). Where the kernel cannot switch it off, it kills a process itself (``oom_kill``) and the
  host kills the rest.
- **procs**: ``pids.max`` is ``--max-procs`` plus the sandbox's own processes
  (:data:`OWN_PROCESSES`); a fork past it fails, and ``pids.events`` counts it (``max``).

A run that hit either is reported with ``limitExceeded`` naming it. The group is emptied (every
process left in it killed) and removed when the run ends; groups left by a killed reviewtrail are
removed by the next run that finds them empty.

Where no group can be made, :func:`cgroup_support` says why, and the run refuses to start unless
its caller accepts the weaker mechanisms (the in-sandbox supervisor and rlimits).
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from reviewtrail.errors import BackendUnavailableError
from reviewtrail.provenance.sandbox._limits import LimitName, ResourceLimits

__all__ = [
    "CGROUP_V1",
    "OWN_PROCESSES",
    "RunCgroup",
    "cgroup_support",
    "create_run_cgroup",
    "require_enforceable",
    "run_cgroup",
]

#: The mechanism name recorded in ``enforcedBy`` for limits a cgroup v1 group enforces.
CGROUP_V1 = "cgroup-v1"
#: Processes of the sandbox itself, beside the code's: bubblewrap's two, the supervisor, the
#: network bridge and the bash launcher's watcher.
OWN_PROCESSES = 5

_ROOT = Path("/sys/fs/cgroup")
_CONTROLLERS = ("memory", "pids")
_PARENT = "reviewtrail-runs"
# The sandbox's first process: join each group (the paths of their cgroup.procs files follow the
# script), then become bubblewrap.
_JOIN = 'for f in "$1" "$2"; do printf "%s\\n" "$$" > "$f" || exit 125; done; shift 2; exec "$@"'
_SH = "/bin/sh"
_STALE = 60.0


def _own_group(controller: str, proc_cgroup: str) -> Path | None:
    """The folder of this process's own group in the v1 hierarchy of ``controller``."""
    mount = _ROOT / controller
    if not (mount / "cgroup.procs").exists() or not (mount / "tasks").exists():
        return None  # not a v1 hierarchy of that controller
    for line in proc_cgroup.splitlines():
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            return mount / path.lstrip("/")
    return None


def _parents() -> tuple[dict[str, Path] | None, str]:
    try:
        proc_cgroup = Path("/proc/self/cgroup").read_text()
    except OSError as exc:
        return None, f"cannot read /proc/self/cgroup ({exc.strerror})"
    parents: dict[str, Path] = {}
    for controller in _CONTROLLERS:
        own = _own_group(controller, proc_cgroup)
        if own is None:
            return None, f"no cgroup v1 {controller} hierarchy is mounted at {_ROOT / controller}"
        parent = own / _PARENT
        try:
            parent.mkdir(exist_ok=True)
        except OSError as exc:
            return None, f"cannot create a control group under {own} ({exc.strerror})"
        parents[controller] = parent
    return parents, ""


def cgroup_support() -> str | None:
    """None when runs can be placed in their own control groups here; otherwise why not."""
    parents, why = _parents()
    return None if parents is not None else why


@dataclass
class RunCgroup:
    """One run's control groups (by controller); close it when the run has ended."""

    groups: dict[str, Path]
    # The kernel's counts (OOM kills, refused forks) already accounted for (:meth:`settle`).
    _seen: tuple[int, int] = (0, 0)
    # The eventfd the kernel signals at each OOM of the memory group (None where it cannot).
    _oom_events: int | None = None
    # An OOM was seen since the groups were made (or last settled).
    _out_of_memory: bool = False

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` started inside the groups: its first process joins them, then ``exec``s it."""
        return [_SH, "-c", _JOIN, "sh", *(str(self.groups[c] / "cgroup.procs") for c in _CONTROLLERS), *argv]

    def _counts(self) -> tuple[int, int]:
        return _field(self.groups["memory"] / "memory.oom_control", "oom_kill"), self._refused()

    def _refused(self) -> int:
        return _field(self.groups["pids"] / "pids.events", "max")

    def exceeded(self) -> LimitName | None:
        """The limit the kernel enforced since the groups were made (or last :meth:`settle`d), if
        any (memory first): a process killed for memory, or a fork refused."""
        memory = _fields(self.groups["memory"] / "memory.oom_control")  # read once: both of its flags
        oom, refused = memory.get("oom_kill", 0), self._refused()
        if not self._out_of_memory:
            self._out_of_memory = oom > self._seen[0] or _signalled(self._oom_events) or memory.get("under_oom", 0) > 0
        if self._out_of_memory:
            return "memory"
        if refused > self._seen[1]:
            return "procs"
        return None

    def settle(self) -> None:
        """Take what the kernel enforced so far as accounted for (a persistent kernel, after one
        evaluation)."""
        self._seen = self._counts()
        _signalled(self._oom_events)
        self._out_of_memory = False

    def close(self) -> None:
        """Kill what is left in the groups and remove them."""
        for group in self.groups.values():
            _empty(group)
            _remove(group)
        if self._oom_events is not None:
            os.close(self._oom_events)
            self._oom_events = None


def create_run_cgroup(limits: ResourceLimits, name: str | None = None) -> RunCgroup | None:
    """The control groups of one run, with ``limits`` set; None when none can be made here
    (:func:`cgroup_support` says why)."""
    parents, _ = _parents()
    if parents is None:
        return None
    for parent in parents.values():
        _sweep(parent)
    label = name or uuid.uuid4().hex
    groups: dict[str, Path] = {}
    try:
        for controller, parent in parents.items():
            group = parent / label
            group.mkdir()
            groups[controller] = group
        memory = groups["memory"]
        (memory / "memory.limit_in_bytes").write_text(str(limits.max_memory))
        memsw = memory / "memory.memsw.limit_in_bytes"
        if memsw.exists():  # swap is accounted: swapped-out pages count too
            memsw.write_text(str(limits.max_memory))
        (groups["pids"] / "pids.max").write_text(str(limits.max_procs + OWN_PROCESSES))
        with contextlib.suppress(OSError):  # a kernel without it kills one process itself
            (memory / "memory.oom_control").write_text("1")
    except BaseException as exc:
        for group in groups.values():
            _remove(group)
        if isinstance(exc, OSError):
            raise BackendUnavailableError(
                f"cannot set up the run's control group under {parents['memory']}: {exc.strerror or exc}; nothing ran",
                field="limits",
            ) from None
        raise
    return RunCgroup(groups, _oom_events=_oom_eventfd(groups["memory"]))


def _oom_eventfd(memory: Path) -> int | None:
    """An eventfd the kernel signals at each OOM of the group ``memory``; None where it cannot."""
    events = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
    try:
        control = os.open(memory / "memory.oom_control", os.O_RDONLY | os.O_CLOEXEC)
        try:
            (memory / "cgroup.event_control").write_text(f"{events} {control}")
        finally:
            os.close(control)
    except OSError:
        os.close(events)
        return None
    return events


def _signalled(events: int | None) -> bool:
    """Whether the kernel signalled ``events`` since it was last read (reading it clears it)."""
    if events is None:
        return False
    try:
        return os.eventfd_read(events) > 0
    except BlockingIOError:
        return False


def run_cgroup(limits: ResourceLimits) -> RunCgroup | None:
    """The run's control groups; None where none can be made and ``limits.weak`` accepts that,
    otherwise refused (exit 5) before anything starts (:func:`require_enforceable`)."""
    cgroup = create_run_cgroup(limits)
    if cgroup is None:
        require_enforceable(limits)
    return cgroup


def require_enforceable(limits: ResourceLimits) -> None:
    """Refuse (exit 5) limits the kernel cannot enforce here, unless ``limits.weak`` accepts the
    in-sandbox supervisor and rlimits instead."""
    if limits.weak:
        return
    why = cgroup_support()
    if why is not None:
        raise BackendUnavailableError(
            f"the memory and process limits cannot be enforced from outside the sandbox here: {why}; "
            "pass --weak-limits to accept the in-sandbox supervisor and rlimits, which the code can switch off",
            field="limits",
        )


def _field(path: Path, key: str) -> int:
    return _fields(path).get(key, 0)


def _fields(path: Path) -> dict[str, int]:
    """The ``name value`` lines of a control file (empty when it cannot be read)."""
    with contextlib.suppress(OSError, ValueError):
        return {name: int(value) for name, _, value in (line.partition(" ") for line in path.read_text().splitlines())}
    return {}


def _pids(group: Path) -> list[int]:
    with contextlib.suppress(OSError, ValueError):
        return [int(p) for p in (group / "cgroup.procs").read_text().split()]
    return []


def _empty(group: Path) -> None:
    for _ in range(200):
        pids = _pids(group)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)


def _remove(group: Path) -> None:
    for _ in range(200):
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                return
            time.sleep(0.005)


def _sweep(parent: Path) -> None:
    """Remove the groups of earlier runs that are empty (their reviewtrail was killed) and older
    than :data:`_STALE` seconds (a group just made, whose sandbox has not joined it yet, stays)."""
    now = time.time()
    with contextlib.suppress(OSError):
        for group in parent.iterdir():
            with contextlib.suppress(OSError):
                if group.is_dir() and now - group.stat().st_mtime > _STALE and not _pids(group):
                    group.rmdir()
