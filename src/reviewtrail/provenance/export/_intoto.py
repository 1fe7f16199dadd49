"""Export a :class:`LineageGraph` as an in-toto Statement v1 with a SLSA Provenance v1 predicate.

A pure function of the graph (plus the installed reviewtrail version), deterministic: the
same graph gives the same output whatever order its nodes and edges were added in.

Covers the nodes reachable from the root along edges (the root's causal past). The
subject is the root version's content (``sha256`` hex, prefix stripped), named by the
artifact's name. ``buildType`` ``https://reviewtrail.dev/provenance/execution@v1`` is
specified in ``docs/slsa-build-type.md``:

- ``externalParameters``: what was asked for: ``artifact`` (id, project, name, version,
  origin, source path, session), ``executionRuns`` (tool, language, working directory,
  session) and ``modelTurns`` (model, endpoint host);
- ``internalParameters``: what the platform decided or observed: every other attribute
  of each run (sandbox, network policy, status, exit code, times, kernel...) and model
  turn (start and end time), their record ids and hashes, the ``derivations`` reached
  (``subject: true`` for those holding the subject's own bytes), the ``sessions`` reached
  (with ``deleted``), the graph's ``notes`` and ``ledgerHead`` ``{hash, seq}``: the last
  ledger record the export read from (when given).

``resolvedDependencies`` are the CAS objects the subject depends on: each run's ``code``
and ``envSnapshot``, each model turn's ``systemPrompt``, ``inputMessages`` and
``response``, and the content of every other artifact version and derivation reached.
The subject's own digest is never one of them (a derivation holding the subject's bytes
is the subject, not an input), and each digest appears once: the first occurrence (by
name, then node, then role) names it and the others are listed in its ``alsoAt``
annotation. ``byproducts`` are the runs' ``stdout`` and ``stderr``. Each is a
ResourceDescriptor ``{name, digest: {sha256}, mediaType, annotations: {node, role, pool}}``.

The builder is ``https://reviewtrail.dev/sandbox/<sandbox>@v1`` when every run reached
used one sandbox, else ``https://reviewtrail.dev/control-plane@v1``; its ``version`` is
``{"reviewtrail": <installed version>}``. ``invocationId`` is the root version's record
id; ``startedOn`` the earliest activity start, ``finishedOn`` the latest of the runs' and
model turns' ends and the version's ``createdAt``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple
from urllib.parse import quote

from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger import LedgerHead
from reviewtrail.provenance.artifacts._graph import LineageGraph, Node
from reviewtrail.provenance.export._common import (
    ACTIVITY_REFS,
    BUILD_TYPE,
    CONTROL_PLANE_BUILDER,
    PROVENANCE_PREDICATE_TYPE,
    SANDBOX_BUILDER,
    STATEMENT_TYPE,
    CasRefView,
    cas_ref,
    reviewtrail_version,
)

__all__ = ["dependency_descriptors", "to_in_toto"]

_EXTERNAL_RUN_KEYS = ("toolName", "language", "workingDirectory", "sessionId")
_EXTERNAL_TURN_KEYS = ("model", "endpointHost")
_EXTERNAL_ARTIFACT_KEYS = ("artifactId", "projectId", "name", "version", "origin", "sourcePath", "sessionId")


class Occurrence(NamedTuple):
    """One CAS object as a node holds it, in a role (``code``, ``content``, ``systemPrompt``...)."""

    name: str
    ref: CasRefView
    node: str
    role: str


def _reachable(graph: LineageGraph) -> list[Node]:
    """Nodes reachable from the root along edges (sources to targets), sorted by id."""
    out_edges: dict[str, list[str]] = {}
    for edge in graph.edges:
        out_edges.setdefault(edge.source, []).append(edge.target)
    seen = {graph.root}
    stack = [graph.root]
    while stack:
        for target in out_edges.get(stack.pop(), []):
            if target not in seen and target in graph.nodes:
                seen.add(target)
                stack.append(target)
    return [graph.nodes[n] for n in sorted(seen)]


def _descriptor(item: Occurrence) -> dict[str, Any]:
    out: dict[str, Any] = {"name": item.name, "digest": {"sha256": item.ref.hex}}
    if item.ref.media_type is not None:
        out["mediaType"] = item.ref.media_type
    annotations: dict[str, Any] = {"node": item.node, "role": item.role}
    if item.ref.pool is not None:
        annotations["pool"] = item.ref.pool
    out["annotations"] = annotations
    return out


def dependency_descriptors(items: Iterable[Occurrence], subject_hex: str) -> list[dict[str, Any]]:
    """One descriptor per digest, the subject's excluded, ordered by name then digest.

    The first occurrence of a digest (by name, node, role) names it; the others are listed,
    as ``{node, role}``, in its ``alsoAt`` annotation.
    """
    by_digest: dict[str, list[Occurrence]] = {}
    for item in items:
        if item.ref.hex != subject_hex:
            by_digest.setdefault(item.ref.hex, []).append(item)
    out: list[dict[str, Any]] = []
    for group in by_digest.values():
        first, *rest = sorted(group, key=lambda o: (o.name, o.node, o.role))
        descriptor = _descriptor(first)
        also = sorted({(o.node, o.role) for o in rest} - {(first.node, first.role)})
        if also:
            descriptor["annotations"]["alsoAt"] = [{"node": n, "role": r} for n, r in also]
        out.append(descriptor)
    return sorted(out, key=lambda d: (d["name"], d["digest"]["sha256"]))


def _sorted_unique(descriptors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Descriptors without duplicates, ordered by name, then digest (then everything else)."""
    unique = {json.dumps(d, sort_keys=True, ensure_ascii=False): d for d in descriptors}
    return [unique[k] for k in sorted(unique, key=lambda k: (unique[k]["name"], unique[k]["digest"]["sha256"], k))]


def _json_value(value: Any) -> Any:
    """``value`` as plain JSON data (keys sorted), for parameters."""
    return json.loads(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str))


def _pick(attributes: dict[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    return {k: _json_value(attributes[k]) for k in keys if attributes.get(k) is not None}


def _moment(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def _extreme(values: Iterable[Any], *, latest: bool) -> str | None:
    moments = [(m, v) for v in values if (m := _moment(v)) is not None]
    if not moments:
        return None
    pick = max(moments, key=lambda p: p[0]) if latest else min(moments, key=lambda p: p[0])
    return str(pick[1])


@dataclass
class _Collected:
    """What the reached nodes contribute to the statement, in node-id order."""

    subject_hex: str
    dependencies: list[Occurrence] = field(default_factory=list)
    byproducts: list[Occurrence] = field(default_factory=list)
    external_runs: list[dict[str, Any]] = field(default_factory=list)
    internal_runs: list[dict[str, Any]] = field(default_factory=list)
    external_turns: list[dict[str, Any]] = field(default_factory=list)
    internal_turns: list[dict[str, Any]] = field(default_factory=list)
    derivations: list[dict[str, Any]] = field(default_factory=list)
    sessions: list[dict[str, Any]] = field(default_factory=list)
    starts: list[Any] = field(default_factory=list)
    ends: list[Any] = field(default_factory=list)
    sandboxes: set[str] = field(default_factory=set)

    def activity(self, n: Node, external_keys: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The external and internal parameters of a run or turn; its CAS refs go to dependencies/byproducts."""
        a = n.attributes
        refs = ACTIVITY_REFS[n.kind]
        for name, spec in refs.items():
            ref = cas_ref(a.get(name), f"{n.id}.{name}")
            if ref is not None:
                into = self.dependencies if spec.dependency else self.byproducts
                into.append(Occurrence(f"{n.id}/{spec.role}", ref, n.id, spec.role))
        internal = _record(n) | _pick(a, [k for k in a if k not in refs and k not in external_keys])
        self.starts.append(a.get("startedAt"))
        self.ends.append(a.get("endedAt"))
        return {"id": n.id, **_pick(a, external_keys)}, internal

    def add(self, n: Node, root: Node) -> None:
        a = n.attributes
        if n.kind == "execution_run":
            external, internal = self.activity(n, _EXTERNAL_RUN_KEYS)
            self.external_runs.append(external)
            self.internal_runs.append(internal)
            if isinstance(a.get("sandbox"), str) and a["sandbox"]:
                self.sandboxes.add(a["sandbox"])
        elif n.kind == "prompt_manifest":
            external, internal = self.activity(n, _EXTERNAL_TURN_KEYS)
            self.external_turns.append(external)
            self.internal_turns.append(internal)
        elif n.kind in ("derivation", "artifact_version") and n.id != root.id:
            ref = cas_ref(a.get("content"), f"{n.id}.content")
            if n.kind == "derivation":
                self.derivations.append(
                    _record(n, hashed=False)
                    | _pick(a, ("path", "executionRunIds"))
                    | {"subject": ref is not None and ref.hex == self.subject_hex}
                )
            if ref is not None:
                name = a["path"] if n.kind == "derivation" and isinstance(a.get("path"), str) else n.label
                self.dependencies.append(Occurrence(name, ref, n.id, "content"))
        elif n.kind == "session":
            self.sessions.append(
                _record(n, hashed=False) | _pick(a, ("sessionId", "projectId", "createdAt", "deleted"))
            )


def _record(n: Node, *, hashed: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"id": n.id}
    if n.record_id:
        out["recordId"] = n.record_id
    if hashed and n.record_hash:
        out["recordHash"] = n.record_hash
    return out


def _root(graph: LineageGraph) -> tuple[Node, CasRefView]:
    root = graph.nodes.get(graph.root)
    if root is None:
        raise InvalidInputError(f"root {graph.root!r} is not a node of the graph", field="root")
    if root.kind != "artifact_version":
        raise InvalidInputError(f"root {graph.root!r} is a {root.kind}, not an artifact_version", field="root")
    subject_ref = cas_ref(root.attributes.get("content"), "content")
    if subject_ref is None:
        raise InvalidInputError(f"root {graph.root!r} has no content reference to attest", field="content")
    return root, subject_ref


def _run_details(root: Node, c: _Collected) -> dict[str, Any]:
    builder_id = (
        SANDBOX_BUILDER.format(quote(next(iter(c.sandboxes)), safe=""))
        if len(c.sandboxes) == 1
        else CONTROL_PLANE_BUILDER
    )
    metadata: dict[str, Any] = {"invocationId": root.record_id or root.id}
    started_on = _extreme(c.starts, latest=False)
    finished_on = _extreme([root.attributes.get("createdAt"), *c.ends], latest=True)
    if started_on is not None:
        metadata["startedOn"] = started_on
    if finished_on is not None:
        metadata["finishedOn"] = finished_on
    return {
        "builder": {"id": builder_id, "version": {"reviewtrail": reviewtrail_version()}},
        "metadata": metadata,
        "byproducts": _sorted_unique([_descriptor(o) for o in c.byproducts]),
    }


def to_in_toto(graph: LineageGraph, ledger_head: LedgerHead | None = None) -> dict[str, Any]:
    """An in-toto Statement v1 with a SLSA Provenance v1 predicate for the root artifact version;
    ``ledger_head``, the head of the ledger the graph was read from, is
    ``internalParameters.ledgerHead``."""
    root, subject_ref = _root(graph)
    general = next(
        (n for rel, n in graph.children(root.id) if rel == "specializationOf" and n.kind == "artifact"), None
    )
    artifact = _pick(general.attributes, ("artifactId", "projectId", "name")) if general is not None else {}
    artifact.update(_pick(root.attributes, _EXTERNAL_ARTIFACT_KEYS))
    artifact_name = artifact["name"] if isinstance(artifact.get("name"), str) else root.label

    collected = _Collected(subject_ref.hex)
    for n in _reachable(graph):
        collected.add(n, root)
    internal: dict[str, Any] = {
        "executionRuns": collected.internal_runs,
        "modelTurns": collected.internal_turns,
        "derivations": collected.derivations,
        "sessions": collected.sessions,
        "notes": list(graph.notes),
    }
    if ledger_head is not None:
        internal["ledgerHead"] = ledger_head.to_json()
    statement = {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": artifact_name, "digest": {"sha256": subject_ref.hex}}],
        "predicateType": PROVENANCE_PREDICATE_TYPE,
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": {
                    "artifact": artifact,
                    "executionRuns": collected.external_runs,
                    "modelTurns": collected.external_turns,
                },
                "internalParameters": internal,
                "resolvedDependencies": dependency_descriptors(collected.dependencies, subject_ref.hex),
            },
            "runDetails": _run_details(root, collected),
        },
    }
    return dict(_json_value(statement))  # plain JSON data, every object's keys sorted
