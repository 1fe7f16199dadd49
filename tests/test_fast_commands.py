"""The fast path of the everyday commands (``reviewtrail.cli._fast``) is the typer command, minus
typer: the same parameters, the same values given to the same function, the same output and exit
code; and whatever it is not sure to read as click would goes to the typer app."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import init_cli_store, run_wide
from reviewtrail.cli import _everyday, _fast
from reviewtrail.cli import _everyday_options as options
from reviewtrail.cli._app import _click_command

KINDS = {
    "StringParamType": options.STR,
    "IntParamType": options.INT,
    "IntRange": options.INT,
    "FloatParamType": options.FLOAT,
    "TyperPath": options.PATH,
}


def _typer_params(group: str, name: str) -> list[Any]:
    return list(_click_command(group).commands[name].params)


def _kind(param: Any) -> str:
    if getattr(param, "is_flag", False):
        return options.TRISTATE if param.secondary_opts else options.FLAG
    if param.multiple:
        assert type(param.type).__name__ == "StringParamType"
        return options.MULTIPLE
    return KINDS[type(param.type).__name__]


@pytest.mark.parametrize(("group", "name"), sorted(options.FAST))
def test_click_reads_each_declaration_as_the_fast_path_does(group: str, name: str) -> None:
    command = options.FAST[(group, name)]
    declared = [
        (
            p.name,
            _kind(p),
            tuple(p.opts) if p.param_type_name == "option" else (),
            tuple(p.secondary_opts),
            p.default,
            p.required,
            getattr(p.type, "min", None),
            getattr(p.type, "dir_okay", True),
            p.param_type_name == "argument" and p.nargs == -1,
        )
        for p in _typer_params(group, name)
    ]
    ours = [(p.dest, p.kind, p.names, p.off, p.default, p.required, p.min, p.dir_okay, p.many) for p in command.params]
    assert ours == declared
    for p in _typer_params(group, name):
        assert not p.envvar, p.name  # the fast path reads no environment variable
        assert getattr(p.type, "max", None) is None, p.name
        assert not getattr(p.type, "min_open", False), p.name
        if _kind(p) == options.PATH:
            assert (p.type.exists, p.type.file_okay, p.type.readable, p.type.writable) == (False, True, True, False)
            assert (p.type.resolve_path, p.type.allow_dash) == (False, False)
    assert callable(getattr(_everyday, command.run))


def _fast_kwargs(args: list[str]) -> dict[str, Any] | None:
    command = options.FAST[(args[0], args[1])]
    return _fast.parse(command, args[2:])


@pytest.mark.parametrize(
    "args",
    [
        ["ledger", "tail", "--help"],
        ["ledger", "tail", "-n5"],
        ["ledger", "tail", "-n", "0"],
        ["ledger", "tail", "-n", "+5"],
        ["ledger", "tail", "-n", " 5"],
        ["ledger", "tail", "-n", "٣"],
        ["ledger", "tail", "-n"],
        ["ledger", "tail", "--lines=x"],
        ["ledger", "tail", "--type", "-x"],
        ["ledger", "tail", "--json=1"],
        ["ledger", "tail", "extra"],
        ["ledger", "tail", "--", "-n"],
        ["ledger", "tail", "--typ", "a"],
        ["cas", "cat"],
        ["cas", "cat", "--out"],
        ["cas", "cat", "a", "--out-dir"],
        ["cas", "cat", "--progress=yes", "a"],
        ["cas", "put", "."],
        ["cas", "put", "small.txt", "."],
        ["cas", "put", ""],
        ["trace", "save", "--skill", "s"],
        ["trace", "save", "--purpose", "p"],
        ["trace", "save", "--skill", "s", "--purpose", "p", "--duration-ms", "-1"],
        ["trace", "save", "--skill", "s", "--purpose", "p", "--score", "-1"],
        ["trace", "save", "--skill", "s", "--purpose", "p", "--score", "1e1"],
        ["trace", "save", "--skill", "s", "--purpose", "p", "--score", "nan"],
        ["trace", "save", "--skill", "s", "--purpose", "p", "--score", ".5"],
        ["review", "queue", "--limit", "-1"],
        ["review", "queue", "--version", "1.0"],
    ],
)
def test_what_the_fast_path_leaves_to_typer(args: list[str]) -> None:
    assert _fast_kwargs(args) is None


def test_completion_and_other_commands_go_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _fast._fast_call(["ledger", "tail"]) is not None
    assert _fast._fast_call(["ledger", "show", "x"]) is None
    assert _fast._fast_call(["--version"]) is None
    assert _fast._fast_call(["ledger"]) is None
    monkeypatch.setenv("_REVIEWTRAIL_COMPLETE", "bash_complete")
    assert _fast._fast_call(["ledger", "tail"]) is None


def _typer_kwargs(args: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What the typer command gives its _everyday function for ``args``."""
    command = options.FAST[(args[0], args[1])]
    seen: dict[str, Any] = {}

    def capture(**kwargs: Any) -> None:
        seen.update(kwargs)

    with monkeypatch.context() as m:
        m.setattr(_everyday, command.run, capture)
        code, _, err = run_wide(*args)
    assert code == 0, err
    if command.bundled:
        return {**seen["options"], "as_json": seen["as_json"]}
    return seen


FULL_TRACE_SAVE = [
    "trace", "save", "--skill", "s", "--purpose", "p", "--backend", "grok", "--tool", "t", "--executor", "e",
    "--executor-model", "m", "--requested-reviewer-model", "r", "--reported-reviewer-model", "r2",
    "--model", "mm", "--effort", "high", "--thread-id", "th", "--agent-id", "ag", "--prompt-file", "-",
    "--response-file", "small.txt", "--prompt", "P", "--response", "R", "--status", "error",
    "--verdict", "ready", "--review-completed", "--review-scope-complete", "--review-positive",
    "--gate", "--score", "7.5", "--trace-mode", "meta", "--files-referenced", "a.py", "--files-referenced=b.py",
    "--duration-ms", "0",
    "--identity-validated", "--fallback-reason", "why", "--reviewer-profile", "prof", "--memory-hash", "h",
    "--executor-family", "f1", "--reviewer-family", "f2", "--independence-verified", "true",
    "--native-evidence", "missing.json", "--reviewer-kind", "deterministic", "--input-tokens", "10",
    "--output-tokens", "20", "--skill-args", "a b", "--run-id", "2026-01-01_run01", "--project-dir", ".",
    "--json",
]  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [
        ["ledger", "tail"],
        ["ledger", "tail", "-n", "5"],
        ["ledger", "tail", "--lines=007", "--json", "--type", "a.b", "--subject=x=y", "-n", "2"],
        ["ledger", "tail", "--type", "", "--subject", "-"],
        ["cas", "cat", "sha256:abc"],
        ["cas", "cat", "--no-progress", "abc", "--progress"],
        ["cas", "cat", "a", "b", "--out-dir", "out", "c"],
        ["cas", "cat", "a", "--out=small.txt"],
        ["cas", "put", "small.txt"],
        ["cas", "put", "small.txt", "missing.txt", "small.txt", "--json"],
        ["cas", "put", "missing.txt", "--pool", "agent-state", "--media-type=text/plain", "--json", "--no-progress"],
        ["review", "queue"],
        ["review", "queue", "camp", "--version", "2", "--limit", "5", "--json"],
        ["review", "queue", "--json", "camp"],
        ["review", "queue", "camp", "--reviewer", "rev-1"],
        ["trace", "save", "--skill", "s", "--purpose", "p"],
        ["trace", "save", "--skill", "s", "--purpose", "p", "--score", "6", "--gate"],
        FULL_TRACE_SAVE,
    ],
)
def test_the_fast_path_gives_the_function_what_typer_gives_it(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "small.txt").write_text("a small file\n")
    fast = _fast_kwargs(args)
    assert fast is not None
    typer_kwargs = _typer_kwargs(args, monkeypatch)
    assert fast == typer_kwargs
    assert [type(v) for v in fast.values()] == [type(v) for v in typer_kwargs.values()]
    assert list(fast) == list(typer_kwargs)


PROBE = """
import sys
sys.argv[0] = "reviewtrail"
from reviewtrail.cli import main
main()
"""


def _process(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str, str, bool]:
    """Run ``reviewtrail ARGS`` as a process: (exit code, stdout, stderr, typer imported)."""
    probe = PROBE + "\n"
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('\\nTYPER ' + str('typer' in sys.modules)))\n" + probe
    )
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=cwd)
    err, _, flag = proc.stderr.rpartition("\nTYPER ")
    return proc.returncode, proc.stdout, err, flag == "True"


def test_a_process_prints_and_exits_as_the_typer_command_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    init_cli_store(tmp_path, monkeypatch)
    (tmp_path / "small.txt").write_text("a small file\n")
    code, out, err = run_wide("cas", "put", "small.txt")
    assert code == 0, err
    digest = out.split()[0]
    env = {**os.environ, "COLUMNS": "200"}
    cases = [
        (["ledger", "tail", "-n", "5"], True),
        (["ledger", "tail", "--json", "--type", "store"], True),
        (["ledger", "tail", "--type", "no.such"], True),
        (["ledger", "tail", "-n", "0"], False),
        (["cas", "cat", digest], True),
        (["cas", "cat", "sha256:" + "0" * 64], True),
        (["cas", "cat", "not-an-address"], True),
        (["cas", "cat", digest, digest], True),
        (["cas", "cat", digest, "--out-dir", "."], True),
        (["cas", "cat", digest, "not-an-address", "--out-dir", "."], True),
        (["cas", "put", "small.txt", "small.txt", "--json"], True),
        (["cas", "put", "small.txt", "--json"], True),
        (["cas", "put", "missing.txt"], True),
        (["cas", "put", "small.txt", "--pool", "nope", "--json"], True),
        (["review", "queue"], True),
        (["review", "queue", "--json", "--limit", "0"], True),
        (["review", "queue", "nope"], True),
        (["trace", "save", "--skill", "s", "--purpose", "p", "--prompt", "P", "--response", "R", "--json"], True),
        (["trace", "save", "--skill", "bad skill", "--purpose", "p", "--prompt", "P", "--response", "R"], True),
        (["trace", "save", "--skill", "s"], False),
    ]
    for args, fast in cases:
        expected = run_wide(*args)
        code, out, err, typer_loaded = _process(args, env, tmp_path)
        if args[:2] == ["trace", "save"] and expected[0] == 0:
            # each save writes a new run: compare the shape of what was printed, not its run id
            assert (code, out.count("\n"), err) == (expected[0], expected[1].count("\n"), expected[2]), args
        else:
            assert (code, out, err) == expected, args
        assert typer_loaded is not fast, args
