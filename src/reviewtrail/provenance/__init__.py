"""Provenance: sandboxed execution runs, sessions, artifacts and versions, lineage.

Each part is a package with its own public API; import the one you use::

    from reviewtrail.provenance.runs import create_session, run_code, run_request, start_run  # sessions and runs
    from reviewtrail.provenance.artifacts import declare_artifact, upload_artifact, versions_of, lineage
    from reviewtrail.provenance.export import provenance_view, verify_envelope  # PROV, in-toto, DSSE
    from reviewtrail.provenance.kernels import run_in_kernel, list_kernels, stop_kernels  # persistent kernels
    from reviewtrail.provenance.records import ExecutionRun, artifact_id_for  # the record types
    from reviewtrail.provenance.sandbox import ResourceLimits, require_bwrap  # the sandbox

Here stand only the record types (and their names) and query tables, which the composition root takes
from every package; each loads on first use.
"""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.provenance.catalog import PROJECTIONS as PROJECTIONS
    from reviewtrail.provenance.catalog import RECORD_TYPE_NAMES as RECORD_TYPE_NAMES
    from reviewtrail.provenance.records._records import RECORD_TYPES as RECORD_TYPES
else:
    __getattr__, __dir__ = _face.lazy(__name__)
