"""The sandbox: code run under bubblewrap, and what holds it there: the inputs a sandbox accepts,
the plan it runs, the supervisor and launchers inside it, its resource limits and control groups,
and the filtering proxy that is its only way out. Persistent kernels build their sandbox from the
same pieces. It knows nothing of sessions, records or the store: the parts above record what it
reports.
"""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.provenance.sandbox._bwrap import require_bwrap as require_bwrap
    from reviewtrail.provenance.sandbox._limits import DEFAULT_LIMITS as DEFAULT_LIMITS
    from reviewtrail.provenance.sandbox._limits import ResourceLimits as ResourceLimits
    from reviewtrail.provenance.sandbox._limits import parse_size as parse_size
else:
    __getattr__, __dir__ = _face.lazy(__name__)
