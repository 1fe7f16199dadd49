"""The sandbox: code run under bubblewrap, and what holds it there: the inputs a sandbox accepts,
the plan it runs, the supervisor and launchers inside it, its resource limits and control groups,
and the filtering proxy that is its only way out. Persistent kernels build their sandbox from the
same pieces. It knows nothing of sessions, records or the store: the parts above record what it
reports.
"""
