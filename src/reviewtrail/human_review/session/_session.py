"""The interactive review session's state machine (docs/human-review.md, "Review session"): keys
in, actions out. It never reads a store: whoever drives it fetches the next card and records
decisions when it asks (a :class:`SessionAction`), then tells it what happened. Provenance enters
only through :meth:`ReviewSession.decided`, after the decision is recorded."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Literal

import msgspec

from reviewtrail.human_review.records._record_names import MAX_REASON_CODES, MAX_RESPONSE_TAGS
from reviewtrail.human_review.records._records import Disposition, Strength
from reviewtrail.human_review.rules._decision_rules import DecisionInput
from reviewtrail.human_review.session._decide import DecisionResult
from reviewtrail.human_review.session._queue import QueueCandidate, QueueCard

__all__ = [
    "PICK_LABELS",
    "REVEAL_MODES",
    "SESSION_KEYS",
    "DecisionUse",
    "ReviewSession",
    "SessionAction",
    "SessionProgress",
]

#: Keys a picker numbers an allowlist with (``q`` and ``x`` keep their meaning there).
PICK_LABELS = "123456789abcdefghijklmnoprstuvwyz"
ENTER = "\n"
ESC = "\x1b"
UNDO = "z"
#: When a session shows who produced A and B: on a screen of its own after each decision, all at
#: the end of the session, or never.
REVEAL_MODES = ("after", "end", "never")
Reveal = Literal["after", "end", "never"]

#: Every key of a card, in the order the help lists them: (key, what it does).
SESSION_KEYS: tuple[tuple[str, str], ...] = (
    ("a / b", "prefer candidate A / B, then 1 slight or 2 strong (x or Esc goes back)"),
    ("t", "tie: both are adequately equivalent"),
    ("c", "correct: type the replacement response, end it with a line holding a single '.'"),
    ("u", "underdetermined: the evidence cannot tell which is better"),
    ("m", "malformed: the item or its criterion is defective"),
    ("s", "skip: record no judgment (on an invalid item: pass over it, nothing recorded)"),
    ("y", "before the disposition: toggle 'use for training'"),
    ("r", "before the disposition: pick reason codes (at most 2; Enter when done)"),
    ("g", "before the disposition: pick response tags (at most 2; Enter when done)"),
    ("f", "before the disposition: confidence from 0 to 1 (empty line clears)"),
    ("n", "before the disposition: a note, one line (empty line clears)"),
    ("z", "undo: back to the card decided last; a decision there supersedes the earlier one (y confirms)"),
    ("x / Esc", "while revising: back to the card you left"),
    ("?", "this help"),
    ("q", "quit: nothing half-recorded; a summary of this session's decisions"),
)

Mode = Literal[
    "waiting",  # for a card (after start, or after the reviewer moved on)
    "card",  # a card is shown: dispositions and toggles
    "strength",  # a candidate is preferred: 1 slight, 2 strong
    "reasons",
    "tags",
    "confidence",  # reading one line
    "note",  # reading one line
    "replacement",  # reading text up to a line holding a single "."
    "confirm",  # a superseding decision waits for y (record it) or n (back to the card)
    "submitting",  # the decision is being recorded
    "revealed",  # recorded, provenance shown: any key for the next card
    "done",  # no more open cards
    "quit",
]

_DISPOSITION_KEYS: dict[str, Disposition] = {"t": "tie", "u": "underdetermined", "m": "malformed", "s": "skip"}
_STRENGTH_KEYS: dict[str, Strength] = {"1": "slight", "2": "strong"}
_TEXT_MODES = {"confidence": "line", "note": "line", "replacement": "text"}


@dataclass(frozen=True)
class SessionAction:
    """What the session asks its driver to do: ``fetch`` the next open card (one not in
    ``seen``), fetch the ``card`` of ``item_id`` (decided: to revise it), ``submit`` ``decision``
    on ``item_id`` with ``submission_id``, or ``quit``."""

    kind: Literal["fetch", "card", "submit", "quit"]
    item_id: str | None = None
    decision: DecisionInput | None = None
    submission_id: str | None = None
    seen: frozenset[str] = frozenset()


@dataclass(frozen=True)
class SessionProgress:
    """The campaign's progress when a card is served: its items and how many have a decision
    (``open`` have none: the card served among them)."""

    items: int
    open: int

    @property
    def decided(self) -> int:
        return self.items - self.open


@dataclass(frozen=True)
class DecisionUse:
    """What a recorded decision is good for: ``export-eligible`` (it becomes a training example
    when the campaign is exported) or ``evaluation-only``, with the reason it is not exported."""

    use: str
    reason: str | None


@dataclass
class Draft:
    """The optional fields set before a disposition (a :class:`DecisionInput`'s, by name)."""

    use_for_training: bool = False
    reason_codes: tuple[str, ...] = ()
    response_tags: tuple[str, ...] = ()
    confidence: float | None = None
    note: str | None = None


@dataclass(frozen=True)
class _Left:
    """The card a reviewer left to revise an earlier one, as it was."""

    card: QueueCard
    submission_id: str | None
    draft: Draft
    progress: SessionProgress | None


@dataclass
class ReviewSession:
    """One reviewer's session. Feed it keys (:meth:`press`) or text (:meth:`enter`, when
    :attr:`wants` is ``line`` or ``text``); carry out the action each returns; report back with
    :meth:`show`, :meth:`decided` or :meth:`refused`. :attr:`event` names what just happened,
    for the driver to draw. ``reveal``: when the provenance of A and B is shown (:data:`REVEAL_MODES`)."""

    reveal: Reveal = "after"
    mode: Mode = "waiting"
    card: QueueCard | None = None
    draft: Draft = field(default_factory=Draft)
    submission_id: str | None = None
    preferred: str | None = None  # the position chosen, waiting for a strength
    result: DecisionResult | None = None  # set only once the card's decision is recorded
    message: str | None = None
    event: str = "waiting"
    seen: set[str] = field(default_factory=set)
    recorded: list[DecisionResult] = field(default_factory=list)
    passed: list[str] = field(default_factory=list)
    position: int = 0  # k: the cards this session served so far (a revised card is not counted again)
    progress: SessionProgress | None = None  # the campaign's progress when the card was served
    last_use: DecisionUse | None = None  # what the decision recorded last is good for
    revising: DecisionResult | None = None  # the earlier decision the card on show would supersede
    pending: SessionAction | None = None  # a superseding decision waiting for its confirmation
    left: _Left | None = None  # the card left to revise an earlier one
    taken: set[str] = field(default_factory=set)  # cards decided by someone else after they were served

    def start(self) -> SessionAction:
        return SessionAction("fetch", seen=frozenset(self.seen))

    @property
    def wants(self) -> Literal["key", "line", "text", "nothing"]:
        """What input the session waits for."""
        if self.mode in _TEXT_MODES:
            return "line" if _TEXT_MODES[self.mode] == "line" else "text"
        if self.mode in ("waiting", "submitting", "done", "quit"):
            return "nothing"
        return "key"

    @property
    def counts(self) -> tuple[int, int]:
        """(k, N) of the status line: the card on show is the k-th this session served, of the
        cards it served plus the campaign's open items left (invalid items it passed over stay
        open, and are not counted twice)."""
        opened = self.progress.open if self.progress is not None else 0
        return self.position, max(self.position, self.position - 1 + opened - len(self.passed))

    @property
    def held(self) -> set[str]:
        """The items this session is working on: the card on show while it is undecided, and a
        card left to revise an earlier decision (a driver keeps their leases)."""
        held = {self.left.card.item_id} if self.left is not None else set()
        if (
            self.card is not None
            and self.result is None
            and self.revising is None
            and self.mode not in ("done", "quit")
        ):
            held.add(self.card.item_id)
        return held

    def show(self, card: QueueCard | None, submission_id: str, progress: SessionProgress | None = None) -> None:
        """The next card (None: no open card is left), or the card of the decision being revised.
        ``submission_id`` is the random id every submission of this card carries, retries
        included; ``progress`` the campaign's progress, for the status line."""
        if self.mode != "waiting":
            raise RuntimeError(f"no card was asked for (mode {self.mode})")
        if card is None:
            self.mode, self.card, self.event, self.result = "done", None, "done", None
            return
        revisiting = self.revising is not None and card.item_id == self.revising.item_id
        if not revisiting:
            self.revising, self.position = None, self.position + 1
        self.mode, self.card, self.event = "card", card, "card"
        self.draft = Draft(use_for_training=self.draft.use_for_training)  # it stays as last set
        self.submission_id, self.preferred, self.result, self.message = submission_id, None, None, None
        self.pending, self.progress = None, progress if progress is not None else self.progress
        self.seen.add(card.item_id)

    def decided(self, result: DecisionResult, use: DecisionUse | None = None) -> SessionAction | None:
        """The submitted decision is recorded (``use``: what it is good for): reveal it (and the
        provenance it carries) when the session reveals after each decision, else go on. Returns
        the action going on asks for, if any."""
        if self.mode != "submitting":
            raise RuntimeError(f"nothing was submitted (mode {self.mode})")
        self.mode, self.result, self.event, self.message = "revealed", result, "revealed", None
        self.recorded.append(result)
        self.last_use, self.revising, self.pending = use, None, None
        if self.reveal == "after":
            return None
        self.event = "recorded"
        return self._go_on()

    def refused(self, field_name: str | None, problem: str) -> None:
        """The submission was refused (nothing recorded): the card stays, with the reason. A
        refusal naming the item (it no longer binds what it froze), or naming ``supersedes`` on a
        card served undecided (someone else decided it since), leaves a card that can only be
        passed over."""
        if self.mode != "submitting" or self.card is None:
            raise RuntimeError(f"nothing was submitted (mode {self.mode})")
        self.mode, self.event, self.pending = "card", "refused", None
        self.message = f"refused: {field_name}: {problem}" if field_name else f"refused: {problem}"
        if field_name == "item" and self.card.valid:
            self.card = _invalidated(self.card, problem)
        elif field_name == "supersedes" and self.revising is None and self.card.valid:
            # Decided by someone else since it was served: it can only be passed over.
            self.taken.add(self.card.item_id)
            self.card = _invalidated(self.card, problem)
            self.message += " (s passes over it)"

    def quit(self) -> SessionAction:
        self.mode, self.event, self.result, self.pending = "quit", "quit", None, None
        return SessionAction("quit")

    def press(self, key: str) -> SessionAction | None:
        """One key. Returns the action it asks for, if any."""
        key = ENTER if key == "\r" else key
        self.message = None
        if self.mode in ("waiting", "submitting", "done", "quit") or self.wants != "key":
            self.event = "ignored"
            return None
        if key == "q":
            return self.quit()
        if key == "?":
            self.event = "help"
            return None
        if self.mode == "confirm":
            return self._confirm(key)
        if self.mode == "revealed":
            return self._undo() if key == UNDO else self._go_on()
        if self.mode == "strength":
            return self._strength(key)
        if self.mode in ("reasons", "tags"):
            self._pick(key)
            return None
        if key == UNDO:
            return self._undo()
        if self.revising is not None and key in ("x", ESC):
            return self._back()
        return self._card_key(key)

    def enter(self, text: str) -> SessionAction | None:
        """The line or text asked for (a confidence, a note, a replacement response)."""
        self.message = None
        mode = self.mode
        if mode not in _TEXT_MODES:
            self.event = "ignored"
            return None
        self.mode, self.event = "card", "status"
        if mode == "confidence":
            self._set_confidence(text.strip())
        elif mode == "note":
            self.draft.note = text.rstrip("\r\n") or None
        elif not text.strip():
            self.message = "no replacement given: nothing recorded"
        else:
            return self._submit("correct", replacement=text)
        return None

    def pick_options(self) -> list[tuple[str, str, bool]]:
        """In a picker: (label, value, picked) of each allowed reason code or response tag."""
        if self.card is None or self.mode not in ("reasons", "tags"):
            return []
        allowed, picked = self._allowlist()
        return [(PICK_LABELS[i], value, value in picked) for i, value in enumerate(allowed)]

    def _go_on(self) -> SessionAction | None:
        """After a card: back to the card left to revise an earlier one, else the next card."""
        left, self.left = self.left, None
        if left is None:
            self.mode = "waiting"
            if self.event != "recorded":
                self.event = "waiting"
            return SessionAction("fetch", seen=frozenset(self.seen))
        training = self.draft.use_for_training  # it stays as last set
        self.mode, self.event, self.card, self.result, self.revising = "card", "card", left.card, None, None
        self.submission_id, self.draft, self.progress = left.submission_id, left.draft, left.progress
        self.draft.use_for_training = training
        return None

    def _undo(self) -> SessionAction | None:
        """Back to the card this session decided last, to record a decision that supersedes it."""
        if not self.recorded:
            self._say("nothing to undo: no decision recorded in this session yet")
            return None
        if self.revising is not None:
            self._say("already revising that decision: decide, or x / Esc to go back")
            return None
        if self.mode == "card" and self.card is not None and self.result is None:
            self.left = _Left(self.card, self.submission_id, self.draft, self.progress)
        self.revising, self.mode, self.event = self.recorded[-1], "waiting", "waiting"
        return SessionAction("card", item_id=self.revising.item_id)

    def _back(self) -> SessionAction | None:
        """Leave the card being revised, recording nothing."""
        self.revising, self.pending, self.event = None, None, "waiting"
        return self._go_on()

    def _confirm(self, key: str) -> SessionAction | None:
        if key == "y" and self.pending is not None:
            action, self.pending = self.pending, None
            self.mode, self.event = "submitting", "submitting"
            return action
        if key in ("n", "x", ESC):
            self.mode, self.pending, self.event = "card", None, "status"
            return None
        self._say("y records it, n goes back to the card")
        return None

    def _card_key(self, key: str) -> SessionAction | None:
        card = self.card
        assert card is not None
        if not card.valid:
            if key == "s" and self.revising is not None:
                return self._back()
            if key == "s":
                if card.item_id not in self.taken:
                    self.passed.append(card.item_id)
                self.mode, self.event = "waiting", "waiting"
                return SessionAction("fetch", seen=frozenset(self.seen))
            self._say("this item is invalid: it can only be passed over (s), or q to quit")
            return None
        if key in ("a", "b"):
            self.mode, self.preferred, self.event = "strength", key.upper(), "strength"
            return None
        if key in _DISPOSITION_KEYS:
            return self._submit(_DISPOSITION_KEYS[key])
        if key == "y":
            self.draft.use_for_training = not self.draft.use_for_training
            self.event = "status"
            return None
        if key in ("r", "g"):
            self._open_picker("reasons" if key == "r" else "tags")
            return None
        if key in ("c", "f", "n"):
            self.mode = {"c": "replacement", "f": "confidence", "n": "note"}[key]  # type: ignore[assignment]
            self.event = "ask"
            return None
        self._say(f"{_shown(key)} is not a key here; ? shows the keys")
        return None

    def _strength(self, key: str) -> SessionAction | None:
        if key in _STRENGTH_KEYS:
            return self._submit("prefer", preferred=self.preferred, strength=_STRENGTH_KEYS[key])
        if key in ("x", ESC):
            self.mode, self.preferred, self.event = "card", None, "status"
            return None
        self._say("1 slight, 2 strong, x or Esc goes back")
        return None

    def _open_picker(self, mode: Literal["reasons", "tags"]) -> None:
        self.mode = mode
        allowed, _ = self._allowlist()
        if not allowed:
            self.mode = "card"
            what = "reason codes" if mode == "reasons" else "response tags"
            self._say(f"the criterion allows no {what}")
            return
        self.event = "picker"

    def _pick(self, key: str) -> None:
        allowed, picked = self._allowlist()
        if key in (ENTER, ".", "x", ESC):
            self.mode, self.event = "card", "status"
            return
        index = PICK_LABELS.find(key) if len(key) == 1 else -1
        if index < 0 or index >= len(allowed):
            self._say("pick by the key shown; Enter when done")
            return
        value, most = allowed[index], MAX_REASON_CODES if self.mode == "reasons" else MAX_RESPONSE_TAGS
        if value in picked:
            chosen = tuple(v for v in picked if v != value)
        elif len(picked) >= most:
            self._say(f"at most {most}: unpick one first")
            return
        else:
            chosen = (*picked, value)
        if self.mode == "reasons":
            self.draft.reason_codes = chosen
        else:
            self.draft.response_tags = chosen
        self.event = "picker"

    def _allowlist(self) -> tuple[list[str], tuple[str, ...]]:
        assert self.card is not None
        if self.mode == "reasons":
            return list(self.card.criterion.get("allowedReasonCodes", [])), self.draft.reason_codes
        return list(self.card.criterion.get("allowedResponseTags", [])), self.draft.response_tags

    def _set_confidence(self, text: str) -> None:
        if not text:
            self.draft.confidence = None
            return
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not 0.0 <= value <= 1.0:  # also refuses nan
            self.message = f"confidence must be a number from 0 to 1, got {text!r}"
            return
        self.draft.confidence = value

    def _submit(
        self,
        disposition: Disposition,
        *,
        preferred: str | None = None,
        strength: Strength | None = None,
        replacement: str | None = None,
    ) -> SessionAction | None:
        assert self.card is not None and self.submission_id is not None
        chosen = {"disposition": disposition, "preferred": preferred, "strength": strength, "replacement": replacement}
        decision = DecisionInput.of(vars(self.draft) | chosen)
        action = SessionAction("submit", item_id=self.card.item_id, decision=decision, submission_id=self.submission_id)
        if self.revising is not None:  # a superseding decision: recorded only once confirmed
            decision = msgspec.structs.replace(decision, supersedes=self.revising.decision_id)
            self.pending = replace(action, decision=decision)
            self.mode, self.preferred, self.event = "confirm", None, "confirm"
            return None
        self.mode, self.preferred, self.event = "submitting", None, "submitting"
        return action

    def _say(self, message: str) -> None:
        self.message, self.event = message, "message"


def _shown(key: str) -> str:
    return {ENTER: "Enter", ESC: "Esc"}.get(key, repr(key))


def _invalidated(card: QueueCard, problem: str) -> QueueCard:
    withheld = (QueueCandidate("A", None), QueueCandidate("B", None))
    return msgspec.structs.replace(card, valid=False, problems=(*card.problems, problem), candidates=withheld)
