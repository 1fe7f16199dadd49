"""The JSON Schemas of the record payloads are shipped in the package, equal to what the payload
models generate; ``trace.review-call@1`` has its payload model like every other record type."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from reviewtrail import app, tracing
from reviewtrail.errors import InvalidInputError
from reviewtrail.store import Store
from reviewtrail.tracing.custody import record_call
from reviewtrail.tracing.files import ReviewCall

ROOT = Path(__file__).resolve().parents[1]
TRACE_TYPE = "trace.review-call@1"


def shipped() -> dict[str, Any]:
    folder = resources.files("reviewtrail").joinpath("schemas", "records")
    return {
        entry.name.removesuffix(".schema.json"): json.loads(entry.read_text(encoding="utf-8"))
        for entry in folder.iterdir()
        if entry.name.endswith(".schema.json")
    }


def test_every_generated_schema_is_shipped_and_equal() -> None:
    generated = app.payload_schemas()
    assert len(generated) >= 10
    assert shipped() == generated, "run: .venv/bin/python scripts/record_schemas.py"


def test_the_shipped_files_are_the_writers_exact_bytes() -> None:
    """What the script writes, byte for byte (so a regenerated folder shows no diff)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from record_schemas import schema_files
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    folder = resources.files("reviewtrail").joinpath("schemas", "records")
    files = schema_files()
    assert sorted(files) == sorted(e.name for e in folder.iterdir() if e.name.endswith(".json"))
    for name, text in files.items():
        assert folder.joinpath(name).read_text(encoding="utf-8") == text, name


def test_the_shipped_schemas_are_valid_json_schemas() -> None:
    from jsonschema import Draft202012Validator

    for doc in shipped().values():
        Draft202012Validator.check_schema(doc)


def test_package_data_lists_the_schemas() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"schemas/records/*.json"' in text


def test_the_script_checks_the_shipped_files() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "record_schemas.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


# --- trace.review-call@1 --------------------------------------------------------------------


def test_trace_records_have_a_payload_model() -> None:
    assert [m.record_type for m in tracing.RECORD_TYPES] == [TRACE_TYPE, "trace.save-begun@1"]
    for type_ in (TRACE_TYPE, "trace.save-begun@1"):
        assert type_ in app.payload_schemas()
        assert type_ in app.catalog().record_types


def call(**kw: Any) -> ReviewCall:
    fields: dict[str, Any] = {
        "skill": "auto-review-loop",
        "purpose": "round-1-review",
        "prompt": "Please review section 3.",
        "response": b"Score: 6/10\n",
        "backend": "claude",
        "executor": "codex",
        "executor_model": "gpt-6-astra",
        "requested_reviewer_model": "claude-opus-4",
        "reported_reviewer_model": "claude-opus-4-1",
        "status": "ok",
        "verdict": "almost",
    }
    fields.update(kw)
    return ReviewCall(**fields)


@pytest.fixture
def store(tmp_path: Path) -> Any:
    from reviewtrail.config import Settings

    settings = Settings(store=tmp_path / "store", database_url=f"sqlite:///{tmp_path / 'store' / 'ledger.db'}")
    app.init_store(settings).close()
    with app.open_store(settings) as s:
        yield s


def trace_payloads(store: Store) -> list[dict[str, Any]]:
    return [dict(env.payload_value) for env in store.ledger.read(type=TRACE_TYPE)]


def test_records_written_by_record_call_satisfy_the_model(store: Store, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    record_call(call(), project_dir=project, store=store)
    record_call(call(purpose="round-2-review", prompt="secret"), project_dir=project, mode="meta", store=store)
    record_call(call(purpose="round-3-review", status="error", response=None), project_dir=project, store=store)
    payloads = trace_payloads(store)
    assert len(payloads) == 3
    assert {"prompt", "response", "files", "event"} <= set(payloads[0])
    assert "prompt" not in payloads[1] and "files" in payloads[1]
    for payload in payloads:
        app.catalog().validate(TRACE_TYPE, payload)


def test_older_and_recovered_records_satisfy_the_model(store: Store) -> None:
    """Records from before file digests (no ``files``/``event``) and repaired saves (``recovered``)."""
    ref = store.cas.put(b"p", pool="agent-state", media_type="text/plain").to_json()
    meta = {"call_number": 1, "purpose": "round-1-review", "trace_mode": "full"}
    base = {"skill": "s", "run_id": "2026-01-01_run01", "trace_path": ".aris/traces/s/2026-01-01_run01/", "meta": meta}
    app.catalog().validate(TRACE_TYPE, base)
    app.catalog().validate(TRACE_TYPE, {**base, "prompt": ref, "response": ref})
    digest = {"sha256": "a" * 64, "size": 3}
    app.catalog().validate(
        TRACE_TYPE, {**base, "files": {"001-x.meta.json": digest}, "event": digest, "recovered": True}
    )
    # a record the trace reader reports as a problem is still a record (the reader says why)
    app.catalog().validate(TRACE_TYPE, {"skill": "../../etc", "run_id": "x", "trace_path": "../", "meta": {}})


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"extra": 1}, "payload.extra"),
        ({"meta": "text"}, "payload.meta"),
        ({"skill": 3}, "payload.skill"),
        ({"event": {"sha256": "a" * 64}}, "payload.event.size"),
        ({"event": {"sha256": "A" * 64, "size": 1}}, "payload.event.sha256"),
        ({"files": {"a": {"sha256": "a" * 64, "size": -1}}}, "payload.files.a.size"),
        ({"prompt": {"hash": "a" * 64, "size": 1}}, "payload.prompt"),
    ],
)
def test_the_model_refuses_what_no_writer_writes(change: dict[str, Any], field: str) -> None:
    base = {"skill": "s", "run_id": "2026-01-01_run01", "trace_path": "t/", "meta": {}}
    with pytest.raises(InvalidInputError) as caught:
        app.catalog().validate(TRACE_TYPE, {**base, **change})
    assert caught.value.field is not None and caught.value.field.startswith(field)
