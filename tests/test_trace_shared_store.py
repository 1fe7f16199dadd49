"""One store shared by several project folders: each folder's ``.aris/traces`` stays its own, and
``verify`` compares a folder's files only with the records that folder saved."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from reviewtrail.app import init_store, open_store
from reviewtrail.cli._app import app
from reviewtrail.config import Settings
from reviewtrail.errors import IntegrityError
from reviewtrail.store import Store
from reviewtrail.tracing.custody import TraceResult, record_call, trace_ledger_check
from reviewtrail.tracing.custody._ledger_link import append_trace_record
from reviewtrail.tracing.files import ReviewCall
from reviewtrail.tracing.files._origin import ensure_project_id, project_id_path, read_project_id

runner = CliRunner()


def call(purpose: str = "round-1-review") -> ReviewCall:
    return ReviewCall(
        skill="auto-review-loop",
        purpose=purpose,
        prompt="Please review section 3.",
        response=b"Score: 6/10\n\nVerdict: almost.\n",
        backend="claude",
        executor="codex",
        executor_model="gpt-6-astra",
        requested_reviewer_model="claude-opus-4",
        reported_reviewer_model="claude-opus-4-1",
        status="ok",
        verdict="almost",
        thread_id="thread-1",
    )


@pytest.fixture
def shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Store, Path, Path]]:
    monkeypatch.delenv("ARIS_TRACE_MODE", raising=False)
    monkeypatch.delenv("ARIS_TRACE_RUN_ID", raising=False)
    settings = Settings(store=tmp_path / "store", database_url=f"sqlite:///{tmp_path / 'store' / 'ledger.db'}")
    monkeypatch.setenv("REVIEWTRAIL_STORE", str(settings.store))
    monkeypatch.setenv("REVIEWTRAIL_DATABASE_URL", settings.database_url)
    init_store(settings).close()
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    with open_store(settings) as store:
        yield store, first, second


def save_in(store: Store, project: Path, purpose: str = "round-1-review") -> TraceResult:
    result = record_call(call(purpose), project_dir=project, store=store)
    assert result.ledger_record_id
    return result


def test_each_folder_verifies_against_its_own_records(shared: tuple[Store, Path, Path]) -> None:
    store, first, second = shared
    save_in(store, first)
    save_in(store, first, "round-2-review")
    save_in(store, second)
    first_id, second_id = read_project_id(first), read_project_id(second)
    assert first_id is not None and second_id is not None and first_id != second_id
    for project, other_id, others in ((first, second_id, 1), (second, first_id, 2)):
        problems, notes = trace_ledger_check(store, project)
        assert problems == []
        assert len(notes) == 1 and f"{others} trace record(s)" in notes[0] and other_id in notes[0]


def test_a_removed_file_of_this_folder_is_still_reported(shared: tuple[Store, Path, Path]) -> None:
    store, first, second = shared
    saved = save_in(store, first)
    save_in(store, second)
    saved.meta_path.unlink()
    problems, _ = trace_ledger_check(store, first)
    assert any(saved.meta_path.name in p for p in problems)
    assert trace_ledger_check(store, second)[0] == []


def test_records_without_a_folder_belong_to_every_folder(shared: tuple[Store, Path, Path]) -> None:
    """Records written before records named their folder are compared everywhere, as before."""
    store, first, second = shared
    save_in(store, first)
    append_trace_record(
        store,
        skill="auto-review-loop",
        run_id="2026-01-01-aaaaaaaa",
        trace_path=".aris/traces/auto-review-loop/2026-01-01-aaaaaaaa/",
        prompt=None,
        response=None,
        meta={"call_number": 1, "purpose": "round-1-review", "trace_mode": "meta"},
        mode="meta",
        actor="codex",
    )
    for project in (first, second):
        problems, _ = trace_ledger_check(store, project)
        assert any("2026-01-01-aaaaaaaa" in p for p in problems), project


def test_a_removed_id_file_is_reported_not_taken_for_another_folder(shared: tuple[Store, Path, Path]) -> None:
    store, first, second = shared
    saved = save_in(store, first)
    save_in(store, second)
    project_id_path(first).unlink()
    saved.meta_path.unlink()
    problems, _ = trace_ledger_check(store, first)
    assert any("project-id: missing" in p and saved.run_id in p for p in problems)


@pytest.mark.parametrize(
    "content", [b"", b"not an id\n", b"A" * 32 + b"\n", b"0" * 31 + b"\n"], ids=["empty", "text", "upper", "short"]
)
def test_a_damaged_id_file_is_a_problem(shared: tuple[Store, Path, Path], content: bytes) -> None:
    store, first, _second = shared
    save_in(store, first)
    project_id_path(first).write_bytes(content)
    problems, _ = trace_ledger_check(store, first)
    assert any("project-id" in p and "32 hex digits" in p for p in problems)
    with pytest.raises(IntegrityError):
        save_in(store, first, "round-2-review")


def test_a_symlinked_id_file_is_refused(shared: tuple[Store, Path, Path]) -> None:
    store, first, second = shared
    save_in(store, second)
    project_id_path(first).parent.mkdir(parents=True)
    os.symlink(project_id_path(second), project_id_path(first))
    with pytest.raises(IntegrityError, match="project folder's id"):
        read_project_id(first)


def test_concurrent_makers_agree(tmp_path: Path) -> None:
    made = {ensure_project_id(tmp_path) for _ in range(5)}
    assert len(made) == 1
    assert project_id_path(tmp_path).read_text().strip() == made.pop()
    assert [p.name for p in project_id_path(tmp_path).parent.iterdir()] == ["project-id"]


@settings(max_examples=50, deadline=None)
@given(st.binary(max_size=40))
def test_only_an_id_is_read_as_one(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    folder = tmp_path_factory.mktemp("p")
    project_id_path(folder).parent.mkdir(parents=True)
    project_id_path(folder).write_bytes(data)
    text = data.decode("ascii", errors="replace").strip()
    valid = len(text) == 32 and all(c in "0123456789abcdef" for c in text)
    if valid:
        assert read_project_id(folder) == text
    else:
        with pytest.raises(IntegrityError):
            read_project_id(folder)


def test_verify_in_each_folder_passes_and_says_what_it_left(shared: tuple[Store, Path, Path]) -> None:
    store, first, second = shared
    save_in(store, first)
    save_in(store, second)
    store.close()
    for project in (first, second):
        result = runner.invoke(app, ["verify", "--project-dir", str(project), "--json"])
        assert result.exit_code == 0, result.output
        doc = json.loads(result.output)
        assert any("other project folder" in n for n in doc["notes"]), doc
