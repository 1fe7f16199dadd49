"""PROV-JSON and in-toto exports as their consumers read them: the ``prov`` package and in-toto-attestation.

Hand-built graphs for the rules (subject and digests in ``resolvedDependencies``, model turns,
builder version, the documented ``buildType``); the store-level cases (earlier versions carried
forward, model turns read from their manifests) are in ``test_export_consumers_store.py``.
"""

from __future__ import annotations

import json
import re
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

import google.protobuf.json_format as pb_json
from hypothesis import given
from hypothesis import strategies as st
from in_toto_attestation.predicates.provenance.v1 import provenance_pb2
from in_toto_attestation.v1 import statement_pb2
from in_toto_attestation.v1.resource_descriptor import ResourceDescriptor
from in_toto_attestation.v1.statement import Statement
from prov.model import ProvActivity, ProvDocument, ProvGeneration, ProvUsage

from reviewtrail.provenance.artifacts._graph import LineageGraph, Node
from reviewtrail.provenance.export._common import BUILD_TYPE
from reviewtrail.provenance.export._graph import merge_graph
from reviewtrail.provenance.export._intoto import to_in_toto
from reviewtrail.provenance.export._prov import to_prov_json
from test_provenance_export import PM, R1, R2, V2, build, hexd, ref

DOC = Path(__file__).resolve().parents[1] / "docs" / "slsa-build-type.md"
TURN_END = "2025-01-01T10:40:00.000000Z"  # later than every other end in the fixture


def with_turn_inputs(g: LineageGraph) -> LineageGraph:
    """The fixture's model turn with its system prompt, input messages and end time, as a manifest records them."""
    turn = g.nodes[PM]
    attributes = {
        **turn.attributes,
        "systemPrompt": ref("5", "text/plain", "agent-state"),
        "inputMessages": ref("6", "application/json", "agent-state"),
        "endedAt": TURN_END,
        "callType": "task",
    }
    g.nodes[PM] = Node(turn.id, turn.kind, turn.label, attributes, turn.record_id, turn.record_hash)
    return g


def deps(statement: dict[str, Any]) -> list[dict[str, Any]]:
    return list(statement["predicate"]["buildDefinition"]["resolvedDependencies"])


def subject_hex(statement: dict[str, Any]) -> str:
    return str(statement["subject"][0]["digest"]["sha256"])


def load_prov(doc: dict[str, Any]) -> ProvDocument:
    return ProvDocument.deserialize(content=json.dumps(doc), format="json")


def local(qname: Any) -> str:
    return str(qname.localpart)


def load_in_toto(statement: dict[str, Any]) -> Any:
    """Parse the statement and its predicate into the in-toto protobufs (unknown fields refused) and validate."""
    pb = pb_json.Parse(json.dumps(statement), statement_pb2.Statement())
    Statement.copy_from_pb(pb).validate()
    predicate = pb_json.Parse(json.dumps(statement["predicate"]), provenance_pb2.Provenance())
    for descriptor in [*predicate.build_definition.resolved_dependencies, *predicate.run_details.byproducts]:
        ResourceDescriptor.copy_from_pb(descriptor).validate()
    return predicate


# -- resolvedDependencies --------------------------------------------------------------


def test_the_subject_is_never_one_of_its_own_dependencies() -> None:
    statement = to_in_toto(build())  # the file run 0r02 wrote holds exactly the root version's bytes
    assert subject_hex(statement) == hexd("2")
    assert hexd("2") not in {d["digest"]["sha256"] for d in deps(statement)}
    # the derivation that holds the subject's bytes is still named, as a parameter
    derivations = statement["predicate"]["buildDefinition"]["internalParameters"]["derivations"]
    assert {d["id"]: d["subject"] for d in derivations} == {"derivation:00d1": False, "derivation:00d2": True}


def test_no_digest_appears_twice_in_the_dependencies() -> None:
    g = build()
    g.nodes[R2].attributes["code"] = ref("c", "text/x-python")  # both runs ran the same code
    statement = to_in_toto(g)
    hexes = [d["digest"]["sha256"] for d in deps(statement)]
    assert len(hexes) == len(set(hexes))
    [code] = [d for d in deps(statement) if d["digest"]["sha256"] == hexd("c")]
    assert code["name"] == f"{R1}/code"
    assert code["annotations"]["alsoAt"] == [{"node": R2, "role": "code"}]
    load_in_toto(statement)


_CHARS = "0123456789ab"


@st.composite
def graphs(draw: st.DrawFn) -> LineageGraph:
    """A root version, derivations, runs and model turns whose CAS digests collide often."""
    root_char = draw(st.sampled_from(_CHARS))
    g = LineageGraph(root="artifact_version:root")
    g.add(Node(g.root, "artifact_version", "r@2", {"content": ref(root_char), "version": 2, "artifactId": "A"}))
    pick = st.sampled_from(_CHARS)
    for i in range(draw(st.integers(0, 3))):
        g.add(Node(f"derivation:{i}", "derivation", f"f{i}", {"path": f"f{i}", "content": ref(draw(pick))}))
        g.link(g.root, f"derivation:{i}", "wasDerivedFrom")
        run = f"execution_run:{i}"
        g.add(Node(run, "execution_run", run, {"code": ref(draw(pick)), "envSnapshot": ref(draw(pick))}))
        g.link(f"derivation:{i}", run, "wasGeneratedBy")
    for i in range(draw(st.integers(0, 2))):
        attrs = {"response": ref(draw(pick)), "systemPrompt": ref(draw(pick)), "inputMessages": ref(draw(pick))}
        g.add(Node(f"prompt_manifest:{i}", "prompt_manifest", f"turn {i}", attrs))
        g.link(g.root, f"prompt_manifest:{i}", "wasGeneratedBy")
    if draw(st.booleans()):
        g.add(Node("artifact_version:prev", "artifact_version", "r@1", {"content": ref(draw(pick)), "version": 1}))
        g.link(g.root, "artifact_version:prev", "wasDerivedFrom")
    return g


@given(graphs())
def test_dependencies_are_every_input_once_and_never_the_subject(g: LineageGraph) -> None:
    statement = to_in_toto(g)
    hexes = [d["digest"]["sha256"] for d in deps(statement)]
    assert len(hexes) == len(set(hexes))
    assert subject_hex(statement) not in hexes
    inputs = {
        value["digest"].removeprefix("sha256:")
        for node in g.nodes.values()
        if node.id != g.root
        for name, value in node.attributes.items()
        if isinstance(value, dict)
        and name in ("content", "code", "envSnapshot", "response", "systemPrompt", "inputMessages")
    }
    assert set(hexes) == inputs - {subject_hex(statement)}  # nothing lost by removing duplicates
    load_in_toto(statement)


def prov_relation_records(g: LineageGraph) -> set[str]:
    """Every PROV relation of the graph's export, without its document-local id."""
    doc = to_prov_json(g)
    sections = set(doc) - {"prefix", "entity", "activity", "agent"}
    return {json.dumps([name, record], sort_keys=True) for name in sections for record in doc[name].values()}


@given(graphs(), graphs())
def test_merging_an_earlier_lineage_keeps_every_relation_and_dependency(g: LineageGraph, earlier: LineageGraph) -> None:
    merged = LineageGraph(root=g.root, nodes=dict(g.nodes), edges=list(g.edges), notes=list(g.notes))
    merge_graph(merged, earlier)
    assert prov_relation_records(g) <= prov_relation_records(merged)
    assert prov_relation_records(earlier) <= prov_relation_records(merged)
    before, after = to_in_toto(g), to_in_toto(merged)
    assert {d["digest"]["sha256"] for d in deps(before)} <= {d["digest"]["sha256"] for d in deps(after)}
    assert merged.nodes[g.root] == g.nodes[g.root]


# -- model turns -----------------------------------------------------------------------


def test_a_model_turn_lists_its_prompt_and_system_message_as_dependencies() -> None:
    statement = to_in_toto(with_turn_inputs(build()))
    by_name = {d["name"]: d for d in deps(statement)}
    assert by_name[f"{PM}/systemPrompt"]["digest"] == {"sha256": hexd("5")}
    assert by_name[f"{PM}/systemPrompt"]["annotations"] == {"node": PM, "pool": "agent-state", "role": "systemPrompt"}
    assert by_name[f"{PM}/inputMessages"]["digest"] == {"sha256": hexd("6")}
    assert by_name[f"{PM}/inputMessages"]["mediaType"] == "application/json"
    definition = statement["predicate"]["buildDefinition"]
    [turn] = definition["internalParameters"]["modelTurns"]
    assert turn["endedAt"] == TURN_END and "systemPrompt" not in turn and "inputMessages" not in turn
    predicate = load_in_toto(statement)
    assert predicate.run_details.metadata.finished_on.ToJsonString() == "2025-01-01T10:40:00Z"
    assert statement["predicate"]["runDetails"]["metadata"]["finishedOn"] == TURN_END


def test_a_model_turn_used_its_prompt_and_system_message_in_prov() -> None:
    doc = load_prov(to_prov_json(with_turn_inputs(build())))
    used = {(local(u.args[0]), local(u.args[1])) for u in doc.get_records(ProvUsage)}
    assert (PM, f"{PM}/systemPrompt") in used
    assert (PM, f"{PM}/inputMessages") in used
    generated = {(local(g.args[0]), local(g.args[1])) for g in doc.get_records(ProvGeneration)}
    assert (f"{PM}/response", PM) in generated and (V2, PM) in generated
    [turn] = [a for a in doc.get_records(ProvActivity) if local(a.identifier) == PM]
    assert turn.get_startTime().isoformat() == "2025-01-01T10:20:00+00:00"
    assert turn.get_endTime().isoformat() == "2025-01-01T10:40:00+00:00"
    entities = {local(e.identifier): e for e in doc.get_records() if e.is_element()}
    system = entities[f"{PM}/systemPrompt"]
    assert [str(t) for t in system.get_asserted_types()] == ["rt:SystemPrompt"]
    assert [str(t) for t in entities[f"{PM}/inputMessages"].get_asserted_types()] == ["rt:InputMessages"]


def test_a_turn_without_a_system_prompt_lists_only_its_messages() -> None:
    g = with_turn_inputs(build())
    g.nodes[PM].attributes["systemPrompt"] = None
    statement = to_in_toto(g)
    names = {d["name"] for d in deps(statement)}
    assert f"{PM}/inputMessages" in names and f"{PM}/systemPrompt" not in names
    doc = to_prov_json(g)
    assert f"rt:{PM}/systemPrompt" not in doc["entity"]


# -- builder and buildType -------------------------------------------------------------


def test_the_builder_names_the_reviewtrail_version() -> None:
    statement = to_in_toto(build())
    assert statement["predicate"]["runDetails"]["builder"]["version"] == {"reviewtrail": package_version("reviewtrail")}
    predicate = load_in_toto(statement)
    assert dict(predicate.run_details.builder.version) == {"reviewtrail": package_version("reviewtrail")}


def test_the_statement_loads_into_the_in_toto_protobufs() -> None:
    statement = to_in_toto(with_turn_inputs(build()))
    predicate = load_in_toto(statement)
    assert predicate.build_definition.build_type == BUILD_TYPE
    assert {d.name for d in predicate.build_definition.resolved_dependencies} >= {f"{PM}/systemPrompt", f"{R1}/code"}
    assert predicate.run_details.metadata.invocation_id == "0002"


def _keys(value: Any) -> set[str]:
    """Every object key in a JSON value, at any depth."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def test_the_build_type_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert BUILD_TYPE in text
    headings = set(re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE))
    for section in ("External parameters", "Internal parameters", "Resolved dependencies", "Byproducts"):
        assert section in headings, section
    g = with_turn_inputs(build())
    predicate = to_in_toto(g)["predicate"]
    definition, details = predicate["buildDefinition"], predicate["runDetails"]
    documented = {word for span in re.findall(r"`([^`]+)`", text) for word in re.findall(r"[A-Za-z]+", span)}
    for params in ("externalParameters", "internalParameters"):
        missing = _keys(definition[params]) - documented
        assert not missing, (params, sorted(missing))
    for descriptor in [*definition["resolvedDependencies"], *details["byproducts"]]:
        assert descriptor["annotations"]["role"] in documented
        assert set(descriptor["annotations"]) <= documented
    assert set(details["metadata"]) <= documented
