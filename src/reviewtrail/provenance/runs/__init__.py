"""Sessions and the runs in them: sessions and their workspaces (creation, resumable deletion),
workspace snapshots, the per-session run lock and pending-run markers, recorded runs of code in
the sandbox, a run as the command line asks for it, and the repair of runs whose recording
process died.
"""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.provenance.runs._pending import PendingRun as PendingRun
    from reviewtrail.provenance.runs._pending import pending_run_problems as pending_run_problems
    from reviewtrail.provenance.runs._pending import pending_runs as pending_runs
    from reviewtrail.provenance.runs._pending_repair import repair_pending_runs as repair_pending_runs
    from reviewtrail.provenance.runs._request import RunRequest as RunRequest
    from reviewtrail.provenance.runs._request import run_request as run_request
    from reviewtrail.provenance.runs._request import start_run as start_run
    from reviewtrail.provenance.runs._runs import RunOutcome as RunOutcome
    from reviewtrail.provenance.runs._runs import run_code as run_code
    from reviewtrail.provenance.runs._sessions import DEFAULT_PROJECT as DEFAULT_PROJECT
    from reviewtrail.provenance.runs._sessions import SessionInfo as SessionInfo
    from reviewtrail.provenance.runs._sessions import SessionRemoval as SessionRemoval
    from reviewtrail.provenance.runs._sessions import create_session as create_session
    from reviewtrail.provenance.runs._sessions import delete_session as delete_session
    from reviewtrail.provenance.runs._sessions import finish_session_removals as finish_session_removals
    from reviewtrail.provenance.runs._sessions import get_session as get_session
    from reviewtrail.provenance.runs._sessions import list_sessions as list_sessions
    from reviewtrail.provenance.runs._sessions import orphan_workspaces as orphan_workspaces
    from reviewtrail.provenance.runs._sessions import remove_orphan_workspaces as remove_orphan_workspaces
    from reviewtrail.provenance.runs._sessions import unfinished_session_removals as unfinished_session_removals
    from reviewtrail.provenance.runs._sessions import workspace_problems as workspace_problems
else:
    __getattr__, __dir__ = _face.lazy(__name__)
