"""The one declaration of the everyday commands' parameters (``ledger tail``, ``cas put``, ``cas cat``,
``trace save``, ``review queue``): the fast path (:mod:`reviewtrail.cli._fast`) parses a plain use
with it, and their typer commands are built from it (:mod:`reviewtrail.cli._everyday_commands`),
so both read the same options, in the same order, with the same help, and call the same function.
"""

# No ``from __future__ import annotations``: a NamedTuple compiles each field's annotation given as
# text, and every command loads this module.
from typing import Any, NamedTuple

from reviewtrail.cli._everyday import TRUSTED_KEYS_HELP
from reviewtrail.cli._output import JSON_HELP
from reviewtrail.cli._progress import PROGRESS_HELP

__all__ = ["FAST", "FLAG", "FLOAT", "INT", "MULTIPLE", "PATH", "STR", "TRISTATE", "Command", "Param", "call"]

# The kinds of value a parameter takes.
STR, INT, FLOAT, PATH, FLAG, TRISTATE, MULTIPLE = "str", "int", "float", "path", "flag", "tristate", "multiple"


class Param(NamedTuple):
    """An option (``names`` given) or an argument (``names`` empty) of a fast command."""

    dest: str
    kind: str
    names: tuple[str, ...] = ()
    default: Any = None
    required: bool = False
    min: int | None = None  # INT: the smallest value click accepts
    dir_okay: bool = True  # PATH: may name a folder
    off: tuple[str, ...] = ()  # TRISTATE: the names that set it to False
    many: bool = False  # an argument: takes every argument given (one or more), as a list
    help: str = ""
    hidden: bool = False  # left out of --help


class Command(NamedTuple):
    params: tuple[Param, ...]
    run: str  # the function of reviewtrail.cli._everyday that does the work
    # ``options=``: the function takes every parameter but ``as_json`` as one dict (trace save).
    bundled: bool = False
    # An option given as "" is not given (trace save: the drop-in helper's callers pass "" for
    # every value they lack); required options keep "", and the command names it.
    empty_is_absent: bool = False


def _opt(dest: str, help: str, kind: str = STR, default: Any = None, name: str = "", **more: Any) -> Param:
    """An option named ``--dest-with-dashes`` unless ``name`` is given."""
    return Param(dest, kind, (name or "--" + dest.replace("_", "-"),), default, help=help, **more)


_JSON = _opt("as_json", JSON_HELP, FLAG, False, "--json")
_PROGRESS = Param("progress", TRISTATE, ("--progress",), None, off=("--no-progress",), help=PROGRESS_HELP)
_CLAIM = "recorded, never used by the rules."

_TRACE_SAVE = (
    _opt("skill", "Skill name (letters, digits, '-', '_').", required=True),
    _opt("purpose", "Call purpose, e.g. round-1-review.", required=True),
    _opt("backend", "Reviewer backend/route, e.g. grok."),
    _opt("tool", "Tool used for the call, e.g. mcp__grok__grok."),
    _opt("executor", "Executing host, e.g. codex."),
    _opt("executor_model", "The executor's actual model."),
    _opt("requested_reviewer_model", "Reviewer model that was asked for."),
    _opt("reported_reviewer_model", "Model the backend reported."),
    _opt("model", "Legacy caller-supplied model field."),
    _opt("effort", "Reasoning effort used."),
    _opt("thread_id", "Reviewer session/thread id."),
    _opt("agent_id", "Native agent id."),
    _opt("prompt_file", "Prompt file ('-': stdin).", PATH),
    _opt("response_file", "Response file, kept byte for byte.", PATH),
    _opt("prompt", "The prompt text."),
    _opt("response", "The response text."),
    _opt("status", "ok, fallback_used, success, completed, error...", default="ok"),
    _opt("verdict", "The reviewer's raw verdict."),
    _opt("review_completed", "Finished, successful review.", FLAG, False),
    _opt("review_scope_complete", "Only when the requested inputs were actually covered.", FLAG, False),
    _opt("review_positive", "Only after the skill's own positive gate succeeded.", FLAG, False),
    _opt("gate", "Set --review-positive from the auto-review-loop gate: --score >= 6 and verdict ready/almost.",
         FLAG, False),
    _opt("score", "With --gate: the reviewer's score.", FLOAT),
    _opt("trace_mode", "full (default), meta or off."),
    _opt("files_referenced", "File the review covered (repeatable).", MULTIPLE),
    _opt("duration_ms", "How long the call took.", INT, min=0),
    _opt("identity_validated", "Kept for old callers; grants nothing (use --native-evidence).", FLAG, False,
         hidden=True),
    _opt("fallback_reason", "Why a fallback reviewer route was used."),
    _opt("reviewer_profile", "The reviewer profile the skill selected."),
    _opt("memory_hash", "Hash of the reviewer memory given with the prompt."),
    _opt("executor_family", "Caller's claimed executor family: " + _CLAIM),
    _opt("reviewer_family", "Caller's claimed reviewer family: " + _CLAIM),
    _opt("independence_verified", "Caller's claim (true/false/unverified): " + _CLAIM),
    _opt("native_evidence", "Host-session evidence (aris.copilot-native.evidence/v1) of a --backend copilot-native "
         "review; validated before anything is written.", PATH),
    _opt("reviewer_kind", "model (default) or deterministic.", default="model"),
    _opt("input_tokens", "Prompt tokens, if known.", INT, min=0),
    _opt("output_tokens", "Response tokens.", INT, min=0),
    _opt("skill_args", "Skill arguments ('--- trace: MODE' applies)."),
    _opt("run_id", "Join this run (YYYY-MM-DD_runNN)."),
    _opt("project_dir", "Project root (default: git top level, else the current folder).", PATH),
    _JSON,
)  # fmt: skip

# (group, command): its parameters, in order: the one declaration, which the typer command is
# built from (:mod:`reviewtrail.cli._everyday_commands`).
FAST: dict[tuple[str, str], Command] = {
    ("ledger", "tail"): Command(
        (
            Param("n", INT, ("-n", "--lines"), 20, min=1, help="How many records."),
            _opt("type", "'name@version' exactly, or 'name' for every version."),
            _opt("subject", "Only records about this subject."),
            _JSON,
        ),
        "ledger_tail",
    ),
    ("cas", "put"): Command(
        (
            Param("files", PATH, required=True, dir_okay=False, many=True, help="Files to store (one or more)."),
            _opt("pool", "Pool: 'data' (workspace files) or 'agent-state' (agent run data).", default="data"),
            _opt("media_type", "Media type recorded in the typed ref.", default="application/octet-stream"),
            _JSON,
            _PROGRESS,
        ),
        "cas_put",
    ),
    ("cas", "cat"): Command(
        (
            Param(
                "hashes", STR, required=True, many=True, help="Addresses: 64 hex digits or sha256:<hex> (one or more)."
            ),
            _opt("out", "Write the one object to this file instead of stdout.", PATH, dir_okay=False),
            _opt("out_dir", "Write each object to DIR/<hex> (several at once).", PATH),
            _PROGRESS,
        ),
        "cas_cat",
    ),
    ("trace", "save"): Command(_TRACE_SAVE, "trace_save", bundled=True, empty_is_absent=True),
    ("review", "queue"): Command(
        (
            Param("campaign", STR, help="Only items of this campaign."),
            _opt("version", "Only items of this campaign version.", INT),
            _opt("limit", "At most this many cards (1 to 1,000).", INT, 20),
            _opt("reviewer", "This reviewer's queue: the items they skipped left out."),
            _JSON,
            _opt("trusted_keys", TRUSTED_KEYS_HELP, PATH),
        ),
        "review_queue",
    ),
}


def call(command: Command, values: dict[str, Any]) -> None:
    """Run ``command``'s function of :mod:`reviewtrail.cli._everyday` with its parameters' ``values``."""
    from reviewtrail.cli import _everyday

    run = getattr(_everyday, command.run)
    if command.bundled:
        values = dict(values)
        as_json = values.pop("as_json")
        run(options=values, as_json=as_json)
    else:
        run(**values)
