"""The pure rules of reviewer calls, no I/O: model families, reviewer identity and assurance,
the skill's positive gate, and which run a call joins.
"""
