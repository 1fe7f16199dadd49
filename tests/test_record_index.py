"""The application's catalog loads each domain package's payload models on first use, from what the
package declares in a light module of its own (its record type names, and its query tables with the
record types each makes rows of). The declaration must equal the package's models, every projection
must make rows only of the record types it lists, and the catalog loads a package exactly when a
record of its types is validated or given to its projections."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reviewtrail import app
from reviewtrail.config import Settings
from reviewtrail.ledger import (
    DeclaredProjection,
    DeferredPart,
    Envelope,
    NewRecord,
    Projection,
    ProjectionTable,
    RecordCatalog,
    RecordPayload,
    record_type,
)
from support.catalog import DECLARATIONS


def _package(name: str) -> Any:
    return {m.__name__.rsplit(".", 1)[-1]: m for m in app.packages()}[name]


# Every domain package, in the order the application's catalog keeps their query tables.
DOMAIN = ("evidence", "provenance", "models", "reviewer", "tracing", "human_review")


def test_the_catalog_holds_every_domain_package_in_catalog_order() -> None:
    names = [m.__name__.rsplit(".", 1)[-1] for m in app.packages()]
    assert names[0] == "identity"  # the store's own part: reviewtrail.store.identity
    assert tuple(names[1:]) == DOMAIN
    catalog = app.build_catalog()
    catalog.load_all()
    assert catalog.loaded == (app.IDENTITY_PART, *DOMAIN)


@pytest.mark.parametrize("package", DOMAIN)
def test_each_package_declares_exactly_its_models_and_what_each_projection_reads(package: str) -> None:
    module = _package(package)
    assert {t.record_type for t in module.RECORD_TYPES} == module.RECORD_TYPE_NAMES
    for projection in module.PROJECTIONS:
        assert projection.types is not None and projection.types <= module.RECORD_TYPE_NAMES, projection.name


def _every_type() -> set[str]:
    known = {t for package in DOMAIN for t in _package(package).RECORD_TYPE_NAMES} | {"store.identity@1"}
    # Types of no package, some in a package's namespace: a projection keyed on a prefix shows here.
    strays = {f"{prefix}.other@1" for prefix in ("evidence", "provenance", "reviewer", "human-review", "trace")}
    return known | strays | {"stream.thought.other@1", "eval.result@1", "provenance.session@2"}


def _envelope(type_: str) -> Envelope:
    [env] = _sealed([NewRecord.make(type=type_, actor="a", privacy="private", payload={}, subject="s")])
    return env


def _sealed(records: list[NewRecord]) -> list[Envelope]:
    from reviewtrail.ledger import MemoryLedger

    return MemoryLedger().append(records)


@pytest.mark.parametrize("package", DOMAIN)
def test_no_projection_makes_rows_of_a_type_it_does_not_list(package: str) -> None:
    """A record of any other type (with a subject, an empty payload) gives no rows: the package's
    projection dispatches on the record type before reading anything else."""
    for projection in _package(package).PROJECTIONS:
        consumes = projection.types or frozenset()
        for type_ in sorted(_every_type() - consumes):
            assert list(projection.rows(_envelope(type_))) == [], (projection.name, type_)


def test_the_lazy_catalog_equals_the_eager_one() -> None:
    lazy = app.build_catalog()
    assert [(p.name, p.version, p.tables) for p in lazy.projections] == [
        (p.name, p.version, p.tables)
        for p in RecordCatalog(
            [t for m in app.packages() for t in m.RECORD_TYPES], [p for m in app.packages() for p in m.PROJECTIONS]
        ).projections
    ]
    assert lazy.loaded == ()
    assert dict(lazy.record_types) == {t.record_type: t for m in app.packages() for t in m.RECORD_TYPES}
    assert lazy.loaded == (app.IDENTITY_PART, *DOMAIN)


def test_a_package_loads_when_its_type_is_validated_or_projected() -> None:
    loads: list[str] = []

    @record_type("lazy.note@1")
    class Note(RecordPayload):
        text: str

    def rows(env: Envelope) -> list[tuple[str, dict[str, Any]]]:
        return [("lazy_notes", {"record_id": env.id, "text": env.payload_value["text"]})]

    table = ProjectionTable("lazy_notes", (("record_id", "text"), ("text", "text")), key=("record_id",))

    def load() -> tuple[Any, Any]:
        loads.append("lazy")
        return [Note], [Projection("lazy", 1, (table,), rows=rows, types=frozenset({"lazy.note@1"}))]

    part = DeferredPart(
        "lazy", frozenset({"lazy.note@1"}), (DeclaredProjection("lazy", 1, (table,), frozenset({"lazy.note@1"})),), load
    )
    catalog = RecordCatalog(deferred=[part])
    assert [p.name for p in catalog.projections] == ["cas_refs", "supersessions", "lazy"]
    [other] = _sealed([NewRecord.make(type="eval.result@1", actor="a", privacy="private", payload={"text": "x"})])
    assert [list(p.rows(other)) for p in catalog.projections][2] == []
    catalog.validate("eval.result@1", {"anything": 1})
    assert loads == [] and catalog.loaded == ()
    catalog.validate("lazy.note@1", {"text": "hi"})
    assert loads == ["lazy"] and catalog.loaded == ("lazy",)
    [note] = _sealed([NewRecord.make(type="lazy.note@1", actor="a", privacy="private", payload={"text": "hi"})])
    assert list(catalog.projections[2].rows(note)) == [("lazy_notes", {"record_id": note.id, "text": "hi"})]
    assert loads == ["lazy"]


def test_a_package_that_differs_from_its_declaration_is_refused() -> None:
    table = ProjectionTable("lazy_notes", (("record_id", "text"),), key=("record_id",))
    changed = ProjectionTable("lazy_notes", (("record_id", "text"), ("extra", "text")), key=("record_id",))
    declared = (DeclaredProjection("lazy", 1, (table,), frozenset({"lazy.note@1"})),)

    def load() -> tuple[Any, Any]:
        return [], [Projection("lazy", 1, (changed,), rows=lambda env: [])]

    catalog = RecordCatalog(deferred=[DeferredPart("lazy", frozenset(), declared, load)])
    with pytest.raises(RuntimeError, match="differ from their declaration"):
        catalog.load_all()


def test_a_package_whose_tables_take_other_record_types_than_declared_is_refused() -> None:
    """The record types a projection makes rows of are part of its declaration: the catalog offers
    the package's function only records of the declared types, so a type left out would lose rows."""
    table = ProjectionTable("lazy_notes", (("record_id", "text"),), key=("record_id",))
    declared = (DeclaredProjection("lazy", 1, (table,), frozenset({"lazy.note@1"})),)

    def load() -> tuple[Any, Any]:
        wider = frozenset({"lazy.note@1", "lazy.other@1"})
        return [], [Projection("lazy", 1, (table,), rows=lambda env: [], types=wider)]

    catalog = RecordCatalog(deferred=[DeferredPart("lazy", frozenset(), declared, load)])
    with pytest.raises(RuntimeError, match="differ from their declaration"):
        catalog.load_all()


def test_appends_write_the_same_rows_as_the_eager_catalog(tmp_path: Path) -> None:
    """Opening with the lazy catalog keeps the same projection state, and a store filled through it
    holds the rows an eager catalog computes from the same chain."""
    root = tmp_path / "store"
    settings = Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}")
    with app.init_store(settings) as store:
        sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))
        try:
            from _hr_store import build_review_store
        finally:
            sys.path.pop(0)
        build_review_store(store, items=3, records=30)
        tables = store.ledger.tables
        lazy_rows = {t: sorted(map(repr, store.ledger.stored_rows(t))) for t in tables}
        eager = RecordCatalog(
            [t for m in app.packages() for t in m.RECORD_TYPES], [p for m in app.packages() for p in m.PROJECTIONS]
        )
        envelopes = list(store.ledger.read())
    from reviewtrail.ledger import projection_rows

    expected: dict[str, list[str]] = {t: [] for t in tables}
    rows: dict[tuple[str, tuple[Any, ...]], dict[str, Any]] = {}
    for table, row in projection_rows(envelopes, eager.projections):
        spec = tables[table]
        rows[(table, tuple(row[k] for k in spec.key))] = row
    for (table, _), row in rows.items():
        expected[table].append(repr(row))
    assert lazy_rows == {t: sorted(v) for t, v in expected.items()}


def test_opening_a_store_loads_no_domain_package(tmp_path: Path) -> None:
    root = tmp_path / "store"
    with app.init_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}")):
        pass
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from reviewtrail import app\n"
        "from reviewtrail.config import Settings\n"
        f"root = Path({str(root)!r})\n"
        "with app.open_store(Settings(store=root, database_url=f'sqlite:///{root}/ledger.sqlite')) as s:\n"
        "    s.ledger.tail(5)\n"
        "import json\n"
        "print(app.catalog().loaded, json.dumps(sorted(m for m in sys.modules if m.startswith('reviewtrail.'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded, modules = out.split(" ", 1)
    assert loaded == "()"
    domain = {m for m in json.loads(modules) if m.split(".")[1] in DOMAIN}
    assert domain == DECLARATIONS  # each package's face and declaration, no payload model


def test_concurrent_first_uses_all_validate() -> None:
    """Threads that validate a type while its package loads all wait for it: none skips the check."""
    import threading
    import time

    from reviewtrail.errors import InvalidInputError

    @record_type("lazy.slow@1")
    class Slow(RecordPayload):
        text: str

    def load() -> tuple[Any, Any]:
        time.sleep(0.05)
        return [Slow], []

    catalog = RecordCatalog(deferred=[DeferredPart("slow", frozenset({"lazy.slow@1"}), (), load)])
    refused: list[bool] = []

    def validate() -> None:
        try:
            catalog.validate("lazy.slow@1", {"text": 1})
        except InvalidInputError:
            refused.append(True)
        else:
            refused.append(False)

    threads = [threading.Thread(target=validate) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert refused == [True] * 8
