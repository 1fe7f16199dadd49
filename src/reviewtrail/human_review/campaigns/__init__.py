"""Campaigns on a store: campaign and agents files, the candidate runs of each declared agent (run
here or imported), review items materialized from pairable runs, and amendments of the records under
them, each appended to the ledger (docs/human-review.md, "Campaign files", "Candidate runs" and
"Materialize")."""
