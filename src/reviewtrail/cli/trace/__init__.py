"""Reviewer-call trace commands: ``reviewtrail trace`` (save and its options, reading traces when
a verdict is surprising, export as OpenTelemetry spans)."""
