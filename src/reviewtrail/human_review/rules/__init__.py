"""The pure rules of human review over its records: which decision of an item is active, what a
frozen item binds, which runs may be paired, privacy and training eligibility, reviewer ids, prompt
labels and the training-example row of one decision (docs/human-review.md, "Rules"). Nothing here
reads a store."""
