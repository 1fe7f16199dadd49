"""Native host reviewers (``--backend copilot-native``): host-session evidence, the session
event log it is checked against, and the identities a call takes from validated evidence.
"""
