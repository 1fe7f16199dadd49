"""Self-identifying candidates: a candidate text that names its own or the other candidate's agent,
model, provider or adapter is flagged, in any case and spacing; text with no such name, or with a
name only inside a longer word, never is (docs/human-review.md, "Self-identifying candidates")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewtrail.human_review.records._self_identification import (
    KINDS,
    NAMED,
    CandidateIdentity,
    NameKind,
    name_forms,
    names,
    self_identification,
)

# Names are made of consonants and digits, the text around them of vowels, digits and punctuation:
# text around a name can never spell a name by chance.
CONSONANTS = "bcdfghjklmnpqrstvwxz"
VOWELS = "aeiouy"
GAPS = " -_./:@"

letters = st.text(alphabet=CONSONANTS, min_size=3, max_size=8)
digits = st.text(alphabet="0123456789", min_size=1, max_size=3)
word_lists = st.lists(st.one_of(letters, letters, digits), min_size=1, max_size=4).filter(
    lambda ws: any(w.isalpha() for w in ws)
)


@st.composite
def a_name(draw: st.DrawFn) -> str:
    """A name as identities are written: words joined by '-', '_', '.' or ' ', maybe a version."""
    words = draw(word_lists)
    joins = draw(st.lists(st.sampled_from(["-", "_", ".", " ", ""]), min_size=len(words), max_size=len(words)))
    name = words[0] + "".join(j + w for j, w in zip(joins[1:], words[1:], strict=True))
    if draw(st.booleans()):
        name += "@" + draw(digits)
    return name


@st.composite
def identities(draw: st.DrawFn) -> CandidateIdentity:
    learned = draw(st.one_of(st.none(), a_name()))
    adapters = (draw(a_name()), *(() if learned is None else (learned,)))
    return CandidateIdentity(agent=draw(a_name()), model=draw(a_name()), provider=draw(a_name()), adapters=adapters)


def _words(name: str) -> list[str]:
    """The words of a generated name: its runs of consonants and of digits."""
    out, current = [], ""
    for char in name.split("@", maxsplit=1)[0]:
        if current and (char.isdigit() != current[-1].isdigit() or char not in CONSONANTS + "0123456789"):
            out.append(current)
            current = ""
        if char in CONSONANTS + "0123456789":
            current += char
    return [*out, current] if current else out


@st.composite
def written(draw: st.DrawFn, name: str) -> str:
    """``name`` as a text may write it: each character in either case, each pair of words joined
    by 0-3 spaces or punctuation characters."""
    words = _words(name)
    out = ""
    for number, word in enumerate(words):
        if number:
            out += draw(st.text(alphabet=GAPS, max_size=3))
        out += "".join(c.upper() if draw(st.booleans()) else c for c in word)
    return out


filler = st.text(alphabet=VOWELS + VOWELS.upper() + "0123456789 ,;!?()\n", max_size=40)


def _kind_names(identity: CandidateIdentity, kind: NameKind) -> tuple[str, ...]:
    return identity.named(kind)


@given(
    pair=st.tuples(identities(), identities()),
    whose=st.sampled_from(["own", "other"]),
    kind=st.sampled_from(KINDS),
    data=st.data(),
)
def test_a_planted_name_is_flagged_in_any_case_and_spacing(
    pair: tuple[CandidateIdentity, CandidateIdentity], whose: str, kind: NameKind, data: st.DataObject
) -> None:
    speaker = data.draw(st.sampled_from([0, 1]))
    owner = pair[speaker] if whose == "own" else pair[1 - speaker]
    name = data.draw(st.sampled_from(_kind_names(owner, kind)))
    planted = data.draw(filler) + data.draw(st.sampled_from(" \n(\"'")) + data.draw(written(name))
    planted += data.draw(st.sampled_from(" .,!?)\n\"'")) + data.draw(filler)
    quiet = data.draw(filler)
    texts = (planted, quiet) if speaker == 0 else (quiet, planted)
    flags = self_identification(texts, pair, context=[data.draw(filler)])
    assert f"{whose}-{kind}" in flags[speaker], (planted, name)
    assert flags[1 - speaker] == ()
    assert list(flags[speaker]) == [n for n in NAMED if n in flags[speaker]]


@given(pair=st.tuples(identities(), identities()), data=st.data())
def test_text_with_no_name_or_a_name_only_inside_a_longer_word_is_never_flagged(
    pair: tuple[CandidateIdentity, CandidateIdentity], data: st.DataObject
) -> None:
    every = [n for identity in pair for kind in KINDS for n in identity.named(kind)]
    texts = []
    for _ in range(2):
        text = data.draw(filler)
        for name in data.draw(st.lists(st.sampled_from(every), max_size=3)):
            # the name's words run together, inside a longer word: a vowel or digit on each side
            inside = "".join(_words(name))
            text += " " + data.draw(st.sampled_from(VOWELS + "7")) + inside + data.draw(st.sampled_from(VOWELS + "7"))
            text += data.draw(filler)
        texts.append(text)
    assert self_identification((texts[0], texts[1]), pair, context=[data.draw(filler)]) == ((), ())


# --- the rule on real names -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("As GPT-4o, I think so.", "gpt-4o"),
        ("I am gpt4o.", "gpt-4o"),
        ("I am GPT 4o.", "gpt-4o"),
        ("GPT-4o-mini here.", "gpt-4o"),
        ("ＧＰＴ－４ｏ", "gpt-4o"),
        ("I am Claude 3.5 Sonnet.", "claude-3-5-sonnet-20241022"),
        ("I am claude-3.5-sonnet", "claude-3-5-sonnet"),
        ("Made by OpenAI.", "openai"),
        ("Answered via chat-completions.", "chat-completions@1"),
        ("I run gpt-4o", "openai/gpt-4o"),
        ("I run gpt-4o", "models/openai/gpt-4o"),
        ("I am GPT 4o (2024 08 06)", "gpt-4o-2024-08-06"),
        ("I am o1.", "o1"),
        ("I am agent_a.", "agent-a"),
        ("I am Agent A.", "agent-a"),
    ],
)
def test_names_in_varied_case_and_spacing(text: str, name: str) -> None:
    assert names(text, name)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("I am chatgpt4o.", "gpt-4o"),
        ("gpt-40 is another model.", "gpt-4o"),
        ("gpt-4 is an older model.", "gpt-4o"),
        ("gpt, 4o", "gpt-4o"),
        ("We reopenaiing nothing.", "openai"),
        ("A local shop.", "local"),
        ("Chat with us.", "chat@1"),
        ("The answer is 4.", "4"),
        ("Item a.", "a"),
        ("Contact an agent, a person.", "agent-a"),
    ],
)
def test_what_is_not_a_name(text: str, name: str) -> None:
    assert not names(text, name)


def test_a_name_the_prompt_holds_is_not_held_against_a_candidate() -> None:
    assert not names("GPT-4o would say the same.", "gpt-4o", context=["Compare your answer with GPT 4o's."])
    assert names("GPT-4o would say the same.", "gpt-4o", context=["Compare your answer with Claude's."])


def test_each_text_of_the_context_is_looked_in_on_its_own() -> None:
    a = CandidateIdentity(agent="agent-a", model="gpt-4o", provider="openai", adapters=("chat@1",))
    b = CandidateIdentity(agent="agent-b", model="o1", provider="openai", adapters=("chat@1",))
    texts = ("I am GPT 4o.", "Hello.")
    # a name split between the prompt and its evidence is in neither
    assert self_identification(texts, (a, b), context=["Ask gpt", "4o, or not"]) == (("own-model",), ())
    assert self_identification(texts, (a, b), context=["Ask", "gpt 4o or not"]) == ((), ())
    assert self_identification(texts, (a, b), context=[]) == (("own-model",), ())


def test_the_forms_looked_for() -> None:
    assert name_forms("openai/gpt-4o-2024-08-06@2") == {
        ("openai", "gpt", "4", "o", "2024", "08", "06", "2"),
        ("openai", "gpt", "4", "o", "2024", "08", "06"),
        ("openai", "gpt", "4", "o"),
        ("gpt", "4", "o", "2024", "08", "06", "2"),
        ("gpt", "4", "o", "2024", "08", "06"),
        ("gpt", "4", "o"),
    }
    assert name_forms("local") == frozenset()
    assert name_forms("x") == frozenset()
    assert name_forms("2024") == frozenset()
    assert name_forms("local-llm") == {("local", "llm")}


def test_each_candidate_is_flagged_for_what_its_own_text_names() -> None:
    a = CandidateIdentity(agent="agent-a", model="gpt-4o", provider="openai", adapters=("chat-completions@1",))
    b = CandidateIdentity(
        agent="agent-b", model="claude-sonnet-4-5", provider="anthropic", adapters=("messages@1", "lora-7")
    )
    texts = ("As an OpenAI model, unlike Claude Sonnet 4.5, I say yes.", "Yes. (lora 7)")
    assert self_identification(texts, (a, b)) == (("own-provider", "other-model"), ("own-adapter",))
    assert self_identification(("Yes.", "No."), (a, b)) == ((), ())
    assert self_identification(("I am agent-b", "I am AGENT B"), (a, b)) == (("other-agent",), ("own-agent",))
