"""The records: the fields a new record and a sealed envelope share, the record to append (a
msgspec model), the envelope and its hash chain (pure,
no I/O), typed payloads, a payload recorded with its envelope, and the record types reserved for
reviewtrail's own packages. Nothing here knows a ledger or a key."""
