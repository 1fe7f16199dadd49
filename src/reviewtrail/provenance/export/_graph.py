"""The graph an export is made from: a version's lineage, its earlier versions' lineages, full model turns.

An export of version N says everything the exports of versions 1..N-1 say (their
derivations, runs, model turns, attributions and revisions), so a consumer that holds only
the newest export loses nothing. Model turns carry what their prompt manifest recorded
about the call's inputs and end: ``systemPrompt`` and ``inputMessages`` (CAS references),
``endedAt`` and ``callType``.

:func:`export_source` reads the graph and the ledger's head in one snapshot of the ledger,
the head first, so the export can name the exact ledger state it says what it says of.
"""

from __future__ import annotations

from reviewtrail.ledger import LedgerHead, ledger_head
from reviewtrail.provenance.artifacts._graph import LineageGraph, Node
from reviewtrail.provenance.artifacts._lineage import lineage
from reviewtrail.provenance.runs._sessions import DEFAULT_PROJECT
from reviewtrail.store import Store

__all__ = ["TURN_DETAILS", "export_graph", "export_source", "merge_graph", "with_turn_details"]

# prompt manifest payload keys a model turn node gains for export
TURN_DETAILS = ("systemPrompt", "inputMessages", "endedAt", "callType")


def merge_graph(into: LineageGraph, other: LineageGraph) -> LineageGraph:
    """Add ``other``'s nodes, edges and notes to ``into`` (a node already there is kept as it is)."""
    for node in other.nodes.values():
        into.add(node)
    for edge in other.edges:
        into.link(edge.source, edge.target, edge.relation)
    for note in other.notes:
        if note not in into.notes:
            into.notes.append(note)
    return into


def with_turn_details(node: Node, payload: dict[str, object]) -> Node:
    """``node`` (a model turn) with the :data:`TURN_DETAILS` its manifest ``payload`` records, where it lacks them."""
    attributes = dict(node.attributes)
    for key in TURN_DETAILS:
        if attributes.get(key) is None and payload.get(key) is not None:
            attributes[key] = payload[key]
    return Node(node.id, node.kind, node.label, attributes, node.record_id, node.record_hash)


def export_graph(
    store: Store, name: str, version: int | None = None, project_id: str = DEFAULT_PROJECT
) -> LineageGraph:
    """The lineage of ``name@version`` (latest when None) merged with those of all its earlier versions."""
    graph = lineage(store, name, version, project_id)
    number = graph.nodes[graph.root].attributes.get("version")
    if isinstance(number, int):
        for earlier in range(number - 1, 0, -1):
            merge_graph(graph, lineage(store, name, earlier, project_id))
    for node_id, node in list(graph.nodes.items()):
        if node.kind == "prompt_manifest" and node.record_id is not None:
            graph.nodes[node_id] = with_turn_details(node, store.ledger.get(node.record_id).payload_value)
    return graph


def export_source(
    store: Store, name: str, version: int | None = None, project_id: str = DEFAULT_PROJECT
) -> tuple[LineageGraph, LedgerHead]:
    """:func:`export_graph` and the ledger's head, read in one snapshot of the ledger (the head
    first): every record the graph holds is at or before that head."""
    with store.ledger.snapshot():
        head = ledger_head(store.ledger)
        return export_graph(store, name, version, project_id), head
