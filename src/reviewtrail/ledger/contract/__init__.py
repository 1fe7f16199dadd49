"""The ledger contract: the ``Recorder`` a backend implements (the storage primitives) and the logic
the backends share, the one ``Ledger`` composed above a recorder (validation, signing at append, the
checked reads and the signature gate they consult), the catalog a ledger is opened with, the query
tables (projections) it keeps and their paged reads, the signed-reads scope, the reads ``verify``
streams, and the head an export names. Built on the records and the keys; the backends implement
the recorder, the signing reads through the ledger."""
