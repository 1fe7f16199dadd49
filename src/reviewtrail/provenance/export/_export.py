"""Export a :class:`LineageGraph` as W3C PROV-JSON or as an in-toto Statement (SLSA v1).

Both exporters are pure functions of the graph and deterministic: the same graph gives
the same output whatever order its nodes and edges were added in, so an export can be
hashed, signed or compared. The mappings are described in
:mod:`reviewtrail.provenance.export._prov` (PROV-JSON) and
:mod:`reviewtrail.provenance.export._intoto` (in-toto Statement v1 + SLSA Provenance v1,
``buildType`` specified in ``docs/slsa-build-type.md``).

:func:`export_graph` builds the graph an export is made from: the version's lineage
together with its earlier versions' lineages, with each model turn's prompt, system
message and end time read from its manifest.
"""

from __future__ import annotations

from reviewtrail.provenance.export._common import (
    BUILD_TYPE,
    CONTROL_PLANE_BUILDER,
    PREFIXES,
    PROVENANCE_PREDICATE_TYPE,
    RT_NAMESPACE,
    STATEMENT_TYPE,
)
from reviewtrail.provenance.export._graph import export_graph
from reviewtrail.provenance.export._intoto import to_in_toto
from reviewtrail.provenance.export._prov import to_prov_json

__all__ = [
    "BUILD_TYPE",
    "CONTROL_PLANE_BUILDER",
    "PREFIXES",
    "PROVENANCE_PREDICATE_TYPE",
    "RT_NAMESPACE",
    "STATEMENT_TYPE",
    "export_graph",
    "to_in_toto",
    "to_prov_json",
]
