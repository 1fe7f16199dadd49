"""What provenance shows and exports: the graph an export is made from, W3C PROV-JSON, in-toto
Statements (SLSA Provenance), DSSE-signed envelopes and their check, and the views of
``reviewtrail provenance`` and ``reviewtrail artifact diff``. Both exporters (``_prov``, ``_intoto``)
are pure and deterministic: the same graph gives the same output whatever order its nodes and edges
were added in, so an export can be hashed, signed or compared.
"""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.provenance.export._signed import VerifiedStatement as VerifiedStatement
    from reviewtrail.provenance.export._signed import verify_envelope as verify_envelope
    from reviewtrail.provenance.export._views import PROVENANCE_FORMATS as PROVENANCE_FORMATS
    from reviewtrail.provenance.export._views import ProvenanceFormat as ProvenanceFormat
    from reviewtrail.provenance.export._views import ProvenanceQuery as ProvenanceQuery
    from reviewtrail.provenance.export._views import ProvenanceView as ProvenanceView
    from reviewtrail.provenance.export._views import diff_versions as diff_versions
    from reviewtrail.provenance.export._views import provenance_query as provenance_query
    from reviewtrail.provenance.export._views import provenance_view as provenance_view
else:
    __getattr__, __dir__ = _face.lazy(__name__)
