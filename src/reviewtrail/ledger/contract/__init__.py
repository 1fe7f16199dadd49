"""The ledger contract: the ``Ledger`` protocol and the logic every backend shares, the catalog a
ledger is opened with, the query tables (projections) it keeps and their paged reads, the
signed-reads scope its checked reads consult, the reads ``verify`` streams, and the head an export
names. Built on the records and the keys; the backends implement it, the signing reads through it."""
