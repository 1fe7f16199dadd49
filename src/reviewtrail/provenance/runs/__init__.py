"""Sessions and the runs in them: sessions and their workspaces (creation, resumable deletion),
workspace snapshots, the per-session run lock and pending-run markers, recorded runs of code in
the sandbox, a run as the command line asks for it, and the repair of runs whose recording
process died.
"""
