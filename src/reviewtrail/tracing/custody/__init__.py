"""Traces in the store's custody: recording a call's trace files as a ``trace.review-call@1``
ledger record (and its save as ``trace.save-begun@1``), the payload models and their plain
checks, and comparing the trace files with their records and completing interrupted saves.
"""
