"""``trace save``, ``trace verify`` and ``trace export-otel`` as requests to the library."""

from __future__ import annotations

import inspect
import json
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from reviewtrail.errors import InvalidInputError, NotFoundError
from reviewtrail.tracing.commands import TraceSaveRequest, check_traces, save_trace, trace_save_request
from reviewtrail.tracing.commands._save_request import FIELDS
from reviewtrail.tracing.otel import OtelExportRequest, export_trace_runs, otel_export_request


# --- trace save --------------------------------------------------------------------------------
def test_the_save_command_and_the_request_name_the_same_options() -> None:
    from reviewtrail.cli.trace._trace import save

    assert set(inspect.signature(save).parameters) - {"as_json"} == FIELDS


def test_an_option_the_request_does_not_have_is_a_programming_error() -> None:
    with pytest.raises(TypeError, match="verdictt"):
        trace_save_request({"skill": "s", "purpose": "p", "verdictt": "ready"})
    with pytest.raises(TypeError):
        trace_save_request({"skill": "s"})  # purpose is required


def test_a_request_saves_one_call(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.txt").write_text("the prompt")
    request = trace_save_request(
        {
            "skill": "research-review",
            "purpose": "initial-review",
            "backend": "grok",
            "executor": "codex",
            "executor_model": "gpt-6-astra",
            "reported_reviewer_model": "grok-4",
            "prompt_file": tmp_path / "p.txt",
            "response": "the response",
            "files_referenced": ["a.md, b.md", "c.md"],
            "reviewer_family": "openai",
            "identity_validated": True,
            "project_dir": tmp_path,
        }
    )
    result = save_trace(request, env={})
    assert result.mode == "full" and result.meta_path is not None and result.response_path is not None
    assert result.response_path.read_bytes() == b"the response"
    assert result.request_path is not None
    request_doc = json.loads(result.request_path.read_text())
    assert "the prompt" in json.dumps(request_doc)
    assert request_doc["files_referenced"] == ["a.md", "b.md", "c.md"]
    warnings = capsys.readouterr().err
    assert "ignoring reviewer family 'openai'" in warnings and "--identity-validated grants nothing" in warnings


def test_a_call_carries_only_the_request_fields_named_as_given_and_never_identity() -> None:
    """A field the request and the call share is carried only once it is named; ``identity_validated``
    never is, so no option can set what only native evidence grants."""
    from reviewtrail.tracing.commands._save_request import _AS_GIVEN, _review_call
    from reviewtrail.tracing.files._documents import ReviewCall

    shared = FIELDS & set(ReviewCall.__struct_fields__)
    assert set(_AS_GIVEN) <= shared and "identity_validated" not in _AS_GIVEN
    assert shared - set(_AS_GIVEN) == {
        "prompt",
        "response",
        "files_referenced",
        "native_evidence",
        "identity_validated",
    }
    call = _review_call(TraceSaveRequest(skill="s", purpose="p", prompt="x", verdict="ready", identity_validated=True))
    assert call.identity_validated is False and call.verdict == "ready" and call.skill == "s"


def test_the_request_keeps_its_field_order_and_freezes_its_labels_too() -> None:
    """The request's fields in their order (the trace-save tool lists its parameters in it), the
    labels it shares with a call first; every field, an inherited label too, refuses assignment."""
    assert TraceSaveRequest.__struct_fields__ == (
        *("skill", "purpose", "backend", "tool", "executor", "executor_model", "requested_reviewer_model"),
        *("reported_reviewer_model", "model", "effort", "thread_id", "agent_id", "prompt_file", "response_file"),
        *("prompt", "response", "status", "verdict", "review_completed", "review_scope_complete", "review_positive"),
        *("trace_mode", "files_referenced", "duration_ms", "identity_validated", "fallback_reason"),
        *("reviewer_profile", "memory_hash", "executor_family", "reviewer_family", "independence_verified"),
        *("native_evidence", "reviewer_kind", "input_tokens", "output_tokens", "skill_args", "run_id"),
        *("project_dir", "gate", "score"),
    )
    request = TraceSaveRequest(skill="s", purpose="p")
    for name in ("skill", "agent_id", "prompt", "score"):
        with pytest.raises(AttributeError):
            setattr(request, name, "x")


def test_trace_mode_off_writes_nothing(tmp_path: Path) -> None:
    request = TraceSaveRequest(skill="s", purpose="p", prompt="x", trace_mode="off", project_dir=tmp_path)
    assert save_trace(request, env={}).mode == "off"
    assert not (tmp_path / ".aris").exists()


def test_prompt_and_prompt_file_together_are_refused(tmp_path: Path) -> None:
    (tmp_path / "p.txt").write_text("x")
    request = TraceSaveRequest(skill="s", purpose="p", prompt="x", prompt_file=tmp_path / "p.txt", project_dir=tmp_path)
    with pytest.raises(InvalidInputError) as caught:
        save_trace(request, env={})
    assert caught.value.field == "prompt"


# --- trace verify ------------------------------------------------------------------------------
class NoStores:
    def __init__(self) -> None:
        self.asked: list[Path] = []

    def exists(self, project: Path) -> bool:
        self.asked.append(project)
        return False

    def open(self, project: Path) -> Any:
        raise AssertionError("no store to open")


def test_traces_without_a_store_are_checked_against_the_schemas_only(tmp_path: Path) -> None:
    save_trace(TraceSaveRequest(skill="s", purpose="p", prompt="x", response="y", project_dir=tmp_path), env={})
    stores = NoStores()
    check = check_traces(tmp_path, stores)
    assert check.ok and check.files_checked > 0 and not check.ledger_checked
    assert stores.asked == [tmp_path.absolute()]
    assert check.to_json() == {"ok": True, "filesChecked": check.files_checked, "ledgerChecked": False, "problems": []}


def test_a_broken_trace_file_is_a_problem(tmp_path: Path) -> None:
    result = save_trace(TraceSaveRequest(skill="s", purpose="p", prompt="x", project_dir=tmp_path), env={})
    assert result.meta_path is not None
    result.meta_path.write_text("{not json")
    check = check_traces(tmp_path, NoStores())
    assert not check.ok and check.to_json()["ok"] is False


def test_checking_a_folder_that_does_not_exist_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        check_traces(tmp_path / "missing", NoStores())


# --- trace export-otel -------------------------------------------------------------------------
def _field(env: dict[str, str] | None = None, **options: Any) -> str | None:
    with pytest.raises(InvalidInputError) as caught:
        otel_export_request(env or {}, **options)
    return caught.value.field


def test_exactly_one_destination(tmp_path: Path) -> None:
    assert _field() == "output"
    assert _field(output=tmp_path / "o.json", endpoint="http://localhost:4318") == "output"
    assert otel_export_request({}, output=tmp_path / "o.json") == OtelExportRequest(output=tmp_path / "o.json")


@pytest.mark.parametrize(
    ("option", "value"),
    [("headers", ["K=V"]), ("timeout", 3.0), ("protocol", "http/json"), ("compression", "none")],
)
def test_endpoint_options_are_refused_with_a_file(tmp_path: Path, option: str, value: object) -> None:
    name = "header" if option == "headers" else option
    assert _field(output=tmp_path / "o.json", **{option: value}) == name


def test_the_endpoint_comes_from_the_option_over_the_environment() -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}
    from_env = otel_export_request(env)
    assert from_env.settings is not None and from_env.settings.url == "http://collector:4318/v1/traces"
    given = otel_export_request(env, endpoint="http://other:4318", headers=["K=V"], runs=["r"], skill="s")
    assert given.settings is not None and given.settings.url == "http://other:4318/v1/traces"
    assert given.settings.headers == {"K": "V"} and given.refs == ("r",) and given.skill == "s"


def _no_store() -> AbstractContextManager[Any]:
    raise AssertionError("no reviewer-specialist run: the store is not opened")


def test_no_runs_is_not_found(tmp_path: Path) -> None:
    request = otel_export_request({}, output=tmp_path / "o.json", project_dir=tmp_path)
    with pytest.raises(NotFoundError, match="no trace runs under"):
        export_trace_runs(request, open_store=_no_store)  # type: ignore[arg-type]


def test_runs_are_exported_to_a_file(tmp_path: Path) -> None:
    for purpose in ("one", "two"):
        save_trace(TraceSaveRequest(skill="s", purpose=purpose, prompt="x", response="y", project_dir=tmp_path), env={})
    request = otel_export_request({}, output=tmp_path / "o.json", project_dir=tmp_path)
    outcome = export_trace_runs(request, open_store=_no_store)  # type: ignore[arg-type]
    assert (outcome.export.runs, outcome.export.spans, outcome.warnings) == (1, 3, [])
    assert (tmp_path / "o.json").is_file()


def test_a_store_that_cannot_be_read_is_a_warning(tmp_path: Path) -> None:
    from reviewtrail.errors import StoreNotInitializedError

    save_trace(
        TraceSaveRequest(skill="reviewer-specialist", purpose="p", prompt="x", response="y", project_dir=tmp_path),
        env={},
    )

    def unreadable() -> Any:
        raise StoreNotInitializedError("no store here", field="store")

    request = otel_export_request({}, output=tmp_path / "o.json", project_dir=tmp_path)
    outcome = export_trace_runs(request, open_store=unreadable)
    assert len(outcome.warnings) == 1 and "the store cannot be read (store: no store here)" in outcome.warnings[0]
    no_ledger = otel_export_request({}, output=tmp_path / "p.json", project_dir=tmp_path, ledger=False)
    assert export_trace_runs(no_ledger, open_store=unreadable).warnings == []
