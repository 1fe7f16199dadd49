"""Self-identifying candidates: a candidate whose text names its own agent, model, provider or
adapter, or the other candidate's (docs/human-review.md, "Self-identifying candidates"). As
Chatbot Arena drops votes that leak a model's identity, such an item is flagged when it is
materialized, and standings and position bias leave it out.

The rule, a pure function of the two texts and the two candidates' identities:

- A name is split into words: runs of letters and runs of digits, after NFKC normalization and
  case folding (``gpt-4o`` is ``gpt 4 o``, ``Claude 3.5 Sonnet`` is ``claude 3 5 sonnet``).
- A text names it when those words appear in order, each joined to the next by nothing or by
  at most :data:`MAX_GAP` spaces, hyphens, underscores, dots, slashes, colons or ``@`` (not a
  comma or a bracket, which part phrases), and neither the first word starts nor the last ends
  inside a longer run of letters or digits: ``GPT 4o``, ``gpt4o`` and ``GPT-4o-mini`` name
  ``gpt-4o``; ``gpt-40``, ``chatgpt4o`` and ``gpt, 4o`` do not.
- Each name is also looked for as its last ``/`` segment (``openai/gpt-4o``), without an
  ``@version`` suffix (``chat-completions@1``) and without a date suffix
  (``claude-3-5-sonnet-20241022``).
- A form is not looked for when it has fewer than :data:`MIN_CHARACTERS` letters and digits or
  no letter, or when it is a single common word (:data:`COMMON_WORDS`, such as ``local`` or
  ``chat``): those would flag ordinary text.
- A form the prompt or its evidence already holds is not looked for: a candidate repeating the
  prompt reveals nothing the prompt did not.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from typing import Literal, get_args

import msgspec

__all__ = [
    "COMMON_WORDS",
    "GAP_CHARACTERS",
    "KINDS",
    "MAX_GAP",
    "MIN_CHARACTERS",
    "NAMED",
    "CandidateIdentity",
    "NameKind",
    "Named",
    "name_forms",
    "names",
    "self_identification",
]

NameKind = Literal["agent", "model", "provider", "adapter"]
#: What a candidate's identity holds, in the order a flag lists them.
KINDS: tuple[NameKind, ...] = ("agent", "model", "provider", "adapter")
Named = Literal[
    "own-agent",
    "own-model",
    "own-provider",
    "own-adapter",
    "other-agent",
    "other-model",
    "other-provider",
    "other-adapter",
]
#: Every flag a candidate can carry, in the order listed: its own names, then the other's.
NAMED: tuple[Named, ...] = get_args(Named)
#: The most joining characters (:data:`GAP_CHARACTERS`) between two words of a name.
MAX_GAP = 3
#: What may join two words of a name in a text: white space and the punctuation names are
#: written with.
GAP_CHARACTERS = r"\s\-_./:@"
#: The fewest letters and digits a form of a name needs to be looked for.
MIN_CHARACTERS = 2
#: Single words never looked for alone: they are ordinary words, not names.
COMMON_WORDS = frozenset(
    {
        "agent",
        "api",
        "assistant",
        "chat",
        "completions",
        "custom",
        "default",
        "echo",
        "human",
        "local",
        "messages",
        "mock",
        "model",
        "none",
        "other",
        "remote",
        "scripted",
        "test",
        "unknown",
    }
)

_WORD = re.compile(r"[^\W\d_]+|\d+")
_VERSION = re.compile(r"@[^@]*$")
_DATE = re.compile(r"[\W_]+(?:\d{8}|\d{4}[\W_]\d{2}[\W_]\d{2})$")


class CandidateIdentity(msgspec.Struct, frozen=True):
    """The names of one candidate: its agent id, model, provider and adapters (execution adapter,
    and the learned adapter when there is one)."""

    agent: str
    model: str
    provider: str
    adapters: tuple[str, ...]

    def named(self, kind: NameKind) -> tuple[str, ...]:
        if kind == "adapter":
            return self.adapters
        return ({"agent": self.agent, "model": self.model, "provider": self.provider}[kind],)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _words(name: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(_fold(name)))


def name_forms(name: str) -> frozenset[tuple[str, ...]]:
    """The forms of ``name`` that are looked for, each as its words: the name, its last ``/``
    segment, each without an ``@version`` and a date suffix; forms too short, with no letter, or
    a single common word are left out."""
    forms = set()
    for whole in {name, name.rsplit("/", 1)[-1]}:
        for form in {whole, _VERSION.sub("", whole)}:
            forms.update({form, _DATE.sub("", form)})
    return frozenset(words for words in map(_words, forms) if _looked_for(words))


def _looked_for(words: tuple[str, ...]) -> bool:
    """A form long enough, with a letter, and not a single common word."""
    enough = sum(len(w) for w in words) >= MIN_CHARACTERS and any(w.isalpha() for w in words)
    return enough and not (len(words) == 1 and words[0] in COMMON_WORDS)


@lru_cache(maxsize=4096)
def _pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    gap = rf"[{GAP_CHARACTERS}]{{0,{MAX_GAP}}}"
    return re.compile(r"(?<![^\W_])" + gap.join(re.escape(w) for w in words) + r"(?![^\W_])")


def names(text: str, name: str, *, context: Iterable[str] = ()) -> bool:
    """Whether ``text`` names ``name`` (see the module's rule), leaving out the forms that a text
    of ``context`` (the prompt, its evidence) already names."""
    return _names(_fold(text), name, [_fold(c) for c in context])


def _names(folded: str, name: str, known: list[str]) -> bool:
    return any(
        _pattern(form).search(folded) is not None and not any(_pattern(form).search(k) for k in known)
        for form in name_forms(name)
    )


def _kinds(folded: str, identity: CandidateIdentity, known: list[str]) -> list[NameKind]:
    return [kind for kind in KINDS if any(_names(folded, n, known) for n in identity.named(kind))]


def self_identification(
    texts: tuple[str, str], identities: tuple[CandidateIdentity, CandidateIdentity], *, context: Iterable[str] = ()
) -> tuple[tuple[Named, ...], tuple[Named, ...]]:
    """For each of two candidates (their texts and identities, in the same order), what its text
    names: ``own-<kind>`` for its own names, ``other-<kind>`` for the other candidate's, in the
    order of :data:`NAMED`; empty when it names neither. ``context``: the prompt and its
    evidence, whose names are not held against a candidate."""
    known = [_fold(c) for c in context]
    out: list[tuple[Named, ...]] = []
    for index, text in enumerate(texts):
        folded = _fold(text)
        own = _kinds(folded, identities[index], known)
        other = _kinds(folded, identities[1 - index], known)
        found = {f"own-{k}" for k in own} | {f"other-{k}" for k in other}
        out.append(tuple(n for n in NAMED if n in found))
    return out[0], out[1]
