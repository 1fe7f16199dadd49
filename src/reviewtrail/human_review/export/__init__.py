"""The training export: a campaign version's training examples written with their preference adapters
and dataset manifest into an export folder, the proof of a folder against its manifest and the
store, and the receipts of checkpoints trained from one (docs/human-review.md, "Export" and
"Training receipts")."""
