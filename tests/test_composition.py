"""One composition root: packages list their record types and projections, nothing registers
itself on import, and ``reviewtrail.app`` hands the assembled catalog to every store it opens."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

from reviewtrail import app
from reviewtrail.config import Settings
from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger import (
    BUILTIN_PROJECTIONS,
    EMPTY_CATALOG,
    MemoryLedger,
    NewRecord,
    Projection,
    ProjectionTable,
    RecordCatalog,
    RecordPayload,
    open_ledger,
    record_type,
)

TYPES = [
    "evidence.alias-map@1",
    "evidence.claim@1",
    "evidence.item@1",
    "evidence.link@1",
    "evidence.pdf-extraction@1",
    "human-review.campaign@1",
    "human-review.candidate-run@1",
    "human-review.context-receipt@1",
    "human-review.privacy-reclassification@1",
    "human-review.second-judgment@1",
    "human-review.training-receipt@1",
    "provenance.artifact-derivation@1",
    "provenance.artifact-version@1",
    "provenance.execution-run@1",
    "provenance.model-usage@1",
    "provenance.prompt-manifest@1",
    "provenance.session-deleted@1",
    "provenance.session@1",
    "reviewer.artifact-review-run@1",
    "store.identity@1",
    "store.key.declared@1",
    "store.key.revoked@1",
    "store.signatures.required@1",
    "stream.thought.output.review-response@1",
    "stream.thought.review.decision@1",
    "stream.thought.review.item.created@1",
    "stream.thought.source.review.prompt@1",
    "trace.review-call@1",
    "trace.save-begun@1",
]


def record(type_: str, payload: dict[str, Any]) -> NewRecord:
    return NewRecord.make(type=type_, actor="a", privacy="private", payload=payload)


def test_the_application_catalog_holds_every_package_type_and_query_table() -> None:
    assert sorted(app.catalog().record_types) == TYPES
    names = [p.name for p in app.catalog().projections]
    assert names == ["cas_refs", "supersessions", "evidence", "provenance", "reviewer", "human_review"]
    assert sorted(app.payload_schemas()) == TYPES
    assert "callType" in app.payload_schemas()["provenance.model-usage@1"]["properties"]


def test_importing_every_package_registers_nothing() -> None:
    import reviewtrail.evidence
    import reviewtrail.human_review
    import reviewtrail.models
    import reviewtrail.provenance
    import reviewtrail.reviewer
    import reviewtrail.tracing  # noqa: F401

    ledger = MemoryLedger()
    assert ledger.projections == BUILTIN_PROJECTIONS and ledger.catalog is EMPTY_CATALOG
    # no catalog: a payload that breaks its package's model is not checked
    [env] = ledger.append([record("evidence.claim@1", {"unexpected": 1})])
    assert env.seq == 1
    import reviewtrail.ledger as ledger_package

    for gone in ("register_projection", "registered_projections", "payload_schemas", "validate_payload"):
        assert not hasattr(ledger_package, gone), gone


def test_the_store_module_does_not_load_the_domain_packages() -> None:
    code = (
        "import sys\n"
        "import reviewtrail.store\n"
        "domain = ('evidence', 'models', 'provenance', 'reviewer', 'tracing', 'app')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[:2][-1] in domain and m.startswith('reviewtrail.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("type_", TYPES)
def test_a_store_opened_through_the_app_validates_every_type(tmp_path: Path, type_: str) -> None:
    root = tmp_path / "store"
    with app.init_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}")) as store:
        with pytest.raises(InvalidInputError) as err:
            store.append([record(type_, {"unexpected": 1})])
        assert err.value.field.startswith("records[0].payload")
        assert f"(record type {type_})" in str(err.value)


def test_a_ledger_takes_its_catalog_when_opened(tmp_path: Path) -> None:
    @record_type("test.score@1")
    class Score(RecordPayload):
        run_id: str = Field(alias="runId")

    scores = Projection(
        name="scores",
        version=1,
        tables=(ProjectionTable("scores", (("run_id", "text"),), key=("run_id",)),),
        rows=lambda env: [("scores", {"run_id": env.payload_value["runId"]})] if env.type == "test.score@1" else [],
    )
    catalog = RecordCatalog([Score], [scores])
    assert [p.name for p in catalog] == ["cas_refs", "supersessions", "scores"]
    for ledger in (MemoryLedger(catalog), open_ledger(f"sqlite:///{tmp_path / 'l.sqlite'}", catalog=catalog)):
        ledger.append([record("test.score@1", {"runId": "r1"})])
        assert [r["run_id"] for r in ledger.rows("scores")] == ["r1"]
        with pytest.raises(InvalidInputError):
            ledger.append([record("test.score@1", {"runId": 7})])
        ledger.close()
    only = open_ledger("memory:", [scores], catalog=catalog)
    assert [p.name for p in only.projections] == ["scores"] and only.catalog.payload_model("test.score@1") is Score


def test_a_catalog_refuses_clashes() -> None:
    @record_type("test.a@1")
    class A(RecordPayload):
        pass

    @record_type("test.a@1")
    class B(RecordPayload):
        pass

    class Unnamed(RecordPayload):
        pass

    with pytest.raises(ValueError, match=r"test\.a@1"):
        RecordCatalog([A, B])
    with pytest.raises(ValueError, match="record_type"):
        RecordCatalog([Unnamed])
    assert list(RecordCatalog([A, A]).record_types) == ["test.a@1"]
    twin = Projection(name="cas_refs", version=1, tables=(ProjectionTable("other", (("x", "int"),), key=("x",)),),
                      rows=lambda env: [])  # fmt: skip
    with pytest.raises(ValueError, match="given twice"):
        RecordCatalog([], [twin])
    taken = Projection(name="mine", version=1, tables=(ProjectionTable("cas_refs", (("x", "int"),), key=("x",)),),
                       rows=lambda env: [])  # fmt: skip
    with pytest.raises(ValueError, match="already taken"):
        RecordCatalog([], [taken])
    assert RecordCatalog([], [*BUILTIN_PROJECTIONS]).projections == BUILTIN_PROJECTIONS
    with pytest.raises(ValueError, match="name@version"):
        record_type("no-version")
