"""Lineage: from an artifact version back to the runs, sessions and model turns behind it.

Every step is an indexed lookup (projection tables and record ids), so the cost depends
on the size of the lineage, not of the ledger.
"""

from __future__ import annotations

from typing import Any

from reviewtrail.errors import NotFoundError
from reviewtrail.ledger import Envelope
from reviewtrail.provenance.artifacts._catalog import VersionInfo, get_version
from reviewtrail.provenance.artifacts._graph import LineageGraph, Node
from reviewtrail.provenance.runs._sessions import DEFAULT_PROJECT
from reviewtrail.store import Store

__all__ = ["lineage", "render_tree"]

_MAX_DEPTH = 64


def _node(env: Envelope, kind: str, label: str, attributes: dict[str, Any]) -> Node:
    return Node(f"{kind}:{env.id}", kind, label, attributes, env.id, env.hash)  # type: ignore[arg-type]


def _version_node(info: VersionInfo) -> Node:
    v = info.version
    attrs = {
        "artifactId": v.artifact_id,
        "version": v.version,
        "content": v.content,
        "origin": v.origin,
        "createdAt": v.created_at,
        "sessionId": (v.session_snapshot or {}).get("sessionId"),
        "sourcePath": v.source_path,
    }
    return _node(info.envelope, "artifact_version", f"{v.name}@{v.version}", attrs)


def lineage(store: Store, name: str, version: int | None = None, project_id: str = DEFAULT_PROJECT) -> LineageGraph:
    info = get_version(store, name, version, project_id)
    root = _version_node(info)
    g = LineageGraph(root=root.id)
    g.add(root)
    v = info.version
    artifact = g.add(
        Node(
            f"artifact:{v.artifact_id}",
            "artifact",
            v.name,
            {"artifactId": v.artifact_id, "projectId": v.project_id, "name": v.name},
        )
    )
    g.link(root.id, artifact.id, "specializationOf")
    agent = g.add(Node(f"agent:{info.envelope.actor}", "agent", info.envelope.actor, {"actor": info.envelope.actor}))
    g.link(root.id, agent.id, "wasAttributedTo")
    if v.version > 1:
        previous = get_version(store, v.name, v.version - 1, v.project_id)
        prev_id = g.add(_version_node(previous)).id
        g.link(root.id, prev_id, "wasDerivedFrom")
        g.link(prev_id, artifact.id, "specializationOf")
    session_node = _session(store, g, v.session_snapshot["sessionId"]) if v.session_snapshot else None
    for derivation_id in v.derivation_ids:
        g.link(root.id, _derivation(store, g, derivation_id, 0), "wasDerivedFrom")
    if v.prompt_manifest_id:
        # The model turn generated the declaration; it happened within the session.
        manifest = _manifest(store, g, v.prompt_manifest_id)
        g.link(root.id, manifest, "wasGeneratedBy")
        if session_node is not None:
            g.link(manifest, session_node, "wasInformedBy")
    elif session_node is not None:
        g.link(root.id, session_node, "wasGeneratedBy")
    if v.origin == "llm_declared" and not v.derivation_ids:
        g.notes.append(
            f"{v.name}@{v.version}: no recorded run wrote these bytes at {v.source_path} "
            "(the file was changed outside reviewtrail's recorded runs): its lineage starts in the workspace"
        )
    if v.origin == "user_upload" and not v.derivation_ids:
        g.notes.append(
            f"{v.name}@{v.version} was uploaded by {info.envelope.actor}: its lineage starts outside reviewtrail"
        )
    return g


def _session(store: Store, g: LineageGraph, session_id: str) -> str:
    node_id = f"session:{session_id}"
    if node_id in g.nodes:
        return node_id
    rows = store.ledger.rows("prov_sessions", session_id=session_id)
    if not rows:
        g.notes.append(f"session {session_id} is not recorded in this ledger")
        g.add(Node(node_id, "session", session_id, {"sessionId": session_id, "deleted": None}))
        return node_id
    env = store.ledger.get(rows[0]["record_id"])
    deleted = bool(store.ledger.rows("prov_session_deletions", session_id=session_id))
    p = env.payload_value
    g.add(
        Node(
            node_id,
            "session",
            session_id,
            {"sessionId": session_id, "projectId": p["projectId"], "createdAt": p["createdAt"], "deleted": deleted},
            env.id,
            env.hash,
        )
    )
    if deleted:
        g.notes.append(
            f"source session deleted: {session_id} "
            "(its workspace is gone; its runs, derivations and CAS objects remain)"
        )
    return node_id


def _run(store: Store, g: LineageGraph, run_id: str) -> str:
    node_id = f"execution_run:{run_id}"
    if node_id in g.nodes:
        return node_id
    try:
        env = store.ledger.get(run_id)
    except NotFoundError:
        g.notes.append(f"execution run {run_id} is not recorded in this ledger")
        g.add(Node(node_id, "execution_run", run_id, {}))
        return node_id
    p = env.payload_value
    attrs = {
        k: p.get(k)
        for k in (
            "status",
            "toolName",
            "language",
            "exitCode",
            "startedAt",
            "endedAt",
            "workingDirectory",
            "envSnapshot",
            "code",
            "stdout",
            "stderr",
            "sandbox",
            "networkPolicy",
            "sessionId",
            "kernelMode",
            "kernelId",
            "environmentRevisionId",
            "permissionEpochId",
            "createdFiles",
            "modifiedFiles",
        )
    }
    g.add(_node(env, "execution_run", f"run …{run_id[-12:]} ({p['language']}, {p['status']})", attrs))
    g.link(node_id, _session(store, g, p["sessionId"]), "wasInformedBy")
    return node_id


def _derivation(store: Store, g: LineageGraph, record_id: str, depth: int) -> str:
    node_id = f"derivation:{record_id}"
    if node_id in g.nodes:
        return node_id
    env = store.ledger.get(record_id)
    p = env.payload_value
    g.add(
        _node(
            env,
            "derivation",
            p["path"],
            {"path": p["path"], "content": p["content"], "executionRunIds": p["executionRunIds"]},
        )
    )
    for run_id in p["executionRunIds"]:
        g.link(node_id, _run(store, g, run_id), "wasGeneratedBy")
    previous = p.get("previousContent")
    if previous and depth >= _MAX_DEPTH and not g.truncated:
        g.truncated = True
        g.notes.append(f"lineage truncated: more than {_MAX_DEPTH} successive changes of {p['path']} are not shown")
    if previous and depth < _MAX_DEPTH:
        earlier = [
            r
            for r in store.ledger.rows("prov_derivations", digest=previous["digest"])
            if r["session_id"] == p["sessionId"] and r["seq"] < env.seq
        ]
        if earlier:
            prior = max(earlier, key=lambda r: r["seq"])
            g.link(node_id, _derivation(store, g, prior["record_id"], depth + 1), "wasDerivedFrom")
            for run_id in p["executionRunIds"]:
                g.link(f"execution_run:{run_id}", f"derivation:{prior['record_id']}", "used")
    return node_id


def _manifest(store: Store, g: LineageGraph, record_id: str) -> str:
    node_id = f"prompt_manifest:{record_id}"
    if node_id in g.nodes:
        return node_id
    env = store.ledger.get(record_id)
    p = env.payload_value
    g.add(
        _node(
            env,
            "prompt_manifest",
            f"model turn {p.get('model')}",
            {
                "model": p.get("model"),
                "endpointHost": p.get("endpointHost"),
                "response": p.get("response"),
                "startedAt": p.get("startedAt"),
            },
        )
    )
    return node_id


def render_tree(g: LineageGraph) -> str:
    """The graph as an indented tree from the root (each node expanded once)."""
    lines: list[str] = []
    seen: set[str] = set()

    def describe(node: Node) -> str:
        a = node.attributes
        extra = ""
        if node.kind == "execution_run":
            env = (a.get("envSnapshot") or {}).get("digest", "not recorded")
            extra = f" cwd={a.get('workingDirectory')} exit={a.get('exitCode')} env={env}"
        elif node.kind in ("artifact_version", "derivation"):
            content = a.get("content") or {}
            extra = f" {content.get('digest', '')[:19]} ({content.get('size')} bytes)"
        elif node.kind == "session":
            extra = " [deleted]" if a.get("deleted") else ""
        return f"{node.kind} {node.label}{extra}"

    def walk(node_id: str, prefix: str, relation: str | None) -> None:
        node = g.nodes[node_id]
        head = f"{relation} " if relation else ""
        if node_id in seen:
            lines.append(f"{prefix}{head}{node.kind} {node.label} (see above)")
            return
        seen.add(node_id)
        lines.append(f"{prefix}{head}{describe(node)}")
        for rel, child in g.children(node_id):
            walk(child.id, prefix + "  ", rel)

    walk(g.root, "", None)
    for note in g.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)
