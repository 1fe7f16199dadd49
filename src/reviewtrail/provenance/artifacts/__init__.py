"""Artifacts and their lineage: the catalog of versions (declared, uploaded, downloaded), the
line diff of two versions, and the lineage graph from a version back to the runs, sessions and
model turns behind it. Reads the records that runs and sessions write.
"""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.provenance.artifacts._catalog import VersionInfo as VersionInfo
    from reviewtrail.provenance.artifacts._catalog import declare_artifact as declare_artifact
    from reviewtrail.provenance.artifacts._catalog import get_version as get_version
    from reviewtrail.provenance.artifacts._catalog import list_artifacts as list_artifacts
    from reviewtrail.provenance.artifacts._catalog import parse_spec as parse_spec
    from reviewtrail.provenance.artifacts._catalog import record_version as record_version
    from reviewtrail.provenance.artifacts._catalog import upload_artifact as upload_artifact
    from reviewtrail.provenance.artifacts._catalog import versions_of as versions_of
    from reviewtrail.provenance.artifacts._diff import VersionDiff as VersionDiff
    from reviewtrail.provenance.artifacts._graph import Edge as Edge
    from reviewtrail.provenance.artifacts._graph import LineageGraph as LineageGraph
    from reviewtrail.provenance.artifacts._graph import Node as Node
    from reviewtrail.provenance.artifacts._lineage import lineage as lineage
    from reviewtrail.provenance.artifacts._lineage import render_tree as render_tree
else:
    __getattr__, __dir__ = _face.lazy(__name__)
