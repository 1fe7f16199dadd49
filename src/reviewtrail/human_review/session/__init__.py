"""Reviewing: the review queue's blinded cards, what a reviewer may see of the candidates, recording a
decision, an item's history, and the interactive review session with its order of cards and its
leases (docs/human-review.md, "The queue and history", "Deciding" and "Review session")."""
