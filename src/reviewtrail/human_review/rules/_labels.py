"""A prompt's short label: how every report and command names a prompt to a person, beside its id
(docs/human-review.md, "Prompt labels"). Pure.

The label is the prompt's first words: its whitespace collapsed to single spaces, its control and
format characters removed (so a label never moves the cursor, clears a screen or reorders text on
a terminal), and, when longer than the limit, cut at the last word boundary that fits and ended
with ``…``. A first word longer than the limit is cut inside the word. A prompt with no visible
character is labelled :data:`BLANK_LABEL`, so a label is never empty. The limit counts
characters (code points), not terminal columns.
"""

from __future__ import annotations

import re
import unicodedata
from itertools import islice

__all__ = ["BLANK_LABEL", "ELLIPSIS", "LABEL_LIMIT", "prompt_label"]

#: The default length of a label, in characters, its ``…`` included.
LABEL_LIMIT = 40
#: What ends a label that was cut.
ELLIPSIS = "…"
#: The label of a prompt with no visible character.
BLANK_LABEL = "(blank)"

# Unicode categories removed: control (Cc), format (Cf: zero-width and bidirectional marks),
# surrogate (Cs), private use (Co) and unassigned (Cn).
_REMOVED = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})
# A word: a run of characters that are not whitespace (as str.split() reads whitespace).
_WORD = re.compile(r"\S+")


def _visible(word: str, most: int | None = None) -> str:
    """``word`` without its removed characters; only its first ``most`` kept ones when given."""
    if word.isprintable():  # no character of a removed category (the common case, quickly)
        return word if most is None else word[:most]
    kept = (ch for ch in word if unicodedata.category(ch) not in _REMOVED)
    return "".join(kept if most is None else islice(kept, most))


def _first_words(text: str, limit: int) -> str:
    """The start of ``text`` with its removed characters dropped and each run of whitespace made
    one space (what a label is a prefix of): all of it, or at least its first ``limit + 1``
    characters; reads no more of ``text`` than that needs."""
    words: list[str] = []
    size = -1  # the joined length so far
    for match in _WORD.finditer(text):
        word = _visible(match.group(), limit + 1)
        if word:
            words.append(word)
            size += len(word) + 1
            if size > limit:
                break
    return " ".join(words)


def prompt_label(text: str, limit: int = LABEL_LIMIT) -> str:
    """The short label of a prompt's text: at most ``limit`` characters (see the module
    docstring). ``limit`` must be at least 2 (one character and the ``…``)."""
    if limit < 2:
        raise ValueError(f"a label limit is at least 2 characters, not {limit}")
    flat = _first_words(text, limit)
    if not flat:
        return BLANK_LABEL if len(BLANK_LABEL) <= limit else BLANK_LABEL[: limit - 1] + ELLIPSIS
    if len(flat) <= limit:
        return flat
    head = flat[: limit - 1]
    if flat[limit - 1] != " ":  # the cut falls inside a word: back to the space before it, if any
        space = head.rfind(" ")
        if space > 0:
            head = head[:space]
    return head.rstrip(" ") + ELLIPSIS
