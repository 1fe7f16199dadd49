"""Shared fixtures. Under REVIEWTRAIL_STRICT=1 a test that would skip for a missing component fails."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))

from support.pgserver import PgServer, find_bindir

STRICT = os.environ.get("REVIEWTRAIL_STRICT") == "1"

settings.register_profile("default", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if STRICT else os.environ.get("HYPOTHESIS_PROFILE", "default"))


def need(condition: bool, reason: str) -> None:
    """Skip when a component is missing; fail instead under REVIEWTRAIL_STRICT=1."""
    if condition:
        return
    if STRICT:
        pytest.fail(f"required component missing (REVIEWTRAIL_STRICT=1): {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    need(find_bindir() is not None, "PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    server = PgServer()
    try:
        server.start()
    except Exception as exc:  # pragma: no cover - depends on the machine
        server.stop()
        need(False, f"could not start PostgreSQL: {exc}")
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """A fresh, empty database on the test server."""
    return pg_server.new_database()
