"""Campaign quality, for the campaign's owner: coverage per scenario family, agreement between
reviewers, position bias and Bradley–Terry standings, counted by pure functions over facts read
from one consistent state of a store (docs/human-review.md, "Coverage" and "Campaign quality")."""
