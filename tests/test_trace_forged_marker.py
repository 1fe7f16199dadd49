"""A pending marker in ``.aris`` is no evidence by itself: ``verify --repair`` records the call of an
interrupted save only when the ledger holds the record that the save began."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewtrail.app import init_store, open_store
from reviewtrail.config import Settings, sqlite_url
from reviewtrail.errors import BackendUnavailableError
from reviewtrail.store import Store
from reviewtrail.tracing.custody import record_call, repair_trace_links, trace_ledger_problems
from reviewtrail.tracing.files import ReviewCall

SKILL = "auto-review-loop"


def _call(purpose: str = "round-1-review") -> ReviewCall:
    return ReviewCall(
        skill=SKILL,
        purpose=purpose,
        prompt="Please review.",
        response=b"Verdict: almost\n",
        executor="codex",
        backend="claude",
        status="ok",
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("ARIS_TRACE_MODE", "ARIS_TRACE_RUN_ID", "REVIEWTRAIL_STORE", "REVIEWTRAIL_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.fixture
def store(project: Path) -> Iterator[Store]:
    settings = Settings(store=project / ".reviewtrail", database_url=sqlite_url(project / ".reviewtrail"))
    init_store(settings).close()
    with open_store(settings) as s:
        yield s


def _trace_records(store: Store) -> list[dict[str, object]]:
    return [env.payload_value for env in store.ledger.read(type="trace.review-call@1")]


def _forge(project: Path, run: Path, *, save: str | None) -> None:
    """Call 3 copied from call 2, with a marker that makes it look like an interrupted save."""
    for src in sorted(run.glob("002-*")):
        data = src.read_bytes().replace(b'"call_number": 2', b'"call_number": 3')
        (run / src.name.replace("002-", "003-")).write_bytes(data)
    pending = project / ".aris" / "meta" / "pending"
    pending.mkdir(parents=True, exist_ok=True)
    doc = {"skill": SKILL, "run_id": run.name, "call_number": 3, "purpose": "round-1-review", "run_created": False}
    (pending / "0123456789abcdef.json").write_text(json.dumps({**doc, "pid": 1, **({"save": save} if save else {})}))


def test_saves_record_that_they_began_and_their_record_names_the_save(project: Path, store: Store) -> None:
    saved = record_call(_call(), project_dir=project, store=store)
    [record] = _trace_records(store)
    [begun] = [env.payload_value for env in store.ledger.read(type="trace.save-begun@1")]
    assert isinstance(begun, dict) and begun["save"] == record["save"] and begun["skill"] == SKILL
    assert saved.ledger_record_id is not None
    assert list((project / ".aris" / "meta" / "pending").glob("*.json")) == []


@pytest.mark.parametrize("token", ["none", "made up", "of a recorded save"])
def test_repair_records_nothing_for_a_marker_the_ledger_does_not_vouch_for(
    project: Path, store: Store, token: str
) -> None:
    first = record_call(_call(), project_dir=project, store=store)
    record_call(_call(), project_dir=project, store=store)
    assert first.run_path is not None
    save = {"none": None, "made up": "ab" * 16, "of a recorded save": str(_trace_records(store)[1]["save"])}[token]
    _forge(project, first.run_path, save=save)
    found = trace_ledger_problems(store, project)
    assert any("003-round-1-review" in p and "does not vouch for" in p for p in found), found
    assert repair_trace_links(store, project) == []
    assert len(_trace_records(store)) == 2
    assert any("003-round-1-review" in p for p in trace_ledger_problems(store, project))


def test_an_interrupted_save_the_ledger_saw_begin_is_recorded_by_repair(
    project: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewtrail.tracing.custody import _ledger_link

    def lost(*args: object, **kwargs: object) -> str:
        raise BackendUnavailableError("the store went away", field="database")

    with monkeypatch.context() as patch:
        patch.setattr(_ledger_link, "append_trace_record", lost)
        with pytest.raises(BackendUnavailableError, match="verify --repair' completes it"):
            record_call(_call(), project_dir=project, store=store)
    found = trace_ledger_problems(store, project)
    assert any("interrupted save" in p and "records it" in p for p in found), found
    [action] = repair_trace_links(store, project)
    assert "recorded in the ledger" in action
    [record] = _trace_records(store)
    assert record["recovered"] is True and isinstance(record["save"], str)
    assert trace_ledger_problems(store, project) == []


def test_a_marker_copied_from_an_interrupted_save_cannot_record_other_files(
    project: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The begun record names the save's skill and purpose: another call's files do not match it."""
    from reviewtrail.tracing.custody import _ledger_link

    with monkeypatch.context() as patch:
        patch.setattr(_ledger_link, "append_trace_record", lambda *a, **k: (_ for _ in ()).throw(OSError("gone")))
        with pytest.raises(OSError):
            record_call(_call(), project_dir=project, store=store)
    [marker] = sorted((project / ".aris" / "meta" / "pending").glob("*.json"))
    doc = json.loads(marker.read_text())
    run = project / ".aris" / "traces" / SKILL / doc["run_id"]
    for src in sorted(run.glob("001-*")):
        shutil.copy(src, run / src.name.replace("001-round-1-review", "002-other-review"))
    forged = {**doc, "call_number": 2, "purpose": "other-review"}
    (marker.parent / "fedcba9876543210.json").write_text(json.dumps(forged))
    repair_trace_links(store, project)
    assert [r["meta"]["purpose"] for r in _trace_records(store)] == ["round-1-review"]  # type: ignore[index]
