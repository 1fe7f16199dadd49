"""PROV-JSON and in-toto (SLSA v1) exports of hand-built lineage graphs."""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any

import jsonschema
import pytest

from reviewtrail.canonical import canonical_json
from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger import LedgerHead
from reviewtrail.provenance.artifacts._graph import Edge, LineageGraph, Node
from reviewtrail.provenance.export._common import (
    BUILD_TYPE,
    CONTROL_PLANE_BUILDER,
    PROVENANCE_PREDICATE_TYPE,
    STATEMENT_TYPE,
)
from reviewtrail.provenance.export._intoto import to_in_toto
from reviewtrail.provenance.export._prov import to_prov_json


def hexd(c: str) -> str:
    return c * 64


def ref(c: str, media_type: str = "text/plain", pool: str = "data", size: int = 10) -> dict[str, Any]:
    return {"pool": pool, "digest": "sha256:" + hexd(c), "size": size, "mediaType": media_type}


SESSION = "5e55"
V1, V2 = "artifact_version:0001", "artifact_version:0002"
D1, D2 = "derivation:00d1", "derivation:00d2"
R1, R2 = "execution_run:0r01", "execution_run:0r02"
PM = "prompt_manifest:0pm1"


def nodes_and_edges() -> tuple[list[Node], list[Edge], list[str]]:
    """An artifact with two versions; v2 derives from a file two runs of a deleted session made."""
    nodes = [
        Node("artifact:A1", "artifact", "report.md", {"artifactId": "A1", "projectId": "default", "name": "report.md"}),
        Node(V1, "artifact_version", "report.md@1", {
            "artifactId": "A1", "version": 1, "content": ref("1", "text/markdown"), "origin": "user_upload",
            "createdAt": "2025-01-01T09:00:00.000000Z", "sessionId": SESSION, "sourcePath": None,
        }, "0001", hexd("9")),
        Node(V2, "artifact_version", "report.md@2", {
            "artifactId": "A1", "version": 2, "content": ref("2", "text/markdown"), "origin": "llm_declared",
            "createdAt": "2025-01-01T10:30:00.000000Z", "sessionId": SESSION, "sourcePath": "out/report.md",
        }, "0002", hexd("8")),
        Node(D1, "derivation", "out/report.md", {
            "path": "out/report.md", "content": ref("3"), "executionRunIds": ["0r01"],
        }, "00d1", hexd("7")),
        Node(D2, "derivation", "out/report.md", {
            "path": "out/report.md", "content": ref("2", "text/markdown"), "executionRunIds": ["0r02"],
        }, "00d2", hexd("6")),
        Node(R1, "execution_run", "run 0r01 (python, succeeded)", {
            "status": "succeeded", "toolName": "python", "language": "python", "exitCode": 0,
            "startedAt": "2025-01-01T10:00:00.000000Z", "endedAt": "2025-01-01T10:00:02.000000Z",
            "workingDirectory": "/workspace", "envSnapshot": ref("e", "application/json", "agent-state"),
            "code": ref("c", "text/x-python"), "stdout": ref("0"), "stderr": ref("f"), "sandbox": "bubblewrap",
            "networkPolicy": "none", "sessionId": SESSION, "createdFiles": ["out/report.md"], "modifiedFiles": [],
        }, "0r01", hexd("5")),
        Node(R2, "execution_run", "run 0r02 (bash, failed)", {
            "status": "failed", "toolName": "bash", "language": "bash", "exitCode": 1,
            "startedAt": "2025-01-01T10:05:00.000000Z", "endedAt": "2025-01-01T10:05:09.000000Z",
            "workingDirectory": "/workspace/out", "envSnapshot": None, "code": ref("d", "text/x-sh"),
            "stdout": None, "stderr": ref("f"), "sandbox": "bubblewrap", "networkPolicy": "allowlist",
            "sessionId": SESSION, "createdFiles": [], "modifiedFiles": ["out/report.md"],
        }, "0r02", hexd("4")),
        Node(f"session:{SESSION}", "session", SESSION, {
            "sessionId": SESSION, "projectId": "default", "createdAt": "2025-01-01T08:00:00.000000Z", "deleted": True,
        }, "05e5", hexd("3")),
        Node(PM, "prompt_manifest", "model turn demo-model", {
            "model": "demo-model", "endpointHost": "llm.example.org",
            "response": ref("b", "application/json", "agent-state"), "startedAt": "2025-01-01T10:20:00.000000Z",
        }, "0pm1", hexd("2")),
        Node("agent:alice@example.org", "agent", "alice@example.org", {"actor": "alice@example.org"}),
    ]  # fmt: skip
    edges = [
        Edge(V2, "artifact:A1", "specializationOf"),
        Edge(V1, "artifact:A1", "specializationOf"),
        Edge(V2, "agent:alice@example.org", "wasAttributedTo"),
        Edge(V2, V1, "wasDerivedFrom"),
        Edge(V2, D2, "wasDerivedFrom"),
        Edge(V2, PM, "wasGeneratedBy"),
        Edge(D2, R2, "wasGeneratedBy"),
        Edge(D2, D1, "wasDerivedFrom"),
        Edge(R2, D1, "used"),
        Edge(D1, R1, "wasGeneratedBy"),
        Edge(R1, f"session:{SESSION}", "wasInformedBy"),
        Edge(R2, f"session:{SESSION}", "wasInformedBy"),
        Edge(R2, R1, "wasInformedBy"),
        Edge(R2, PM, "used"),  # the run used the model's response (the manifest stands in for it)
    ]
    notes = [f"source session deleted: {SESSION} (its workspace is gone; its runs, derivations and CAS objects remain)"]
    return nodes, edges, notes


def build(seed: int | None = None, root: str = V2) -> LineageGraph:
    nodes, edges, notes = nodes_and_edges()
    if seed is not None:
        rng = random.Random(seed)
        rng.shuffle(nodes)
        rng.shuffle(edges)
    g = LineageGraph(root=root, notes=list(notes))
    for node in nodes:
        g.add(node)
    for edge in edges:
        g.link(edge.source, edge.target, edge.relation)
    return g


# -- PROV-JSON --------------------------------------------------------------------------

# A compact schema for what this exporter emits, after the PROV-JSON submission's schema:
# literals are scalars, typed literals {"$", "type"} or arrays of those; activity times are
# plain date-time strings; each relation has its required keys.
_LITERAL_SINGLE = {
    "oneOf": [
        {"type": ["string", "number", "boolean"]},
        {
            "type": "object",
            "properties": {"$": {"type": ["string", "number", "boolean"]}, "type": {"type": "string"}},
            "required": ["$", "type"],
            "additionalProperties": False,
        },
    ]
}
_LITERAL = {"oneOf": [_LITERAL_SINGLE, {"type": "array", "items": _LITERAL_SINGLE}]}
_ELEMENT = {"type": "object", "additionalProperties": _LITERAL}
_ACTIVITY = {
    "type": "object",
    "properties": {
        "prov:startTime": {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$"},
        "prov:endTime": {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$"},
    },
    "additionalProperties": _LITERAL,
}


def _relation(*required: str, extra: bool = True) -> dict[str, Any]:
    return {
        "type": "object",
        "propertyNames": {"pattern": r"^_:[a-z]+\d+$"},
        "additionalProperties": {
            "type": "object",
            "properties": {k: {"type": "string"} for k in required},
            "required": list(required),
            "additionalProperties": _LITERAL if extra else False,
        },
    }


PROV_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["prefix", "entity", "activity", "agent"],
    "additionalProperties": False,
    "properties": {
        "prefix": {
            "type": "object",
            "propertyNames": {"pattern": "^[a-zA-Z0-9_-]+$"},
            "additionalProperties": {"type": "string", "pattern": "^https?://"},
        },
        "entity": {"type": "object", "additionalProperties": _ELEMENT},
        "activity": {"type": "object", "additionalProperties": _ACTIVITY},
        "agent": {"type": "object", "additionalProperties": _ELEMENT},
        "wasGeneratedBy": _relation("prov:entity", "prov:activity"),
        "used": _relation("prov:activity", "prov:entity"),
        "wasDerivedFrom": _relation("prov:generatedEntity", "prov:usedEntity"),
        "wasAssociatedWith": _relation("prov:activity", "prov:agent"),
        "wasAttributedTo": _relation("prov:entity", "prov:agent"),
        "specializationOf": _relation("prov:specificEntity", "prov:generalEntity", extra=False),
        "wasInformedBy": _relation("prov:informed", "prov:informant"),
    },
}

# which element section each relation key must point into
_ROLE_SECTIONS = {
    "prov:entity": "entity",
    "prov:generatedEntity": "entity",
    "prov:usedEntity": "entity",
    "prov:specificEntity": "entity",
    "prov:generalEntity": "entity",
    "prov:activity": "activity",
    "prov:informed": "activity",
    "prov:informant": "activity",
    "prov:agent": "agent",
}
_RELATION_PREFIXES = {
    "wasGeneratedBy": "wgb",
    "used": "u",
    "wasDerivedFrom": "wdf",
    "wasAssociatedWith": "waw",
    "wasAttributedTo": "wat",
    "specializationOf": "spec",
    "wasInformedBy": "wib",
}


def ptype(element: dict[str, Any]) -> str:
    return str(element["prov:type"]["$"])


def relations(doc: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return list(doc.get(name, {}).values())


def test_prov_json_matches_the_schema_and_is_plain_json() -> None:
    doc = to_prov_json(build())
    jsonschema.validate(doc, PROV_SCHEMA)
    assert json.loads(json.dumps(doc, allow_nan=False)) == doc
    assert doc["prefix"] == {
        "prov": "http://www.w3.org/ns/prov#",
        "rt": "https://reviewtrail.dev/ns#",
        "xsd": "http://www.w3.org/2001/XMLSchema#",
    }


def test_prov_json_every_relation_points_at_a_declared_element() -> None:
    doc = to_prov_json(build())
    count = 0
    for name, prefix in _RELATION_PREFIXES.items():
        assert name in doc, name
        for rid, record in doc[name].items():
            assert re.fullmatch(rf"_:{prefix}\d+", rid)
            for key, value in record.items():
                if key in _ROLE_SECTIONS:
                    assert value in doc[_ROLE_SECTIONS[key]], (name, key, value)
                    count += 1
    assert count > 30
    ids = [rid for name in _RELATION_PREFIXES for rid in doc[name]]
    assert len(ids) == len(set(ids))
    for name in _RELATION_PREFIXES:  # numbered 1..n without gaps
        numbers = sorted(int(re.sub(r"\D", "", rid)) for rid in doc[name])
        assert numbers == list(range(1, len(numbers) + 1))


def test_prov_json_element_kinds() -> None:
    doc = to_prov_json(build())
    entity, activity, agent = doc["entity"], doc["activity"], doc["agent"]
    assert ptype(entity["rt:artifact:A1"]) == "rt:Artifact"
    assert ptype(entity["rt:" + V2]) == "rt:ArtifactVersion"
    assert ptype(entity["rt:" + D1]) == "rt:DerivedFile"
    assert ptype(activity["rt:" + R1]) == "rt:ExecutionRun"
    assert ptype(activity[f"rt:session:{SESSION}"]) == "rt:Session"
    assert ptype(activity["rt:" + PM]) == "rt:ModelTurn"
    assert ptype(agent["rt:agent:alice@example.org"]) == "rt:Actor"
    assert entity["rt:" + V2]["prov:type"]["type"] == "prov:QUALIFIED_NAME"
    # CAS refs of activities are entities of their own
    assert ptype(entity[f"rt:{R1}/code"]) == "rt:Code"
    assert ptype(entity[f"rt:{R1}/envSnapshot"]) == "rt:EnvironmentSnapshot"
    assert ptype(entity[f"rt:{R1}/stdout"]) == "rt:Stdout"
    assert ptype(entity[f"rt:{R1}/stderr"]) == "rt:Stderr"
    assert ptype(entity[f"rt:{PM}/response"]) == "rt:ModelResponse"
    assert f"rt:{R2}/stdout" not in entity and f"rt:{R2}/envSnapshot" not in entity  # None refs
    assert ptype(agent["rt:sandbox/bubblewrap"]) == "prov:SoftwareAgent"
    assert ptype(agent["rt:model/demo-model@llm.example.org"]) == "prov:SoftwareAgent"
    # nothing else
    assert set(activity) == {"rt:" + R1, "rt:" + R2, f"rt:session:{SESSION}", "rt:" + PM}


def test_prov_json_attributes() -> None:
    doc = to_prov_json(build())
    v2 = doc["entity"]["rt:" + V2]
    assert v2["rt:digest"] == "sha256:" + hexd("2")
    assert (v2["rt:size"], v2["rt:mediaType"], v2["rt:pool"]) == (10, "text/markdown", "data")
    assert v2["rt:createdAt"] == {"$": "2025-01-01T10:30:00.000000Z", "type": "xsd:dateTime"}
    assert (v2["rt:recordId"], v2["rt:recordHash"]) == ("0002", hexd("8"))
    assert v2["rt:lineageRoot"] is True and v2["rt:note"][0].startswith("source session deleted")
    assert v2["prov:label"] == "report.md@2"
    assert "rt:content" not in v2
    v1 = doc["entity"]["rt:" + V1]
    assert "rt:sourcePath" not in v1 and "rt:lineageRoot" not in v1  # None dropped; only the root is marked
    run = doc["activity"]["rt:" + R1]
    assert run["prov:startTime"] == "2025-01-01T10:00:00.000000Z"
    assert run["prov:endTime"] == "2025-01-01T10:00:02.000000Z"
    assert (run["rt:exitCode"], run["rt:status"], run["rt:createdFiles"]) == (0, "succeeded", ["out/report.md"])
    assert "rt:modifiedFiles" not in run and "rt:code" not in run and "rt:startedAt" not in run
    session = doc["activity"][f"rt:session:{SESSION}"]
    assert session["rt:deleted"] is True
    assert session["prov:startTime"] == "2025-01-01T08:00:00.000000Z"
    assert doc["entity"][f"rt:{R1}/envSnapshot"]["rt:pool"] == "agent-state"


def test_prov_json_relations() -> None:
    doc = to_prov_json(build())
    wgb = relations(doc, "wasGeneratedBy")
    assert {"prov:entity": "rt:" + V2, "prov:activity": "rt:" + PM} in wgb
    assert {"prov:entity": f"rt:{R1}/stdout", "prov:activity": "rt:" + R1} in wgb
    assert {"prov:entity": f"rt:{PM}/response", "prov:activity": "rt:" + PM} in wgb
    used = relations(doc, "used")
    assert {"prov:activity": "rt:" + R1, "prov:entity": f"rt:{R1}/code"} in used
    assert {"prov:activity": "rt:" + R2, "prov:entity": "rt:" + D1} in used
    assert {"prov:activity": "rt:" + R2, "prov:entity": f"rt:{PM}/response"} in used  # manifest -> its response
    wdf = relations(doc, "wasDerivedFrom")
    revision = {"$": "prov:Revision", "type": "prov:QUALIFIED_NAME"}
    assert {"prov:generatedEntity": "rt:" + V2, "prov:usedEntity": "rt:" + V1, "prov:type": revision} in wdf
    assert {"prov:generatedEntity": "rt:" + V2, "prov:usedEntity": "rt:" + D2} in wdf
    assert relations(doc, "specializationOf") == [
        {"prov:specificEntity": "rt:" + V1, "prov:generalEntity": "rt:artifact:A1"},
        {"prov:specificEntity": "rt:" + V2, "prov:generalEntity": "rt:artifact:A1"},
    ]
    assert relations(doc, "wasAttributedTo") == [
        {"prov:entity": "rt:" + V2, "prov:agent": "rt:agent:alice@example.org"}
    ]
    wib = relations(doc, "wasInformedBy")
    assert {"prov:informed": "rt:" + R2, "prov:informant": "rt:" + R1} in wib
    assert {"prov:informed": "rt:" + R1, "prov:informant": f"rt:session:{SESSION}"} in wib
    waw = relations(doc, "wasAssociatedWith")
    assert {"prov:activity": "rt:" + R1, "prov:agent": "rt:sandbox/bubblewrap"} in waw
    assert {"prov:activity": "rt:" + PM, "prov:agent": "rt:model/demo-model@llm.example.org"} in waw


@pytest.mark.parametrize("seed", range(5))
def test_prov_json_is_deterministic(seed: int) -> None:
    assert json.dumps(to_prov_json(build(seed))) == json.dumps(to_prov_json(build()))


def test_prov_json_ids_are_escaped() -> None:
    g = LineageGraph(root="artifact_version:v")
    g.add(Node("artifact_version:v", "artifact_version", "v", {"content": ref("a")}))
    g.add(Node("agent:Jane Doe <jane>", "agent", "Jane Doe", {"actor": "Jane Doe <jane>"}))
    g.link("artifact_version:v", "agent:Jane Doe <jane>", "wasAttributedTo")
    doc = to_prov_json(g)
    assert list(doc["agent"]) == ["rt:agent:Jane%20Doe%20%3Cjane%3E"]
    assert doc["wasAttributedTo"]["_:wat1"]["prov:agent"] == "rt:agent:Jane%20Doe%20%3Cjane%3E"


def test_prov_json_model_turn_without_response_still_has_a_response_entity() -> None:
    g = LineageGraph(root="artifact_version:v")
    g.add(Node("artifact_version:v", "artifact_version", "v", {"content": ref("a")}))
    g.add(Node("prompt_manifest:p", "prompt_manifest", "turn", {"model": None, "response": None}))
    g.link("artifact_version:v", "prompt_manifest:p", "wasDerivedFrom")
    doc = to_prov_json(g)
    assert "rt:digest" not in doc["entity"]["rt:prompt_manifest:p/response"]
    assert doc["wasDerivedFrom"]["_:wdf1"]["prov:usedEntity"] == "rt:prompt_manifest:p/response"
    assert "agent" not in doc and "wasAssociatedWith" not in doc  # no model, no agent; empty sections left out
    jsonschema.validate(doc, {**PROV_SCHEMA, "required": ["prefix", "entity", "activity"]})


def test_prov_json_refuses_edges_that_break_the_graph_contract() -> None:
    g = build()
    g.link("agent:alice@example.org", V2, "used")
    with pytest.raises(InvalidInputError) as err:
        to_prov_json(g)
    assert err.value.field == "edges" and "agent" in str(err.value)
    g = build()
    g.link(V2, "execution_run:missing", "wasGeneratedBy")
    with pytest.raises(InvalidInputError) as err:
        to_prov_json(g)
    assert err.value.field == "edges" and "missing" in str(err.value)
    with pytest.raises(InvalidInputError) as err:
        to_prov_json(build(root="artifact_version:nope"))
    assert err.value.field == "root"


def test_prov_json_refuses_malformed_digests() -> None:
    g = build()
    g.add(Node("derivation:bad", "derivation", "bad", {"content": {**ref("a"), "digest": "sha256:XYZ"}}))
    with pytest.raises(InvalidInputError):
        to_prov_json(g)


# -- in-toto ----------------------------------------------------------------------------

_SHA256 = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
_DESCRIPTOR = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "uri": {"type": "string"},
        "digest": {"type": "object", "properties": {"sha256": _SHA256}, "additionalProperties": {"type": "string"}},
        "mediaType": {"type": "string"},
        "annotations": {"type": "object"},
    },
    "anyOf": [{"required": ["uri"]}, {"required": ["digest"]}, {"required": ["content"]}],
}
_TIMESTAMP = {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$"}
IN_TOTO_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["_type", "subject", "predicateType", "predicate"],
    "properties": {
        "_type": {"const": "https://in-toto.io/Statement/v1"},
        "subject": {
            "type": "array",
            "minItems": 1,
            "items": {**_DESCRIPTOR, "required": ["digest"]},
        },
        "predicateType": {"const": "https://slsa.dev/provenance/v1"},
        "predicate": {
            "type": "object",
            "required": ["buildDefinition", "runDetails"],
            "properties": {
                "buildDefinition": {
                    "type": "object",
                    "required": ["buildType", "externalParameters"],
                    "properties": {
                        "buildType": {"type": "string", "pattern": "^https://"},
                        "externalParameters": {"type": "object"},
                        "internalParameters": {
                            "type": "object",
                            "properties": {
                                "ledgerHead": {
                                    "type": "object",
                                    "required": ["hash", "seq"],
                                    "properties": {"hash": _SHA256, "seq": {"type": "integer", "minimum": 0}},
                                    "additionalProperties": False,
                                }
                            },
                        },
                        "resolvedDependencies": {"type": "array", "items": _DESCRIPTOR},
                    },
                    "additionalProperties": False,
                },
                "runDetails": {
                    "type": "object",
                    "required": ["builder"],
                    "properties": {
                        "builder": {
                            "type": "object",
                            "required": ["id"],
                            "properties": {"id": {"type": "string", "pattern": "^https://"}},
                        },
                        "metadata": {
                            "type": "object",
                            "properties": {
                                "invocationId": {"type": "string"},
                                "startedOn": _TIMESTAMP,
                                "finishedOn": _TIMESTAMP,
                            },
                            "additionalProperties": False,
                        },
                        "byproducts": {"type": "array", "items": _DESCRIPTOR},
                    },
                    "additionalProperties": False,
                },
            },
            "additionalProperties": False,
        },
    },
    "additionalProperties": False,
}


def digests(descriptors: list[dict[str, Any]]) -> set[str]:
    return {d["digest"]["sha256"] for d in descriptors}


def test_in_toto_statement_validates_and_is_plain_json() -> None:
    statement = to_in_toto(build())
    jsonschema.validate(statement, IN_TOTO_SCHEMA)
    assert json.loads(json.dumps(statement, allow_nan=False)) == statement
    assert statement["_type"] == STATEMENT_TYPE
    assert statement["predicateType"] == PROVENANCE_PREDICATE_TYPE
    assert statement["predicate"]["buildDefinition"]["buildType"] == BUILD_TYPE


def test_in_toto_subject_is_the_root_content_without_prefix() -> None:
    statement = to_in_toto(build())
    assert statement["subject"] == [{"name": "report.md", "digest": {"sha256": hexd("2")}}]
    for section in (
        statement["subject"],
        statement["predicate"]["buildDefinition"]["resolvedDependencies"],
        statement["predicate"]["runDetails"]["byproducts"],
    ):
        for descriptor in section:
            assert set(descriptor["digest"]) == {"sha256"}
            assert re.fullmatch("[0-9a-f]{64}", descriptor["digest"]["sha256"])
    assert "sha256:" not in json.dumps(statement)


def test_in_toto_dependencies_and_byproducts() -> None:
    predicate = to_in_toto(build())["predicate"]
    deps = predicate["buildDefinition"]["resolvedDependencies"]
    # code of both runs, the env snapshot, the model response, v1 and the first derivation; the second
    # derivation holds the subject's own bytes (hexd("2")), so it is the subject, not a dependency
    assert digests(deps) == {hexd(c) for c in "cdeb13"}
    by_name = {d["name"]: d for d in deps}
    assert by_name[f"{R1}/code"] == {
        "name": f"{R1}/code",
        "digest": {"sha256": hexd("c")},
        "mediaType": "text/x-python",
        "annotations": {"node": R1, "pool": "data", "role": "code"},
    }
    assert by_name[f"{R1}/envSnapshot"]["annotations"]["pool"] == "agent-state"
    assert by_name[f"{PM}/response"]["digest"] == {"sha256": hexd("b")}
    assert by_name["report.md@1"]["annotations"] == {"node": V1, "pool": "data", "role": "content"}
    assert [d["annotations"]["node"] for d in deps if d["name"] == "out/report.md"] == [D1]
    assert [d["name"] for d in deps] == sorted(d["name"] for d in deps)
    byproducts = predicate["runDetails"]["byproducts"]
    assert [d["name"] for d in byproducts] == [f"{R1}/stderr", f"{R1}/stdout", f"{R2}/stderr"]
    assert digests(byproducts) == {hexd("0"), hexd("f")}


def test_in_toto_parameters_and_run_details() -> None:
    predicate = to_in_toto(build())["predicate"]
    definition = predicate["buildDefinition"]
    external, internal = definition["externalParameters"], definition["internalParameters"]
    assert external["artifact"] == {
        "artifactId": "A1",
        "name": "report.md",
        "origin": "llm_declared",
        "projectId": "default",
        "sessionId": SESSION,
        "sourcePath": "out/report.md",
        "version": 2,
    }
    assert external["executionRuns"] == [
        {"id": R1, "language": "python", "sessionId": SESSION, "toolName": "python", "workingDirectory": "/workspace"},
        {"id": R2, "language": "bash", "sessionId": SESSION, "toolName": "bash", "workingDirectory": "/workspace/out"},
    ]
    assert external["modelTurns"] == [{"endpointHost": "llm.example.org", "id": PM, "model": "demo-model"}]
    run2 = internal["executionRuns"][1]
    assert (run2["id"], run2["recordId"], run2["recordHash"]) == (R2, "0r02", hexd("4"))
    assert (run2["status"], run2["exitCode"], run2["networkPolicy"], run2["sandbox"]) == (
        "failed",
        1,
        "allowlist",
        "bubblewrap",
    )
    assert "code" not in run2 and "stdout" not in run2 and "envSnapshot" not in run2
    assert internal["modelTurns"] == [
        {"id": PM, "recordHash": hexd("2"), "recordId": "0pm1", "startedAt": "2025-01-01T10:20:00.000000Z"}
    ]
    assert internal["sessions"] == [
        {
            "createdAt": "2025-01-01T08:00:00.000000Z",
            "deleted": True,
            "id": f"session:{SESSION}",
            "projectId": "default",
            "recordId": "05e5",
            "sessionId": SESSION,
        }
    ]
    assert internal["notes"][0].startswith("source session deleted")
    assert predicate["runDetails"]["builder"]["id"] == "https://reviewtrail.dev/sandbox/bubblewrap@v1"
    assert predicate["runDetails"]["metadata"] == {
        "invocationId": "0002",
        "startedOn": "2025-01-01T10:00:00.000000Z",
        "finishedOn": "2025-01-01T10:30:00.000000Z",
    }


@pytest.mark.parametrize("seed", range(5))
def test_in_toto_is_deterministic(seed: int) -> None:
    assert json.dumps(to_in_toto(build(seed))) == json.dumps(to_in_toto(build()))


def test_in_toto_covers_only_what_the_root_depends_on() -> None:
    g = build()
    g.add(Node("execution_run:other", "execution_run", "other", {"code": ref("9"), "sandbox": "gvisor"}))
    g.link("execution_run:other", R1, "wasInformedBy")  # points into the lineage, not reached from the root
    statement = to_in_toto(g)
    assert hexd("9") not in json.dumps(statement)
    assert statement["predicate"]["runDetails"]["builder"]["id"].endswith("/bubblewrap@v1")
    # the older version's statement does not see v2's runs
    older = to_in_toto(build(root=V1))
    assert older["subject"][0]["digest"] == {"sha256": hexd("1")}
    assert older["predicate"]["buildDefinition"]["resolvedDependencies"] == []
    assert older["predicate"]["runDetails"]["byproducts"] == []
    assert older["predicate"]["runDetails"]["builder"]["id"] == CONTROL_PLANE_BUILDER
    assert older["predicate"]["runDetails"]["metadata"] == {
        "invocationId": "0001",
        "finishedOn": "2025-01-01T09:00:00.000000Z",
    }
    jsonschema.validate(older, IN_TOTO_SCHEMA)


def test_in_toto_accepts_untyped_object_refs() -> None:
    g = LineageGraph(root="artifact_version:v")
    g.add(Node("artifact_version:v", "artifact_version", "data.csv@1", {"content": {"hash": hexd("a"), "size": 3}}))
    statement = to_in_toto(g)
    assert statement["subject"] == [{"name": "data.csv@1", "digest": {"sha256": hexd("a")}}]
    jsonschema.validate(statement, IN_TOTO_SCHEMA)


def test_in_toto_mixed_sandboxes_fall_back_to_the_control_plane() -> None:
    g = build()
    g.nodes[R2].attributes["sandbox"] = "gvisor"
    assert to_in_toto(g)["predicate"]["runDetails"]["builder"]["id"] == CONTROL_PLANE_BUILDER


def test_in_toto_refuses_a_root_it_cannot_attest() -> None:
    with pytest.raises(InvalidInputError) as err:
        to_in_toto(build(root="artifact_version:nope"))
    assert err.value.field == "root"
    with pytest.raises(InvalidInputError) as err:
        to_in_toto(build(root=R1))
    assert err.value.field == "root"
    g = LineageGraph(root="artifact_version:v")
    g.add(Node("artifact_version:v", "artifact_version", "v", {"content": None}))
    with pytest.raises(InvalidInputError) as err:
        to_in_toto(g)
    assert err.value.field == "content"
    g = LineageGraph(root="artifact_version:v")
    g.add(Node("artifact_version:v", "artifact_version", "v", {"content": {**ref("a"), "digest": "md5:abc"}}))
    with pytest.raises(InvalidInputError):
        to_in_toto(g)


# -- the ledger head (a format change of both exports, pinned) ----------------------------------

HEAD = LedgerHead("a1" * 32, 42)


def test_prov_json_root_names_the_ledger_head() -> None:
    doc = to_prov_json(build(), HEAD)
    jsonschema.validate(doc, PROV_SCHEMA)
    root = doc["entity"]["rt:artifact_version:0002"]
    assert (root["rt:ledgerHead"], root["rt:ledgerHeadSeq"]) == ("a1" * 32, 42)
    others = [e for k, e in doc["entity"].items() if k != "rt:artifact_version:0002"]
    assert all("rt:ledgerHead" not in e and "rt:ledgerHeadSeq" not in e for e in others)
    assert "rt:ledgerHead" not in json.dumps(to_prov_json(build()))  # no head given: none named


def test_prov_json_known_answer() -> None:
    """The whole PROV-JSON document of the fixture, with a ledger head, as RFC 8785 bytes."""
    doc = canonical_json(to_prov_json(build(seed=3), HEAD))
    assert b',"rt:ledgerHead":"' + b"a1" * 32 + b'","rt:ledgerHeadSeq":42,' in doc
    assert hashlib.sha256(doc).hexdigest() == "1bfef1d75b6a2a5d7dbacf27625425ba6b660a4a1e2007ca4638f8264c3cb158"


def test_in_toto_internal_parameters_name_the_ledger_head() -> None:
    statement = to_in_toto(build(), HEAD)
    jsonschema.validate(statement, IN_TOTO_SCHEMA)
    internal = statement["predicate"]["buildDefinition"]["internalParameters"]
    assert internal["ledgerHead"] == {"hash": "a1" * 32, "seq": 42}
    assert "ledgerHead" not in to_in_toto(build())["predicate"]["buildDefinition"]["internalParameters"]


def test_in_toto_known_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixture's statement with a ledger head, as RFC 8785 bytes (the builder version fixed)."""
    import reviewtrail.provenance.export._intoto as exporter

    monkeypatch.setattr(exporter, "reviewtrail_version", lambda: "0.0.0+pin")
    data = canonical_json(to_in_toto(build(seed=1), HEAD))
    assert b'"ledgerHead":{"hash":"' + b"a1" * 32 + b'","seq":42},"modelTurns":' in data
    assert (len(data), hashlib.sha256(data).hexdigest()) == (
        4645,
        "6026d5807f2da6a9301ccb03a67d3ae2a78cde57fb0f3bb92d2eb0e923da0bdb",
    )


@pytest.mark.parametrize(
    ("hash_", "seq", "field"),
    [
        ("A1" * 32, 1, "ledgerHead.hash"),
        ("a1" * 31, 1, "ledgerHead.hash"),
        ("a1" * 32, -1, "ledgerHead.seq"),
        ("a1" * 32, True, "ledgerHead.seq"),
        ("a1" * 32, 2**53, "ledgerHead.seq"),
        ("a1" * 32, 0, "ledgerHead"),
    ],
)
def test_a_malformed_ledger_head_is_refused_naming_its_field(hash_: str, seq: int, field: str) -> None:
    with pytest.raises(InvalidInputError) as err:
        LedgerHead(hash_, seq)
    assert err.value.field == field
