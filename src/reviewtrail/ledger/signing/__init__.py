"""Signatures held over a ledger, through its contract: ``verify``'s check of record signatures,
the signed-reads gate, appending the key records (declare, revoke, rotate, require) and their payload
models, and checkpoints (signed statements of a ledger's head kept outside the store)."""
