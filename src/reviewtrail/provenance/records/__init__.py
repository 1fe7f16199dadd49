"""What provenance records: its record types and projections, what a run's records say (decided
without I/O from the sandbox's result and the workspace's changes), and the store's disk
failures as documented errors. Above the sandbox, whose results it reads; below every part
that writes records.
"""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.provenance.records._records import ORIGINS as ORIGINS
    from reviewtrail.provenance.records._records import ArtifactDerivation as ArtifactDerivation
    from reviewtrail.provenance.records._records import ArtifactVersion as ArtifactVersion
    from reviewtrail.provenance.records._records import ExecutionRun as ExecutionRun
    from reviewtrail.provenance.records._records import SessionCreated as SessionCreated
    from reviewtrail.provenance.records._records import SessionDeleted as SessionDeleted
    from reviewtrail.provenance.records._records import artifact_id_for as artifact_id_for
else:
    __getattr__, __dir__ = _face.lazy(__name__)
