"""The run-record rule (provenance.records._run_record): what a run's records say, from gathered facts."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.provenance.records._run_record import (
    RunFacts,
    StoredFile,
    decide_run,
    network_access_revision,
    permission_epoch_id,
    run_status,
)
from reviewtrail.provenance.sandbox._limits import ResourceLimits
from reviewtrail.provenance.sandbox._plan import SandboxResult

_LIMITS = ResourceLimits(max_file_size=4096)
_CODE = {"pool": "agent-state", "digest": "sha256:" + "a" * 64, "size": 1, "mediaType": "text/plain"}


def _ref(c: str) -> dict[str, Any]:
    return {"pool": "data", "digest": "sha256:" + c * 64, "size": 3, "mediaType": "text/plain"}


def _result(**kw: Any) -> SandboxResult:
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    base: dict[str, Any] = dict(
        status="succeeded", exit_code=0, stdout=b"", stderr=b"", stdout_truncated=False, stderr_truncated=True,
        started_at=moment, ended_at=moment, working_directory="/workspace/sub", env={"A": "1"}, timed_out=False,
        error=None, argv=["bwrap"], network_decisions=[{"host": "a.org"}], network_decisions_dropped=2,
    )  # fmt: skip
    return SandboxResult(**{**base, **kw})


def _facts(**kw: Any) -> RunFacts:
    base: dict[str, Any] = dict(
        run_id="r1", session_id="s1", tool_name="t", lang="python", code_ref=_CODE, result=_result(), failure=None,
        timeout=5.0, network="none", allowlist=(), resolve=None, limits=_LIMITS, kernel_id=None,
        started_at="2026-01-01T00:00:00.000000Z", ended_at="2026-01-01T00:00:01.000000Z",
        environment_revision_id="env-x", stdout=_ref("b"), stderr=_ref("c"), env_snapshot=_ref("d"),
        created=["a.txt"], modified=["b.txt"], sizes={"a.txt": 3, "b.txt": 3}, oversize=[], size_bound=4096,
        vanished=[],
    )  # fmt: skip
    return RunFacts(**{**base, **kw})


def test_a_succeeded_run_is_recorded_as_it_happened() -> None:
    run, derivations = decide_run(_facts(), [StoredFile("a.txt", _ref("e")), StoredFile("b.txt", _ref("f"), _ref("g"))])
    assert run.status == "succeeded" and run.exit_code == 0 and run.error is None and run.limit_exceeded is None
    assert run.working_directory == "/workspace/sub" and run.env_snapshot == _ref("d")
    assert (run.stdout_truncated, run.stderr_truncated) == (False, True)
    assert run.kernel_mode == "one-shot" and run.kernel_id is None
    assert run.created_files == ["a.txt"] and run.modified_files == ["b.txt"]
    assert run.network_allowlist is None and run.network_decisions is None and run.network_decisions_dropped is None
    assert run.resource_limits == _LIMITS.to_json() and run.timeout_seconds == 5.0
    assert [(d.path, d.execution_run_ids, d.session_id, d.previous_content) for d in derivations] == [
        ("a.txt", ["r1"], "s1", None),
        ("b.txt", ["r1"], "s1", _ref("g")),
    ]


def test_a_run_without_a_result_failed_with_its_failure() -> None:
    run, _ = decide_run(_facts(result=None, failure="bwrap vanished", stdout=None, stderr=None, env_snapshot=None), [])
    assert (run.status, run.exit_code, run.error, run.limit_exceeded) == ("failed", None, "bwrap vanished", None)
    assert run.working_directory == "unavailable" and not run.stdout_truncated and not run.stderr_truncated


def test_a_persistent_kernels_run_names_its_kernel() -> None:
    run, _ = decide_run(_facts(kernel_id="k1"), [])
    assert run.kernel_mode == "persistent" and run.kernel_id == "k1"


def test_network_fields_are_recorded_in_allowlist_mode_only() -> None:
    facts = _facts(network="allowlist", allowlist=["a.org"], resolve={"a.org": "127.0.0.2"})
    run, _ = decide_run(facts, [])
    assert run.network_allowlist == ["a.org"] and run.network_resolve == {"a.org": "127.0.0.2"}
    assert run.network_decisions == [{"host": "a.org"}] and run.network_decisions_dropped == 2
    assert run.network_access_revision == network_access_revision("allowlist", ["a.org"], {"a.org": "127.0.0.2"})
    plain, _ = decide_run(replace(facts, network="none"), [])
    assert plain.network_resolve is None and plain.network_access_revision is None


@given(
    st.lists(st.sampled_from(["x", "y", "z"]), unique=True, max_size=3),
    st.lists(st.sampled_from(["p", "q"]), unique=True, max_size=2),
    st.sampled_from([None, "output", "memory"]),
    st.sampled_from([None, "it crashed"]),
)
def test_unstored_files_are_named_after_the_error(
    vanished: list[str], oversize: list[str], limit: Any, error: str | None
) -> None:
    files = [*vanished, *oversize]
    status = "failed" if limit or error else "succeeded"
    result = _result(status=status, limit_exceeded=limit, error=error)
    facts = _facts(result=result, created=files, modified=[], sizes=dict.fromkeys(files, 1), vanished=vanished,
                   oversize=oversize)  # fmt: skip
    run, _ = decide_run(facts, [])
    notes = []
    if vanished:
        notes.append(f"not stored (vanished or not a regular file when read): {', '.join(vanished)}")
    if oversize:
        notes.append(f"not stored (larger than --max-file-size, 4096 bytes): {', '.join(oversize)}")
    expected = "; ".join(([error] if error else []) + notes) or None
    assert run.error == expected and run.status == status and run.limit_exceeded == limit


@given(st.dictionaries(st.sampled_from(["a", "b", "c"]), st.sampled_from([0, 4095, 4096]), max_size=3))
def test_a_file_written_exactly_to_the_size_limit_means_the_limit_was_hit(sizes: dict[str, int]) -> None:
    at_limit = [p for p, size in sizes.items() if size == 4096]
    status, limit, error = run_status(_result(), None, sizes, _LIMITS, 5.0)
    if at_limit:
        assert status == "failed" and limit == "file-size"
        assert error is not None and error.endswith(f"({', '.join(at_limit)} reached it)")
    else:
        assert (status, limit, error) == ("succeeded", None, None)


def test_a_limit_the_sandbox_reported_wins_over_a_file_at_the_size_limit() -> None:
    result = _result(status="failed", limit_exceeded="memory", error="memory limit exceeded")
    assert run_status(result, None, {"a": 4096}, _LIMITS, 5.0) == ("failed", "memory", "memory limit exceeded")


def test_the_permission_and_network_ids_are_fixed_hashes() -> None:
    assert permission_epoch_id("none", []) == "pe-2580275404e2a0afab1afc86d3d009fa"
    assert permission_epoch_id("allowlist", ["b.org", "a.org"]) == "pe-2aba1cfa65940f4d0681879fd96452a6"
    assert network_access_revision("allowlist", ["b.org", "a.org"]) == "na-bfe9ce833fca02db7e15733c8d99bb99"
    pinned = network_access_revision("allowlist", ["a.org"], {"a.org": "127.0.0.2"})
    assert pinned == "na-227dc71fd6cec13428669588f9c3df21"
    assert network_access_revision("none", ["a.org"]) is None


@given(st.lists(st.sampled_from(["a.org", "b.org:8443", "*.c.org"]), unique=True, max_size=3), st.randoms())
def test_the_ids_do_not_depend_on_the_allowlists_order(allow: list[str], rnd: Any) -> None:
    shuffled = list(allow)
    rnd.shuffle(shuffled)
    assert permission_epoch_id("allowlist", allow) == permission_epoch_id("allowlist", shuffled)
    assert network_access_revision("allowlist", allow) == network_access_revision("allowlist", shuffled)
    assert permission_epoch_id("none", allow) == permission_epoch_id("none", [])
