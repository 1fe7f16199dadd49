"""The ``.aris`` trace layout and its files: names, paths and the project root, the trace
documents and the mode that decides what they hold, writing a call, reading runs back, the
event log, pending markers, the project folder's id, the ``.gitignore`` line, the installed
helper, and every file checked against the shipped schemas.
"""
