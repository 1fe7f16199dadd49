"""What provenance shows and exports: the graph an export is made from, W3C PROV-JSON, in-toto
Statements (SLSA Provenance), DSSE-signed envelopes and their check, and the views of
``reviewtrail provenance`` and ``reviewtrail artifact diff``.
"""
