"""What a user installing and scripting reviewtrail meets first: the license, --version, shell
completion, PostgreSQL as an extra, byte progress on long work, and ``cas retain``."""

from __future__ import annotations

import hashlib
import json
import os
import pty
import select
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

import reviewtrail

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "reviewtrail"]


def _cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    full_env = {**os.environ, "REVIEWTRAIL_STORE": str(cwd / "store"), **(env or {})}
    full_env.pop("REVIEWTRAIL_DATABASE_URL", None)
    return subprocess.run([*CLI, *args], cwd=cwd, env=full_env, capture_output=True, timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    assert _cli("init", cwd=tmp_path).returncode == 0
    return tmp_path


# --- license and version ----------------------------------------------------------------------
def test_license_file_matches_the_declared_license() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    meta = metadata.metadata("reviewtrail")
    assert meta["License-Expression"] == "Apache-2.0"
    assert "LICENSE" in (meta.get_all("License-File") or [])


def test_version_flag_prints_the_installed_version(tmp_path: Path) -> None:
    done = _cli("--version", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout.decode().strip() == f"reviewtrail {reviewtrail.__version__}"
    assert metadata.version("reviewtrail") == reviewtrail.__version__  # one source for the version


# --- shell completion -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("words", "cword", "expected"),
    [
        ("reviewtrail ve", "1", ["verify"]),
        ("reviewtrail ca", "1", ["campaign", "cas"]),
        ("reviewtrail cas re", "2", ["retain"]),
        ("reviewtrail ledger ta", "2", ["tail"]),
    ],
)
def test_bash_completion_completes_commands(tmp_path: Path, words: str, cword: str, expected: list[str]) -> None:
    env = {"_REVIEWTRAIL_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": cword}
    done = subprocess.run(
        [str(Path(sys.executable).parent / "reviewtrail")],
        cwd=tmp_path,
        env={**os.environ, **env},
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0
    assert sorted(done.stdout.decode().split()) == expected


def test_completion_script_for_bash_is_printed(tmp_path: Path) -> None:
    done = _cli("--show-completion", "bash", cwd=tmp_path)
    assert done.returncode == 0
    assert "complete -o default -F _reviewtrail_completion reviewtrail" in done.stdout.decode()


# --- PostgreSQL as an extra -------------------------------------------------------------------
def test_postgres_url_without_the_extra_says_how_to_install_it(tmp_path: Path) -> None:
    """With psycopg absent (the core install), a PostgreSQL URL is a configuration error (exit 5)
    that names the extra, not a traceback."""
    code = (
        "import sys; sys.modules['psycopg'] = None\n"  # what 'import psycopg' meets when it is not installed
        "from reviewtrail.cli import main\n"
        "sys.argv = ['reviewtrail', 'init']\n"
        "main()\n"
    )
    env = {**os.environ, "REVIEWTRAIL_STORE": str(tmp_path / "s"), "REVIEWTRAIL_DATABASE_URL": "postgresql://x@h/db"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 5, done.stderr
    assert "reviewtrail[postgres]" in done.stderr.decode()
    assert "Traceback" not in done.stderr.decode()


# --- byte progress ----------------------------------------------------------------------------
MIB = 1024 * 1024


def test_put_progress_counts_bytes_on_stderr_and_leaves_json_clean(project: Path) -> None:
    data = os.urandom(3 * MIB)
    (project / "big.bin").write_bytes(data)
    done = _cli("cas", "put", "big.bin", "--json", "--progress", cwd=project)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
    assert "storing big.bin" in done.stderr.decode()
    assert "3.0/3.0 MiB" in done.stderr.decode()


def test_cat_progress_counts_both_passes_and_output_is_the_exact_bytes(project: Path) -> None:
    data = os.urandom(2 * MIB)
    (project / "big.bin").write_bytes(data)
    digest = json.loads(_cli("cas", "put", "big.bin", "--json", cwd=project).stdout)["digest"]
    done = _cli("cas", "cat", digest, "--progress", cwd=project)
    assert done.returncode == 0
    assert done.stdout == data
    assert "4.0/4.0 MiB" in done.stderr.decode()  # verified, then written


def test_no_progress_and_non_terminal_default_draw_nothing(project: Path) -> None:
    (project / "big.bin").write_bytes(os.urandom(MIB))
    for flags in (["--no-progress"], []):
        done = _cli("cas", "put", "big.bin", *flags, cwd=project)
        assert done.returncode == 0
        assert done.stderr == b""


def test_store_verify_progress_has_a_bytes_phase(project: Path) -> None:
    (project / "big.bin").write_bytes(os.urandom(2 * MIB))
    assert _cli("cas", "put", "big.bin", cwd=project).returncode == 0
    done = _cli("verify", "--progress", cwd=project)
    assert done.returncode == 0, done.stdout
    err = done.stderr.decode()
    assert "verifying bytes" in err
    assert "2.0/2.0 MiB" in err
    assert "verifying objects" in err


def test_cas_verify_progress(project: Path) -> None:
    (project / "big.bin").write_bytes(os.urandom(MIB))
    digest = json.loads(_cli("cas", "put", "big.bin", "--json", cwd=project).stdout)["digest"]
    done = _cli("cas", "verify", digest, "--progress", cwd=project)
    assert done.returncode == 0
    assert "1.0/1.0 MiB" in done.stderr.decode()


def test_large_put_on_a_terminal_shows_progress_by_default(project: Path) -> None:
    """Automatic mode: stderr a terminal and the file at least 16 MiB."""
    (project / "large.bin").write_bytes(b"\0" * (17 * MIB))
    master, slave = pty.openpty()
    env = {**os.environ, "REVIEWTRAIL_STORE": str(project / "store"), "COLUMNS": "120"}
    env.pop("REVIEWTRAIL_DATABASE_URL", None)
    proc = subprocess.Popen(
        [*CLI, "cas", "put", "large.bin"], cwd=project, env=env, stdout=subprocess.PIPE, stderr=slave
    )
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        seen += chunk
    out, _ = proc.communicate(timeout=60)
    os.close(master)
    assert proc.returncode == 0
    assert out.split()[0].decode().startswith("sha256:")
    assert b"storing large.bin" in seen


# --- cas retain -------------------------------------------------------------------------------
def _legacy(project: Path, data: bytes) -> str:
    hexdigest = hashlib.sha256(data).hexdigest()
    path = project / "store" / "cas" / "sha256" / hexdigest[:2] / hexdigest
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return hexdigest


def test_cas_retain_promotes_a_legacy_object(project: Path) -> None:
    hexdigest = _legacy(project, b"old bytes")
    done = _cli("cas", "retain", hexdigest, "--size", "9", "--pool", "agent-state", "--json", cwd=project)
    assert done.returncode == 0, done.stderr
    ref = json.loads(done.stdout)
    assert ref == {
        "pool": "agent-state",
        "digest": f"sha256:{hexdigest}",
        "size": 9,
        "mediaType": "application/octet-stream",
    }
    blob = project / "store" / "versioning" / "agent-state" / "blobs" / "sha256" / hexdigest
    assert blob.read_bytes() == b"old bytes"
    assert _cli("verify", cwd=project).returncode == 0


@pytest.mark.parametrize(
    ("size", "tamper", "code"),
    [("8", False, 4), ("9", True, 4)],
    ids=["wrong-size", "corrupt-bytes"],
)
def test_cas_retain_refuses_a_wrong_size_or_corrupt_original(project: Path, size: str, tamper: bool, code: int) -> None:
    hexdigest = _legacy(project, b"old bytes")
    if tamper:
        (project / "store" / "cas" / "sha256" / hexdigest[:2] / hexdigest).write_bytes(b"OLD BYTES")
    done = _cli("cas", "retain", hexdigest, "--size", size, cwd=project)
    assert done.returncode == code
    assert not (project / "store" / "versioning" / "data" / "blobs" / "sha256" / hexdigest).exists()
    assert list((project / "store" / "versioning" / "data" / "ingest").iterdir()) == []


def test_cas_retain_of_a_missing_object_is_not_found(project: Path) -> None:
    done = _cli("cas", "retain", "ab" * 32, "--size", "1", cwd=project)
    assert done.returncode == 3
    assert b"error:" in done.stderr
