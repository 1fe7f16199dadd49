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
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path


def find_bindir() -> Path | None:
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(candidate, "initdb").exists():
            return Path(candidate)
    found = shutil.which("initdb")
    return Path(found).resolve().parent if found else None


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
        return self

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
