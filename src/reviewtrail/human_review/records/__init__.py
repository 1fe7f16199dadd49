"""Human review's records: the payload models of its record types, their names and bounds, the
query tables a record's rows make, and the self-identification rule whose findings an item records
(docs/human-review.md, "Records"). Pure: nothing here reads a store; every other part of the package
stands on these."""
