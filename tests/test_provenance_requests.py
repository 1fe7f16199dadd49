"""What ``reviewtrail run``, ``artifact diff`` and ``provenance`` ask the library for: run requests
checked and named, version diffs read from the CAS, provenance in the chosen format."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.app import init_store
from reviewtrail.config import Settings
from reviewtrail.errors import InvalidInputError, NotFoundError
from reviewtrail.provenance.artifacts import upload_artifact
from reviewtrail.provenance.export import diff_versions, provenance_query, provenance_view
from reviewtrail.provenance.runs import RunRequest, run_request
from reviewtrail.provenance.runs._request import parse_pairs
from reviewtrail.provenance.sandbox import DEFAULT_LIMITS, ResourceLimits
from reviewtrail.store import Store


# --- run requests ------------------------------------------------------------------------------
def _field_of(**options: object) -> str | None:
    with pytest.raises(InvalidInputError) as caught:
        run_request(**options)  # type: ignore[arg-type]
    return caught.value.field


def test_a_request_names_every_option() -> None:
    request = run_request(
        code="print(1)", session="s1", project="p", lang="bash", env=["A=1", "B=x=y", "C="], timeout=5.0,
        network="allowlist", allow=["example.org"], allow_resolve=["example.org=192.0.2.1"], max_memory="512M",
        max_procs=8, cwd="/workspace/sub",
    )  # fmt: skip
    assert request == RunRequest(
        code="print(1)",
        lang="bash",
        session_id="s1",
        project_id="p",
        env={"A": "1", "B": "x=y", "C": ""},
        timeout=5.0,
        network="allowlist",
        allowlist=("example.org",),
        resolve={"example.org": "192.0.2.1"},
        limits=ResourceLimits(max_memory=512 << 20, max_procs=8),
        cwd="/workspace/sub",
    )


def test_defaults() -> None:
    request = run_request(code="pass")
    assert request.session_id is None and request.project_id == "default" and request.limits == DEFAULT_LIMITS
    assert (request.lang, request.network, request.timeout, request.cwd) == ("python", "none", 60.0, "/workspace")


def test_code_comes_from_exactly_one_of_file_and_code(tmp_path: Path) -> None:
    assert _field_of() == "code"
    script = tmp_path / "job.py"
    script.write_text("print('é')\n", encoding="utf-8")
    assert _field_of(file=script, code="x") == "code"
    assert run_request(file=script).code == "print('é')\n"
    assert _field_of(file=tmp_path / "missing.py") == "file"
    (tmp_path / "latin1.py").write_bytes(b"\xe9\n")
    assert _field_of(file=tmp_path / "latin1.py") == "file"


def test_each_problem_is_named_by_its_option() -> None:
    assert _field_of(code="x", allow=["example.org"]) == "allow"
    assert _field_of(code="x", allow_resolve=["h=1.2.3.4"]) == "allow"
    assert _field_of(code="x", network="allowlist", allow_resolve=["h"]) == "allow_resolve"
    assert _field_of(code="x", network="allowlist", allow_resolve=["=1.2.3.4"]) == "allow_resolve"
    assert _field_of(code="x", network="allowlist", allow_resolve=["h="]) == "allow_resolve"
    assert _field_of(code="x", env=["NOEQUALS"]) == "env"
    assert _field_of(code="x", max_memory="lots") == "max_memory"


def test_option_problems_come_before_the_code_check() -> None:
    """The order the command always had: network options, then limits, then the code, then --env."""
    assert _field_of(allow=["example.org"]) == "allow"
    assert _field_of(max_memory="lots") == "max_memory"
    assert _field_of(env=["NOEQUALS"]) == "code"


@given(st.dictionaries(st.text(min_size=1).filter(lambda k: "=" not in k), st.text(), max_size=5))
def test_pairs_round_trip(pairs: dict[str, str]) -> None:
    items = [f"{k}={v}" for k, v in pairs.items()]
    assert parse_pairs(items, field="env", shape="K=V", need_key=True, need_value=False) == pairs


@given(st.text().filter(lambda t: "=" not in t))
def test_an_item_without_equals_is_refused(item: str) -> None:
    with pytest.raises(InvalidInputError, match="is not K=V"):
        parse_pairs([item], field="env", shape="K=V", need_key=False, need_value=False)


# --- provenance queries ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("format", "as_json", "chosen"),
    [("tree", False, "tree"), ("tree", True, "json"), ("json", False, "json"), ("prov", True, "prov"),
     ("in-toto", False, "in-toto")],
)  # fmt: skip
def test_provenance_formats(format: str, as_json: bool, chosen: str) -> None:
    query = provenance_query("r.md@2", "p", format, as_json=as_json)
    assert (query.name, query.version, query.project_id, query.format) == ("r.md", 2, "p", chosen)


def test_an_unknown_format_is_refused_after_the_spec() -> None:
    with pytest.raises(InvalidInputError) as caught:
        provenance_query("r.md", "default", "dot")
    assert caught.value.field == "format" and "tree, json, prov or in-toto" in str(caught.value)
    with pytest.raises(InvalidInputError) as caught:
        provenance_query("r.md@x", "default", "dot")
    assert caught.value.field != "format"


# --- against a store ---------------------------------------------------------------------------
@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    root = tmp_path / "store"
    with init_store(Settings(store=root, database_url=f"sqlite:///{root / 'ledger.sqlite'}")) as s:
        yield s


def _upload(store: Store, tmp_path: Path, text: str) -> None:
    source = tmp_path / "r.md"
    source.write_text(text)
    upload_artifact(store, name="r.md", file=source)


def test_diff_versions_reads_both_versions_from_the_cas(store: Store, tmp_path: Path) -> None:
    _upload(store, tmp_path, "one\ntwo\n")
    _upload(store, tmp_path, "one\nthree\n")
    diff = diff_versions(store, ("r.md", 1), ("r.md", None))
    assert (diff.old_label, diff.new_label) == ("r.md@1", "r.md@2")
    assert (diff.added, diff.removed) == (1, 1)
    assert "-two\n+three\n" in diff.unified()
    with pytest.raises(NotFoundError):
        diff_versions(store, ("r.md", 1), ("r.md", 3))


def test_provenance_view_in_each_format(store: Store, tmp_path: Path) -> None:
    _upload(store, tmp_path, "one\n")
    tree = provenance_view(store, provenance_query("r.md", "default", "tree"))
    assert tree.document is None and tree.text is not None and "r.md@1" in tree.text
    graph = provenance_view(store, provenance_query("r.md", "default", "json"))
    assert graph.text is None and graph.document is not None and graph.document["root"]
    prov = provenance_view(store, provenance_query("r.md", "default", "prov")).document
    assert prov is not None and "entity" in prov
    statement = provenance_view(store, provenance_query("r.md", "default", "in-toto")).document
    assert statement is not None and statement["_type"] == "https://in-toto.io/Statement/v1"
