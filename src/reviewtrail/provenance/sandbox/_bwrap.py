"""bubblewrap itself: finding it, the sandbox's mounts and namespaces, starting and killing it.

See :mod:`._sandbox` for what the sandbox is; this module only builds and runs the command.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from reviewtrail.errors import BackendUnavailableError, InvalidInputError, NotFoundError
from reviewtrail.provenance.sandbox._input import SANDBOX_WORKSPACE
from reviewtrail.provenance.sandbox._launch import PROXY_DIR

__all__ = [
    "ETC_ENTRIES",
    "bwrap_available",
    "bwrap_path",
    "host_workspace",
    "kill_sandbox",
    "memfd",
    "require_bwrap",
    "sandbox_options",
    "start_sandbox",
]

# /etc entries the interpreters, the dynamic linker, name lookup and TLS need (read-only, when present).
ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "nsswitch.conf", "passwd",
               "group", "hosts", "host.conf", "resolv.conf", "gai.conf", "protocols", "services", "ssl",
               "ca-certificates", "mime.types", "python3", "python3.11")  # fmt: skip
_ROOT_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")


# --- bubblewrap --------------------------------------------------------------------------------
def bwrap_path() -> str | None:
    """bubblewrap as found on ``PATH`` (nowhere else)."""
    return shutil.which("bwrap")


def bwrap_available() -> bool:
    return bwrap_path() is not None


def require_bwrap() -> str:
    path = bwrap_path()
    if path is None:
        raise BackendUnavailableError(
            "bubblewrap (bwrap) is not installed or not on PATH; install the bubblewrap package", field="sandbox"
        )
    return path


def host_workspace(workspace: Path) -> Path:
    if not workspace.exists():
        raise NotFoundError(f"{workspace} does not exist", field="workspace")
    if not workspace.is_dir():
        raise InvalidInputError(f"{workspace} is not a directory", field="workspace")
    return workspace.resolve()


def sandbox_options(workspace: Path, cwd: str, env: Mapping[str, str], proxy_dir: Path | None = None) -> list[str]:
    """bwrap's options (everything before the command) for one sandbox; ``proxy_dir`` holds
    the host proxy's socket (allowlist mode)."""
    opts = ["--unshare-all"]
    opts += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox"]
    opts += ["--ro-bind", "/usr", "/usr"]
    for name in _ROOT_LINKS:
        host = Path("/", name)
        if host.is_symlink():
            opts += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            opts += ["--ro-bind", str(host), f"/{name}"]
    for entry in ETC_ENTRIES:
        if os.path.exists(f"/etc/{entry}"):
            opts += ["--ro-bind", f"/etc/{entry}", f"/etc/{entry}"]
    opts += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]  # noqa: S108 - the sandbox's own private /tmp
    if proxy_dir is not None:
        opts += ["--ro-bind", str(proxy_dir), PROXY_DIR]
    opts += ["--bind", str(workspace), SANDBOX_WORKSPACE, "--remount-ro", "/", "--chdir", cwd, "--clearenv"]
    for key, value in env.items():
        opts += ["--setenv", key, value]
    return opts


def memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def start_sandbox(
    bwrap: str,
    options: Sequence[str],
    command: Sequence[str],
    pass_fds: Sequence[int],
    wrap: Callable[[list[str]], list[str]] | None = None,
) -> tuple[subprocess.Popen[bytes], int, int, list[str]]:
    """Start bwrap in a new process group; return it, the stdout and stderr read ends and the argv.

    The options travel through ``--args <memfd>`` so injected values never appear in the
    host's process table; the returned argv is the full, equivalent command line (bubblewrap's:
    ``wrap``, e.g. joining the run's control groups first, is how it is started, not part of it).
    """
    args_fd = memfd("bwrap-args", b"".join(o.encode("utf-8", "surrogateescape") + b"\0" for o in options))
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        proc = subprocess.Popen(
            (wrap or list)([bwrap, "--args", str(args_fd), *command]),
            stdin=subprocess.DEVNULL,
            stdout=out_w,
            stderr=err_w,
            pass_fds=(args_fd, *pass_fds),
            start_new_session=True,
            env={},
        )
    except BaseException:
        os.close(out_r)
        os.close(err_r)
        raise
    finally:
        for fd in (args_fd, out_w, err_w):
            os.close(fd)
    return proc, out_r, err_r, [bwrap, *options, *command]


def kill_sandbox(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL bwrap's process group; the pid namespace and everything in it go with it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
