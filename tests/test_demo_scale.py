"""``make demo-scale``: the demo of ``make demo`` with the ledger in PostgreSQL and the objects in
S3 (SeaweedFS), both started on loopback by ``scripts/with_servers.py`` and removed afterwards."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def test_the_demo_runs_on_postgresql_and_s3(pg_server: object, seaweed: object) -> None:
    """The fixtures only prove both servers can start here (strict mode fails without them); the
    script starts its own pair, as a user's ``make demo-scale`` does."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWTRAIL_", "AWS_"))}
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "with_servers.py"), str(ROOT / "scripts" / "demo.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    assert "(ledger: postgresql://" in out  # init reports the configured ledger
    assert "flipped one bit of s3://" in out  # the tampered object was in the bucket, not the store folder
    assert "does not hash to its address" in out
    assert done.stdout.rstrip().endswith("demo complete: tampering was detected.")
    found = re.search(r"PostgreSQL on 127\.0\.0\.1:(\d+), SeaweedFS S3 at http://127\.0\.0\.1:(\d+)", out)
    assert found is not None, out[:2000]
    for port in found.groups():  # both servers were stopped when the demo ended
        with socket.socket() as s, pytest.raises(OSError):
            s.settimeout(2)
            s.connect(("127.0.0.1", int(port)))
