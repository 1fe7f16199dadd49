"""The sandbox's input rule (provenance.sandbox._input) and its status rule (provenance.sandbox._plan),
as pure functions, and that every way into a sandbox applies the same input rule."""

from __future__ import annotations

import math
import posixpath
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.errors import InvalidInputError
from reviewtrail.provenance.kernels._session_kernel import SessionKernel
from reviewtrail.provenance.runs._runs import run_code
from reviewtrail.provenance.sandbox._input import (
    SANDBOX_WORKSPACE,
    check_env,
    check_sandbox_input,
    check_timeout,
    sandbox_cwd,
)
from reviewtrail.provenance.sandbox._limits import ResourceLimits
from reviewtrail.provenance.sandbox._plan import SandboxRequest, parse_report, run_status

_NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**6), 10**6),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
)


def _field(call: Any) -> str | None:
    try:
        call()
    except InvalidInputError as exc:
        return exc.field
    return None


@given(_NUMBERS)
def test_a_timeout_is_a_finite_number_of_seconds_above_zero(value: object) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    assert (_field(lambda: check_timeout(value)) is None) == ok
    if not ok:
        with pytest.raises(InvalidInputError, match="must be a finite number of seconds > 0"):
            check_timeout(value)


@pytest.mark.parametrize("timeout", [0, -1, float("inf"), float("nan"), True])
def test_every_way_into_a_sandbox_refuses_the_same_timeouts_before_touching_the_store(timeout: float) -> None:
    """A one-shot request, a session run and a session kernel's evaluation share one rule, and
    check it before anything is read or written (the store here is not a store at all)."""
    not_a_store: Any = object()
    assert _field(lambda: SandboxRequest(code="", lang="python", workspace=Path("/"), env={}, timeout=timeout)) == (
        "timeout"
    )
    assert _field(lambda: run_code(not_a_store, session_id="s", code="", lang="python", timeout=timeout)) == "timeout"
    kernel = object.__new__(SessionKernel)  # its sandbox is not needed to refuse the input
    assert _field(lambda: kernel.evaluate("", timeout)) == "timeout"


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"lang": "ruby"}, "lang"),
        ({"env": {"1X": "v"}}, "env"),
        ({"env": {"X": "a\x00b"}}, "env"),
        ({"network": "host"}, "network"),
        ({"allowlist": ("example.org",)}, "allow"),
    ],
)
def test_a_session_run_and_kernel_check_their_inputs_before_the_session(kw: dict[str, Any], field: str) -> None:
    not_a_store: Any = object()
    args: dict[str, Any] = {"code": "", "lang": "python", **kw}
    assert _field(lambda: run_code(not_a_store, session_id="s", **args)) == field
    args.pop("code")
    assert _field(lambda: SessionKernel(not_a_store, "s", **args)) == field


_ENV_KEYS = st.text(alphabet="aZ_0-é$\x00", min_size=0, max_size=4)


@given(st.dictionaries(_ENV_KEYS, st.text(alphabet="ab\x00", max_size=3), max_size=3))
def test_env_names_are_shell_identifiers_and_values_have_no_nul(env: dict[str, str]) -> None:
    ok = all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k) and "\x00" not in v for k, v in env.items())
    assert (_field(lambda: check_env(env)) is None) == bool(ok)


@given(st.text(alphabet="ab./", max_size=12))
def test_a_working_directory_always_resolves_inside_the_workspace(cwd: str) -> None:
    field = _field(lambda: sandbox_cwd(cwd))
    if field is None:
        path = sandbox_cwd(cwd)
        assert path == SANDBOX_WORKSPACE or path.startswith(SANDBOX_WORKSPACE + "/")
        assert posixpath.normpath(path) == path
    else:
        assert field == "cwd"
        joined = posixpath.normpath(posixpath.join(SANDBOX_WORKSPACE, cwd)) if cwd else ""
        assert not cwd or not (joined == SANDBOX_WORKSPACE or joined.startswith(SANDBOX_WORKSPACE + "/"))


_INPUTS = st.fixed_dictionaries(
    {
        "lang": st.sampled_from(["python", "bash", "ruby"]),
        "code": st.sampled_from(["print(1)", "a\x00", "\ud800"]),
        "env": st.sampled_from([{}, {"A": "1"}, {"9": "x"}]),
        "timeout": st.sampled_from([1.0, 0, float("inf")]),
        "network": st.sampled_from(["none", "allowlist", "bridge"]),
        "max_output": st.sampled_from([0, 10, -1, True]),
        "cwd": st.sampled_from(["/workspace", "sub", "../etc"]),
        "allowlist": st.sampled_from([(), ("example.org",), ("bad host",)]),
    }
)
_ORDER = ["lang", "code", "env", "timeout", "network", "max_output", "cwd", "allow"]


@given(_INPUTS)
def test_the_first_bad_input_in_the_documented_order_is_the_error_and_a_request_agrees(kw: dict[str, Any]) -> None:
    rule = _field(lambda: check_sandbox_input(**kw))
    request = _field(lambda: SandboxRequest(workspace=Path("/"), **kw))
    assert rule == request
    if rule is not None:
        assert rule in _ORDER
        earlier = _ORDER[: _ORDER.index(rule)]
        for name in earlier:  # each earlier input alone is fine
            key = "allowlist" if name == "allow" else name
            single = {key: kw[key]} if key != "allowlist" else {"network": kw["network"], "allowlist": kw[key]}
            assert _field(lambda single=single: check_sandbox_input(**single)) is None, name


def test_the_checked_input_carries_what_the_checks_derive() -> None:
    checked = check_sandbox_input(code="é", cwd="sub/../x", network="allowlist", allowlist=("example.org:8443",))
    assert checked.source == "é".encode() and checked.cwd == "/workspace/x"
    assert checked.policy is not None and [e.ports for e in checked.policy.entries] == [(8443,)]
    assert check_sandbox_input(network="none").policy is None
    assert check_sandbox_input() == type(checked)()
    with pytest.raises(InvalidInputError, match="need --network allowlist"):
        check_sandbox_input(network="none", resolve={"a.org": "127.0.0.2"})
    with pytest.raises(InvalidInputError) as info:
        check_sandbox_input(limits={"max_memory": 1})
    assert info.value.field == "limits"


# --- the status rule ------------------------------------------------------------------------------
_REQ = SandboxRequest(code="", lang="python", workspace=Path("/"), env={}, timeout=2.5, limits=ResourceLimits())


def _status(outcome: Any, **kw: Any) -> tuple[Any, ...]:
    args: dict[str, Any] = {"started": True, "returncode": 0, "stderr": b"", "truncated": False, "limit": None}
    return run_status(_REQ, outcome, **{**args, **kw})


def test_a_timeout_is_cancelled_with_the_time_limit_and_no_exit_code() -> None:
    assert _status("timeout", returncode=-9) == (
        "cancelled", None, "time", "timed out after 2.5 s; the sandbox was killed",
    )  # fmt: skip
    assert _status("cancelled", returncode=-9) == ("cancelled", None, None, "cancelled; the sandbox was killed")


def test_a_sandbox_that_never_ran_the_code_fails_with_bubblewraps_last_word() -> None:
    status = _status("exited", started=False, returncode=1, stderr=b"warn\nbwrap: Can't mount proc\n")
    assert status == (
        "failed", None, None, "the sandbox failed before the code ran (bwrap exit status 1): bwrap: Can't mount proc",
    )  # fmt: skip
    assert _status("exited", started=False, returncode=1)[3] == (
        "the sandbox failed before the code ran (bwrap exit status 1)"
    )


@given(st.integers(0, 255), st.booleans(), st.sampled_from([None, "memory", "procs"]))
def test_the_exit_code_decides_unless_a_limit_was_hit(code: int, truncated: bool, limit: Any) -> None:
    status, exit_code, hit, error = _status("exited", returncode=code, truncated=truncated, limit=limit)
    assert exit_code == code
    signal_limit = {152: "time", 153: "file-size"}.get(code)
    expected = limit or signal_limit or ("output" if truncated else None)
    assert hit == expected
    if expected is None:
        assert status == ("succeeded" if code == 0 else "failed") and error is None
    else:
        assert status == "failed" and error is not None and "limit exceeded" in error


def test_the_launchers_report_is_complete_or_nothing() -> None:
    assert parse_report(b"/workspace\0A=1\0B=x=y\0\0") == ("/workspace", {"A": "1", "B": "x=y"})
    assert parse_report(b"/workspace\0A=1\0") is None
    assert parse_report(b"") is None
