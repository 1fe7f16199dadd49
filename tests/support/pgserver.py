"""A throwaway PostgreSQL server on loopback: initdb + pg_ctl in a temp folder.

Used by the tests and the benchmarks. As root, the server runs as the
``postgres`` system user (PostgreSQL refuses to run as root).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path


def find_bindir() -> Path | None:
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(candidate, "initdb").exists():
            return Path(candidate)
    found = shutil.which("initdb")
    return Path(found).resolve().parent if found else None


def _ppid(stat: Path) -> int | None:
    """The parent pid in ``/proc/<pid>/stat`` (None when the process is gone)."""
    try:
        return int(stat.read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    def __init__(self) -> None:
        bindir = find_bindir()
        if bindir is None:
            raise RuntimeError("PostgreSQL server binaries (initdb, pg_ctl) not found")
        self.bindir = bindir
        self._prefix: list[str] = []
        owner: pwd.struct_passwd | None = None
        if os.geteuid() == 0:
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError as exc:
                raise RuntimeError("running as root but there is no 'postgres' user to run the server") from exc
            self._prefix = ["runuser", "-u", "postgres", "--"]
        self.tmp = Path(tempfile.mkdtemp(prefix="rt-pg-"))
        if owner is not None:
            os.chown(self.tmp, owner.pw_uid, owner.pw_gid)
        self.data = self.tmp / "data"
        self.port = _free_port()

    def _run(self, *args: str) -> None:
        subprocess.run([*self._prefix, *args], check=True, capture_output=True, timeout=120)

    def start(self) -> PgServer:
        self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        self._pg_ctl_start()
        return self

    def _pg_ctl_start(self) -> None:
        opts = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.tmp} -c max_connections=100"
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            opts,
            "-l",
            str(self.tmp / "server.log"),
            "-w",
            "-t",
            "60",
            "start",
        )

    def crash(self, *, sigkill: bool = False) -> None:
        """Stop the server as a crash would, keeping its data folder: ``pg_ctl stop -m immediate``
        (no shutdown checkpoint), or with ``sigkill`` SIGKILL to the postmaster and every process
        it started, as when the machine or container dies."""
        if not sigkill:
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
            return
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        os.kill(postmaster, signal.SIGSTOP)  # no new backend from here on
        children = [int(p.parent.name) for p in Path("/proc").glob("[0-9]*/stat") if _ppid(p) == postmaster]
        for pid in (postmaster, *children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        for pid in (postmaster, *children):  # reaped, so the port, the lock file and shared memory are free
            while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
                time.sleep(0.01)

    def restart(self) -> None:
        """Start the server again on the same port and data folder (after :meth:`crash`: recovery
        from the write-ahead log runs first)."""
        self._pg_ctl_start()

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def new_database(self) -> str:
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> PgServer:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()
