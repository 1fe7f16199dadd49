"""What ``reviewtrail artifact diff`` and ``reviewtrail provenance`` show, read from a store.

:func:`diff_versions` reads two versions' bytes from the CAS and diffs them (never stored);
:func:`provenance_query` checks a request before any store is opened and
:func:`provenance_view` gives the document or text of the chosen format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from reviewtrail.errors import InvalidInputError
from reviewtrail.provenance._catalog import get_version, parse_spec
from reviewtrail.provenance._diff import VersionDiff, artifact_version_diff
from reviewtrail.provenance._export_graph import export_graph
from reviewtrail.provenance._export_intoto import to_in_toto
from reviewtrail.provenance._export_prov import to_prov_json
from reviewtrail.provenance._lineage import lineage, render_tree
from reviewtrail.provenance._sessions import DEFAULT_PROJECT
from reviewtrail.store import Store

__all__ = [
    "PROVENANCE_FORMATS",
    "ProvenanceFormat",
    "ProvenanceQuery",
    "ProvenanceView",
    "diff_versions",
    "provenance_query",
    "provenance_view",
]

ProvenanceFormat = Literal["tree", "json", "prov", "in-toto"]
PROVENANCE_FORMATS: tuple[ProvenanceFormat, ...] = ("tree", "json", "prov", "in-toto")


def diff_versions(
    store: Store, old: tuple[str, int | None], new: tuple[str, int | None], project_id: str = DEFAULT_PROJECT
) -> VersionDiff:
    """Diff version ``old`` against ``new`` (each ``(name, version)`` as :func:`parse_spec` gives it;
    version None: the latest), their bytes read (and verified) from the CAS."""
    (a_name, a_ver), (b_name, b_ver) = old, new
    a, b = get_version(store, a_name, a_ver, project_id), get_version(store, b_name, b_ver, project_id)
    return artifact_version_diff(
        store.cas.read(a.version.content["digest"]),
        store.cas.read(b.version.content["digest"]),
        old_media_type=a.version.content["mediaType"],
        new_media_type=b.version.content["mediaType"],
        old_label=f"{a_name}@{a.version.version}",
        new_label=f"{b_name}@{b.version.version}",
    )


@dataclass(frozen=True)
class ProvenanceQuery:
    """One artifact version (``version`` None: the latest) and the format to show its lineage in."""

    name: str
    version: int | None
    project_id: str
    format: ProvenanceFormat


def provenance_query(spec: str, project_id: str, format: str, *, as_json: bool = False) -> ProvenanceQuery:
    """Check ``NAME[@VERSION]`` and the format (tree, json, prov, in-toto); ``as_json`` turns the
    tree into its JSON document. Pure: nothing is read."""
    name, version = parse_spec(spec)
    if format not in PROVENANCE_FORMATS:
        raise InvalidInputError(f"{format!r} is not tree, json, prov or in-toto", field="format")
    chosen: ProvenanceFormat = "json" if format == "tree" and as_json else format
    return ProvenanceQuery(name, version, project_id, chosen)


@dataclass(frozen=True)
class ProvenanceView:
    """A JSON document (json, prov, in-toto) or the rendered tree (tree)."""

    document: dict[str, Any] | None = None
    text: str | None = None


def provenance_view(store: Store, query: ProvenanceQuery) -> ProvenanceView:
    """The lineage of the queried version in its format: prov and in-toto also carry the
    earlier versions' lineage; tree and json are the version's own lineage graph."""
    if query.format in ("prov", "in-toto"):
        graph = export_graph(store, query.name, query.version, query.project_id)
        return ProvenanceView(document=to_prov_json(graph) if query.format == "prov" else to_in_toto(graph))
    graph = lineage(store, query.name, query.version, query.project_id)
    if query.format == "json":
        return ProvenanceView(document=graph.to_json())
    return ProvenanceView(text=render_tree(graph))
