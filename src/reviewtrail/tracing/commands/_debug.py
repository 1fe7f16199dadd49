"""Debugging with traces: list runs, show one, diff two responses, find where the judgment changed.

Every function returns plain data (dataclasses with ``to_json()``); nothing here prints.
See the protocol's "Debugging With Traces": the paragraph where the assessment changed
is the causal explanation for a divergence, so :func:`divergence` points at it.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import Field, dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

from reviewtrail.errors import InvalidInputError
from reviewtrail.tracing.files._reader import TraceCall, TraceRun, iter_runs

__all__ = [
    "HEDGE_WORDS",
    "CallDiff",
    "CallRow",
    "Divergence",
    "NewParagraph",
    "Round",
    "RunSummary",
    "RunView",
    "Step",
    "diff_calls",
    "divergence",
    "list_runs",
    "parse_score",
    "show_run",
]

HEDGE_WORDS = ("however", "but", "concern", "concerns", "missing", "cannot")
_HEDGE = re.compile(r"\b(?:" + "|".join(HEDGE_WORDS) + r")\b", re.IGNORECASE)
_DECOR = r"[*_`\s]*"
# "Score: 6/10", "score = 7.5", "**Score**: 5 / 10", "Overall score: 8", "Score (out of 10): 7".
# Not "scores", "underscore" or "f1_score"; "__Score__" (markdown bold) is allowed.
_SCORE = re.compile(
    r"(?P<label>(?:\b(?:overall|final)[ \t]+)?)(?<![A-Za-z0-9])(?<![A-Za-z0-9]_)score(?![A-Za-z0-9])"
    + _DECOR
    + r"(?:\([^)\n]{0,40}\))?"
    + _DECOR
    + r"[:=]"
    + _DECOR
    + r"(?P<n>\d+(?:\.\d+)?)",
    re.IGNORECASE,
)


class _Json:
    """``to_json()`` for the dataclasses below: the protocol's snake_case keys, nested results converted too."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    def to_json(self) -> dict[str, Any]:
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}


def _plain(value: object) -> object:
    if isinstance(value, _Json):
        return value.to_json()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


# --- list_runs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunSummary(_Json):
    skill: str
    run_id: str
    path: str
    started_at: str | None
    executor: str | None
    reviewer_backend: str | None
    calls: int
    complete: int
    last_status: str | None  # the last call's status; "incomplete" when it has no meta file yet
    acceptance: dict[str, int]  # acceptance_status -> count, over complete calls
    verdicts: tuple[str | None, ...]  # one per call, in call order


def list_runs(project: Path, skill: str | None = None) -> list[RunSummary]:
    """One summary per run under ``<project>/.aris/traces`` (optionally one skill), by skill then run id."""
    return [_summary(project, run) for run in iter_runs(project, skill)]


def _summary(project: Path, run: TraceRun) -> RunSummary:
    meta = run.meta or {}
    acceptance = Counter(_text(c.meta, "acceptance_status") or "unknown" for c in run.calls if c.complete)
    try:
        path = run.path.relative_to(project).as_posix()
    except ValueError:
        path = str(run.path)
    return RunSummary(
        skill=run.skill,
        run_id=run.run_id,
        path=path,
        started_at=_text(meta, "started_at"),
        executor=_text(meta, "executor"),
        reviewer_backend=_text(meta, "reviewer_backend"),
        calls=len(run.calls),
        complete=sum(c.complete for c in run.calls),
        last_status=_last_status(run),
        acceptance=dict(sorted(acceptance.items())),
        verdicts=tuple(_field(c, "verdict") for c in run.calls),
    )


def _last_status(run: TraceRun) -> str | None:
    if not run.calls:
        return None
    last = run.calls[-1]
    return _text(last.meta, "status") if last.complete else "incomplete"


# --- show_run --------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallRow(_Json):
    number: int
    purpose: str
    timestamp: str | None
    status: str | None
    verdict: str | None
    reviewer_model: str | None
    reviewer_model_source: str | None
    review_independence: str | None
    acceptance_status: str | None
    duration_ms: int | None
    has_response: bool
    complete: bool
    trace_mode: str | None


@dataclass(frozen=True)
class RunView(_Json):
    skill: str
    run_id: str
    path: str
    meta: dict[str, Any] | None  # run.meta.json as saved
    calls: tuple[CallRow, ...]


def show_run(run: TraceRun) -> RunView:
    """The run's metadata and one row per call (fields from the call's meta, else its request)."""
    return RunView(run.skill, run.run_id, str(run.path), run.meta, tuple(_row(c) for c in run.calls))


def _row(call: TraceCall) -> CallRow:
    duration = (call.meta or {}).get("duration_ms")
    return CallRow(
        number=call.number,
        purpose=call.purpose,
        timestamp=_field(call, "timestamp"),
        status=_text(call.meta, "status"),
        verdict=_field(call, "verdict"),
        reviewer_model=_field(call, "reviewer_model"),
        reviewer_model_source=_field(call, "reviewer_model_source"),
        review_independence=_field(call, "review_independence"),
        acceptance_status=_field(call, "acceptance_status"),
        duration_ms=duration if isinstance(duration, int) and not isinstance(duration, bool) else None,
        has_response=call.files.response.is_file(),
        complete=call.complete,
        trace_mode=_trace_mode(call),
    )


# --- diff_calls ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallDiff(_Json):
    run: str
    a: int
    b: int
    from_file: str
    to_file: str
    identical: bool
    diff: str  # unified diff text; empty when identical


def diff_calls(run: TraceRun, a: int, b: int, context: int = 3) -> CallDiff:
    """Unified diff of call ``a``'s response.md against call ``b``'s (like ``diff -u``)."""
    if context < 0:
        raise InvalidInputError(f"must be 0 or more, not {context}", field="context")
    call_a, call_b = run.call(a), run.call(b)
    text_a, text_b = call_a.response_text(), call_b.response_text()
    if text_a is None or text_b is None:
        missing = [(name, c) for name, c, t in (("a", call_a, text_a), ("b", call_b, text_b)) if t is None]
        which = " and ".join(f"call {c.number:03d} ({c.files.response.name}: {_no_text_reason(c)})" for _, c in missing)
        verb = "has" if len(missing) == 1 else "have"
        raise InvalidInputError(f"{which} {verb} no response text to diff", field=missing[0][0])
    from_file, to_file = call_a.files.response.name, call_b.files.response.name
    lines = difflib.unified_diff(
        text_a.splitlines(keepends=True), text_b.splitlines(keepends=True), from_file, to_file, n=context
    )
    diff = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    return CallDiff(run.key, a, b, from_file, to_file, text_a == text_b, diff)


# --- divergence ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Round(_Json):
    number: int
    purpose: str
    verdict: str | None
    score: float | None  # parsed from the response text; None when absent or no text
    status: str | None
    acceptance_status: str | None
    has_text: bool
    complete: bool


@dataclass(frozen=True)
class NewParagraph(_Json):
    start_line: int  # 1-based lines in the current response.md
    end_line: int
    text: str
    hedges: tuple[str, ...]  # hedge words it contains, lowercased, in order of first appearance
    hedge_lines: tuple[int, ...]  # lines holding a hedge word (as ``grep -n`` would report them)


@dataclass(frozen=True)
class Step(_Json):
    """One consecutive pair of rounds: previous -> current."""

    previous: int
    current: int
    verdict_before: str | None
    verdict_after: str | None
    score_before: float | None
    score_after: float | None
    verdict_changed: bool
    score_changed: bool
    changed: bool  # the assessment changed: score or verdict differs
    new_paragraphs: tuple[NewParagraph, ...]  # paragraphs of the current response not present verbatim before
    note: str | None  # why paragraphs could not be compared (no response text)


@dataclass(frozen=True)
class Divergence(_Json):
    run: str
    rounds: tuple[Round, ...]
    steps: tuple[Step, ...]
    first_change: int | None  # the current call number of the first step that changed the assessment


def divergence(run: TraceRun) -> Divergence:
    """Line up the rounds and, for each consecutive pair, what changed and which paragraphs are new."""
    texts = [c.response_text() for c in run.calls]
    rounds = tuple(_round(c, t) for c, t in zip(run.calls, texts, strict=True))
    steps = tuple(
        _step(run.calls[i - 1], run.calls[i], rounds[i - 1], rounds[i], texts[i - 1], texts[i])
        for i in range(1, len(rounds))
    )
    first = next((s.current for s in steps if s.changed), None)
    return Divergence(run.key, rounds, steps, first)


def parse_score(text: str) -> float | None:
    """The reviewer's score: an "overall"/"final" score if labelled so, else the first score; ``None`` if absent.

    Only the number is returned (``6`` for "Score: 6/10"); any "/10" is not divided out.
    """
    matches = list(_SCORE.finditer(text))
    if not matches:
        return None
    best = next((m for m in matches if m["label"]), matches[0])
    return float(best["n"])


def _round(call: TraceCall, text: str | None) -> Round:
    return Round(
        number=call.number,
        purpose=call.purpose,
        verdict=_field(call, "verdict"),
        score=parse_score(text) if text is not None else None,
        status=_text(call.meta, "status"),
        acceptance_status=_field(call, "acceptance_status"),
        has_text=text is not None,
        complete=call.complete,
    )


def _step(
    prev_call: TraceCall, cur_call: TraceCall, prev: Round, cur: Round, prev_text: str | None, cur_text: str | None
) -> Step:
    verdict_changed = (
        prev.verdict is not None and cur.verdict is not None and prev.verdict.casefold() != cur.verdict.casefold()
    )
    score_changed = prev.score is not None and cur.score is not None and prev.score != cur.score
    note = None
    paragraphs: tuple[NewParagraph, ...] = ()
    if cur_text is None:
        note = f"call {cur.number:03d} has no response text ({_no_text_reason(cur_call)}); no paragraphs to compare"
    elif prev_text is None:
        note = f"call {prev.number:03d} has no response text ({_no_text_reason(prev_call)}); no paragraphs to compare"
    else:
        before = "\n".join(_lines(prev_text))
        paragraphs = tuple(p for p in _paragraphs(cur_text) if p.text not in before)
    return Step(
        previous=prev.number,
        current=cur.number,
        verdict_before=prev.verdict,
        verdict_after=cur.verdict,
        score_before=prev.score,
        score_after=cur.score,
        verdict_changed=verdict_changed,
        score_changed=score_changed,
        changed=verdict_changed or score_changed,
        new_paragraphs=paragraphs,
        note=note,
    )


def _lines(text: str) -> list[str]:
    """Lines as ``grep -n`` and ``diff`` count them (on ``\\n`` only, a trailing ``\\r`` dropped)."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def _paragraphs(text: str) -> list[NewParagraph]:
    """Blocks of non-blank lines, with their line numbers and hedge words."""
    out: list[NewParagraph] = []
    block: list[tuple[int, str]] = []
    for number, line in [*enumerate(_lines(text), start=1), (0, "")]:
        if line.strip():
            block.append((number, line))
            continue
        if block:
            words = [m.group().lower() for _, ln in block for m in _HEDGE.finditer(ln)]
            out.append(
                NewParagraph(
                    start_line=block[0][0],
                    end_line=block[-1][0],
                    text="\n".join(ln for _, ln in block),
                    hedges=tuple(dict.fromkeys(words)),
                    hedge_lines=tuple(n for n, ln in block if _HEDGE.search(ln)),
                )
            )
            block = []
    return out


# --- field access ----------------------------------------------------------------------------


def _text(doc: dict[str, Any] | None, key: str) -> str | None:
    value = (doc or {}).get(key)
    return value if isinstance(value, str) else None


def _field(call: TraceCall, key: str) -> str | None:
    """A string field from the call's meta (written last, so the outcome), else from its request."""
    return _text(call.meta, key) or _text(call.request, key)


def _trace_mode(call: TraceCall) -> str | None:
    mode = _field(call, "trace_mode")
    if mode is not None:
        return mode
    request = call.request or {}
    if "prompt" in request:
        return "full"
    return "meta" if "prompt_sha256" in request else None


def _no_text_reason(call: TraceCall) -> str:
    if _trace_mode(call) == "meta":
        return "meta mode"
    return "incomplete call" if not call.complete else "response.md missing"
