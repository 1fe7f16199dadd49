"""Native host reviewers (``--backend copilot-native``): host-session evidence, the session
event log it is checked against, and the identities a call takes from validated evidence.
"""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.tracing.native._native_evidence import NativeEvidence as NativeEvidence
    from reviewtrail.tracing.native._native_evidence import validate_native_evidence as validate_native_evidence
else:
    __getattr__, __dir__ = _face.lazy(__name__)
