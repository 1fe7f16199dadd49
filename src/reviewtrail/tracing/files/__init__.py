"""The ``.aris`` trace layout and its files: names, paths and the project root, the trace
documents and the mode that decides what they hold, writing a call, reading runs back, the
event log, pending markers, the project folder's id, the ``.gitignore`` line, the installed
helper, and every file checked against the shipped schemas.
"""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.tracing.files._documents import ReviewCall as ReviewCall
    from reviewtrail.tracing.files._documents import TraceMode as TraceMode
    from reviewtrail.tracing.files._gitignore import with_traces_ignored as with_traces_ignored
    from reviewtrail.tracing.files._helper import InstalledHelper as InstalledHelper
    from reviewtrail.tracing.files._helper import install_helper as install_helper
    from reviewtrail.tracing.files._helper import resolve_helper as resolve_helper
    from reviewtrail.tracing.files._layout import check_name as check_name
    from reviewtrail.tracing.files._layout import existing_project_root as existing_project_root
    from reviewtrail.tracing.files._layout import project_root as project_root
    from reviewtrail.tracing.files._modes import inline_mode as inline_mode
    from reviewtrail.tracing.files._modes import resolve_mode as resolve_mode
    from reviewtrail.tracing.files._reader import TraceCall as TraceCall
    from reviewtrail.tracing.files._reader import TraceRun as TraceRun
    from reviewtrail.tracing.files._reader import find_run as find_run
    from reviewtrail.tracing.files._reader import iter_runs as iter_runs
    from reviewtrail.tracing.files._reader import load_run as load_run
    from reviewtrail.tracing.files._verify import load_schema as load_schema
    from reviewtrail.tracing.files._verify import verify_traces as verify_traces
else:
    __getattr__, __dir__ = _face.lazy(__name__)
