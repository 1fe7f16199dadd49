"""The lineage graph: what produced an artifact version, as plain data.

Built by :mod:`reviewtrail.provenance.artifacts._lineage` from ledger records; rendered as a tree,
JSON, W3C PROV-JSON or an in-toto Statement by the exporters.

Node kinds and their ``attributes`` (wire names, camelCase):

- ``artifact``: ``artifactId``, ``projectId``, ``name``, ``origin``
- ``artifact_version``: ``artifactId``, ``version`` (int), ``content`` (CasRef JSON:
  ``{pool, digest, size, mediaType}``), ``origin``, ``createdAt``, ``sessionId``
- ``derivation``: ``path``, ``content`` (CasRef JSON), ``executionRunIds``
- ``execution_run``: ``status``, ``toolName``, ``language``, ``exitCode``, ``startedAt``,
  ``endedAt``, ``workingDirectory``, ``envSnapshot`` (CasRef JSON or null), ``code``,
  ``stdout``, ``stderr`` (CasRef JSON), ``sandbox``, ``networkPolicy``, ``sessionId``
- ``session``: ``sessionId``, ``projectId``, ``deleted`` (bool), ``createdAt``
- ``prompt_manifest``: ``model``, ``endpointHost``, ``response`` (CasRef JSON), ``startedAt``
- ``agent``: ``actor`` (who declared/uploaded)

Edge relations (PROV terms): ``wasGeneratedBy`` (entity -> activity),
``used`` (activity -> entity), ``wasDerivedFrom`` (entity -> entity),
``wasAssociatedWith`` (activity -> agent), ``wasAttributedTo`` (entity -> agent),
``specializationOf`` (artifact_version -> artifact), ``wasInformedBy`` (activity -> activity).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Edge", "LineageGraph", "Node", "NodeKind", "Relation"]

NodeKind = Literal["artifact", "artifact_version", "derivation", "execution_run", "session", "prompt_manifest", "agent"]
Relation = Literal[
    "wasGeneratedBy",
    "used",
    "wasDerivedFrom",
    "wasAssociatedWith",
    "wasAttributedTo",
    "specializationOf",
    "wasInformedBy",
]


@dataclass(frozen=True)
class Node:
    id: str  # stable id, e.g. "execution_run:<record id>"
    kind: NodeKind
    label: str
    attributes: dict[str, Any] = field(default_factory=dict)
    record_id: str | None = None  # ledger record this node comes from
    record_hash: str | None = None


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    relation: Relation


@dataclass
class LineageGraph:
    root: str  # id of the artifact_version node asked about
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # explained states, e.g. "source session deleted"
    # True when earlier changes were left out (more successive changes than the lineage follows)
    truncated: bool = False

    def add(self, node: Node) -> Node:
        return self.nodes.setdefault(node.id, node)

    def link(self, source: str, target: str, relation: Relation) -> None:
        edge = Edge(source, target, relation)
        if edge not in self.edges:
            self.edges.append(edge)

    def children(self, node_id: str) -> list[tuple[Relation, Node]]:
        return [(e.relation, self.nodes[e.target]) for e in self.edges if e.source == node_id]

    def to_json(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "nodes": [
                {
                    "id": n.id,
                    "kind": n.kind,
                    "label": n.label,
                    "attributes": n.attributes,
                    "recordId": n.record_id,
                    "recordHash": n.record_hash,
                }
                for n in self.nodes.values()
            ],
            "edges": [{"source": e.source, "target": e.target, "relation": e.relation} for e in self.edges],
            "notes": list(self.notes),
            "truncated": self.truncated,
        }
