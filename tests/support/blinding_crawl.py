"""A crawler of the blinding: random campaigns (2 to 5 candidate agents, several prompts, some
runs giving the same exact text, on one prompt and across prompts), decisions recorded in a random
order by several reviewers through the library, ``review decide`` (text and JSON), the MCP tool
``review_decide`` and ``review session`` (skips and changes of decision included), then every
answer, page and JSON twin read and searched for who produced a response.

What it counts: a card is *unblindable* when it is open (no active decision, or an active skip)
and a response it shows can be attributed to its producer from what a reviewer could read: a
response whose item's output names its run id, agent id or model, and the same exact text on the
open card. Each decision's answer is judged against the items open when it was given; the final
crawl against the items open at its end."""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from reviewtrail.human_review.campaigns import campaign_settings
from reviewtrail.human_review.rules import DecisionInput
from reviewtrail.human_review.session import decide, history, pending_second_judgment
from reviewtrail.store import Store
from support.human_review import add_item, add_prompt, add_run

__all__ = ["Candidate", "Crawl", "Truth", "build_campaign", "decision_script", "is_open", "open_items"]

#: Texts several agents give, on one prompt and across prompts (exact-text matches).
SHARED_TEXTS = ("I cannot help with that request.", "Please contact support for this.", "Refunds take 30 days.")
DISPOSITIONS = ("prefer", "prefer", "tie", "skip", "skip", "underdetermined", "malformed")


@dataclass(frozen=True)
class Candidate:
    """What a card shows at a position, and who produced it (the truth the crawl checks against)."""

    position: str
    run_id: str
    agent_id: str
    text: str


@dataclass
class Truth:
    """Every item built, by id, with its candidates in display order; campaigns built."""

    items: dict[str, tuple[Candidate, Candidate]] = field(default_factory=dict)
    campaigns: list[str] = field(default_factory=list)

    def secrets(self) -> set[str]:
        """Every run id and agent id (a model names its agent id)."""
        return {value for pair in self.items.values() for c in pair for value in (c.run_id, c.agent_id)}


def build_campaign(store: Store, rng: random.Random, campaign: str, truth: Truth) -> None:
    """A campaign of 2 to 5 candidate agents over 2 or 3 prompts, every pair of agents an item."""
    tag = f"{rng.getrandbits(24):06x}"
    agents = [f"producer-{tag}-{i}" for i in range(rng.randint(2, 5))]
    truth.campaigns.append(campaign)
    # Some campaigns ask a second judgment of a share of their items: such an item stays open
    # until it has one.
    campaign_settings(store, campaign, 1, second_judgment_share=rng.choice((0.0, 0.5, 1.0)))
    for p in range(rng.randint(2, 3)):
        prompt = add_prompt(store, campaign=campaign, agents=agents, family=rng.choice(("refunds", "billing")))
        runs: dict[str, tuple[str, str]] = {}
        for agent in agents:
            text = rng.choice(SHARED_TEXTS) if rng.random() < 0.35 else f"Reply {rng.getrandbits(40):x} to {p}."
            runs[agent] = (add_run(store, prompt, agent, response=text), text)
        for a, b in itertools.combinations(agents, 2):
            item = add_item(store, prompt, runs[a][0], runs[b][0])
            agent_of = {runs[a][0]: a, runs[b][0]: b}
            text_of = {runs[a][0]: runs[a][1], runs[b][0]: runs[b][1]}
            pair = [
                Candidate(pos, run, agent_of[run], text_of[run])
                for pos, run in zip("AB", item.display_order, strict=True)
            ]
            truth.items[item.item_id] = (pair[0], pair[1])


def is_open(store: Store, item_id: str) -> bool:
    """Whether the item is open now, by the library's history: no active decision, or an active
    skip, or an active judgment that waits for its second judgment."""
    active = history(store, item_id).active
    return active is None or active.disposition == "skip" or pending_second_judgment(store.ledger, item_id)


def open_items(store: Store, truth: Truth) -> set[str]:
    """The items open now (:func:`is_open`)."""
    return {item_id for item_id in truth.items if is_open(store, item_id)}


def attributed(truth: Truth, item_id: str, output: str) -> set[str]:
    """The response texts of ``item_id`` whose producer ``output`` names (run id or agent id)."""
    return {c.text for c in truth.items[item_id] if c.run_id in output or c.agent_id in output}


@dataclass
class Crawl:
    """What the crawl saw: each (item, output, items open then) and the unblindable open cards."""

    truth: Truth
    seen: int = 0
    unblindable: set[tuple[str, int]] = field(default_factory=set)  # (open item, when)
    second_judgments: int = 0  # recorded by the decision script
    moment: int = 0

    def observe(self, item_id: str, output: str, open_now: set[str] | Callable[[str], bool]) -> None:
        """One output about ``item_id``, read while the items ``open_now`` holds (or says are
        open) were open."""
        self.seen += 1
        texts = attributed(self.truth, item_id, output)
        if not texts:
            return
        for other, pair in self.truth.items.items():
            if not any(c.text in texts for c in pair):
                continue
            if other in open_now if isinstance(open_now, set) else open_now(other):
                self.unblindable.add((other, self.moment))

    def open_cards_unblindable(self) -> int:
        return len({item for item, _ in self.unblindable})


Surface = Callable[[str, str, DecisionInput], str]  # (item, reviewer, decision) -> the answer shown


def decision_script(
    store: Store,
    rng: random.Random,
    truth: Truth,
    crawl: Crawl,
    surfaces: dict[str, Surface],
    limits: dict[str, int] | None = None,
) -> None:
    """Decisions in a random order by three reviewers, through ``surfaces`` chosen at random (each
    answer is an observation judged against the items open right after it): skips, and changes of
    decision (a superseding decision, its disposition drawn again)."""
    reviewers = ("rev-1", "rev-2", "rev-3")
    items = list(truth.items)
    used: dict[str, int] = {}
    judged_again: set[tuple[str, str]] = set()  # (item, reviewer) of the second judgments recorded
    decided: set[str] = set()
    for _ in range(rng.randint(len(items) // 2, len(items) + 3)):
        # A third of the time an item decided already comes back (a change, or a second judgment).
        item_id = rng.choice(sorted(decided) if decided and rng.random() < 0.35 else items)
        decided.add(item_id)
        active = history(store, item_id).active
        disposition = rng.choice(DISPOSITIONS)
        reviewer = rng.choice(reviewers)
        # Half the time an item waiting for a second judgment gets one, from another reviewer.
        others = [
            r for r in reviewers if active is not None and r != active.reviewer and (item_id, r) not in judged_again
        ]
        second = bool(others) and pending_second_judgment(store.ledger, item_id) and rng.random() < 0.5
        if second:
            reviewer = rng.choice(others)
            judged_again.add((item_id, reviewer))
            crawl.second_judgments += 1
        if not second and active is not None and active.disposition != "skip" and disposition == "skip":
            disposition = rng.choice([d for d in DISPOSITIONS if d != "skip"])  # a skip never replaces a judgment
        decision = DecisionInput(
            disposition=disposition,  # type: ignore[arg-type]
            preferred=rng.choice("AB") if disposition == "prefer" else None,
            strength=rng.choice(("slight", "strong")) if disposition == "prefer" else None,  # type: ignore[arg-type]
            supersedes=active.decision_id if active is not None and not second else None,
        )
        # A surface that is slow to start (the MCP server is built per call) answers a few only;
        # second judgments go through the library and the MCP tool (the command asks for --second).
        names = [n for n in sorted(surfaces) if used.get(n, 0) < limits.get(n, len(items) * 2)]
        name = rng.choice([n for n in names if not second or n in ("library", "mcp")] or ["library"])
        used[name] = used.get(name, 0) + 1
        answer = surfaces[name](item_id, reviewer, decision)
        crawl.moment += 1
        crawl.observe(item_id, answer, lambda other: is_open(store, other))
    # Every run records at least one second judgment: the first item found waiting for one gets it.
    waiting = [i for i in sorted(decided) if crawl.second_judgments == 0 and pending_second_judgment(store.ledger, i)]
    for item_id in waiting[:1]:
        first = history(store, item_id).active
        reviewer = next(r for r in reviewers if first is not None and r != first.reviewer)
        answer = surfaces["library"](item_id, reviewer, DecisionInput(disposition="tie"))
        crawl.second_judgments += 1
        crawl.moment += 1
        crawl.observe(item_id, answer, lambda other: is_open(store, other))


def library_surface(store: Store) -> Surface:
    def record(item_id: str, reviewer: str, decision: DecisionInput) -> str:
        return json.dumps(decide(store, item_id, decision, reviewer=reviewer).to_json())

    return record


def cli_decide_args(item_id: str, reviewer: str, decision: DecisionInput) -> list[str]:
    """``review decide`` arguments for ``decision``."""
    args = ["review", "decide", item_id, "--reviewer", reviewer]
    if decision.preferred:
        args += ["--prefer", decision.preferred, "--strength", decision.strength or "slight"]
    else:
        args += [f"--{decision.disposition}"]
    if decision.supersedes:
        args += ["--supersedes", decision.supersedes]
    return args


def card_item_ids(pages: Iterable[dict[str, Any]]) -> list[str]:
    return [page["card"]["itemId"] for page in pages if page.get("card")]


ITEM_ID = re.compile(r"Item <code>([^<]+)</code>")
