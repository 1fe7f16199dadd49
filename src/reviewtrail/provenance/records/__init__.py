"""What provenance records: its record types and projections, what a run's records say (decided
without I/O from the sandbox's result and the workspace's changes), and the store's disk
failures as documented errors. Above the sandbox, whose results it reads; below every part
that writes records.
"""
