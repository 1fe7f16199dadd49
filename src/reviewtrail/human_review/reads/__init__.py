"""Reading human review's records as they stand now: its query tables held against their records,
payloads read through their models, amendments followed, candidates recomputed, items resolved one at a
time or a page in bulk, and a campaign version's items with their active decisions
(docs/human-review.md, "Reads that gate")."""
