"""Resource limits: each one hit gives a failed run naming the limit (CLI exit 7); the host is unaffected."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import need, use_store
from reviewtrail.app import init_store
from reviewtrail.cli._app import app
from reviewtrail.config import Settings
from reviewtrail.errors import InvalidInputError
from reviewtrail.provenance.runs import create_session, run_code
from reviewtrail.provenance.sandbox import ResourceLimits, parse_size
from reviewtrail.provenance.sandbox._bwrap import bwrap_available
from reviewtrail.provenance.sandbox._limits import reported_limit
from reviewtrail.store import Store
from support.sandbox import processes_with, run

MiB = 1 << 20


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    need(bwrap_available(), "bubblewrap (bwrap) is not installed")
    path = tmp_path / "ws"
    path.mkdir()
    return path


# --- sizes and defaults ---------------------------------------------------------------------------
def test_sizes_and_defaults() -> None:
    assert parse_size("512M", "x") == 512 * MiB and parse_size("2G", "x") == 2 << 30
    assert parse_size("1048576", "x") == MiB and parse_size("4k", "x") == 4096 and parse_size("1GiB", "x") == 1 << 30
    for bad in ("", "1.5G", "-1", "0", "12Q", "M"):
        with pytest.raises(InvalidInputError):
            parse_size(bad, "max_memory")
    d = ResourceLimits()
    assert (d.max_memory, d.max_procs, d.max_file_size, d.max_output) == (2 << 30, 256, 1 << 30, 10 * MiB)
    assert ResourceLimits.parse(max_memory="1G", max_procs=4).to_json() == {
        "maxMemory": 1 << 30, "maxProcs": 4, "maxFileSize": 1 << 30, "maxOutput": 10 * MiB,
    }  # fmt: skip
    with pytest.raises(InvalidInputError) as err:
        ResourceLimits(max_procs=0)
    assert err.value.field == "max_procs"
    assert reported_limit(b"noise\nlimit procs\nlimit memory\n") == "procs" and reported_limit(b"limit cpu\n") is None


# --- each limit -----------------------------------------------------------------------------------
def test_memory_of_one_process(ws: Path) -> None:
    r = run(ws, "b = bytearray(600 << 20)\nprint('allocated')", limits=ResourceLimits(max_memory=256 * MiB))
    assert (r.status, r.limit_exceeded, r.exit_code) == ("failed", "memory", 1), r.stderr
    assert b"MemoryError" in r.stderr and r.stdout == b""
    assert r.error and "--max-memory 256M" in r.error
    ok = run(ws, "b = bytearray(100 << 20)\nprint('allocated')", limits=ResourceLimits(max_memory=256 * MiB))
    assert (ok.status, ok.limit_exceeded, ok.stdout) == ("succeeded", None, b"allocated\n")


def test_memory_of_all_processes_together(ws: Path) -> None:
    marker = f"rt-mem-{uuid.uuid4().hex}"
    child = f"b = b'x' * (100 << 20); import time; time.sleep(60)  # {marker}"
    code = f'for i in 1 2 3 4 5; do python3 -c "{child}" & done; wait'
    r = run(ws, code, "bash", limits=ResourceLimits(max_memory=256 * MiB))
    assert (r.status, r.limit_exceeded) == ("failed", "memory"), (r.stderr, r.error)
    assert processes_with(marker) == []


def test_process_count(ws: Path) -> None:
    marker = f"{uuid.uuid4().int % 1000}.{uuid.uuid4().int % 1000}"
    r = run(ws, f"for i in $(seq 60); do sleep 1{marker} & done; wait; echo done", "bash",
            limits=ResourceLimits(max_procs=20))  # fmt: skip
    assert (r.status, r.limit_exceeded, r.exit_code) == ("failed", "procs", 137), r.stderr
    assert b"done" not in r.stdout and r.error and "--max-procs 20" in r.error
    assert processes_with(f"sleep\x001{marker}") == []  # every process of the sandbox is gone
    ok = run(
        ws, "for i in $(seq 10); do sleep 0.2 & done; wait; echo done", "bash", limits=ResourceLimits(max_procs=20)
    )
    assert (ok.status, ok.stdout) == ("succeeded", b"done\n")


@pytest.mark.parametrize(
    "lang, code",
    [
        ("python", "open('big', 'wb').write(b'x' * (3 << 20))\nprint('written')"),
        ("bash", "truncate -s 10G big"),  # the shell reports its child's death by SIGXFSZ as 153
    ],
)
def test_file_size(ws: Path, lang: str, code: str) -> None:
    r = run(ws, code, lang, limits=ResourceLimits(max_file_size=MiB))
    assert (r.status, r.limit_exceeded, r.exit_code) == ("failed", "file-size", 128 + 25), r.stderr
    assert (ws / "big").stat().st_size <= MiB and r.stdout == b""


def test_output(ws: Path) -> None:
    r = run(ws, "print('x' * 5000)", max_output=1000)
    assert (r.status, r.limit_exceeded, r.exit_code, len(r.stdout)) == ("failed", "output", 0, 1000)


def test_time(ws: Path) -> None:
    r = run(ws, "import time; time.sleep(30)", timeout=0.5)
    assert (r.status, r.limit_exceeded, r.timed_out) == ("cancelled", "time", True)
    cpu = run(ws, "kill -XCPU $$", "bash")  # what RLIMIT_CPU sends when the CPU seconds run out
    assert (cpu.status, cpu.limit_exceeded, cpu.exit_code) == ("failed", "time", 128 + 24)
    assert "RLIMIT_CPU" not in (cpu.error or "") and cpu.error and "CPU time" in cpu.error


def test_the_limits_are_set_in_the_sandbox(ws: Path) -> None:
    code = "import resource as r\nprint([r.getrlimit(x)[0] for x in (r.RLIMIT_DATA, r.RLIMIT_FSIZE, r.RLIMIT_CPU)])"
    out = run(ws, code, limits=ResourceLimits(max_memory=300 * MiB, max_file_size=5 * MiB), timeout=7.5)
    assert json.loads(out.stdout) == [300 * MiB, 5 * MiB, 8]


# --- sparse and oversized files in the workspace ------------------------------------------------------
@pytest.fixture
def store(tmp_path: Path) -> Store:
    need(bwrap_available(), "bubblewrap (bwrap) is not installed")
    return init_store(Settings(store=tmp_path / "store", database_url=f"sqlite:///{tmp_path / 'store' / 'l.sqlite'}"))


def test_a_file_that_reached_the_limit_names_it(store: Store) -> None:
    """A shell's child killed by SIGXFSZ is invisible to the supervisor; the file it left at the limit is not."""
    session = create_session(store)
    out = run_code(store, session_id=session.session_id, code="head -c 3145728 /dev/zero > big; echo written",
                   lang="bash", limits=ResourceLimits(max_file_size=MiB))  # fmt: skip
    assert (out.run.status, out.run.limit_exceeded, out.run.exit_code) == ("failed", "file-size", 0)
    assert out.run.error and "big reached it" in out.run.error
    assert [d.payload_value["content"]["size"] for d in out.derivations] == [MiB]
    store.close()


def test_a_10g_sparse_file_is_never_read_into_the_cas(store: Store) -> None:
    session = create_session(store)
    with open(session.workspace / "sparse.img", "wb") as f:
        f.truncate(10 << 30)
    first = run_code(store, session_id=session.session_id, code="true", lang="bash")
    assert first.run.status == "succeeded" and first.run.created_files == []
    moved = run_code(store, session_id=session.session_id, code="mv sparse.img moved.img; echo hi > small.txt",
                     lang="bash")  # fmt: skip
    assert moved.run.created_files == ["moved.img", "small.txt"]
    assert [d.payload_value["path"] for d in moved.derivations] == ["small.txt"]
    assert moved.run.error and "not stored (larger than --max-file-size" in moved.run.error
    assert "moved.img" in moved.run.error
    assert all(len(store.cas.read(name)) < MiB for _, name in store.cas.iter_objects())
    store.close()


# --- the CLI: exit 7 and the limit named ---------------------------------------------------------------
@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    need(bwrap_available(), "bubblewrap (bwrap) is not installed")
    use_store(tmp_path, monkeypatch)
    runner = CliRunner()
    assert runner.invoke(app, ["init"]).exit_code == 0
    return runner


@pytest.mark.parametrize(
    "args, limit",
    [
        (["-c", "b = bytearray(600 << 20)", "--max-memory", "256M"], "memory"),
        (["--lang", "bash", "-c", "for i in $(seq 40); do sleep 5 & done; wait", "--max-procs", "10"], "procs"),
        (["-c", "open('f', 'wb').write(b'x' * 5000)", "--max-file-size", "4096"], "file-size"),
        (["-c", "print('x' * 5000)", "--max-output", "1K"], "output"),
        (["-c", "import time; time.sleep(30)", "--timeout", "0.5"], "time"),
    ],
)
def test_cli_exit_7_names_the_limit(cli: CliRunner, args: list[str], limit: str) -> None:
    r = cli.invoke(app, ["run", *args, "--json"])
    assert r.exit_code == 7, r.stderr
    doc = json.loads(r.stdout)
    assert doc["limitExceeded"] == limit and doc["status"] in ("failed", "cancelled")
    assert doc["resourceLimits"]["maxProcs"] > 0


def test_cli_rejects_bad_sizes(cli: CliRunner) -> None:
    for flag, value in (("--max-memory", "lots"), ("--max-file-size", "0"), ("--max-output", "1.5M")):
        r = cli.invoke(app, ["run", "-c", "pass", flag, value])
        assert r.exit_code == 2 and flag.lstrip("-").replace("-", "_") in r.stderr, r.stderr


def test_kernels_are_limited_too(ws: Path) -> None:
    from reviewtrail.provenance.kernels._kernels import PythonKernel, ShellKernel

    with ShellKernel(ws, limits=ResourceLimits(max_procs=10)) as k:
        ok = k.evaluate("echo up", 10)
        assert ok.status == "succeeded"
        r = k.evaluate("for i in $(seq 30); do sleep 5 & done; wait", 30)
        assert (r.status, r.limit_exceeded) == ("failed", "procs") and not k.alive
    with PythonKernel(ws, limits=ResourceLimits(max_memory=256 * MiB)) as k:
        r = k.evaluate("b = bytearray(600 << 20)", 30)
        assert (r.status, r.limit_exceeded) == ("failed", "memory") and b"MemoryError" in r.stderr
        assert k.alive  # the worker caught it and carries on
    with PythonKernel(ws, max_output=100) as k:
        r = k.evaluate("print('x' * 500)", 30)
        assert (r.status, r.limit_exceeded, r.exit_code) == ("failed", "output", 0) and k.alive
